//! How a profile's tool and limit fields change the filter and the limits it starts from.

use agent_runner::{LoopGuard, RiskLimit, RunLimits, ToolFilter};

use super::ProfileSpec;
use super::tool_names::tool_names;

/// Applies the tool fields of a spec to a filter.
pub(super) fn apply_tools(
    filter: &mut ToolFilter,
    spec: &ProfileSpec,
) -> Result<(), (&'static str, String)> {
    if let Some(tools) = &spec.tools {
        let names = tool_names(tools, "tools")?;
        filter.allow = if names.iter().any(|n| n == "*" || n == "all") {
            None
        } else {
            Some(names.into_iter().collect())
        };
    }
    if let Some(deny) = &spec.deny_tools {
        filter.deny = tool_names(deny, "deny_tools")?.into_iter().collect();
    }
    if let Some(read_only) = spec.read_only {
        filter.risk = if read_only {
            RiskLimit::ReadOnly
        } else {
            RiskLimit::Any
        };
    }
    if let Some(servers) = &spec.mcp_servers {
        filter.mcp_servers = Some(servers.names().into_iter().collect());
    }
    Ok(())
}

/// Applies the limit fields of a spec.
pub(super) fn apply_limits(
    limits: &mut RunLimits,
    spec: &ProfileSpec,
) -> Result<(), (&'static str, String)> {
    // The same checks as the command line's and the API's.
    let refused = |error: agent_runner::LimitError| (error.field(), error.reason());
    if let Some(max) = spec.max_iterations {
        limits.max_iterations = agent_runner::check_max_iterations(max).map_err(refused)?;
    }
    if let Some(cost) = spec.max_cost {
        limits.max_cost = Some(agent_runner::check_max_cost(cost).map_err(refused)?);
    }
    if let Some(secs) = spec.llm_timeout_secs {
        if secs == 0 {
            return Err(("llm_timeout_secs", "must be at least 1".into()));
        }
        limits.llm_timeout = std::time::Duration::from_secs(secs);
    }
    if let Some(max) = spec.max_tool_calls_per_turn {
        limits.max_tool_calls_per_turn = max;
    }
    if let Some(times) = spec.goal_reminders {
        limits.goal_reminders = times;
    }
    if let Some(guard) = &spec.loop_guard {
        let LoopGuard {
            repeated_call,
            repeated_error,
            alternation,
            stop_after,
            max_warnings,
        } = &mut limits.loop_guard;
        let fields = [
            (repeated_call, guard.repeated_call),
            (repeated_error, guard.repeated_error),
            (alternation, guard.alternation),
            (stop_after, guard.stop_after),
            (max_warnings, guard.max_warnings),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
    }
    Ok(())
}
