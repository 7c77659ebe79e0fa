//! `/rewind` and `/diff` in a chat: the points the conversation can go back to, going back to
//! one — the files put back as they were when it started and the session continued in a fork,
//! as `agent rewind` does — and a goal's file changes, as `agent diff` shows them (all through
//! `agent_plan::rewind`).

use agent_plan::rewind::{self, Command};
use anyhow::Result;

use super::Session;
use crate::output::{clean, note};

/// Runs `/rewind` with the words after it.
pub(super) async fn run(session: &mut Session, words: &[&str]) -> Result<()> {
    let command = match rewind::parse_command(words) {
        Ok(command) => command,
        Err(mistake) => {
            note(&mistake);
            return Ok(());
        }
    };
    let Some((trace_id, checkpoints)) = checkpoints(session) else {
        return Ok(());
    };
    let store = session.setup.store.clone();
    match command {
        Command::List => match rewind::points(store.as_ref(), &checkpoints, &trace_id).await {
            Ok(points) => note(&clean(&rewind::list_text(&trace_id, &points))),
            Err(error) => note(&format!("agent: {error}")),
        },
        Command::Rewind(target, options) => {
            match rewind::rewind(store.as_ref(), &checkpoints, &trace_id, &target, options).await {
                Ok(rewound) => {
                    note(&clean(&rewind::done_text(
                        &trace_id, &target, options, &rewound,
                    )));
                    if let Some(forked) = rewound.forked {
                        session.trace_id = Some(forked.trace_id);
                    }
                }
                Err(error) if error.is_user_error() => note(&format!("agent: {error}")),
                Err(error) => return Err(error.into()),
            }
        }
    }
    Ok(())
}

/// `/diff N`: goal N's file changes, from its start to its end (or to now).
pub(super) async fn diff(session: &mut Session, number: &str) -> Result<()> {
    let Some((trace_id, checkpoints)) = checkpoints(session) else {
        return Ok(());
    };
    let store = session.setup.store.clone();
    match rewind::goal_diff(store.as_ref(), &checkpoints, &trace_id, number).await {
        Ok(diff) if diff.trim().is_empty() => note(&format!("goal {number} changed no file")),
        Ok(diff) => note(clean(&diff).trim_end()),
        Err(error) => note(&format!("agent: {error}")),
    }
    Ok(())
}

/// The trace of the session and its checkpoints; `None` (said on stderr) when there are none.
fn checkpoints(session: &Session) -> Option<(String, std::sync::Arc<rewind::CheckpointStore>)> {
    let Some(trace_id) = session.trace_id.clone() else {
        note("no conversation yet: type a message first");
        return None;
    };
    match rewind::checkpoints_of(session.setup.runner.options(), &trace_id) {
        Ok(Some(checkpoints)) => Some((trace_id, checkpoints)),
        Ok(None) => {
            note(&format!(
                "{trace_id} has no checkpoints (they are off, traces are kept in a database, \
                 or no snapshot was taken yet)"
            ));
            None
        }
        Err(error) => {
            note(&format!("agent: {error}"));
            None
        }
    }
}
