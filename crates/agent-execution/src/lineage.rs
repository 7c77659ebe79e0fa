//! The agent types a trace runs under, and its main trace's id and stored limits, read from the
//! store by following its parent links up ([`recorded_agents`]); the totals of a trace with
//! every sub-trace below it ([`stats_with_sub_traces`]); and how deep sub-traces may nest
//! ([`profile_depth_refusal`], [`agent_depth_refusal`]).

use crate::store::{StoreError, TraceStore};
use crate::trace::{TraceLimits, TraceStats};

/// The most sub-trace levels followed up from a trace to find its main trace.
const MAX_LINEAGE: usize = 64;

/// The agent types a trace runs under, read from the store by following parent links up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordedAgents {
    /// The agent types of the sub-traces from the trace itself up to the main trace's child
    /// (nearest first); empty for a main trace.
    pub sub_traces: Vec<String>,
    /// The profile the main trace recorded (`None`: the default one, or no main trace found).
    pub main: Option<String>,
    /// The main trace's id (`None`: no main trace found).
    pub main_trace_id: Option<String>,
    /// The limits the main trace stored (see [`Trace::limits`](crate::Trace::limits)).
    pub main_limits: Option<TraceLimits>,
}

/// Why a sub-agent tool (`explore`, `delegate`) is refused to the agent of `lineage` (agent
/// types from the main trace down) when sub-traces of profile `name` may nest `max` deep on one
/// line of descent; `None` when it is not.
pub fn profile_depth_refusal(name: &str, lineage: &[String], max: usize) -> Option<String> {
    let depth = lineage.iter().filter(|t| *t == name).count();
    let path = if lineage.is_empty() {
        "the main trace".to_owned()
    } else {
        format!("main → {}", lineage.join(" → "))
    };
    (depth >= max).then(|| {
        format!(
            "{name} is refused here: the depth limit of `{name}` sub-traces is {max}, and this \
             trace ({path}) is already {depth} deep in them. Do the work yourself, one step \
             after another."
        )
    })
}

/// Why a call of the sub-agent tool `tool` in `trace_id` is refused when sub-agents may nest
/// at most `max` levels below the main trace, whatever their profiles allow; `None` when it is
/// not. A trace's depth is the number of levels its id has (`p@delegate-…@explore-…` is 2).
///
/// ```
/// use agent_execution::lineage::agent_depth_refusal;
/// assert!(agent_depth_refusal("delegate", "p@delegate-20260204220012-001", 2).is_none());
/// let refusal = agent_depth_refusal("explore", "p@delegate-1-001@delegate-2-001", 2).unwrap();
/// assert!(refusal.contains("already 2 deep"), "{refusal}");
/// ```
pub fn agent_depth_refusal(tool: &str, trace_id: &str, max: usize) -> Option<String> {
    let depth = trace_id.matches('@').count();
    (depth >= max).then(|| {
        format!(
            "{tool} is refused here: sub-agents may nest at most {max} deep (max_agent_depth), \
             and this trace is already {depth} deep. Do the work yourself with the tools you \
             have."
        )
    })
}

/// The agent types `trace_id` runs under: its own and its ancestors' up to the main trace, and
/// the main trace's recorded profile. Bounded, so that damaged parent links cannot loop
/// forever; a missing trace ends the walk.
pub async fn recorded_agents(
    store: &dyn TraceStore,
    trace_id: &str,
) -> Result<RecordedAgents, StoreError> {
    let mut recorded = RecordedAgents::default();
    let mut next = Some(trace_id.to_owned());
    for _ in 0..MAX_LINEAGE {
        let Some(id) = next.take() else {
            break;
        };
        let Some(trace) = store.get_trace(&id).await? else {
            break;
        };
        match trace.parent_trace_id {
            None => {
                recorded.main = trace.agent_type;
                recorded.main_trace_id = Some(trace.trace_id);
                recorded.main_limits = trace.limits;
            }
            Some(parent) => {
                recorded.sub_traces.extend(trace.agent_type);
                next = Some(parent);
            }
        }
    }
    Ok(recorded)
}

/// The totals of a trace together with all its sub-traces, recursively.
///
/// A trace's own totals ([`Trace::stats`](crate::Trace::stats)) count only its own messages;
/// the work of its explore branches and delegates is in their traces (and in the
/// `sub_trace_completed` events and the tool messages of the calls that ran them). This adds
/// them up.
pub async fn stats_with_sub_traces(
    store: &dyn TraceStore,
    trace_id: &str,
) -> Result<TraceStats, StoreError> {
    let trace = store
        .get_trace(trace_id)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    let mut total = trace.stats();
    let mut pending = vec![trace.trace_id];
    while let Some(id) = pending.pop() {
        for sub in store.get_sub_traces(&id).await? {
            total.add(&sub.stats());
            pending.push(sub.trace_id);
        }
    }
    Ok(total)
}
