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

/// The fewest characters a resume hint shows of a trace id.
pub const SHORTEST_PREFIX: usize = 4;

/// The shortest prefix of the main trace id `trace_id`, [`SHORTEST_PREFIX`] characters at
/// least, that names it alone among `ids` (the store's ids; sub-traces' ids never collide,
/// since a plain prefix names main traces only): what a person types to resume it, as
/// `agent -r 3f2a`.
///
/// ```
/// use agent_execution::lookup::unique_prefix;
///
/// let ids = ["3f2a1b9c-0000", "3f2a7e00-0000", "9d0c0000-0000"];
/// assert_eq!(unique_prefix("3f2a1b9c-0000", ids), "3f2a1");
/// assert_eq!(unique_prefix("9d0c0000-0000", ids), "9d0c");
/// ```
pub fn unique_prefix<'a>(trace_id: &str, ids: impl IntoIterator<Item = &'a str>) -> String {
    let others: Vec<&str> = ids
        .into_iter()
        .filter(|id| *id != trace_id && !id.contains('@'))
        .collect();
    let mut end = 0;
    for (count, (at, c)) in trace_id.char_indices().enumerate() {
        end = at + c.len_utf8();
        let prefix = &trace_id[..end];
        if count + 1 >= SHORTEST_PREFIX && !others.iter().any(|id| id.starts_with(prefix)) {
            break;
        }
    }
    trace_id[..end].to_owned()
}

/// [`unique_prefix`] among the traces of `store`.
///
/// # Errors
///
/// The store could not list its traces.
pub async fn shortest_prefix(store: &dyn TraceStore, trace_id: &str) -> Result<String, StoreError> {
    let traces = store.list_traces(&TraceFilter::default()).await?;
    Ok(unique_prefix(
        trace_id,
        traces.iter().map(|trace| trace.trace_id.as_str()),
    ))
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

    #[test]
    fn the_shortest_unique_prefix_has_four_characters_at_least_and_names_one_trace() {
        use super::unique_prefix;
        let main = "7d1e2c58-1111-4000-8000-000000000000";
        let sub = format!("{main}@explore-20260101000000-001");
        let near = "7d1e2c99-1111-4000-8000-000000000000";
        assert_eq!(unique_prefix(main, [main, sub.as_str()]), "7d1e");
        assert_eq!(unique_prefix(main, [main, near]), "7d1e2c5");
        assert_eq!(unique_prefix(near, [main, near]), "7d1e2c9");
        // An id that another one starts with is given whole.
        assert_eq!(unique_prefix("7d1e", ["7d1e", "7d1e2"]), "7d1e");
        assert_eq!(unique_prefix("ab", ["ab"]), "ab");
    }
}
