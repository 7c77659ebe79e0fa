//! The live watch over a real listener on port 0 with a real WebSocket client: `connected`
//! first, resuming from the middle while a run writes, two watchers, a slow watcher, ping/pong
//! keepalive, shutdown, and client frames larger than the watch's read buffer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_api::{ApiConfig, AppState, Server, WatchConfig};
use agent_execution::{InMemoryTraceStore, NewMessage, NewTrace, TraceOutcome, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::ToolRegistry;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A server on a free loopback port.
struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), agent_api::ApiError>>,
}

impl Running {
    async fn start(state: AppState) -> Self {
        let server = Server::bind(state).await.unwrap();
        let addr = server.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Self {
            addr,
            stop: Some(stop),
            task,
        }
    }

    fn url(&self, trace_id: &str, since: u64) -> String {
        format!(
            "ws://{}/api/traces/{trace_id}/watch?since_event_id={since}",
            self.addr
        )
    }

    async fn connect(&self, trace_id: &str, since: u64) -> Client {
        let (client, _) = tokio_tungstenite::connect_async(self.url(trace_id, since))
            .await
            .unwrap();
        client
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}

fn config() -> ApiConfig {
    ApiConfig {
        port: 0,
        ..ApiConfig::default()
    }
}

/// The next JSON message, skipping pings; `None` when the socket closes.
async fn next_json(client: &mut Client) -> Option<Value> {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), client.next())
            .await
            .expect("no message within 10 s")?
            .ok()?;
        match message {
            Message::Text(text) => return Some(serde_json::from_str(&text).unwrap()),
            Message::Close(_) => return None,
            _ => {}
        }
    }
}

/// Reads events until `trace_completed`, returning their ids (live-only deltas have none and
/// are left out).
async fn ids_until_completed(client: &mut Client) -> Vec<u64> {
    let mut ids = Vec::new();
    loop {
        let event = next_json(client)
            .await
            .expect("closed before trace_completed");
        if event.get("event_id").is_none() {
            continue;
        }
        ids.push(event["event_id"].as_u64().unwrap());
        if event["event"] == "trace_completed" {
            return ids;
        }
    }
}

/// A runner over `store` making `turns` goal calls, each after `delay`, then answering.
fn busy_runner(
    store: Arc<dyn TraceStore>,
    turns: usize,
    delay: Duration,
    workspace: &std::path::Path,
) -> AgentRunner {
    let mut script: Vec<ScriptedTurn> = (0..turns)
        .map(|i| {
            ScriptedTurn::tool_call("goal", json!({"add": format!("Step {i}")})).with_delay(delay)
        })
        .collect();
    script.push(ScriptedTurn::text("done"));
    let mut options = RunnerOptions::new("scripted", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.max_iterations = turns as u32 + 5;
    AgentRunner::new(
        store,
        Arc::new(ScriptedClient::new(script)),
        ToolRegistry::new(),
        options,
    )
}

async fn newest(store: &Arc<dyn TraceStore>, trace_id: &str) -> u64 {
    store
        .get_events(trace_id, 0)
        .await
        .unwrap()
        .last()
        .unwrap()
        .event_id
}

#[tokio::test]
async fn connected_comes_first_then_every_stored_event_then_live_ones() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let trace = store
        .create_trace(NewTrace::agent("Watch me"))
        .await
        .unwrap();
    let id = trace.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Watch me"))
        .await
        .unwrap();
    let sub = store
        .create_trace(NewTrace::sub_trace(&id, None, "delegate", "Help"))
        .await
        .unwrap();
    store
        .finish_trace(&id, TraceOutcome::completed("ok"))
        .await
        .unwrap();
    let last = newest(&store, &id).await;
    let running = Running::start(
        AppState::builder(store.clone())
            .config(config())
            .build()
            .unwrap(),
    )
    .await;

    let mut client = running.connect(&id, 0).await;
    let connected = next_json(&mut client).await.unwrap();
    assert_eq!(connected["event"], "connected");
    assert_eq!(connected["event_id"], 0);
    assert_eq!(connected["trace_id"], id.as_str());
    assert_eq!(connected["current_event_id"], last);
    assert_eq!(connected["goal_tree"]["mission"], "Watch me");
    assert_eq!(
        connected["sub_traces"][0]["trace_id"],
        sub.trace_id.as_str()
    );
    assert_eq!(
        ids_until_completed(&mut client).await,
        (1..=last).collect::<Vec<_>>()
    );

    // A stopped trace stays watchable: a later write arrives live.
    store
        .add_message(&id, NewMessage::user("More"))
        .await
        .unwrap();
    let live = next_json(&mut client).await.unwrap();
    assert!(live["event_id"].as_u64().unwrap() > last);
    assert_eq!(live["event_id"], newest(&store, &id).await);

    // From the middle: `connected` carries the requested id, then only newer events.
    let mut middle = running.connect(&id, 3).await;
    let connected = next_json(&mut middle).await.unwrap();
    assert_eq!(connected["event_id"], 3);
    let mut ids = Vec::new();
    while ids.last() != Some(&newest(&store, &id).await) {
        ids.push(
            next_json(&mut middle).await.unwrap()["event_id"]
                .as_u64()
                .unwrap(),
        );
    }
    assert_eq!(ids, (4..=newest(&store, &id).await).collect::<Vec<_>>());
    running.stop().await;
}

