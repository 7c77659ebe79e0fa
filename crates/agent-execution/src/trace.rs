//! The `Trace` model: one run of an agent (or one plain call), main trace or sub-trace, and the
//! requests that create, change, finish and list traces.
//!
//! The serde field names of [`Trace`] are a Contract (the `meta.json` file and the API): extend,
//! never rename.

use serde::{Deserialize, Serialize};

/// Whether a trace is a single model call or an agent loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceMode {
    /// One model call, no loop.
    Call,
    /// A think–act–observe loop with tools and a goal tree.
    Agent,
}

/// Where a trace is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TraceStatus {
    /// The run is going on.
    Running,
    /// The run finished with a final answer.
    Completed,
    /// The run stopped on an error or a limit; `error` says which.
    Failed,
    /// The run waits for a human, e.g. to approve a risky tool call.
    Waiting,
    /// The run was cancelled.
    Cancelled,
    /// Plan mode: the goal tree was written and waits to be reviewed, edited and run.
    Planned,
    /// The run ended with goals of its plan still pending or in progress: the model stopped
    /// working on them (after being sent back to them) and gave neither a summary nor a reason
    /// to abandon them. `error` names them; resuming the trace takes them up again.
    /// Extension: traces written before it existed never have it.
    Incomplete,
}

impl TraceStatus {
    /// True for `Completed`, `Failed`, `Cancelled`, `Planned` and `Incomplete`: the run has
    /// stopped.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Cancelled | Self::Planned | Self::Incomplete
        )
    }

    /// The status as its JSON name: `running`, `completed`, `incomplete`, ...
    pub fn name(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Waiting => "waiting",
            Self::Cancelled => "cancelled",
            Self::Planned => "planned",
            Self::Incomplete => "incomplete",
        }
    }
}

/// One run: a main trace, or a sub-trace spawned by `explore` or `delegate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// A UUID v4 for a main trace, `{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}` for a sub-trace.
    pub trace_id: String,
    /// Single call or agent loop.
    pub mode: TraceMode,
    /// The task the run was given.
    pub task: String,
    /// Sub-traces only: the trace that spawned this one.
    pub parent_trace_id: Option<String>,
    /// Sub-traces only: the goal of the parent trace that spawned this one.
    pub parent_goal_id: Option<String>,
    /// The agent profile it runs as: for a sub-trace why it was spawned (`explore`,
    /// `delegate`, or the profile an `explore` or `delegate` call named); for a main trace the
    /// profile it was started with, unless that is `default`.
    pub agent_type: Option<String>,
    /// Where the run is.
    pub status: TraceStatus,
    /// Number of messages recorded.
    pub total_messages: u64,
    /// Sum of the messages' tokens.
    pub total_tokens: u64,
    /// Sum of the messages' cost in US dollars.
    pub total_cost: f64,
    /// The goal the agent is working on, mirrored from the goal tree.
    pub current_goal_id: Option<String>,
    /// When the trace was created (RFC 3339, fixed width).
    pub created_at: String,
    /// When the trace last changed (RFC 3339, fixed width).
    pub updated_at: String,
    /// The model the run uses, if known.
    pub model: Option<String>,
    /// Why the run failed, if it did.
    pub error: Option<String>,
    /// The final answer or summary, set when the trace is finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The limits the run was started with, which later runs of the trace (resume, continue)
    /// apply unless their caller sets others; absent on traces written before it existed and
    /// on sub-traces (which run under their profile's limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<TraceLimits>,
    /// A forked trace only: the trace and the point it was forked from (see `agent fork`);
    /// absent on every other trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkOrigin>,
    /// How the model was reached when the trace was created (provider, the model name asked
    /// for, base URL, window, token cap), which later runs of it (resume, continue) use unless
    /// their caller sets others; absent on traces written before it existed and on sub-traces.
    /// [`Trace::model`] is the model that answered, when the provider named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_settings: Option<ModelSettings>,
}

/// How a trace's model was reached (see [`Trace::model_settings`]). No secret is kept: the API
/// key stays where it was configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSettings {
    /// The provider, as its front end names it (e.g. `openai`, `anthropic`, `scripted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model name the run asked for (which the provider may answer as another name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's base URL, when one was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The context window in tokens, when one was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// The completion token cap per call, when one was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// Where a forked trace came from (see [`Trace::forked_from`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOrigin {
    /// The original trace, which the fork left untouched.
    pub trace_id: String,
    /// The goal the fork was made at: it is pending again in the fork. `None` for a fork made
    /// after a message.
    pub goal_id: Option<String>,
    /// The message the fork was made after, for a fork made after a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_sequence: Option<u64>,
}

/// The limits stored with a trace (see [`Trace::limits`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceLimits {
    /// Model calls per run of the trace (each resume or continue counts its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Cost budget in US dollars of the whole trace: its own messages and those of its
    /// sub-traces, across every run of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
}

impl Trace {
    /// The trace's totals, as carried by `trace_completed` and `sub_trace_completed`.
    pub fn stats(&self) -> TraceStats {
        TraceStats {
            total_messages: self.total_messages,
            total_tokens: self.total_tokens,
            total_cost: self.total_cost,
        }
    }
}

