//! Message metadata: the keys the runner writes on a message's `metadata` object and that its
//! readers (the OpenTelemetry exporter, the API's schema, the viewer, the command line) look
//! for, named once here, the lowest crate every one of them depends on.
//!
//! The stored form is unchanged: `metadata` stays a JSON object on the [`Message`], written
//! only when it has a key, so traces of every earlier version read as they were. [`MessageMeta`]
//! reads the known keys typed; a key it does not know, or a value of another shape, is left
//! alone (it stays in the object) and reads as absent.
//!
//! ```
//! use agent_execution::meta::{self, MessageMeta, Turn};
//! use serde_json::{Map, json};
//!
//! let mut metadata = Map::new();
//! metadata.insert(meta::TURN.into(), json!("queued"));
//! metadata.insert(meta::USAGE.into(), json!({"prompt_tokens": 10, "completion_tokens": 2}));
//! let read = MessageMeta::read(&metadata);
//! assert_eq!(read.turn, Some(Turn::Queued));
//! assert_eq!(read.usage.and_then(|usage| usage.prompt_tokens), Some(10));
//! assert!(!read.compaction);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::Message;
use crate::trace::{TraceStats, TraceStatus};

/// `true` on the stored summary of a full compaction; the model's view starts from it.
pub const COMPACTION: &str = "compaction";
/// A full compaction's estimate of the view it replaced, in tokens.
pub const TOKENS_BEFORE: &str = "tokens_before";
/// A full compaction summary's own estimate, in tokens.
pub const TOKENS_AFTER: &str = "tokens_after";
/// The token counts a provider reported for a model call (`{prompt_tokens,
/// completion_tokens, cached_tokens}`), on its assistant message.
pub const USAGE: &str = "usage";
/// How a user message after the task came: `continue`, `queued` or `background` ([`Turn`]).
pub const TURN: &str = "turn";
/// On the loop guard's warning: the name of the pattern it saw.
pub const LOOP_GUARD: &str = "loop_guard";
/// `true` on the closing report of a run whose plan is done.
pub const CLOSING_REPORT: &str = "closing_report";
/// `true` on the assistant messages the runner wrote to hand a goal to another profile.
pub const HANDOFF: &str = "handoff";
/// On the tool message of an `explore` or `delegate` call: `[{trace_id, status, stats}]`.
pub const SUB_TRACES: &str = "sub_traces";
/// On the same message: the sum of the sub-traces' statistics.
pub const SUB_TRACE_STATS: &str = "sub_trace_stats";
/// `true` on an assistant message the run was cancelled in the middle of: its text is what
/// had arrived, and it has no tool calls.
pub const INTERRUPTED: &str = "interrupted";
/// On a tool message: how the call ended, where the tool or the runner said ([`ToolOutcome`]):
/// a command's exit status, a refusal, a timeout, a cancellation.
pub const OUTCOME: &str = "outcome";
/// `true` on the user message the runner wrote after an empty final answer (no text, no tool
/// call), asking the model once to go on.
pub const EMPTY_ANSWER: &str = "empty_answer";
/// On the runner's message that sends the model back to the goals it left pending: how many
/// times in a row it was sent back (1, 2, ...).
pub const GOALS_PENDING: &str = "goals_pending";
/// On the runner's message about a goal's spent budget: `{goal_id, action}` ([`GoalBudgetNote`]).
pub const GOAL_BUDGET: &str = "goal_budget";
/// On a user or tool message with pictures: the list of them (`{id, media_type, width, height,
/// name?, data}`, `id` the SHA-256 of the bytes, `data` base64), sent to the model after the
/// message's text ([`images`], [`set_images`]).
pub const IMAGES: &str = "images";

/// Tool messages that started, read or stopped background shells: their statuses
/// (`agent_tools::shells::ShellStatus`; see [`crate::shell_logs`]).
pub const SHELLS: &str = "shells";

