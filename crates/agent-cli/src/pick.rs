//! Choosing a trace when none is named (`agent resume`, `agent chat -r`): on a terminal, a
//! numbered list of this project's newest traces to choose from; without one, a usage error
//! that lists them.

use std::io::IsTerminal;

use agent_execution::{Trace, TraceStore};
use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::exit::UsageError;
use crate::output::{one_line, truncate};
use crate::progress::status_word;

/// How many traces the list shows.
const SHOWN: usize = 10;

/// The trace the user chooses among this project's newest; `command` is how to name one
/// directly (`agent resume`), for the message shown without a terminal.
pub(crate) async fn pick(store: &dyn TraceStore, command: &str) -> Result<String> {
    let traces = crate::ids::newest(store, SHOWN).await?;
    let Some(first) = traces.first() else {
        return Err(UsageError(
            "there are no traces in this project's trace folder yet (see `agent traces`)".into(),
        )
        .into());
    };
    let listed = listing(&traces, Utc::now());
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(UsageError(format!(
            "{command} needs a trace id here (there is no terminal to choose on); the newest \
             traces of this project:\n{listed}\ne.g. {command} {}",
            crate::ids::short(&first.trace_id)
        ))
        .into());
    }
    crate::output::note(&listed);
    let count = traces.len();
    let answer = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut stderr = std::io::stderr();
        let _ = write!(stderr, "Which trace? [1-{count}, Enter for 1] ");
        let _ = stderr.flush();
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await??;
    let chosen = match answer.trim() {
        "" => 1,
        text => text.parse::<usize>().unwrap_or(0),
    };
    traces
        .get(chosen.wrapping_sub(1))
        .map(|t| t.trace_id.clone())
        .ok_or_else(|| UsageError(format!("{:?} is not one of 1 to {count}", answer.trim())).into())
}

/// The traces numbered from 1, one a line: short id, age, status, model, task.
fn listing(traces: &[Trace], now: DateTime<Utc>) -> String {
    traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            format!(
                "{:>3}  {}  {:>4}  {:<10} {:<18} {}",
                i + 1,
                crate::ids::short(&t.trace_id),
                age(&t.created_at, now),
                status_word(t.status),
                truncate(t.model.as_deref().unwrap_or("-"), 18),
                truncate(&one_line(&t.task), 50)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How long ago `created_at` (RFC 3339) was, in its largest unit: `40s`, `5m`, `3h`, `2d`,
/// `7w`; `?` when it does not parse.
pub(crate) fn age(created_at: &str, now: DateTime<Utc>) -> String {
    let Ok(then) = DateTime::parse_from_rfc3339(created_at) else {
        return "?".into();
    };
    let seconds = (now - then.with_timezone(&Utc)).num_seconds().max(0);
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 14 * 86_400 => format!("{}d", s / 86_400),
        s => format!("{}w", s / (7 * 86_400)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_in_their_largest_unit() {
        let now = DateTime::parse_from_rfc3339("2026-01-15T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let check = |at: &str, expect: &str| assert_eq!(age(at, now), expect, "{at}");
        check("2026-01-15T11:59:20.000000Z", "40s");
        check("2026-01-15T11:55:00Z", "5m");
        check("2026-01-15T09:00:00Z", "3h");
        check("2026-01-13T12:00:00Z", "2d");
        check("2025-11-01T12:00:00Z", "10w");
        check("2026-01-16T12:00:00Z", "0s");
        check("yesterday", "?");
    }
}
