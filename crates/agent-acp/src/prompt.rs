//! `session/prompt`: one user turn, its updates streamed to the client as the run records
//! them, answered with how the turn ended.

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResourceResource, PromptRequest, PromptResponse, SessionNotification,
    SessionUpdate, StopReason as AcpStop,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use agent_execution::message::UserInput;
use agent_execution::{EventKind, LiveEvent, TraceStatus, watch_live};
use agent_llm::ChatImage;
use agent_runner::{RunOutcome, StopReason};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::commands::GoalTurn;
use crate::session::{internal, unknown};
use crate::state::State;
use crate::updates::{Follower, changes_goals, text};

/// How long the updates of a finished run may take to arrive after it returned.
const DRAIN: Duration = Duration::from_secs(2);

/// Numbers the turns, so a turn that ends clears its own mark only.
static TURNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Starts the turn `request` asks for and returns at once: the turn runs outside the dispatch
/// loop (it asks the client for permissions, whose answers arrive through that loop), and
/// answers the request when it ends.
pub(crate) async fn start(
    state: Arc<State>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let id = request.session_id.0.to_string();
    let message = prompt_text(&request.prompt);
    if message.trim().is_empty() {
        return responder.respond_with_error(Error::new(-32602, "the prompt has no text"));
    }
    let images = match prompt_images(&request.prompt) {
        Ok(images) => images,
        Err(error) => return responder.respond_with_error(Error::new(-32602, error)),
    };
    let cancel = CancellationToken::new();
    let number = TURNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    {
        let mut sessions = state.sessions.lock().await;
        let Some(session) = sessions.get_mut(&id) else {
            return responder.respond_with_error(unknown(&id));
        };
        if session.turn.is_some() {
            return responder.respond_with_error(Error::new(
                -32602,
                "a turn of this session is going on; cancel it or wait for its answer",
            ));
        }
        session.turn = Some((number, cancel.clone()));
    }
    let task_cx = cx.clone();
    let task_state = state.clone();
    let task_id = id.clone();
    let spawned = cx.spawn(async move {
        let (state, id) = (task_state, task_id);
        let said = UserInput {
            text: &message,
            images: &images,
        };
        let result = turn(&state, &id, said, cancel.clone(), &task_cx).await;
        state.host.turn_ended(&id);
        end_turn(&state, &id, number).await;
        match result {
            Ok(stop) => responder.respond(PromptResponse::new(stop)),
            // A run cut short by the client's cancel is a cancelled turn, however it ended.
            Err(_) if cancel.is_cancelled() => {
                responder.respond(PromptResponse::new(AcpStop::Cancelled))
            }
            Err(error) => responder.respond_with_error(error),
        }
    });
    if spawned.is_err() {
        end_turn(&state, &id, number).await;
    }
    spawned
}

/// Marks turn `number` of session `id` over, unless a newer turn took its place (the session
/// was closed and opened again meanwhile).
async fn end_turn(state: &State, id: &str, number: u64) {
    if let Some(session) = state.sessions.lock().await.get_mut(id)
        && session.turn.as_ref().is_some_and(|(n, _)| *n == number)
    {
        session.turn = None;
    }
}

/// The prompt as one user message: its text, each embedded file as a fenced block under its
/// URI, each linked resource as its URI.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(format!("@{}", link.uri)),
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::TextResourceContents(file) = &resource.resource {
                    parts.push(format!("{}:\n```\n{}\n```", file.uri, file.text));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}

/// The pictures of the prompt's `image` blocks, in order; one that is not a PNG, JPEG, GIF or
/// WebP picture, or too large, refuses the prompt with the reason.
fn prompt_images(blocks: &[ContentBlock]) -> Result<Vec<ChatImage>, String> {
    let mut images = Vec::new();
    for block in blocks {
        if let ContentBlock::Image(image) = block {
            let name = image.uri.as_deref().and_then(|uri| uri.rsplit('/').next());
            let picture = ChatImage::from_base64(&image.data, name)
                .map_err(|error| format!("image block {}: {error}", images.len() + 1))?;
            images.push(picture);
        }
    }
    Ok(images)
}

