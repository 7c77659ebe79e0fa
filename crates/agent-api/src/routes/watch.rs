//! `WS /api/traces/{trace_id}/watch?since_event_id=N`: a trace's events, live.
//!
//! The first message is `connected` (with `event_id` = N, `current_event_id`, `goal_tree`,
//! `sub_traces`), then every stored event with an id above N, then live events as they are
//! committed: each event exactly once, in id order, with no gap. While a model call is under way,
//! live-only `text_delta` (and `reasoning_delta`) messages `{event, trace_id, goal_id, delta}`
//! come between the events: pieces of the answer as the model sends them, with no `event_id`,
//! never stored and never replayed; the whole message still arrives as `message_added`, after its
//! deltas. A client that falls behind may miss deltas, never events.
//!
//! **How no event is lost:** the stored events up to `current_event_id` are read before the
//! upgrade; the live part is [`agent_execution::watch`] from `current_event_id`, which
//! subscribes before it reads the store again, skips what it already yielded, and re-reads the
//! store when its subscription falls behind. A client that reads slowly therefore never makes
//! the run wait (committing never blocks on a watcher) and never misses an event: it catches
//! up from the store. A client that accepts no data at all for `send_timeout` is closed with
//! code 1008.
//!
//! Close codes: 1001 when the server shuts down, 1008 for a client that is too slow or stops
//! answering pings, 1011 when the trace cannot be read any more. The watch does not end at
//! `trace_completed`, because a stopped trace can be resumed; the client closes when it is done.

use std::time::Duration;

use agent_execution::feed::{SharedEvent, SharedItem, SharedStream, watch_shared};
use agent_execution::{DeltaKind, Event, GoalTree, LiveDelta, Trace};
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use axum::routing::get;
use futures::stream::SplitSink;
use futures::{FutureExt, SinkExt, StreamExt};
use serde::Serialize;
use tokio::time::{Instant, timeout};

use crate::config::WatchConfig;
use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiQuery, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::traces::{EventsQuery, not_found};
use crate::schemas::ConnectedEventDoc;
use crate::state::AppState;

/// The largest message a watch client may send; clients have nothing to say but pongs.
const MAX_INCOMING: usize = 64 * 1024;

/// The read buffer of a watch connection. The WebSocket codec zeroes its whole read buffer
/// before every read, and a watch polls its client after every batch it sends, so the default
/// 128 KiB cost a 128 KiB `memset` per batch per watcher (the largest cost of a burst to many
/// watchers). Pongs and close frames fit in a few bytes; a larger frame (up to
/// [`MAX_INCOMING`]) still arrives, the buffer grows to hold it.
const READ_BUFFER: usize = 4 * 1024;

/// How long a close frame may take to send before the connection is simply dropped.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Close code: the server is going away.
const GOING_AWAY: u16 = 1001;
/// Close code: the client broke the rules (too slow, no pong).
const POLICY: u16 = 1008;
/// Close code: the server failed.
const SERVER_ERROR: u16 = 1011;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new().route("/api/traces/{trace_id}/watch", get(watch_trace))
}

/// Watches a trace live over a WebSocket.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}/watch",
    tag = "traces",
    params(("trace_id" = String, Path, description = "The trace"), EventsQuery,
        ("token" = Option<String>, Query, description = "The bearer token, for browsers that cannot set headers on a WebSocket")),
    responses(
        (status = 101, description = "WebSocket: text messages, each one JSON event. First \
            `connected` (a ConnectedEvent), then every stored event with an id above \
            `since_event_id`, then live ones (Event): no gap, no duplicate. While a model call is \
            under way, live-only `{\"event\": \"text_delta\", \"trace_id\", \"goal_id\", \"delta\"}` \
            messages (and `reasoning_delta` ones for the model's reasoning) come between the \
            events: no `event_id`, never stored nor replayed, possibly dropped for a slow client; \
            the whole message follows as `message_added`.", body = ConnectedEventDoc),
        (status = 400, description = "The trace id or `since_event_id` is invalid, or the request is not a WebSocket upgrade", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn watch_trace(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiQuery(query): ApiQuery<EventsQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let since = query.since_event_id.unwrap_or(0);
    let snapshot = Snapshot::read(&state, &trace_id, since).await?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::bad_request(
            "websocket_required",
            format!("this route is a WebSocket: {}", rejection.body_text()),
        )
    })?;
    Ok(upgrade
        .read_buffer_size(READ_BUFFER)
        .max_message_size(MAX_INCOMING)
        .max_frame_size(MAX_INCOMING)
        .on_upgrade(move |socket| session(socket, state, snapshot)))
}