/// The totals of a trace (a total missing from a record reads as zero).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceStats {
    /// Number of messages.
    pub total_messages: u64,
    /// Sum of the messages' tokens.
    pub total_tokens: u64,
    /// Sum of the messages' cost in US dollars.
    pub total_cost: f64,
}

impl TraceStats {
    /// Adds `other`'s totals to these.
    pub fn add(&mut self, other: &TraceStats) {
        self.total_messages += other.total_messages;
        self.total_tokens += other.total_tokens;
        self.total_cost += other.total_cost;
    }
}

/// What makes a trace a sub-trace: its parent, the goal that spawned it, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParentLink {
    /// The parent trace.
    pub trace_id: String,
    /// The parent's goal that spawned the sub-trace (an `explore_start` goal for explore).
    pub goal_id: Option<String>,
    /// `explore`, `delegate`, ...; part of the sub-trace id, so it must be a valid id fragment.
    pub agent_type: String,
}

/// A request to create a trace; see [`crate::TraceStore::create_trace`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewTrace {
    /// An explicit id (validated); `None` lets the store generate one.
    pub trace_id: Option<String>,
    /// Single call or agent loop.
    pub mode: TraceMode,
    /// The task; it also becomes the mission of the trace's goal tree.
    pub task: String,
    /// The model, if known.
    pub model: Option<String>,
    /// Set for a sub-trace.
    pub parent: Option<ParentLink>,
    /// The agent profile of a main trace (a sub-trace's is in `parent`).
    pub agent_type: Option<String>,
    /// The limits to store with the trace.
    pub limits: Option<TraceLimits>,
    /// Set for a fork: the trace it was forked from.
    pub forked_from: Option<ForkOrigin>,
    /// How the model is reached, to store with the trace.
    pub model_settings: Option<ModelSettings>,
}

impl NewTrace {
    /// A main agent trace for this task.
    pub fn agent(task: impl Into<String>) -> Self {
        Self {
            trace_id: None,
            mode: TraceMode::Agent,
            task: task.into(),
            model: None,
            parent: None,
            agent_type: None,
            limits: None,
            forked_from: None,
            model_settings: None,
        }
    }

    /// A main trace of a single model call.
    pub fn call(task: impl Into<String>) -> Self {
        Self {
            mode: TraceMode::Call,
            ..Self::agent(task)
        }
    }

    /// An agent sub-trace of `parent_trace_id`, spawned by its goal `parent_goal_id`.
    pub fn sub_trace(
        parent_trace_id: impl Into<String>,
        parent_goal_id: Option<String>,
        agent_type: impl Into<String>,
        task: impl Into<String>,
    ) -> Self {
        Self {
            parent: Some(ParentLink {
                trace_id: parent_trace_id.into(),
                goal_id: parent_goal_id,
                agent_type: agent_type.into(),
            }),
            ..Self::agent(task)
        }
    }

    /// Sets the model.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the agent profile of a main trace.
    #[must_use]
    pub fn with_agent_type(mut self, agent_type: impl Into<String>) -> Self {
        self.agent_type = Some(agent_type.into());
        self
    }

    /// Stores these limits with the trace.
    #[must_use]
    pub fn with_limits(mut self, limits: TraceLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Stores how the model is reached with the trace.
    #[must_use]
    pub fn with_model_settings(mut self, settings: ModelSettings) -> Self {
        self.model_settings = Some(settings);
        self
    }

    /// Marks the trace as a fork of another.
    #[must_use]
    pub fn with_forked_from(mut self, origin: ForkOrigin) -> Self {
        self.forked_from = Some(origin);
        self
    }

    /// Sets an explicit trace id.
    #[must_use]
    pub fn with_id(mut self, trace_id: impl Into<String>) -> Self {
        self.trace_id = Some(trace_id.into());
        self
    }
}

/// A change to a trace's own fields; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceUpdate {
    /// The new status.
    pub status: Option<TraceStatus>,
    /// The new model.
    pub model: Option<String>,
    /// `Some(Some(e))` sets the error, `Some(None)` clears it.
    pub error: Option<Option<String>>,
    /// `Some(Some(id))` sets the current goal, `Some(None)` clears it. The goal tree is unchanged.
    pub current_goal_id: Option<Option<String>>,
    /// `Some(Some(name))` sets the agent profile of a main trace (e.g. when a stored plan is
    /// executed by another profile than the one that wrote it), `Some(None)` clears it.
    pub agent_type: Option<Option<String>>,
    /// `Some(Some(limits))` replaces the stored limits, `Some(None)` clears them.
    pub limits: Option<Option<TraceLimits>>,
    /// `Some(settings)` replaces how the model is reached from the next run of the trace on
    /// (another model chosen in a session); the trace's [`Trace::model`] stays the model that
    /// answered last.
    pub model_settings: Option<ModelSettings>,
}

