//! The limits that end a run: model calls, spending, the model's time, tool calls per turn and
//! the loop guard's thresholds; the limits a caller sets explicitly ([`LimitOverrides`]); and how
//! the limits stored with a trace apply to its later runs ([`RunLimits::for_trace`]). The check
//! of a limit's value is [`crate::limits`], beside the limits a
//! trace stores.

use std::time::Duration;

use crate::{LoopGuard, TraceLimits};

/// Limits that end a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    /// Model calls per run (per `run` or `resume` invocation).
    pub max_iterations: u32,
    /// Total cost in US dollars of the trace and all its sub-traces, across every run of it;
    /// a run stops once it is reached.
    pub max_cost: Option<f64>,
    /// How long one model call may take, retries included.
    pub llm_timeout: Duration,
    /// Tool calls run per model turn: the calls of a turn past this many are answered with an
    /// error without running, so one runaway turn cannot start hundreds of commands.
    pub max_tool_calls_per_turn: usize,
    /// When a repeating agent is warned and stopped (see [`crate::loop_guard`]).
    pub loop_guard: LoopGuard,
    /// How many times in a row a model that answers without a tool call while goals of its
    /// plan are still open is sent back to them, before the run ends `incomplete`; 0 ends it
    /// at once.
    pub goal_reminders: u32,
}

/// How many times in a row a model is sent back to its open goals, unless a setting says
/// otherwise.
pub const DEFAULT_GOAL_REMINDERS: u32 = 3;

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            max_cost: None,
            llm_timeout: Duration::from_secs(600),
            max_tool_calls_per_turn: 64,
            loop_guard: LoopGuard::default(),
            goal_reminders: DEFAULT_GOAL_REMINDERS,
        }
    }
}

/// The limits the caller of a run chose explicitly (a command-line flag, a field of an API
/// request), as opposed to defaults from options, profiles or configuration files. A new trace
/// stores its limits; a later run of it (resume, continue) applies the stored ones unless the
/// caller overrides them here.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LimitOverrides {
    /// Model calls for this run.
    pub max_iterations: Option<u32>,
    /// The trace's cost budget in US dollars (sub-traces included).
    pub max_cost: Option<f64>,
}

impl RunLimits {
    /// These limits with the caller's `overrides` on top: what a new trace runs with.
    #[must_use]
    pub fn with_overrides(&self, overrides: &LimitOverrides) -> RunLimits {
        let mut limits = self.clone();
        if let Some(max) = overrides.max_iterations {
            limits.max_iterations = max;
        }
        if let Some(cost) = overrides.max_cost {
            limits.max_cost = Some(cost);
        }
        limits
    }

    /// The limits a run of an existing trace applies: these (the defaults), replaced by the
    /// limits `stored` with the trace, replaced by the caller's `overrides`. This is the one
    /// place later runs of a trace (resume today, continue too) read its stored limits.
    #[must_use]
    pub fn for_trace(&self, stored: Option<&TraceLimits>, overrides: &LimitOverrides) -> RunLimits {
        let mut limits = self.clone();
        if let Some(stored) = stored {
            if let Some(max) = stored.max_iterations {
                limits.max_iterations = max;
            }
            if stored.max_cost.is_some() {
                limits.max_cost = stored.max_cost;
            }
        }
        limits.with_overrides(overrides)
    }

    /// What a new trace stores of these limits.
    pub fn stored(&self) -> TraceLimits {
        TraceLimits {
            max_iterations: Some(self.max_iterations),
            max_cost: self.max_cost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_limits_apply_unless_the_caller_overrides_them() {
        let defaults = RunLimits {
            max_cost: Some(5.0),
            ..RunLimits::default()
        };
        let stored = TraceLimits {
            max_iterations: Some(7),
            max_cost: Some(0.002),
        };
        let none = LimitOverrides::default();
        let limits = defaults.for_trace(Some(&stored), &none);
        assert_eq!((limits.max_iterations, limits.max_cost), (7, Some(0.002)));
        let raised = LimitOverrides {
            max_cost: Some(1.0),
            ..none
        };
        let limits = defaults.for_trace(Some(&stored), &raised);
        assert_eq!((limits.max_iterations, limits.max_cost), (7, Some(1.0)));
        // A trace written before limits were stored runs with the defaults.
        let limits = defaults.for_trace(None, &none);
        assert_eq!((limits.max_iterations, limits.max_cost), (100, Some(5.0)));
        // A stored limit that was never set keeps the default.
        let partial = TraceLimits {
            max_iterations: Some(3),
            max_cost: None,
        };
        assert_eq!(
            defaults.for_trace(Some(&partial), &none).max_cost,
            Some(5.0)
        );
        assert_eq!(defaults.stored().max_cost, Some(5.0));
    }
}