/// Runs the turn, forwarding its updates, until it ends.
async fn turn(
    state: &State,
    id: &str,
    said: UserInput<'_>,
    cancel: CancellationToken,
    cx: &ConnectionTo<Client>,
) -> Result<AcpStop, Error> {
    let (runner, cwd, mut created) = {
        let sessions = state.sessions.lock().await;
        let session = sessions.get(id).ok_or_else(|| unknown(id))?;
        (session.runner.clone(), session.cwd.clone(), session.created)
    };
    // A command of the host (`/name args`) becomes its prompt.
    let message = state
        .host
        .expand(&cwd, said.text)
        .map_err(|error| Error::new(-32602, error))?;
    let message = message.as_str();
    let store = runner.store().clone();
    let say = |words: String| {
        let update = SessionUpdate::AgentMessageChunk(text(words));
        let _ = cx.send_notification(SessionNotification::new(id.to_owned(), update));
    };
    let mut message = message.to_owned();
    if let Some(args) = crate::commands::goal_args(&message) {
        match crate::commands::goal(&runner, id, created, args).await {
            Ok(GoalTurn::Say(words)) => {
                say(words);
                return Ok(AcpStop::EndTurn);
            }
            Ok(GoalTurn::Work(work)) => {
                message = work;
                if !created && let Some(session) = state.sessions.lock().await.get_mut(id) {
                    session.created = true;
                }
                created = true;
            }
            Err(error) => return Err(Error::new(-32602, error)),
        }
    }
    let message = UserInput {
        text: message.as_str(),
        images: said.images,
    };
    if !created {
        runner
            .create_as(id, message)
            .await
            .map_err(|e| internal(&e))?;
        if let Some(session) = state.sessions.lock().await.get_mut(id) {
            session.created = true;
        }
    }
    let since = store
        .get_events(id, 0)
        .await
        .map_err(|e| internal(&e))?
        .last()
        .map_or(0, |e| e.event_id);
    let feed = watch_live(store.clone(), id, since);
    let started = if created {
        runner.continue_in_background(id, message, cancel).await
    } else {
        runner.resume_in_background(id, cancel).await
    };
    let handle = started.map_err(|e| Error::new(-32602, e.to_string()))?;
    let announcer = crate::updates::Announcer {
        connection: cx.clone(),
        session_id: id.to_owned(),
        sessions: state.sessions.clone(),
    };
    let mut follower = Follower::new(cwd, state.host.context_window(), announcer);
    let forward = {
        let cx = cx.clone();
        let id = id.to_owned();
        let store = store.clone();
        async move {
            let mut feed = feed;
            while let Some(Ok(event)) = feed.next().await {
                let mut updates = follower.updates(&event, store.as_ref()).await;
                if changes_goals(&event)
                    && let Some(plan) = follower.plan(&id, store.as_ref()).await
                {
                    updates.push(plan);
                }
                for update in updates {
                    let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
                }
                if matches!(&event, LiveEvent::Stored(e) if matches!(e.kind, EventKind::TraceCompleted { .. }))
                {
                    break;
                }
            }
        }
    };
    let mut forwarding = tokio::spawn(forward);
    let outcome = handle.wait().await;
    // The last updates go out before the answer; a feed that never says the run ended is
    // stopped rather than left to send into the next turn.
    if tokio::time::timeout(DRAIN, &mut forwarding).await.is_err() {
        forwarding.abort();
    }
    let outcome = outcome.map_err(|e| internal(&e))?;
    stop_reason(&outcome, id, cx)
}

/// How the turn ended, in ACP's words. A run stopped by its cost budget, the loop guard or a
/// failure ends the turn with the reason said as the agent's last words; a model that failed
/// is an error.
fn stop_reason(
    outcome: &RunOutcome,
    id: &str,
    cx: &ConnectionTo<Client>,
) -> Result<AcpStop, Error> {
    let say = |words: String| {
        let update = SessionUpdate::AgentMessageChunk(text(words));
        let _ = cx.send_notification(SessionNotification::new(id.to_owned(), update));
    };
    let error = outcome.error.clone().unwrap_or_default();
    match outcome.stop {
        StopReason::Completed if outcome.status != TraceStatus::Failed => Ok(AcpStop::EndTurn),
        StopReason::Cancelled => Ok(AcpStop::Cancelled),
        StopReason::MaxIterations => Ok(AcpStop::MaxTurnRequests),
        StopReason::Truncated => Ok(AcpStop::MaxTokens),
        StopReason::MaxCost | StopReason::Stuck => {
            say(format!("\n\n(stopped: {error})"));
            Ok(AcpStop::EndTurn)
        }
        // ACP has no stop reason of its own for it: the turn ends, and the goals left open
        // are said as the agent's last words (the plan update shows them too).
        StopReason::Incomplete => {
            let left = agent_runner::PendingGoal::list(&outcome.pending_goals);
            say(format!("\n\n(stopped with goals left open: {left})"));
            Ok(AcpStop::EndTurn)
        }
        _ => Err(Error::new(-32603, format!("the run failed: {error}"))),
    }
}
