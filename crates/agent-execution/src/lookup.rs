//! Trace ids as people give them: an exact id, or a prefix that only one trace's id has (as
//! git takes commit ids). A prefix without `@` names a main trace; `<main prefix>@<sub prefix>`
//! names a sub-trace. The command line and the HTTP API resolve ids the same way.

use crate::store::{StoreError, TraceStore};
use crate::trace::TraceFilter;

/// What an id or prefix names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The one trace it names, by its full id.
    Found(String),
    /// No trace.
    NotFound,
    /// Several traces: their ids, sorted.
    Ambiguous(Vec<String>),
}

/// Finds the trace `given` names: the trace with that exact id, else the only one whose id
/// starts with it.
///
/// ```
/// use agent_execution::lookup::{Lookup, find_trace};
/// use agent_execution::{InMemoryTraceStore, NewTrace, TraceStore};
///
/// # tokio_test();
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn tokio_test() {
/// let store = InMemoryTraceStore::new();
/// let trace = store.create_trace(NewTrace::agent("Fix the bug")).await.unwrap();
/// let prefix = &trace.trace_id[..8];
/// assert_eq!(find_trace(&store, prefix).await.unwrap(), Lookup::Found(trace.trace_id.clone()));
/// assert_eq!(find_trace(&store, "zzzz").await.unwrap(), Lookup::NotFound);
/// # }
/// ```
pub async fn find_trace(store: &dyn TraceStore, given: &str) -> Result<Lookup, StoreError> {
    if given.is_empty() {
        return Ok(Lookup::NotFound);
    }
    if store.get_trace(given).await?.is_some() {
        return Ok(Lookup::Found(given.to_owned()));
    }
    let mut matching: Vec<String> = store
        .list_traces(&TraceFilter::default())
        .await?
        .into_iter()
        .filter(|trace| prefix_names(&trace.trace_id, given))
        .map(|trace| trace.trace_id)
        .collect();
    matching.sort();
    Ok(match matching.len() {
        0 => Lookup::NotFound,
        1 => Lookup::Found(matching.remove(0)),
        _ => Lookup::Ambiguous(matching),
    })
}

/// Whether the id `trace_id` is named by the prefix `given`: a main trace's id by a prefix
/// without `@`, a sub-trace's by a prefix of its main part, `@`, and a prefix of the rest.
pub fn prefix_names(trace_id: &str, given: &str) -> bool {
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
    use super::prefix_names;

    #[test]
    fn a_plain_prefix_names_main_traces_and_an_at_sign_names_sub_traces() {
        let main = "7d1e2c58-1111-4000-8000-000000000000";
        let sub = "7d1e2c58-1111-4000-8000-000000000000@explore-20260101000000-001";
        assert!(prefix_names(main, "7d1e"));
        assert!(!prefix_names(sub, "7d1e"));
        assert!(prefix_names(sub, "7d1e@explore"));
        assert!(prefix_names(sub, "7d1e@"));
        assert!(!prefix_names(sub, "7d1e@delegate"));
        assert!(!prefix_names(main, "7d1e@explore"));
        assert!(!prefix_names(main, "7d1e@"));
        assert!(!prefix_names(main, "8d1e"));
    }
}