/// The tool message that started background shells, once its run ended: everything each
/// printed, by shell id ([`crate::shell_logs`]).
pub const SHELL_LOGS: &str = "shell_logs";

/// Every key above, in the order they are listed.
pub const KEYS: &[&str] = &[
    COMPACTION,
    TOKENS_BEFORE,
    TOKENS_AFTER,
    USAGE,
    TURN,
    LOOP_GUARD,
    CLOSING_REPORT,
    HANDOFF,
    SUB_TRACES,
    SUB_TRACE_STATS,
    INTERRUPTED,
    OUTCOME,
    EMPTY_ANSWER,
    GOALS_PENDING,
    IMAGES,
    GOAL_BUDGET,
    SHELLS,
    SHELL_LOGS,
];

/// What the runner did about a goal's spent budget ([`GOAL_BUDGET`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetAction {
    /// The model was told to finish or abandon the goal.
    Warned,
    /// The goal was abandoned, its reason `budget spent`.
    Abandoned,
}

/// The value of [`GOAL_BUDGET`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalBudgetNote {
    /// The goal whose budget was spent.
    pub goal_id: String,
    /// What the runner did.
    pub action: BudgetAction,
}

/// How a user message after the task came ([`TURN`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Turn {
    /// It started a new turn of an ended trace.
    Continue,
    /// It was sent while a run was going on, and recorded before the next model call.
    Queued,
    /// It tells the trace how a sub-trace it ran in the background ended, recorded before the
    /// next model call after that end.
    Background,
}

impl Turn {
    /// The value as stored: `continue`, `queued` or `background`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::Queued => "queued",
            Self::Background => "background",
        }
    }
}

/// How a tool call ended ([`OUTCOME`]), as stored: `{"kind": "exited", "code": 1}`,
/// `{"kind": "killed", "signal": 9}`, `{"kind": "refused"}`, `{"kind": "timed_out"}`,
/// `{"kind": "cancelled"}`. A tool message without it ended as its `is_error` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// A command ran to its end and exited with `code` (0: success).
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal ended the command.
    Killed {
        /// The signal's number.
        signal: i32,
    },
    /// The call was not run (a person, an approval rule, the approval policy or a limit said
    /// no), or the sandbox refused what its command tried.
    Refused,
    /// The call ran out of time and was stopped.
    TimedOut,
    /// The run was cancelled while the call ran, or before it started.
    Cancelled,
}

impl ToolOutcome {
    /// Whether the call did what was asked: only a command that exited with 0.
    pub fn succeeded(self) -> bool {
        self == Self::Exited { code: 0 }
    }
}

/// The token counts a provider reported ([`USAGE`]); a count it did not give is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedUsage {
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Input tokens read from the provider's prompt cache, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Whether these counts are the agent's estimate of the whole request and the answer,
    /// because the provider reported none; written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

/// One sub-trace named by an `explore` or `delegate` tool message ([`SUB_TRACES`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubTraceRef {
    /// The sub-trace's id.
    pub trace_id: String,
    /// How it ended; `None` when the record says nothing this build can read.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub status: Option<TraceStatus>,
    /// Its totals; `None` when the record says nothing this build can read.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub stats: Option<TraceStats>,
}

/// A value that reads as `None`, rather than failing the whole list, when it has another
/// shape (a status a later version added, say).
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    Ok(serde_json::from_value(Value::deserialize(deserializer)?).ok())
}