#[tokio::test]
async fn a_watch_resumed_from_the_middle_of_a_run_gets_every_later_event_once() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let running = Running::start(
        AppState::builder(store.clone())
            .config(config())
            .build()
            .unwrap(),
    )
    .await;
    let runner = busy_runner(
        store.clone(),
        30,
        Duration::from_millis(15),
        workspace.path(),
    );
    let handle = runner.start("Busy").await.unwrap();
    let id = handle.trace_id.clone();

    // Join while the run is writing, from an id in the middle of what is stored.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while newest(&store, &id).await < 20 {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let since = 12;
    let mut first = running.connect(&id, since).await;
    let connected = next_json(&mut first).await.unwrap();
    assert_eq!(connected["event_id"], since);
    assert!(connected["current_event_id"].as_u64().unwrap() >= 20);
    // A second watcher joins a little later, from the start.
    tokio::time::sleep(Duration::from_millis(40)).await;
    let mut second = running.connect(&id, 0).await;
    assert_eq!(next_json(&mut second).await.unwrap()["event"], "connected");

    let first_ids = ids_until_completed(&mut first).await;
    let second_ids = ids_until_completed(&mut second).await;
    handle.wait().await.unwrap();
    let last = newest(&store, &id).await;
    assert_eq!(first_ids, (since + 1..=last).collect::<Vec<_>>());
    assert_eq!(second_ids, (1..=last).collect::<Vec<_>>());
    running.stop().await;
}

#[tokio::test]
async fn a_slow_watcher_gets_every_event_in_order_without_slowing_the_run() {
    // A tiny feed buffer makes the slow watcher fall behind and catch up from the store.
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::with_feed_capacity(4));
    let workspace = tempfile::tempdir().unwrap();
    // The idle watcher must not be closed for not reading while the run goes on, however
    // slow a loaded machine makes the run.
    let mut watch_config = config();
    watch_config.watch.send_timeout = Duration::from_secs(600);
    let running = Running::start(
        AppState::builder(store.clone())
            .config(watch_config)
            .build()
            .unwrap(),
    )
    .await;
    let runner = busy_runner(store.clone(), 80, Duration::ZERO, workspace.path());
    let id = runner.create("Fast").await.unwrap();

    // A client with a small receive buffer that reads nothing while the run goes on.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(running.addr).await.unwrap();
    let (mut slow, _) =
        tokio_tungstenite::client_async(running.url(&id, 0), MaybeTlsStream::Plain(stream))
            .await
            .unwrap();
    assert_eq!(next_json(&mut slow).await.unwrap()["event"], "connected");
    let mut fast = running.connect(&id, 0).await;
    assert_eq!(next_json(&mut fast).await.unwrap()["event"], "connected");

    let run = tokio::spawn({
        let runner = runner.clone();
        let id = id.clone();
        async move { runner.drive(&id, Default::default()).await.unwrap() }
    });
    let fast_ids = tokio::spawn(async move { ids_until_completed(&mut fast).await });
    // A run that waited for its watchers would never end while this one reads nothing: the
    // bound only guards against a hang, it is not a speed requirement.
    tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the run waited for a watcher that was not reading")
        .unwrap();

    // Only now does the slow watcher read, a message every few milliseconds: it still gets
    // every event, in order, caught up from the store past the tiny feed buffer.
    let mut slow_ids = Vec::new();
    loop {
        let event = next_json(&mut slow)
            .await
            .expect("the slow watcher was closed");
        // Live-only deltas (no `event_id`) that fitted in its buffers may come first.
        let Some(event_id) = event.get("event_id") else {
            continue;
        };
        slow_ids.push(event_id.as_u64().unwrap());
        if event["event"] == "trace_completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let last = newest(&store, &id).await;
    assert!(last > 300, "the run wrote only {last} events");
    assert_eq!(slow_ids, (1..=last).collect::<Vec<_>>());
    assert_eq!(fast_ids.await.unwrap(), (1..=last).collect::<Vec<_>>());
    running.stop().await;
}

