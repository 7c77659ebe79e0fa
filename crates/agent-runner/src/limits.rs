//! The limits that end a run: model calls, spending, the model's time, tool calls per turn and
//! the loop guard's thresholds.

use std::time::Duration;

use crate::guard::LoopGuard;

/// Limits that end a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    /// Model calls per run (per `run` or `resume` invocation).
    pub max_iterations: u32,
    /// Total cost of the trace in US dollars; the run stops once it is reached.
    pub max_cost: Option<f64>,
    /// How long one model call may take, retries included.
    pub llm_timeout: Duration,
    /// Tool calls run per model turn: the calls of a turn past this many are answered with an
    /// error without running, so one runaway turn cannot start hundreds of commands.
    pub max_tool_calls_per_turn: usize,
    /// When a repeating agent is warned and stopped (see [`crate::guard`]).
    pub loop_guard: LoopGuard,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            max_cost: None,
            llm_timeout: Duration::from_secs(600),
            max_tool_calls_per_turn: 64,
            loop_guard: LoopGuard::default(),
        }
    }
}