/// The known keys of a message's metadata, read typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageMeta {
    /// [`COMPACTION`]: the message is a full compaction's summary.
    pub compaction: bool,
    /// [`TOKENS_BEFORE`].
    pub tokens_before: Option<u64>,
    /// [`TOKENS_AFTER`].
    pub tokens_after: Option<u64>,
    /// [`USAGE`].
    pub usage: Option<ReportedUsage>,
    /// [`TURN`].
    pub turn: Option<Turn>,
    /// [`LOOP_GUARD`]: the pattern's name.
    pub loop_guard: Option<String>,
    /// [`CLOSING_REPORT`].
    pub closing_report: bool,
    /// [`HANDOFF`].
    pub handoff: bool,
    /// [`SUB_TRACES`].
    pub sub_traces: Vec<SubTraceRef>,
    /// [`SUB_TRACE_STATS`]: the sum of the sub-traces' totals.
    pub sub_trace_stats: Option<TraceStats>,
    /// [`INTERRUPTED`].
    pub interrupted: bool,
    /// [`OUTCOME`].
    pub outcome: Option<ToolOutcome>,
    /// [`GOALS_PENDING`].
    pub goals_pending: Option<u32>,
    /// [`GOAL_BUDGET`].
    pub goal_budget: Option<GoalBudgetNote>,
}

impl MessageMeta {
    /// The known keys of `metadata`; each is read alone, so one of another shape loses only
    /// itself.
    pub fn read(metadata: &Map<String, Value>) -> Self {
        fn get<T: serde::de::DeserializeOwned>(
            metadata: &Map<String, Value>,
            key: &str,
        ) -> Option<T> {
            serde_json::from_value(metadata.get(key)?.clone()).ok()
        }
        let flag = |key: &str| metadata.get(key) == Some(&Value::Bool(true));
        Self {
            compaction: flag(COMPACTION),
            tokens_before: get(metadata, TOKENS_BEFORE),
            tokens_after: get(metadata, TOKENS_AFTER),
            usage: get(metadata, USAGE),
            turn: get(metadata, TURN),
            loop_guard: get(metadata, LOOP_GUARD),
            closing_report: flag(CLOSING_REPORT),
            handoff: flag(HANDOFF),
            sub_traces: get(metadata, SUB_TRACES).unwrap_or_default(),
            sub_trace_stats: get(metadata, SUB_TRACE_STATS),
            interrupted: flag(INTERRUPTED),
            outcome: get(metadata, OUTCOME),
            goals_pending: get(metadata, GOALS_PENDING),
            goal_budget: get(metadata, GOAL_BUDGET),
        }
    }

    /// The known keys of `message`'s metadata.
    pub fn of(message: &Message) -> Self {
        Self::read(&message.metadata)
    }
}

