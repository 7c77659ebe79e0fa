//! How a run ended: [`RunOutcome`] and its [`StopReason`], what the runner returns and every
//! front end reports.

use crate::{TraceStats, TraceStatus};
use agent_goal::PendingGoal;
use serde::Serialize;

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without tool calls: the task is done.
    Completed,
    /// The run made as many model calls as `max_iterations` allows.
    MaxIterations,
    /// The trace spent its `max_cost` budget.
    MaxCost,
    /// The run was cancelled.
    Cancelled,
    /// The loop guard stopped an agent that kept repeating itself.
    Stuck,
    /// The model failed in a way the loop could not recover from (after its retries).
    ModelError,
    /// The model's answer was still cut off at its length limit after the loop asked it to go
    /// on (see `continuation.rs`); the partial answer is the run's response.
    Truncated,
    /// The window cannot hold what every request carries (tool specs, system prompt, plan and
    /// task), or a request the provider refused could not be made smaller.
    WindowTooSmall,
    /// The model answered with neither text nor a tool call, again after it was asked to go on
    /// (see `empty_answer.rs`): the task is not done.
    EmptyAnswer,
    /// The model kept answering without a tool call while goals of its plan were still open,
    /// after being sent back to them as often as `goal_reminders` allows; the trace ends
    /// `incomplete`, its last answer the response, and can be resumed.
    Incomplete,
}

impl StopReason {
    /// True for a limit of the run (`max_iterations`, `max_cost`): raising it lets the trace go
    /// on.
    pub fn is_limit(self) -> bool {
        matches!(self, Self::MaxIterations | Self::MaxCost)
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The trace that recorded it.
    pub trace_id: String,
    /// The trace's final status.
    pub status: TraceStatus,
    /// Why it stopped.
    pub stop: StopReason,
    /// The model's final answer, when it gave one.
    pub response: Option<String>,
    /// The closing report written after the final answer (a plan of two goals or more), when
    /// one was; the trace's summary is then the report.
    pub report: Option<String>,
    /// Why it stopped, in words, when it did not complete (`max_iterations: …`, `max_cost: …`,
    /// `cancelled: …`, `stuck: …`, `truncated: …`, `context_window: …`, `empty_answer: …`, or the
    /// model's error); the trace's `error`.
    pub error: Option<String>,
    /// Model calls made by this invocation.
    pub iterations: u32,
    /// The trace's totals: its own messages.
    pub stats: TraceStats,
    /// The totals of the trace and all its sub-traces (explore branches, delegates), what the
    /// `max_cost` budget counts.
    pub stats_with_sub_traces: TraceStats,
    /// True when token counts of this run are the agent's estimate (its server reported none):
    /// front ends show its totals as estimates.
    pub tokens_estimated: bool,
    /// The model's error, as the provider reported it, when one stopped the run
    /// ([`StopReason::ModelError`]): front ends say what to fix (the key, the model name, the
    /// server's address).
    pub model_error: Option<agent_llm::LlmError>,
    /// The goals of the plan still open when the run ended (pending or in progress), in plan
    /// order; empty when every goal is done or abandoned.
    pub pending_goals: Vec<PendingGoal>,
}

impl RunOutcome {
    /// The outcome of the run of `trace_id` that ended with `status` for `stop`, with nothing
    /// else to say yet (no answer, no calls, zero totals); set the other fields after it.
    pub fn new(trace_id: impl Into<String>, status: TraceStatus, stop: StopReason) -> Self {
        Self {
            trace_id: trace_id.into(),
            status,
            stop,
            response: None,
            report: None,
            error: None,
            iterations: 0,
            stats: TraceStats::default(),
            stats_with_sub_traces: TraceStats::default(),
            tokens_estimated: false,
            model_error: None,
            pending_goals: Vec::new(),
        }
    }
}
