//! `agent rewind` and `agent diff`: the workspace's files put back as they were when a goal
//! started (and the conversation forked there), and the changes of a goal or a run as a
//! unified diff, from the checkpoints kept in the trace's folder.

use std::sync::Arc;

use agent_checkpoint::{
    Changes, CheckpointError, CheckpointStore, DiffTarget, EntriesExt, RestoreOptions, SnapshotId,
    TraceCheckpoints,
};
use agent_execution::TraceStore;
use agent_execution::fork::{self, ForkError, ForkPoint};
use anyhow::{Context, Result};

use crate::cli::{DiffArgs, RewindArgs, TraceDirArg};
use crate::config::FileConfig;
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};

/// A trace's checkpoints, opened.
struct Opened {
    store: Arc<dyn TraceStore>,
    trace_id: String,
    checkpoints: CheckpointStore,
}

async fn open(arg: &TraceDirArg, given: &str) -> Result<Opened> {
    let file = FileConfig::load()?;
    let location = crate::store::Location::resolve(arg, &file);
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
    let opened = crate::store::open_at(location).await?;
    let trace_id = crate::ids::resolve(opened.store.as_ref(), given).await?;
    let Some(folder) = opened.location.folder() else {
        return Err(UsageError(format!(
            "checkpoints are kept in trace folders; {} is not one",
            opened.location
        ))
        .into());
    };
    let checkpoints = TraceCheckpoints::new(folder.clone(), crate::checkpoint::limits(&file))
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
        checkpoints,
    })
}

/// The id of the goal numbered `number` in the trace's plan.
async fn goal_id(opened: &Opened, number: &str) -> Result<String> {
    let tree = opened.store.get_goal_tree(&opened.trace_id).await?;
    tree.as_ref()
        .and_then(|t| t.find_by_display(number))
        .map(|g| g.id.clone())
        .ok_or_else(|| UsageError(format!("trace {} has no goal {number}", opened.trace_id)).into())
}

/// Puts the files back as they were when the goal started, then (unless `--files-only` or
/// `--dry-run`) forks the trace there and prints the new trace's id.
pub(crate) async fn rewind(args: RewindArgs) -> Result<ExitCode> {
    let opened = open(&args.trace_dir, &args.trace_id).await?;
    let id = goal_id(&opened, &args.goal).await?;
    let start = opened
        .checkpoints
        .entries()?
        .goal_start(&id)
        .ok_or_else(|| {
            UsageError(format!(
                "goal {} of {} has no checkpoint of its start",
                args.goal, opened.trace_id
            ))
        })?;
    let check = RestoreOptions {
        force: args.force,
        dry_run: true,
    };
    let changes = restore(&opened.checkpoints, &start, check)?;
    if args.dry_run {
        print_changes(&changes);
        return Ok(ExitCode::Completed);
    }
    let forked = if args.files_only {
        None
    } else {
        let point = ForkPoint::Goal(args.goal.clone());
        match fork::fork(opened.store.as_ref(), &opened.trace_id, &point).await {
            Ok(forked) => Some(forked),
            Err(error @ ForkError::NotFound { .. }) => {
                return Err(UsageError(error.to_string()).into());
            }
            Err(error) if error.is_bad_request() => {
                return Err(UsageError(error.to_string()).into());
            }
            Err(error) => return Err(error.into()),
        }
    };
    let options = RestoreOptions {
        force: args.force,
        dry_run: false,
    };
    let changes = restore(&opened.checkpoints, &start, options)?;
    note(&format!(
        "files of {} put back as at the start of goal {}: {} added, {} modified, {} deleted",
        opened.trace_id,
        args.goal,
        changes.added.len(),
        changes.modified.len(),
        changes.deleted.len()
    ));
    if let Some(forked) = forked {
        print(&forked.trace_id);
        note(&format!(
            "forked {} into {}; continue it with `agent run --continue {} \"<message>\"`",
            opened.trace_id, forked.trace_id, forked.trace_id
        ));
    }
    Ok(ExitCode::Completed)
}

/// A restore whose refusal (files changed since the run) is the user's to resolve.
fn restore(
    checkpoints: &CheckpointStore,
    id: &SnapshotId,
    options: RestoreOptions,
) -> Result<Changes> {
    match checkpoints.restore(id, options) {
        Ok(changes) => Ok(changes),
        Err(error @ CheckpointError::Conflicts { .. }) => Err(UsageError(error.to_string()).into()),
        Err(error) => Err(error.into()),
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
    let entries = opened.checkpoints.entries()?;
    let (from, to) = match &args.goal {
        Some(number) => {
            let id = goal_id(&opened, number).await?;
            let from = entries.goal_start(&id).ok_or_else(|| {
                UsageError(format!("goal {number} has no checkpoint of its start"))
            })?;
            let to = entries
                .goal_end(&id)
                .map_or(DiffTarget::Workspace, DiffTarget::Snapshot);
            (from, to)
        }
        None => {
            let from = entries
                .first_snapshot()
                .ok_or_else(|| UsageError(format!("{} has no checkpoint", opened.trace_id)))?;
            (from, DiffTarget::Workspace)
        }
    };
    let text = opened.checkpoints.diff(&from, &to)?;
    if !text.is_empty() {
        print(&for_terminal(text.trim_end_matches('\n')));
    }
    Ok(ExitCode::Completed)
}
