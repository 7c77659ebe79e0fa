//! `agent import --from LOCATION --to LOCATION [TRACE_ID...]`: traces copied between stores
//! with their events (`agent_execution::copy_trace`), e.g. a trace folder into the PostgreSQL
//! database a team shares. A trace the destination has already is left as it is.

use agent_execution::{Copied, TraceFilter, copy_trace};
use anyhow::Result;

use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};
use agent_app::store::{Location, open as open_at};

/// Copies the traces and says what it did.
pub(crate) async fn import(args: crate::cli::ImportArgs) -> Result<ExitCode> {
    let (from, to) = (Location::parse(&args.from), Location::parse(&args.to));
    if from == to {
        return Err(UsageError("--from and --to name the same store".into()).into());
    }
    if let Location::Folder(dir) = &from
        && !dir.is_dir()
    {
        return Err(UsageError(format!("--from {}: no such trace folder", dir.display())).into());
    }
    let source = open_at(from).await?;
    let destination = open_at(to).await?;
    let all = source.store.list_traces(&TraceFilter::default()).await?;
    let wanted: Vec<String> = if args.traces.is_empty() {
        all.iter().map(|trace| trace.trace_id.clone()).collect()
    } else {
        let mut ids = Vec::new();
        for given in &args.traces {
            let id = crate::ids::resolve(source.store.as_ref(), given).await?;
            // The trace and every trace below it (sub-traces are named after their parent).
            ids.extend(
                all.iter()
                    .filter(|trace| {
                        trace.trace_id == id || trace.trace_id.starts_with(&format!("{id}@"))
                    })
                    .map(|trace| trace.trace_id.clone()),
            );
        }
        ids
    };
    let (mut copied, mut present, mut events) = (0, 0, 0);
    // Oldest first, so that a listing of the destination in progress shows parents first.
    for trace_id in wanted.iter().rev() {
        match copy_trace(source.store.as_ref(), destination.store.as_ref(), trace_id).await? {
            Copied::Events(count) => {
                copied += 1;
                events += count;
                print(trace_id);
            }
            Copied::AlreadyThere => present += 1,
        }
    }
    note(&format!(
        "copied {copied} traces ({events} events) from {} to {}{}",
        source.location,
        destination.location,
        if present > 0 {
            format!("; {present} were there already and were left as they are")
        } else {
            String::new()
        }
    ));
    Ok(ExitCode::Completed)
}
