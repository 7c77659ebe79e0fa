//! What a trace's events look like to an ACP client: the session updates of a turn as it runs
//! ([`Follower`]) and the pieces [`crate::replay`] shares with it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Diff, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use agent_execution::{Content, DeltaKind, Event, EventKind, LiveEvent, Message, TraceStore};
use agent_llm::{Role, ToolCall as ModelCall};
use serde_json::Value;

use crate::plan::plan_of;

/// The tool whose calls are shown as plan updates rather than as tool calls.
pub(crate) const GOAL_TOOL: &str = "goal";

/// A text chunk.
pub(crate) fn text(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// The ACP kind of one of the runtime's tools (MCP tools and unknown ones are `other`).
pub(crate) fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "read_progress" => ToolKind::Read,
        "glob_files" | "grep" => ToolKind::Search,
        "write_file" | "edit_file" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        "explore" | "delegate" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// Whether calls of `kind` run without asking: their `in_progress` update follows `pending` at
/// once, while the others wait for their approval.
fn runs_at_once(kind: ToolKind) -> bool {
    matches!(
        kind,
        ToolKind::Read | ToolKind::Search | ToolKind::Think | ToolKind::Fetch
    )
}

/// The call's arguments as JSON (`null` when the model wrote something that is not JSON).
fn arguments(call: &ModelCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or(Value::Null)
}

/// A one-line title: the tool and what it works on (`bash: cargo test`, `read_file src/a.rs`).
pub(crate) fn title_of(call: &ModelCall) -> String {
    let args = arguments(call);
    let field = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    let subject = match call.name.as_str() {
        "bash" => field("command").map(|c| format!(": {}", first_line(&c))),
        "grep" | "glob_files" => field("pattern").map(|p| format!(" {p}")),
        "delegate" => field("task").map(|t| format!(": {}", first_line(&t))),
        _ => field("path").map(|p| format!(" {p}")),
    };
    format!("{}{}", call.name, subject.unwrap_or_default())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The file a call works on, resolved inside the workspace as the tools resolve it, if it
/// names one there.
fn path_of(call: &ModelCall, cwd: &Path) -> Option<PathBuf> {
    let path = arguments(call).get("path")?.as_str()?.to_owned();
    agent_tools::resolve_in_workspace(cwd, &path).ok()
}

/// The most of a file shown as the old text of a diff.
const MAX_OLD_TEXT: u64 = 256 * 1024;

/// A regular file's text as it is now, if it is small enough to show (never a device, a pipe
/// or a folder).
fn current_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_OLD_TEXT {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The `tool_call` announcing `call`, pending; a file edit carries its diff (`old_text` is the
/// file as it is now, read before the call runs, for `write_file` when `read_old` — a replay
/// reads nothing).
pub(crate) fn announce(call: &ModelCall, cwd: &Path, read_old: bool) -> ToolCall {
    let kind = kind_of(&call.name);
    let mut tool_call = ToolCall::new(call.id.clone(), title_of(call))
        .kind(kind)
        .status(ToolCallStatus::Pending)
        .raw_input(arguments(call));
    if let Some(path) = path_of(call, cwd) {
        tool_call = tool_call.locations(vec![ToolCallLocation::new(path.clone())]);
        if let Some(diff) = diff_of(call, &path, read_old) {
            tool_call = tool_call.content(vec![ToolCallContent::Diff(diff)]);
        }
    }
    tool_call
}

/// The change a `write_file` or `edit_file` call asks for.
pub(crate) fn diff_of(call: &ModelCall, path: &Path, read_old: bool) -> Option<Diff> {
    let args = arguments(call);
    let field = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    match call.name.as_str() {
        "write_file" => {
            let old = if read_old { current_text(path) } else { None };
            Some(Diff::new(path, field("content")?).old_text(old))
        }
        "edit_file" => Some(Diff::new(path, field("new_string")?).old_text(field("old_string"))),
        _ => None,
    }
}

/// The `tool_call_update` closing a call with its result.
pub(crate) fn result_update(message: &Message) -> Option<ToolCallUpdate> {
    let Content::ToolResult(result) = &message.content else {
        return None;
    };
    let id = message.tool_call_id.clone()?;
    let status = if result.is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let content = ToolCallContent::Content(agent_client_protocol::v1::schema::Content::new(
        ContentBlock::Text(TextContent::new(result.output.clone())),
    ));
    Some(ToolCallUpdate::new(
        id,
        ToolCallUpdateFields::new()
            .status(status)
            .content(vec![content])
            .raw_output(Value::String(result.output.clone())),
    ))
}

/// A call's status changed (e.g. approved: `in_progress`).
pub(crate) fn status_update(id: &str, status: ToolCallStatus) -> ToolCallUpdate {
    ToolCallUpdate::new(id.to_owned(), ToolCallUpdateFields::new().status(status))
}

/// Follows one turn of a session: turns the trace's live events into session updates.
pub(crate) struct Follower {
    /// The session's working directory, for file paths.
    cwd: PathBuf,
    /// Text was streamed since the last assistant message, so its stored text is not resent.
    text_streamed: bool,
    /// Reasoning was streamed since the last assistant message.
    reasoning_streamed: bool,
    /// The calls announced and not finished yet, by id.
    open_calls: HashSet<String>,
    /// The model's context window, for `usage_update`.
    context_window: u64,
    /// The plan last sent: a goal change that leaves the plan as it was sends nothing.
    last_plan: Option<agent_client_protocol::v1::schema::Plan>,
    /// Sends what must keep its order with the permission questions: tool call announcements.
    announcer: Announcer,
}

/// Announces tool calls to the client once each, in order with the permission questions: the
/// follower and the approval handler both go through the session's `announced` set under its
/// lock, so a call's `pending` always comes before its `in_progress`.
#[derive(Clone)]
pub(crate) struct Announcer {
    pub(crate) connection: agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client>,
    pub(crate) session_id: String,
    pub(crate) sessions: std::sync::Arc<crate::session::Sessions>,
}

impl Announcer {
    /// Sends one update to the client.
    pub(crate) fn send(&self, update: SessionUpdate) {
        let notification = agent_client_protocol::v1::schema::SessionNotification::new(
            self.session_id.clone(),
            update,
        );
        let _ = self.connection.send_notification(notification);
    }

    /// Announces `call` (pending) unless it was announced; whether this did.
    pub(crate) async fn announce(&self, call: &ModelCall, cwd: &Path) -> bool {
        let mut sessions = self.sessions.lock().await;
        let Some(session) = sessions.get_mut(&self.session_id) else {
            return false;
        };
        if !session.announced.insert(call.id.clone()) {
            return false;
        }
        self.send(SessionUpdate::ToolCall(announce(call, cwd, true)));
        true
    }
}

impl Follower {
    /// A follower for a session working in `cwd`.
    pub(crate) fn new(cwd: PathBuf, context_window: u64, announcer: Announcer) -> Self {
        Self {
            announcer,
            cwd,
            text_streamed: false,
            reasoning_streamed: false,
            open_calls: HashSet::new(),
            context_window,
            last_plan: None,
        }
    }

    /// The updates one live event makes (none for most events).
    pub(crate) async fn updates(
        &mut self,
        event: &LiveEvent,
        store: &dyn TraceStore,
    ) -> Vec<SessionUpdate> {
        match event {
            LiveEvent::Delta(delta) if delta.delta.is_empty() => Vec::new(),
            LiveEvent::Delta(delta) => match delta.kind {
                DeltaKind::Text | DeltaKind::Report => {
                    self.text_streamed = true;
                    vec![SessionUpdate::AgentMessageChunk(text(&delta.delta))]
                }
                DeltaKind::Reasoning => {
                    self.reasoning_streamed = true;
                    vec![SessionUpdate::AgentThoughtChunk(text(&delta.delta))]
                }
            },
            LiveEvent::Stored(event) => self.stored(event, store).await,
        }
    }

    async fn stored(&mut self, event: &Event, store: &dyn TraceStore) -> Vec<SessionUpdate> {
        match &event.kind {
            EventKind::MessageAdded { message, .. } => self.message(message, store).await,
            _ => Vec::new(),
        }
    }

    async fn message(&mut self, message: &Message, store: &dyn TraceStore) -> Vec<SessionUpdate> {
        let mut updates = Vec::new();
        match (&message.role, &message.content) {
            (Role::Assistant, Content::Assistant(turn)) => {
                let reasoning = turn.reasoning_text();
                if !self.reasoning_streamed && !reasoning.is_empty() {
                    updates.push(SessionUpdate::AgentThoughtChunk(text(reasoning)));
                }
                if let Some(answer) = turn.text.as_deref().filter(|t| !t.is_empty())
                    && !self.text_streamed
                {
                    updates.push(SessionUpdate::AgentMessageChunk(text(answer)));
                }
                self.text_streamed = false;
                self.reasoning_streamed = false;
                // The words first, then the calls, which go out in order with the questions.
                for update in updates.drain(..) {
                    self.announcer.send(update);
                }
                for call in turn.tool_calls.iter().filter(|c| c.name != GOAL_TOOL) {
                    let kind = kind_of(&call.name);
                    if self.announcer.announce(call, &self.cwd).await && runs_at_once(kind) {
                        updates.push(SessionUpdate::ToolCallUpdate(status_update(
                            &call.id,
                            ToolCallStatus::InProgress,
                        )));
                    }
                    self.open_calls.insert(call.id.clone());
                }
                if let Ok(Some(trace)) = store.get_trace(&message.trace_id).await {
                    let stats = trace.stats();
                    let used = message.tokens.unwrap_or(stats.total_tokens);
                    updates.push(SessionUpdate::UsageUpdate(
                        UsageUpdate::new(used, self.context_window)
                            .cost(Cost::new(stats.total_cost, "USD")),
                    ));
                }
            }
            (Role::Tool, _) => {
                let known = message
                    .tool_call_id
                    .as_ref()
                    .is_some_and(|id| self.open_calls.remove(id));
                if known && let Some(update) = result_update(message) {
                    updates.push(SessionUpdate::ToolCallUpdate(update));
                }
            }
            _ => {}
        }
        updates
    }

    /// The plan update after a goal change, unless the plan reads as the one last sent (one
    /// goal call records several goal events).
    pub(crate) async fn plan(
        &mut self,
        trace_id: &str,
        store: &dyn TraceStore,
    ) -> Option<SessionUpdate> {
        let tree = store.get_goal_tree(trace_id).await.ok()??;
        let plan = plan_of(&tree);
        if self.last_plan.as_ref() == Some(&plan) {
            return None;
        }
        self.last_plan = Some(plan.clone());
        Some(SessionUpdate::Plan(plan))
    }
}

/// Whether `event` changes the goal tree.
pub(crate) fn changes_goals(event: &LiveEvent) -> bool {
    matches!(
        event,
        LiveEvent::Stored(Event {
            kind: EventKind::GoalAdded { .. }
                | EventKind::GoalUpdated { .. }
                | EventKind::GoalRemoved { .. }
                | EventKind::GoalTreeUpdated { .. },
            ..
        })
    )
}