/// What a watch starts from, read before the upgrade so errors are plain HTTP responses.
struct Snapshot {
    trace_id: String,
    since: u64,
    stored: Vec<Event>,
    current_event_id: u64,
    goal_tree: GoalTree,
    sub_traces: Vec<Trace>,
}

impl Snapshot {
    async fn read(state: &AppState, trace_id: &str, since: u64) -> Result<Self, ApiError> {
        let store = state.store();
        let trace = store
            .get_trace(trace_id)
            .await
            .reading(trace_id)?
            .ok_or_else(|| not_found(trace_id))?;
        // Events first, then the tree: the tree is then at least as new as the events.
        let stored = store.get_events(trace_id, since).await.reading(trace_id)?;
        let current_event_id = match stored.last() {
            Some(last) => last.event_id,
            None => newest_at_most(state, trace_id, since).await?,
        };
        let goal_tree = store
            .get_goal_tree(trace_id)
            .await
            .reading(trace_id)?
            .unwrap_or_else(|| GoalTree::new(trace.task.clone()));
        let sub_traces = store.get_sub_traces(trace_id).await?;
        Ok(Self {
            trace_id: trace_id.to_owned(),
            since,
            stored,
            current_event_id,
            goal_tree,
            sub_traces,
        })
    }

    fn connected(&mut self) -> Connected {
        Connected {
            event_id: self.since,
            event: "connected",
            trace_id: self.trace_id.clone(),
            current_event_id: self.current_event_id,
            goal_tree: std::mem::take(&mut self.goal_tree),
            sub_traces: std::mem::take(&mut self.sub_traces),
        }
    }
}

/// The first message of a watch: where the watcher starts. It is not an event of the trace
/// (never stored, and its `event_id` is the requested `since_event_id`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Connected {
    /// The requested `since_event_id`.
    pub event_id: u64,
    /// Always `connected`.
    pub event: &'static str,
    /// The watched trace.
    pub trace_id: String,
    /// The id of the newest stored event when the watcher connected.
    pub current_event_id: u64,
    /// The trace's goal tree, at least as new as `current_event_id`.
    pub goal_tree: GoalTree,
    /// The trace's sub-traces.
    pub sub_traces: Vec<Trace>,
}

/// The newest event id when no event is newer than `since`: `since` itself if that event
/// exists; a `since` beyond the newest event is refused, as live events up to it would be
/// skipped.
async fn newest_at_most(state: &AppState, trace_id: &str, since: u64) -> Result<u64, ApiError> {
    if since == 0 {
        return Ok(0);
    }
    let store = state.store();
    if !store
        .get_events(trace_id, since - 1)
        .await
        .reading(trace_id)?
        .is_empty()
    {
        return Ok(since);
    }
    let newest = store
        .get_events(trace_id, 0)
        .await
        .reading(trace_id)?
        .last()
        .map_or(0, |event| event.event_id);
    Err(ApiError::bad_request(
        "invalid_query",
        format!("since_event_id {since} is beyond the newest event of the trace ({newest})"),
    ))
}

/// Writes to one client, each write bounded by the send timeout.
struct Outbox {
    sink: SplitSink<WebSocket, Message>,
    send_timeout: Duration,
}

/// Why writing to a client stopped.
enum WriteError {
    /// The client did not accept data within the send timeout.
    TooSlow,
    /// The connection is gone.
    Closed,
}

/// A live-only delta as a watch client gets it.
#[derive(Serialize)]
struct DeltaMessage<'a> {
    event: &'static str,
    trace_id: &'a str,
    goal_id: Option<&'a str>,
    delta: &'a str,
}

impl Outbox {
    async fn feed(&mut self, item: &SharedItem) -> Result<(), WriteError> {
        match item {
            // Serialised once for every watcher of the trace, and sent without a copy.
            SharedItem::Stored(shared) => match shared.json().map(Utf8Bytes::try_from) {
                Some(Ok(json)) => self.bounded_feed(Message::Text(json)).await,
                Some(Err(_)) | None => {
                    let event_id = shared.event().event_id;
                    tracing::error!(event_id, "an event cannot be serialised");
                    Err(WriteError::Closed)
                }
            },
            SharedItem::Delta(delta) => self.feed_json(&delta_message(delta), 0).await,
        }
    }

    async fn feed_json<T: Serialize>(&mut self, item: &T, event_id: u64) -> Result<(), WriteError> {
        let text = match serde_json::to_string(item) {
            Ok(text) => text,
            Err(error) => {
                tracing::error!(%error, event_id, "an event cannot be serialised");
                return Err(WriteError::Closed);
            }
        };
        self.bounded_feed(Message::Text(text.into())).await
    }

