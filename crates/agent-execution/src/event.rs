//! Trace events: what watchers (the API's WebSocket, the CLI's progress display) receive, and the
//! write-ahead record a store can rebuild a trace from.
//!
//! An event serialises as one JSON object, `{"event_id": N, "event": "<name>", ...payload}`.
//! The Contract names and payload fields are `connected`, `goal_added`, `goal_updated`,
//! `message_added`, `sub_trace_started`, `sub_trace_completed` and `trace_completed`. The other
//! kinds are extensions that carry the data a store needs to recover a trace from its events
//! alone (`trace_created`, `trace_updated`, `goal_tree_updated`, `message_updated`) or tell a
//! viewer something it would otherwise miss (`goal_removed`, `loop_detected`, `notice`,
//! `goal_checked`); clients may ignore them.

use agent_goal::{CheckResult, Goal, GoalCheck, GoalStats, GoalStatus, GoalTree};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::Message;
use crate::trace::{Trace, TraceStats, TraceStatus};

/// One event of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Monotonic per trace, from 1, without holes.
    pub event_id: u64,
    /// The event's name and payload.
    #[serde(flatten)]
    pub kind: EventKind,
    /// Set on every event of a multi-event write but the last, so a write cut short by a crash
    /// can be recognised and dropped as a whole.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub commit_continues: bool,
}

impl Event {
    /// The event's name, e.g. `message_added`.
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }
}

/// An event's name and payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// Extension: the first event of every trace, with its initial state.
    TraceCreated {
        /// The new trace.
        trace: Trace,
        /// Its initial goal tree.
        goal_tree: GoalTree,
    },
    /// Extension: the trace's own fields changed (status, model, error, current goal, summary).
    TraceUpdated {
        /// The whole trace after the change.
        trace: Trace,
    },
    /// A goal was added.
    GoalAdded {
        /// The new goal.
        goal: Goal,
        /// Its parent's id.
        parent_id: Option<String>,
    },
    /// A goal changed (including a parent completed by cascade).
    GoalUpdated {
        /// The goal.
        goal_id: String,
        /// The fields that changed, with their new values (`null` for a cleared field).
        updates: Map<String, Value>,
        /// The goal and its ancestors with their status and statistics.
        affected_goals: Vec<AffectedGoal>,
    },
    /// Extension: a pending goal was deleted.
    GoalRemoved {
        /// The deleted goal.
        goal_id: String,
    },
    /// Extension: the whole goal tree after a change made by a goal command or a tree edit.
    GoalTreeUpdated {
        /// The tree after the change.
        goal_tree: GoalTree,
    },
    /// A message was recorded.
    MessageAdded {
        /// The message.
        message: Message,
        /// The message's goal (self and cumulative stats) and its ancestors (cumulative stats).
        affected_goals: Vec<AffectedGoal>,
    },
    /// Extension: a recorded message was changed (e.g. annotated by compaction).
    MessageUpdated {
        /// The message after the change.
        message: Message,
    },
    /// A sub-trace of this trace started.
    SubTraceStarted {
        /// The sub-trace.
        trace_id: String,
        /// The goal of this trace that spawned it.
        parent_goal_id: Option<String>,
        /// `explore`, `delegate`, ...
        agent_type: String,
        /// The sub-trace's task.
        task: String,
    },
    /// A sub-trace of this trace finished.
    SubTraceCompleted {
        /// The sub-trace.
        trace_id: String,
        /// Its final status.
        status: TraceStatus,
        /// Its final answer or summary.
        summary: Option<String>,
        /// Its totals.
        stats: TraceStats,
    },
    /// Extension: the loop guard found the agent repeating itself (`runner::guard`).
    LoopDetected {
        /// `repeated_call`, `repeated_error` or `alternating_calls`.
        pattern: LoopPattern,
        /// What repeats, in words.
        detail: String,
        /// `warned`: the model was told; `stopped`: the run ended `failed` with a `stuck` error.
        action: LoopAction,
    },
    /// Extension: the check of a goal ran when the model marked it done. A pass completed the
    /// goal (its `goal_updated` follows in the same commit, with `check_result`); a failure
    /// left it in progress, and the model was given the result.
    GoalChecked {
        /// The goal.
        goal_id: String,
        /// The check that ran.
        check: GoalCheck,
        /// What it found.
        result: CheckResult,
    },
    /// Extension: a full compaction could not get a summary (the model answered without text,
    /// twice); the run goes on with the view goal compaction and prune give.
    CompactionFailed {
        /// What went wrong, in words.
        reason: String,
    },
    /// Extension: something about the run a person should know, said where it happened: the
    /// model's context window (learned from its server, or assumed), a window that what every
    /// request carries nearly fills, a server whose chat template does not show the model its
    /// tools or their results, an empty answer.
    Notice {
        /// What it is about.
        kind: NoticeKind,
        /// What happened and what to do, in a sentence or two.
        message: String,
        /// The figure it is about, when it has one: for `context_window`, the window in tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
    /// Extension: a lifecycle hook (a command the user configured for an event such as
    /// `PreToolUse`) ran, and what came of it.
    HookRan {
        /// The hook event, e.g. `PreToolUse`.
        hook_event: String,
        /// The tool the event is about, for tool events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        /// The command that ran.
        command: String,
        /// Its exit code; `None` when it was killed or could not start.
        exit_code: Option<i32>,
        /// `continued`, `blocked`, `warned` (a failure that let the run go on) or `timed_out`.
        outcome: String,
        /// What it printed on stdout (cut at a few KiB).
        stdout: String,
        /// What it printed on stderr (cut at a few KiB).
        stderr: String,
        /// How long it ran.
        duration_ms: u64,
    },
    /// The trace finished.
    TraceCompleted {
        /// The trace's totals.
        stats: TraceStats,
        /// Extension: the final status.
        status: TraceStatus,
    },
}

