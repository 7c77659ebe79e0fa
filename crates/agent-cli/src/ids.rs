//! Trace ids as users type them: a unique prefix of a main trace's id (as git takes commit
//! ids), a sub-trace's id with its main part shortened (`<prefix>@explore-…`), and the newest
//! main trace for `--last`.

use agent_execution::lookup::prefix_names;
use agent_execution::{Trace, TraceFilter, TraceStatus, TraceStore};
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
        .filter(|t| prefix_names(&t.trace_id, given))
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

/// The newest main trace of the folder (the project's, by default), for `--last` and
/// `--continue` without an id.
pub(crate) async fn last(store: &dyn TraceStore) -> Result<String> {
    newest(store, 1)
        .await?
        .into_iter()
        .next()
        .map(|t| t.trace_id)
        .ok_or_else(|| {
            UsageError(
                "there are no traces in this project's trace folder yet (see `agent traces`)"
                    .into(),
            )
            .into()
        })
}

/// The trace `--continue [ID]` and `--last` name: the id or unique prefix given, else (no id,
/// or an empty one) the newest main trace.
pub(crate) async fn continued(
    store: &dyn TraceStore,
    given: Option<&str>,
    last: bool,
) -> Result<String> {
    match given.filter(|given| !given.is_empty()) {
        Some(_) if last => {
            Err(UsageError("give --continue a trace id or --last, not both".into()).into())
        }
        Some(given) => resolve(store, given).await,
        None => self::last(store).await,
    }
}

/// The `n` newest main traces, newest first, leaving out those that failed before the model
/// answered anything.
pub(crate) async fn newest(store: &dyn TraceStore, n: usize) -> Result<Vec<Trace>> {
    let mut traces: Vec<Trace> = store
        .list_traces(&TraceFilter::default())
        .await?
        .into_iter()
        .filter(|t| t.parent_trace_id.is_none() && !never_answered(t))
        .collect();
    traces.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    traces.truncate(n);
    Ok(traces)
}

/// Whether `text` could be a trace id or a prefix of one as users type them: hexadecimal digits
/// and dashes, four characters at least (a message to the model hardly is).
pub(crate) fn looks_like_id(text: &str) -> bool {
    let main = text.split('@').next().unwrap_or(text);
    main.len() >= 4 && main.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// Whether a trace failed before the model answered anything: it holds the task alone. Such
/// traces are hidden from `agent traces` (unless `--all`) and never taken as the newest trace
/// to continue.
pub(crate) fn never_answered(trace: &Trace) -> bool {
    trace.parent_trace_id.is_none()
        && trace.status == TraceStatus::Failed
        && trace.total_messages <= 1
}

/// The first eight characters of an id: enough to name it as a prefix.
pub(crate) fn short(trace_id: &str) -> String {
    trace_id.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_and_messages_are_told_apart() {
        assert!(super::looks_like_id("7d1e"));
        assert!(super::looks_like_id("7d1e2c58-1111"));
        assert!(super::looks_like_id("7d1e@explore"));
        assert!(!super::looks_like_id("add"));
        assert!(!super::looks_like_id("Say it in French"));
        assert!(!super::looks_like_id("cafe au lait"));
    }
}