    async fn bounded_feed(&mut self, message: Message) -> Result<(), WriteError> {
        match timeout(self.send_timeout, self.sink.feed(message)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(WriteError::Closed),
            Err(_) => Err(WriteError::TooSlow),
        }
    }

    async fn flush(&mut self) -> Result<(), WriteError> {
        match timeout(self.send_timeout, self.sink.flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(WriteError::Closed),
            Err(_) => Err(WriteError::TooSlow),
        }
    }

    async fn close(mut self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        // The client may be gone or stuck; the connection is dropped either way.
        let _ = timeout(CLOSE_TIMEOUT, self.sink.send(Message::Close(Some(frame)))).await;
    }

    async fn close_after(self, error: WriteError) {
        match error {
            WriteError::TooSlow => {
                tracing::info!("closing a watch client that accepts no data");
                self.close(POLICY, "client too slow").await;
            }
            WriteError::Closed => {}
        }
    }
}

fn delta_message(delta: &LiveDelta) -> DeltaMessage<'_> {
    DeltaMessage {
        event: match delta.kind {
            DeltaKind::Text | DeltaKind::Report => "text_delta",
            DeltaKind::Reasoning => "reasoning_delta",
        },
        trace_id: &delta.trace_id,
        goal_id: delta.goal_id.as_deref(),
        delta: &delta.delta,
    }
}

async fn session(socket: WebSocket, state: AppState, mut snapshot: Snapshot) {
    let settings: WatchConfig = state.config().watch.clone();
    let shutdown = state.shutdown_token().clone();
    let (sink, mut incoming) = socket.split();
    let mut out = Outbox {
        sink,
        send_timeout: settings.send_timeout,
    };
    let connected = snapshot.connected();
    let live = watch_shared(
        state.store().clone(),
        &snapshot.trace_id,
        snapshot.current_event_id,
    );
    let stored = std::mem::take(&mut snapshot.stored);
    let mut feed: SharedStream = futures::stream::iter(
        stored
            .into_iter()
            .map(|e| Ok(SharedItem::Stored(SharedEvent::new(e)))),
    )
    .chain(live)
    .boxed();
    if let Err(error) = async {
        out.feed_json(&connected, connected.event_id).await?;
        out.flush().await
    }
    .await
    {
        return out.close_after(error).await;
    }

    let interval = settings.ping_interval;
    let mut ping = tokio::time::interval_at(Instant::now() + interval, interval);
    let mut last_heard = Instant::now();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                return out.close(GOING_AWAY, "server shutting down").await;
            }
            frame = incoming.next() => match frame {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => last_heard = Instant::now(),
            },
            _ = ping.tick() => {
                if last_heard.elapsed() > interval * 2 {
                    tracing::info!(trace_id = %snapshot.trace_id, "closing a watch client that stopped answering pings");
                    return out.close(POLICY, "no pong: keepalive timeout").await;
                }
                let sent = async {
                    out.bounded_feed(Message::Ping(Default::default())).await?;
                    out.flush().await
                }.await;
                if let Err(error) = sent {
                    return out.close_after(error).await;
                }
            }
            item = feed.next() => {
                let result = match item {
                    Some(Ok(event)) => send_batch(&mut out, &mut feed, event, settings.max_batch).await,
                    Some(Err(error)) => {
                        tracing::warn!(trace_id = %snapshot.trace_id, %error, "a watch could not read the trace");
                        return out.close(SERVER_ERROR, "the trace could not be read").await;
                    }
                    None => return out.close(GOING_AWAY, "the event feed ended").await,
                };
                match result {
                    Ok(None) => {}
                    Ok(Some(error)) => {
                        tracing::warn!(trace_id = %snapshot.trace_id, %error, "a watch could not read the trace");
                        return out.close(SERVER_ERROR, "the trace could not be read").await;
                    }
                    Err(error) => return out.close_after(error).await,
                }
            }
        }
    }
}

/// Writes `first` and whatever else is ready at once (up to `max_batch` events), then
/// flushes. Returns a feed error met while draining, after writing the events before it.
async fn send_batch(
    out: &mut Outbox,
    feed: &mut SharedStream,
    first: SharedItem,
    max_batch: usize,
) -> Result<Option<agent_execution::StoreError>, WriteError> {
    out.feed(&first).await?;
    let mut failure = None;
    for _ in 1..max_batch.max(1) {
        match feed.next().now_or_never() {
            Some(Some(Ok(event))) => out.feed(&event).await?,
            Some(Some(Err(error))) => {
                failure = Some(error);
                break;
            }
            Some(None) | None => break,
        }
    }
    out.flush().await?;
    Ok(failure)
}