impl EventKind {
    /// The event's name, e.g. `message_added`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::TraceCreated { .. } => "trace_created",
            Self::TraceUpdated { .. } => "trace_updated",
            Self::GoalAdded { .. } => "goal_added",
            Self::GoalUpdated { .. } => "goal_updated",
            Self::GoalRemoved { .. } => "goal_removed",
            Self::GoalTreeUpdated { .. } => "goal_tree_updated",
            Self::HookRan { .. } => "hook_ran",
            Self::MessageAdded { .. } => "message_added",
            Self::MessageUpdated { .. } => "message_updated",
            Self::SubTraceStarted { .. } => "sub_trace_started",
            Self::SubTraceCompleted { .. } => "sub_trace_completed",
            Self::LoopDetected { .. } => "loop_detected",
            Self::CompactionFailed { .. } => "compaction_failed",
            Self::Notice { .. } => "notice",
            Self::GoalChecked { .. } => "goal_checked",
            Self::TraceCompleted { .. } => "trace_completed",
        }
    }
}

/// What a [`EventKind::Notice`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NoticeKind {
    /// The model's context window, and where it was learned (or that it was assumed).
    ContextWindow,
    /// The system prompt, the tool specs and the plan fill the window past the compaction
    /// threshold: the run compacts only when a request would not fit at all.
    WindowFloor,
    /// The server's prompt count is far below what the tool specs alone take: its chat template
    /// does not show the model its tools.
    ToolsNotShown,
    /// The server's prompt count did not grow after a tool result: its chat template does not
    /// show the model the results of its tools.
    ResultsNotShown,
    /// The model's final answer was empty.
    EmptyAnswer,
    /// A full compaction got no summary, so the oldest exchanges of the conversation were left
    /// out of a request (the trace keeps them) for it to fit the window.
    ContextLeftOut,
    /// A kind this version does not know (written by a newer one).
    #[serde(other)]
    Other,
}

/// A goal touched by a message or a goal change, with its state after the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AffectedGoal {
    /// The goal.
    pub goal_id: String,
    /// Its own statistics; set for the goal a message was added to, and the goal of a
    /// `goal_updated` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_stats: Option<GoalStats>,
    /// Its statistics including all descendants.
    pub cumulative_stats: GoalStats,
    /// Its status; set in `goal_updated` events, where a cascade may have completed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GoalStatus>,
    /// Its summary; set in `goal_updated` events when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialise_flat_with_their_name() {
        let event = Event {
            event_id: 3,
            kind: EventKind::GoalRemoved {
                goal_id: "2".into(),
            },
            commit_continues: false,
        };
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(
            value,
            json!({"event_id": 3, "event": "goal_removed", "goal_id": "2"})
        );
        let back: Event = serde_json::from_value(value).unwrap();
        assert_eq!(back, event);
        let continued = Event {
            commit_continues: true,
            ..event
        };
        let text = serde_json::to_string(&continued).unwrap();
        assert!(text.ends_with(",\"commit_continues\":true}"), "{text}");
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), continued);
    }
}

/// A kind of loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopPattern {
    /// The same calls with the same results, turn after turn.
    RepeatedCall,
    /// The same error, turn after turn.
    RepeatedError,
    /// Two turns alternating without a new result.
    AlternatingCalls,
}

impl LoopPattern {
    /// The pattern's name, as in events (`repeated_call`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::RepeatedCall => "repeated_call",
            Self::RepeatedError => "repeated_error",
            Self::AlternatingCalls => "alternating_calls",
        }
    }
}

/// What the runner did about a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopAction {
    /// The model was told about the loop.
    Warned,
    /// The run was stopped.
    Stopped,
}