#[tokio::test]
async fn the_server_pings_and_closes_clients_that_stop_answering() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let trace = store.create_trace(NewTrace::agent("Idle")).await.unwrap();
    let config = ApiConfig {
        port: 0,
        watch: WatchConfig {
            ping_interval: Duration::from_millis(100),
            ..WatchConfig::default()
        },
        ..ApiConfig::default()
    };
    let running = Running::start(AppState::builder(store).config(config).build().unwrap()).await;

    // A client that keeps reading answers every ping and stays connected.
    let mut alive = running.connect(&trace.trace_id, 0).await;
    let mut pings = 0;
    let until = tokio::time::Instant::now() + Duration::from_millis(550);
    while let Ok(message) = tokio::time::timeout_at(until, alive.next()).await {
        match message.unwrap().unwrap() {
            Message::Ping(_) => pings += 1,
            Message::Close(frame) => panic!("a live client was closed: {frame:?}"),
            _ => {}
        }
    }
    assert!(pings >= 3, "{pings} pings");
    alive.send(Message::Text("hello".into())).await.unwrap();

    // A client that reads nothing sends no pongs and is closed with a reason.
    let mut silent = running.connect(&trace.trace_id, 0).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut close = None;
    while let Ok(Some(Ok(message))) =
        tokio::time::timeout(Duration::from_secs(5), silent.next()).await
    {
        if let Message::Close(frame) = message {
            close = frame;
            break;
        }
    }
    let close = close.expect("no close frame");
    assert_eq!(close.code, CloseCode::Policy);
    assert!(close.reason.contains("pong"), "{}", close.reason);
    running.stop().await;
}

#[tokio::test]
async fn shutdown_closes_watchers_with_going_away() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let trace = store.create_trace(NewTrace::agent("Idle")).await.unwrap();
    let running = Running::start(AppState::builder(store).config(config()).build().unwrap()).await;
    let mut client = running.connect(&trace.trace_id, 0).await;
    assert_eq!(next_json(&mut client).await.unwrap()["event"], "connected");
    assert_eq!(
        next_json(&mut client).await.unwrap()["event"],
        "trace_created"
    );
    running.stop().await;
    let mut close = None;
    while let Ok(Some(Ok(message))) =
        tokio::time::timeout(Duration::from_secs(5), client.next()).await
    {
        if let Message::Close(frame) = message {
            close = frame;
            break;
        }
    }
    let close = close.expect("no close frame");
    assert_eq!(close.code, CloseCode::Away);
    assert_eq!(close.reason.as_str(), "server shutting down");
}

