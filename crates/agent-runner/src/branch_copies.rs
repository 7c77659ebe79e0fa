//! Explore branches that write work apart: when the exploring trace is a main trace with
//! checkpoints on, each branch gets a private copy of the workspace as it was when the
//! exploration started ([`agent_checkpoint::Checkpointer::branch_copies`]), so branches do not
//! see each other's changes; the files each changed are in the merged report, and the changes
//! of the branch the model chooses (`goal(select=…)`) are applied to the workspace. The other
//! copies are left as they are, outside the workspace.

use agent_checkpoint::{Changes, Checkpointer};
use agent_goal::{GoalTree, GoalType, branch_label};
use std::sync::Arc;

use crate::checkpoint_options::CheckpointOptions;
use crate::subagents::SubAgents;

/// The checkpoint options when `trace_id` is a main trace of a runner with checkpoints on.
async fn main_options(agents: &SubAgents, trace_id: &str) -> Option<CheckpointOptions> {
    let options = agents.engine.root.checkpoints.clone()?;
    match agents.store.get_trace(trace_id).await {
        Ok(Some(trace)) if trace.parent_trace_id.is_none() => Some(options),
        _ => None,
    }
}

/// Gives each of `branches` of `parent` a copy of the workspace to work in, when `parent` is a
/// main trace with checkpoints on and the branches may write; whether they work apart. When
/// the copies cannot be made, the branches share the workspace, and the run says why.
pub(crate) async fn give_copies(
    agents: &SubAgents,
    parent: &str,
    branches: &[String],
    read_only: bool,
) -> bool {
    if read_only {
        return false;
    }
    let Some(options) = main_options(agents, parent).await else {
        return false;
    };
    let checkpointer = options.checkpointer.clone();
    let (id, ids) = (parent.to_owned(), branches.to_vec());
    let made = tokio::task::spawn_blocking(move || checkpointer.branch_copies(&id, &ids)).await;
    match made {
        Ok(Ok(Some(dirs))) => {
            for (branch, dir) in branches.iter().zip(dirs) {
                agents.engine.work_apart(branch, dir);
            }
            true
        }
        Ok(Ok(None)) => false,
        Ok(Err(error)) => {
            tracing::warn!(parent, %error, "the explore branches share the workspace");
            false
        }
        Err(error) => {
            tracing::warn!(parent, %error, "the explore branches share the workspace");
            false
        }
    }
}

/// The files `branch` changed in its copy, as a line of the merged report.
pub(crate) async fn changed_files(agents: &SubAgents, parent: &str, branch: &str) -> String {
    let Some(options) = main_options(agents, parent).await else {
        return String::new();
    };
    match branch_changes(options.checkpointer, parent, branch, false).await {
        Ok(changes) if changes.is_empty() => "Files changed in its copy: none.\n".to_owned(),
        Ok(changes) => format!("Files changed in its copy: {}.\n", listed(&changes)),
        Err(error) => format!("Files changed in its copy: unknown ({error}).\n"),
    }
}

/// After a `goal` call that chose a branch of a merged exploration whose branches worked
/// apart: applies the chosen branch's changes to the workspace. The note tells the model.
pub(crate) async fn apply_selected(
    options: &CheckpointOptions,
    trace_id: &str,
    before: &GoalTree,
    after: &GoalTree,
) -> Option<String> {
    let merge = after.goals().iter().find(|goal| {
        goal.goal_type == GoalType::ExploreMerge
            && goal.selected_branch.is_some()
            && before.get(&goal.id).map(|g| &g.selected_branch) != Some(&goal.selected_branch)
    })?;
    let label = merge.selected_branch.as_deref()?;
    let start = after.get(merge.explore_start_id.as_deref()?)?;
    let ids = start.branch_ids.as_ref()?;
    let branch = (0..ids.len())
        .find(|&i| branch_label(i) == label)
        .map(|i| ids[i].clone())?;
    let applied = branch_changes(options.checkpointer.clone(), trace_id, &branch, true).await;
    match applied {
        Ok(changes) if changes.is_empty() => Some(format!(
            "Branch {label} changed no file: the workspace is as it was."
        )),
        Ok(changes) => Some(format!(
            "The file changes of branch {label} were applied to the workspace: {}.",
            listed(&changes)
        )),
        // Branches that shared the workspace have no copy: nothing to apply.
        Err(agent_checkpoint::CheckpointError::UnknownSnapshot(_)) => None,
        Err(error) => Some(format!(
            "The file changes of branch {label} were not applied: {error}"
        )),
    }
}

async fn branch_changes(
    checkpointer: Arc<dyn Checkpointer>,
    trace_id: &str,
    branch: &str,
    apply: bool,
) -> Result<Changes, agent_checkpoint::CheckpointError> {
    let (id, name) = (trace_id.to_owned(), branch.to_owned());
    tokio::task::spawn_blocking(move || checkpointer.branch_changes(&id, &name, apply, false))
        .await
        .unwrap_or_else(|e| {
            Err(agent_checkpoint::CheckpointError::Io {
                path: agent_checkpoint::branch_copy_dir(branch),
                source: std::io::Error::other(e.to_string()),
            })
        })
}

/// `added a, b; modified c; deleted d`.
fn listed(changes: &Changes) -> String {
    [
        ("added", &changes.added),
        ("modified", &changes.modified),
        ("deleted", &changes.deleted),
    ]
    .iter()
    .filter(|(_, paths)| !paths.is_empty())
    .map(|(what, paths)| format!("{what} {}", paths.join(", ")))
    .collect::<Vec<_>>()
    .join("; ")
}
