//! Trace ids as users type them: a unique prefix of a main trace's id (as git takes commit
//! ids), a sub-trace's id with its main part shortened (`<prefix>@explore-…`), and the newest
//! main trace for `--last`.

use agent_execution::{Trace, TraceFilter, TraceStore};
use anyhow::Result;

use crate::exit::UsageError;

/// How many candidates an ambiguous prefix lists.
const SHOWN: usize = 10;

/// The full id of the trace `given` names: an exact id, or a prefix that only one trace's id
/// has. A prefix without `@` names a main trace; `<main prefix>@<sub prefix>` names a
/// sub-trace. None or several matches is a usage error that says which.
pub(crate) async fn resolve(store: &dyn TraceStore, given: &str) -> Result<String> {
    if given.is_empty() {
        return Err(UsageError("a trace id is needed".into()).into());
    }
    if store.get_trace(given).await?.is_some() {
        return Ok(given.to_owned());
    }
    let traces = store.list_traces(&TraceFilter::default()).await?;
    let matches: Vec<&Trace> = traces
        .iter()
        .filter(|t| matches(&t.trace_id, given))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.trace_id.clone()),
        [] => Err(UsageError(format!(
            "there is no trace {given} in this trace folder (see `agent traces`)"
        ))
        .into()),
        several => {
            let mut listed: Vec<String> = several
                .iter()
                .take(SHOWN)
                .map(|t| format!("  {}", t.trace_id))
                .collect();
            if several.len() > SHOWN {
                listed.push(format!("  … and {} more", several.len() - SHOWN));
            }
            Err(UsageError(format!(
                "the trace id {given} is ambiguous; it could be:\n{}",
                listed.join("\n")
            ))
            .into())
        }
    }
}

/// The newest main trace of the folder, for `--last`.
pub(crate) async fn last(store: &dyn TraceStore) -> Result<String> {
    let traces = store.list_traces(&TraceFilter::default()).await?;
    traces
        .into_iter()
        .filter(|t| t.parent_trace_id.is_none())
        .max_by(|a, b| a.created_at.cmp(&b.created_at))
        .map(|t| t.trace_id)
        .ok_or_else(|| UsageError("there are no traces in this trace folder".into()).into())
}

/// Whether the id `trace_id` is named by the prefix `given`.
fn matches(trace_id: &str, given: &str) -> bool {
    match (trace_id.split_once('@'), given.split_once('@')) {
        (None, None) => trace_id.starts_with(given),
        (Some((main, sub)), Some((main_prefix, sub_prefix))) => {
            main.starts_with(main_prefix) && sub.starts_with(sub_prefix)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_plain_prefix_names_main_traces_and_an_at_sign_names_sub_traces() {
        let main = "7d1e2c58-1111-4000-8000-000000000000";
        let sub = "7d1e2c58-1111-4000-8000-000000000000@explore-20260101000000-001";
        assert!(matches(main, "7d1e"));
        assert!(!matches(sub, "7d1e"));
        assert!(matches(sub, "7d1e@explore"));
        assert!(matches(sub, "7d1e@"));
        assert!(!matches(sub, "7d1e@delegate"));
        assert!(!matches(main, "7d1e@explore"));
        assert!(!matches(main, "8d1e"));
    }
}