#[tokio::test]
async fn the_watch_checks_the_token_from_the_header_or_the_query() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let trace = store.create_trace(NewTrace::agent("Secret")).await.unwrap();
    let config = ApiConfig {
        port: 0,
        token: Some("s3cret".into()),
        ..ApiConfig::default()
    };
    let running = Running::start(AppState::builder(store).config(config).build().unwrap()).await;
    let url = running.url(&trace.trace_id, 0);
    let refused = tokio_tungstenite::connect_async(url.clone())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("401"), "{refused}");
    let (mut by_query, _) = tokio_tungstenite::connect_async(format!("{url}&token=s3cret"))
        .await
        .unwrap();
    assert_eq!(
        next_json(&mut by_query).await.unwrap()["event"],
        "connected"
    );
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    let (mut by_header, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        next_json(&mut by_header).await.unwrap()["event"],
        "connected"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_watcher_gets_the_text_as_it_streams_before_the_message_is_added() {
    use agent_llm::{OpenAiClient, OpenAiConfig};
    use agent_test_support::mock_model::{MockModelServer, Reply, Turn};

    let workspace = tempfile::tempdir().unwrap();
    let answer = "Streaming reaches the watcher word by word.";
    // Three pieces of text, 200 ms apart.
    let server = MockModelServer::with_replies([
        Reply::from(Turn::text(answer)).with_pause(Duration::from_millis(200))
    ])
    .await;
    let openai = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()));
    let llm = Arc::new(OpenAiClient::new(openai).unwrap());
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let options = RunnerOptions::new("mock-model", workspace.path());
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::new(), options);
    let trace_id = runner.create("Stream to me").await.unwrap();
    let running = Running::start(
        AppState::builder(store.clone())
            .config(config())
            .build()
            .unwrap(),
    )
    .await;
    let mut client = running.connect(&trace_id, 0).await;
    assert_eq!(next_json(&mut client).await.unwrap()["event"], "connected");
    let run = {
        let id = trace_id.clone();
        tokio::spawn(async move {
            runner
                .drive(&id, tokio_util::sync::CancellationToken::new())
                .await
        })
    };

    let mut deltas = Vec::new();
    let mut first_delta_while_streaming = None;
    loop {
        let message = next_json(&mut client).await.expect("closed before the end");
        match message["event"].as_str().unwrap() {
            "text_delta" => {
                assert!(message.get("event_id").is_none(), "{message}");
                assert_eq!(message["trace_id"], trace_id.as_str());
                if deltas.is_empty() {
                    // The model is still sending: its last piece has not been written yet.
                    let stored = store.get_trace_messages(&trace_id).await.unwrap();
                    first_delta_while_streaming = Some(
                        !run.is_finished() && !stored.iter().any(|m| m.content.text() == answer),
                    );
                }
                deltas.push(message["delta"].as_str().unwrap().to_owned());
            }
            "message_added" if message["message"]["role"] == "assistant" => {
                assert!(message["message"].to_string().contains(answer), "{message}");
                break;
            }
            _ => assert!(message.get("event_id").is_some(), "{message}"),
        }
    }
    assert!(deltas.len() >= 2, "{deltas:?}");
    assert_eq!(deltas.concat(), answer);
    assert_eq!(first_delta_while_streaming, Some(true));
    run.await.unwrap().unwrap();
    running.stop().await;
}

#[tokio::test]
async fn a_client_frame_larger_than_the_read_buffer_is_read_and_one_past_the_limit_closes() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let id = store
        .create_trace(NewTrace::agent("Big frames"))
        .await
        .unwrap()
        .trace_id;
    let running = Running::start(
        AppState::builder(store.clone())
            .config(config())
            .build()
            .unwrap(),
    )
    .await;

    // A 60 KiB frame (the watch reads in 4 KiB, and accepts frames up to 64 KiB): the watch
    // stays open and the next commit still arrives live.
    let mut client = running.connect(&id, 0).await;
    assert_eq!(next_json(&mut client).await.unwrap()["event"], "connected");
    client
        .send(Message::Text("x".repeat(60 * 1024).into()))
        .await
        .unwrap();
    client.send(Message::Ping(Vec::new().into())).await.unwrap();
    // The stored `trace_created` may come first; the pong proves the big frame was read.
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), client.next())
            .await
            .expect("no pong within 10 s")
            .unwrap()
            .unwrap();
        match message {
            Message::Pong(_) => break,
            Message::Text(_) => {}
            other => panic!("got {other:?}"),
        }
    }
    store
        .add_message(&id, NewMessage::user("after the big frame"))
        .await
        .unwrap();
    let live = loop {
        let event = next_json(&mut client).await.unwrap();
        if event["event"] == "message_added" {
            break event;
        }
    };
    assert_eq!(live["message"]["content"], "after the big frame");

    // A frame over the limit ends the watch.
    let mut client = running.connect(&id, 0).await;
    assert_eq!(next_json(&mut client).await.unwrap()["event"], "connected");
    let _ = client
        .send(Message::Text("x".repeat(65 * 1024).into()))
        .await;
    let mut closed = false;
    for _ in 0..100 {
        match tokio::time::timeout(Duration::from_secs(10), client.next()).await {
            Ok(None | Some(Err(_)) | Some(Ok(Message::Close(_)))) => {
                closed = true;
                break;
            }
            Ok(Some(Ok(_))) => {}
            Err(_) => break,
        }
    }
    assert!(closed, "a frame over the limit did not end the watch");
    running.stop().await;
}
