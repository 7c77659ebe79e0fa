//! The limits that end a run: model calls, spending, the model's time, tool calls per turn and
//! the loop guard's thresholds; the limits a caller sets explicitly ([`LimitOverrides`]); and how
//! the limits stored with a trace apply to its later runs ([`RunLimits::for_trace`]); and the
//! one check of a limit's value ([`check_max_iterations`], [`check_max_cost`]) that the command
//! line, the configuration files and the API all apply.

use std::time::Duration;

use agent_execution::TraceLimits;

use crate::guard::LoopGuard;

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
    /// When a repeating agent is warned and stopped (see the `guard` module).
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

/// A limit whose value cannot be a limit (the value refused, as given). Its text names the
/// field, for the user: `max_cost must be a positive, finite amount of US dollars (got NaN)`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} {}", self.field(), self.reason())]
pub enum LimitError {
    /// `max_iterations` is not a whole number of model calls of at least 1.
    MaxIterations(String),
    /// `max_cost` is not a positive, finite amount of US dollars.
    MaxCost(String),
}

impl LimitError {
    /// The limit's field name: `max_iterations` or `max_cost`.
    pub fn field(&self) -> &'static str {
        match self {
            Self::MaxIterations(_) => "max_iterations",
            Self::MaxCost(_) => "max_cost",
        }
    }

    /// What the field must be, without its name: `must be ...`.
    pub fn requirement(&self) -> &'static str {
        match self {
            Self::MaxIterations(_) => "must be a whole number of model calls, at least 1",
            Self::MaxCost(_) => "must be a positive, finite amount of US dollars",
        }
    }

    /// The value refused, as given.
    pub fn value(&self) -> &str {
        match self {
            Self::MaxIterations(value) | Self::MaxCost(value) => value,
        }
    }

    /// What is wrong, without the field's name: `must be ... (got NaN)`, for messages that name
    /// the field their own way.
    pub fn reason(&self) -> String {
        format!("{} (got {})", self.requirement(), self.value())
    }
}

/// Checks a `max_iterations`: at least one model call (0 would make a trace that fails at once).
pub fn check_max_iterations(max_iterations: u32) -> Result<u32, LimitError> {
    if max_iterations == 0 {
        return Err(LimitError::MaxIterations(max_iterations.to_string()));
    }
    Ok(max_iterations)
}

/// Checks a `max_cost`: positive and finite (NaN would mean no limit at all, 0 or less a run that
/// stops before its first call, infinity no limit while claiming one).
pub fn check_max_cost(max_cost: f64) -> Result<f64, LimitError> {
    if !max_cost.is_finite() || max_cost <= 0.0 {
        return Err(LimitError::MaxCost(max_cost.to_string()));
    }
    Ok(max_cost)
}

/// Parses and checks a `max_iterations` given as text (a command-line flag).
pub fn parse_max_iterations(text: &str) -> Result<u32, LimitError> {
    let max = text
        .trim()
        .parse::<u32>()
        .map_err(|_| LimitError::MaxIterations(format!("{text:?}")))?;
    check_max_iterations(max)
}

/// Parses and checks a `max_cost` given as text (a command-line flag); `NaN`, `inf`, `0` and
/// negative amounts are refused.
pub fn parse_max_cost(text: &str) -> Result<f64, LimitError> {
    let cost = text
        .trim()
        .parse::<f64>()
        .map_err(|_| LimitError::MaxCost(format!("{text:?}")))?;
    check_max_cost(cost)
}

impl RunLimits {
    /// These limits with the caller's `overrides` on top: what a new trace runs with.
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
    fn limits_are_positive_and_finite() {
        assert_eq!(check_max_iterations(1), Ok(1));
        assert_eq!(
            check_max_iterations(0).unwrap_err().field(),
            "max_iterations"
        );
        assert_eq!(check_max_cost(0.01), Ok(0.01));
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let error = check_max_cost(bad).unwrap_err();
            assert_eq!(error.field(), "max_cost", "{bad}");
        }
        assert_eq!(parse_max_iterations("12"), Ok(12));
        for bad in ["0", "-1", "1.5", "many", "", "4294967296"] {
            assert!(parse_max_iterations(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_max_cost("2.5"), Ok(2.5));
        for bad in ["NaN", "nan", "inf", "-inf", "0", "-3", "1e999", "$2"] {
            let error = parse_max_cost(bad).unwrap_err();
            assert!(
                error.to_string().starts_with("max_cost must be"),
                "{bad}: {error}"
            );
        }
    }

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