/// How a trace ended; see [`crate::TraceStore::finish_trace`].
#[derive(Debug, Clone, PartialEq)]
pub struct TraceOutcome {
    /// The final status; must be a finished one (completed, failed or cancelled).
    pub status: TraceStatus,
    /// The final answer or summary, reported to the parent of a sub-trace.
    pub summary: Option<String>,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

impl TraceOutcome {
    /// A successful end with this final answer.
    pub fn completed(summary: impl Into<String>) -> Self {
        Self {
            status: TraceStatus::Completed,
            summary: Some(summary.into()),
            error: None,
        }
    }

    /// The end of a run that was cancelled.
    pub fn cancelled() -> Self {
        Self {
            status: TraceStatus::Cancelled,
            summary: None,
            error: Some("cancelled: the run was cancelled".into()),
        }
    }

    /// An end with goals left: the model's last answer as the summary, `error` naming the goals.
    pub fn incomplete(summary: impl Into<String>, error: impl Into<String>) -> Self {
        Self {
            status: TraceStatus::Incomplete,
            summary: Some(summary.into()),
            error: Some(error.into()),
        }
    }

    /// A failed end with this error.
    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            status: TraceStatus::Failed,
            summary: None,
            error: Some(error.into()),
        }
    }
}

/// Filters of [`crate::TraceStore::list_traces`]; every `None` matches all traces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceFilter {
    /// Only traces of this mode.
    pub mode: Option<TraceMode>,
    /// Only traces with this status.
    pub status: Option<TraceStatus>,
    /// Only sub-traces of this trace.
    pub parent_trace_id: Option<String>,
    /// At most this many traces (the newest).
    pub limit: Option<usize>,
}

impl TraceFilter {
    /// True if the trace passes every filter (the limit aside).
    pub fn matches(&self, trace: &Trace) -> bool {
        self.mode.is_none_or(|mode| trace.mode == mode)
            && self.status.is_none_or(|status| trace.status == status)
            && self
                .parent_trace_id
                .as_ref()
                .is_none_or(|parent| trace.parent_trace_id.as_ref() == Some(parent))
    }

    /// Sorts traces newest first (by `created_at`, then id) and applies the limit.
    pub fn finish(&self, mut traces: Vec<Trace>) -> Vec<Trace> {
        traces.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| b.trace_id.cmp(&a.trace_id))
        });
        if let Some(limit) = self.limit {
            traces.truncate(limit);
        }
        traces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_written_only_when_set_and_old_traces_load() {
        let old = r#"{"trace_id":"t","mode":"agent","task":"x","parent_trace_id":null,
            "parent_goal_id":null,"agent_type":null,"status":"failed","total_messages":0,
            "total_tokens":0,"total_cost":0.0,"current_goal_id":null,
            "created_at":"2025-01-01T00:00:00.000000Z","updated_at":"2025-01-01T00:00:00.000000Z",
            "model":null,"error":null}"#;
        let mut trace: Trace = serde_json::from_str(old).unwrap();
        assert_eq!(trace.limits, None);
        assert!(!serde_json::to_string(&trace).unwrap().contains("limits"));
        trace.limits = Some(TraceLimits {
            max_iterations: None,
            max_cost: Some(0.002),
        });
        let json = serde_json::to_value(&trace).unwrap();
        assert_eq!(json["limits"], serde_json::json!({"max_cost": 0.002}));
        assert_eq!(serde_json::from_value::<Trace>(json).unwrap(), trace);
    }

    #[test]
    fn statuses_are_named_as_they_are_written() {
        for status in [
            TraceStatus::Running,
            TraceStatus::Completed,
            TraceStatus::Failed,
            TraceStatus::Waiting,
            TraceStatus::Cancelled,
            TraceStatus::Planned,
            TraceStatus::Incomplete,
        ] {
            let written = serde_json::to_value(status).unwrap();
            assert_eq!(written, serde_json::json!(status.name()));
        }
        assert!(TraceStatus::Incomplete.is_finished());
    }

    #[test]
    fn forked_from_is_written_only_when_set() {
        let old = r#"{"trace_id":"t","mode":"agent","task":"x","parent_trace_id":null,
            "parent_goal_id":null,"agent_type":null,"status":"failed","total_messages":0,
            "total_tokens":0,"total_cost":0.0,"current_goal_id":null,
            "created_at":"2025-01-01T00:00:00.000000Z","updated_at":"2025-01-01T00:00:00.000000Z",
            "model":null,"error":null}"#;
        let mut trace: Trace = serde_json::from_str(old).unwrap();
        assert_eq!(trace.forked_from, None);
        assert!(
            !serde_json::to_string(&trace)
                .unwrap()
                .contains("forked_from")
        );
        trace.forked_from = Some(ForkOrigin {
            trace_id: "o".into(),
            goal_id: Some("2".into()),
            message_sequence: None,
        });
        let json = serde_json::to_value(&trace).unwrap();
        assert_eq!(
            json["forked_from"],
            serde_json::json!({"trace_id": "o", "goal_id": "2"})
        );
        assert_eq!(serde_json::from_value::<Trace>(json).unwrap(), trace);
    }
}