/// True when the token counts recorded on `message` are the agent's estimate (its provider
/// reported none), so that what shows them can say so.
pub fn usage_is_estimated(message: &Message) -> bool {
    message
        .metadata
        .get(crate::meta::USAGE)
        .and_then(|usage| usage.get("estimated"))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// True when any model call recorded in the trace has estimated token counts: its totals are
/// then estimates, in part or whole.
pub async fn tokens_estimated(
    store: &dyn crate::TraceStore,
    trace_id: &str,
) -> Result<bool, crate::StoreError> {
    let messages = store.get_trace_messages_shared(trace_id).await?;
    Ok(messages.iter().any(|message| usage_is_estimated(message)))
}

/// The pictures of a message's metadata ([`IMAGES`]); a malformed entry is left out.
pub fn images(metadata: &Map<String, Value>) -> Vec<agent_llm::ChatImage> {
    match metadata.get(IMAGES) {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|entry| serde_json::from_value(entry.clone()).ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// What a terminal shows of a message with pictures: its text, then each picture's placeholder
/// (`[image: shot.png 120×80]`) on a line of its own.
///
/// ```
/// use agent_execution::meta::{set_images, with_placeholders};
/// use agent_llm::ChatImage;
///
/// let mut metadata = serde_json::Map::new();
/// assert_eq!(with_placeholders("Look", &metadata), "Look");
/// let mut image = ChatImage::new("id", "image/png", (120, 80), "".into());
/// image.name = Some("shot.png".into());
/// set_images(&mut metadata, &[image]);
/// assert_eq!(with_placeholders("Look", &metadata), "Look\n[image: shot.png 120×80]");
/// ```
pub fn with_placeholders(text: &str, metadata: &Map<String, Value>) -> String {
    let mut shown = text.to_owned();
    for image in images(metadata) {
        if !shown.is_empty() {
            shown.push('\n');
        }
        shown.push_str(&image.placeholder());
    }
    shown
}

/// The pictures of encoded bytes with their names ([`agent_llm::ChatImage::from_bytes`]); bytes
/// that are not a picture a model takes are left out.
pub fn pictures<'a>(
    found: impl IntoIterator<Item = (&'a [u8], Option<&'a str>)>,
) -> Vec<agent_llm::ChatImage> {
    (found.into_iter())
        .filter_map(|(bytes, name)| agent_llm::ChatImage::from_bytes(bytes, name).ok())
        .collect()
}

/// Stores `images` on a message's metadata ([`IMAGES`]); none removes the key.
pub fn set_images(metadata: &mut Map<String, Value>, images: &[agent_llm::ChatImage]) {
    if images.is_empty() {
        metadata.remove(IMAGES);
    } else if let Ok(list) = serde_json::to_value(images) {
        metadata.insert(IMAGES.to_owned(), list);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_read_as_the_runner_writes_them() {
        let metadata = json!({
            "compaction": true, "tokens_before": 9000, "tokens_after": 800,
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "cached_tokens": 8},
            "turn": "continue", "loop_guard": "same_call", "closing_report": true,
            "handoff": true,
            "sub_traces": [{"trace_id": "t@explore-1", "status": "completed", "stats": {}}],
            "sub_trace_stats": {"total_tokens": 5}, "interrupted": true, "empty_answer": true,
            "other": 1, "outcome": {"kind": "exited", "code": 1},
            "goals_pending": 2, "goal_budget": {"goal_id": "3", "action": "warned"},
            "images": [{"id": "ab", "media_type": "image/png", "width": 3, "height": 2,
                        "data": "iVBORw0KGgo="}, {"width": "odd"}],
            "shells": [{"id": "sh-1", "command": "make watch", "state": "running"}],
            "shell_logs": {"sh-1": "built\n"}
        });
        let Value::Object(metadata) = metadata else {
            unreachable!()
        };
        let read = MessageMeta::read(&metadata);
        assert!(read.compaction && read.closing_report && read.handoff && read.interrupted);
        assert_eq!(
            (read.tokens_before, read.tokens_after),
            (Some(9000), Some(800))
        );
        assert_eq!(read.usage.and_then(|u| u.cached_tokens), Some(8));
        assert_eq!(read.turn, Some(Turn::Continue));
        assert_eq!(read.loop_guard.as_deref(), Some("same_call"));
        assert_eq!(read.sub_traces[0].trace_id, "t@explore-1");
        assert_eq!(read.sub_traces[0].status, Some(TraceStatus::Completed));
        assert_eq!(read.sub_traces[0].stats, Some(TraceStats::default()));
        assert_eq!(read.sub_trace_stats.map(|s| s.total_tokens), Some(5));
        assert_eq!(read.goals_pending, Some(2));
        assert_eq!(
            read.goal_budget,
            Some(GoalBudgetNote {
                goal_id: "3".into(),
                action: BudgetAction::Warned
            })
        );
        assert_eq!(read.outcome, Some(ToolOutcome::Exited { code: 1 }));
        assert!(!ToolOutcome::Exited { code: 1 }.succeeded());
        let pictures = images(&metadata);
        assert_eq!(pictures.len(), 1, "a malformed entry is left out");
        assert_eq!(pictures[0].placeholder(), "[image: image/png 3×2]");
        assert_eq!(KEYS.len(), 18);
        for key in KEYS {
            assert!(metadata.contains_key(*key), "{key}");
        }
    }

    #[test]
    fn a_value_of_another_shape_reads_as_absent() {
        let Value::Object(metadata) =
            json!({"turn": 3, "compaction": "yes", "usage": "many", "outcome": {"kind": "odd"}})
        else {
            unreachable!()
        };
        assert_eq!(MessageMeta::read(&metadata), MessageMeta::default());
    }
}
