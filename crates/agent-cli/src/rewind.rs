//! `agent rewind` and `agent diff`: the workspace's files put back as they were when a goal
//! started (and the conversation forked there), and the changes of a goal or a run as a
//! unified diff, from the checkpoints kept in the trace's folder.

use std::sync::Arc;

use agent_checkpoint::{Changes, CheckpointStore, DiffTarget, EntriesExt, TraceCheckpoints};
use agent_execution::TraceStore;
use agent_plan::rewind::{RewindError, RewindOptions, RewindTarget};
use anyhow::{Context, Result};

use crate::cli::{DiffArgs, RewindArgs, TraceDirArg};
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};

/// A trace's checkpoints, opened.
struct Opened {
    store: Arc<dyn TraceStore>,
    trace_id: String,
    checkpoints: Arc<CheckpointStore>,
}

async fn open(arg: &TraceDirArg, given: &str) -> Result<Opened> {
    let app = crate::settings::app(crate::settings::traces(arg))?;
    crate::settings::say(app.store_notice());
    let (location, _) = app.store_location();
    if let Some(folder) = location.folder()
        && !folder.exists()
    {
        // Not created by a command that finds nothing in it.
        return Err(UsageError(format!(
            "there is no trace {given}: the trace folder {} does not exist",
            folder.display()
        ))
        .into());
    }
    let opened = agent_app::store::open(location).await?;
    let trace_id = crate::ids::resolve(opened.store.as_ref(), given).await?;
    let Some(folder) = opened.location.folder() else {
        return Err(UsageError(format!(
            "checkpoints are kept in trace folders; {} is not one",
            opened.location
        ))
        .into());
    };
    let limits = agent_app::checkpoints::limits(app.file());
    let checkpoints = TraceCheckpoints::new(folder.clone(), limits)
        .open(&trace_id)
        .with_context(|| format!("cannot open the checkpoints of {trace_id}"))?
        .ok_or_else(|| {
            UsageError(format!(
                "trace {trace_id} has no checkpoints (it ran without them)"
            ))
        })?;
    Ok(Opened {
        store: opened.store,
        trace_id,
        checkpoints: Arc::new(checkpoints),
    })
}

/// Puts the files back as they were when the goal started, then (unless `--files-only` or
/// `--dry-run`) forks the trace there and prints the new trace's id.
pub(crate) async fn rewind(args: RewindArgs) -> Result<ExitCode> {
    let opened = open(&args.trace_dir, &args.trace_id).await?;
    let target = RewindTarget::Goal(args.goal.clone());
    let options = RewindOptions {
        files_only: args.files_only,
        force: args.force,
        dry_run: args.dry_run,
    };
    let rewound = agent_plan::rewind::rewind(
        opened.store.as_ref(),
        &opened.checkpoints,
        &opened.trace_id,
        &target,
        options,
    )
    .await
    .map_err(usage)?;
    if args.dry_run {
        print_changes(&rewound.changes);
        return Ok(ExitCode::Completed);
    }
    note(&format!(
        "files of {} put back as at the start of goal {}: {}",
        opened.trace_id,
        args.goal,
        counts(&rewound.changes)
    ));
    if let Some(forked) = rewound.forked {
        print(&forked.trace_id);
        note(&format!(
            "forked {} into {}; continue it with `agent run --continue {} \"<message>\"`",
            opened.trace_id, forked.trace_id, forked.trace_id
        ));
    }
    Ok(ExitCode::Completed)
}

/// `N added, N modified, N deleted`: what a rewind changed, as every front end says it.
pub(crate) fn counts(changes: &Changes) -> String {
    format!(
        "{} added, {} modified, {} deleted",
        changes.added.len(),
        changes.modified.len(),
        changes.deleted.len()
    )
}

/// A rewind's failure: the user's to resolve (a usage error) or the program's.
fn usage(error: RewindError) -> anyhow::Error {
    if error.is_user_error() {
        UsageError(error.to_string()).into()
    } else {
        error.into()
    }
}

fn print_changes(changes: &Changes) {
    for (mark, paths) in [
        ("A", &changes.added),
        ("M", &changes.modified),
        ("D", &changes.deleted),
    ] {
        for path in paths {
            print(&for_terminal(&format!("{mark} {path}")));
        }
    }
}

/// The text as it may go to standard output: workspace files (and so their names and diffs)
/// are not trusted to drive a terminal.
fn for_terminal(text: &str) -> String {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        crate::output::clean(text)
    } else {
        text.to_owned()
    }
}

/// Prints the unified diff of a goal's files (start to end, or to now) or of the run's.
pub(crate) async fn diff(args: DiffArgs) -> Result<ExitCode> {
    let opened = open(&args.trace_dir, &args.trace_id).await?;
    let text = match &args.goal {
        Some(number) => agent_plan::rewind::goal_diff(
            opened.store.as_ref(),
            &opened.checkpoints,
            &opened.trace_id,
            number,
        )
        .await
        .map_err(usage)?,
        None => {
            let from = opened
                .checkpoints
                .entries()?
                .first_snapshot()
                .ok_or_else(|| UsageError(format!("{} has no checkpoint", opened.trace_id)))?;
            opened.checkpoints.diff(&from, &DiffTarget::Workspace)?
        }
    };
    if !text.is_empty() {
        print(&for_terminal(text.trim_end_matches('\n')));
    }
    Ok(ExitCode::Completed)
}
