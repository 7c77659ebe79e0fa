//! `/rewind` in a chat: the points the conversation can go back to, and going back to one —
//! the files put back as they were when it started and the session continued in a fork, as
//! `agent rewind` does (both through `agent_plan::rewind`).

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
    let Some(trace_id) = session.trace_id.clone() else {
        note("no conversation yet: type a message first");
        return Ok(());
    };
    let checkpoints = match rewind::checkpoints_of(session.setup.runner.options(), &trace_id) {
        Ok(Some(checkpoints)) => checkpoints,
        Ok(None) => {
            note(&format!(
                "{trace_id} has no checkpoints (they are off, traces are kept in a database, \
                 or no snapshot was taken yet)"
            ));
            return Ok(());
        }
        Err(error) => {
            note(&format!("agent: {error}"));
            return Ok(());
        }
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
