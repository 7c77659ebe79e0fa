//! `agent fork`: a new trace with the history and plan of another just before one of its goals
//! started (or after one of its messages), printed as its id, ready to be continued.

use agent_execution::fork::{self, ForkError, ForkPoint};
use anyhow::Result;

use crate::cli::ForkArgs;
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};

/// Forks the trace; prints the new trace's id on stdout and how to go on on stderr. An unknown
/// trace, goal or message, or a goal that never started, is a usage error.
pub(crate) async fn command(args: ForkArgs) -> Result<ExitCode> {
    let point = match (args.goal, args.message) {
        (Some(goal), _) => ForkPoint::Goal(goal),
        (None, Some(sequence)) => ForkPoint::Message(sequence),
        (None, None) => {
            return Err(UsageError("agent fork needs --goal or --message".into()).into());
        }
    };
    let store = crate::settings::store_for(&args.trace_dir).await?;
    let trace_id = crate::ids::resolve(store.as_ref(), &args.trace_id).await?;
    let forked = match fork::fork(store.as_ref(), &trace_id, &point).await {
        Ok(forked) => forked,
        Err(error @ ForkError::NotFound { .. }) => return Err(UsageError(error.to_string()).into()),
        Err(error) if error.is_bad_request() => return Err(UsageError(error.to_string()).into()),
        Err(error) => return Err(error.into()),
    };
    print(&forked.trace_id);
    note(&format!(
        "forked {} into {} ({} messages); continue it with `agent run --continue {} \"<message>\"` \
         or `agent resume {}`",
        trace_id, forked.trace_id, forked.messages, forked.trace_id, forked.trace_id
    ));
    Ok(ExitCode::Completed)
}
