//! Checkpoints of the workspace's files at the boundaries of a main run: when it starts (or a
//! conversation's next turn starts), when a goal starts, is done or is abandoned, and when the
//! run stops. An abandoned goal's file changes are rolled back as
//! [`CheckpointOptions::abandon_rollback`] says.
//!
//! Sub-traces take none: delegates work in the main trace's workspace, inside the main goal
//! whose boundaries are kept, and explore branches that write work in copies of it
//! (`branch_copies.rs`). A snapshot that cannot be taken is said once
//! per trace and the run goes on.

use std::sync::Arc;

use agent_checkpoint::{AbandonRollback, Changes, Point, RestoreOptions};
use agent_execution::message::Message;
use agent_goal::{Goal, GoalStatus, GoalTree};
use agent_llm::Role;

use crate::agent::Agent;
use crate::checkpoint_options::CheckpointOptions;

/// The options when `trace_id` is a main trace of a runner with checkpoints on.
async fn options_for(agent: &Agent, trace_id: &str) -> Option<CheckpointOptions> {
    let options = agent.engine.root.checkpoints.clone()?;
    match agent.store().get_trace(trace_id).await {
        Ok(Some(trace)) if trace.parent_trace_id.is_none() => Some(options),
        _ => None,
    }
}

/// Takes one snapshot recorded at `points`, off the async threads; a failure is said once.
async fn take(options: &CheckpointOptions, trace_id: &str, points: Vec<Point>) {
    let checkpointer = options.checkpointer.clone();
    let id = trace_id.to_owned();
    let taken = tokio::task::spawn_blocking(move || checkpointer.checkpoint(&id, &points)).await;
    match taken {
        Ok(Err(failure)) if failure.first => {
            tracing::warn!(trace_id, error = %failure.error, "no checkpoint of the workspace");
        }
        Ok(Err(failure)) => {
            tracing::debug!(trace_id, error = %failure.error, "no checkpoint of the workspace");
        }
        Ok(Ok(_)) => {}
        Err(error) => tracing::warn!(trace_id, %error, "the checkpoint task failed"),
    }
}

/// Before a run's first model call: the run's start, or the start of a conversation's next
/// turn when the model has answered before.
pub(crate) async fn at_run_start(agent: &Agent, trace_id: &str, messages: &[Arc<Message>]) {
    let Some(options) = options_for(agent, trace_id).await else {
        return;
    };
    let answered = messages.iter().any(|m| m.role == Role::Assistant);
    let point = if answered {
        Point::Turn
    } else {
        Point::RunStart
    };
    take(&options, trace_id, vec![point]).await;
}

/// When the run stops, so that what the run wrote last is told apart from later edits.
pub(crate) async fn at_run_end(agent: &Agent, trace_id: &str) {
    if let Some(options) = options_for(agent, trace_id).await {
        take(&options, trace_id, vec![Point::RunEnd]).await;
    }
}

/// The plan before a `goal` call, when checkpoints are on for the trace.
pub(crate) async fn before_goal_call(agent: &Agent, trace_id: &str) -> Option<GoalTree> {
    options_for(agent, trace_id).await?;
    agent.store().get_goal_tree(trace_id).await.ok().flatten()
}

/// After a `goal` call: one snapshot for the goals it started and ended, then the rollback of
/// an abandoned goal's changes. Returns a note for the model when files were rolled back.
pub(crate) async fn after_goal_call(
    agent: &Agent,
    trace_id: &str,
    before: Option<GoalTree>,
) -> Option<String> {
    let before = before?;
    let options = options_for(agent, trace_id).await?;
    let after = agent.store().get_goal_tree(trace_id).await.ok().flatten()?;
    let mut notes = Vec::new();
    if let Some(note) =
        crate::branch_copies::apply_selected(&options, trace_id, &before, &after).await
    {
        notes.push(note);
    }
    let points = boundaries(&before, &after);
    if !points.is_empty() {
        take(&options, trace_id, points.clone()).await;
    }
    for point in &points {
        if let Point::GoalEnd {
            goal_id,
            abandoned: true,
        } = point
            && let Some(goal) = after.get(goal_id)
            && let Some(note) = roll_back(&options, trace_id, goal).await
        {
            notes.push(note);
        }
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// The goals a plan change ended (first) and started.
fn boundaries(before: &GoalTree, after: &GoalTree) -> Vec<Point> {
    let status = |id: &str| before.get(id).map(|g| g.status);
    let mut ends = Vec::new();
    let mut starts = Vec::new();
    for goal in after.goals() {
        let was = status(&goal.id);
        let open = matches!(
            was,
            None | Some(GoalStatus::Pending | GoalStatus::InProgress)
        );
        match goal.status {
            GoalStatus::Completed | GoalStatus::Abandoned if open => ends.push(Point::GoalEnd {
                goal_id: goal.id.clone(),
                abandoned: goal.status == GoalStatus::Abandoned,
            }),
            GoalStatus::InProgress if matches!(was, None | Some(GoalStatus::Pending)) => {
                starts.push(Point::GoalStart {
                    goal_id: goal.id.clone(),
                });
            }
            _ => {}
        }
    }
    ends.extend(starts);
    ends
}

/// Rolls an abandoned goal's changes back as the options say; the note tells the model.
async fn roll_back(options: &CheckpointOptions, trace_id: &str, goal: &Goal) -> Option<String> {
    let confirm = match (options.abandon_rollback, &options.confirm) {
        (AbandonRollback::Never, _) | (AbandonRollback::Ask, None) => return None,
        (AbandonRollback::Always, _) => None,
        (AbandonRollback::Ask, Some(confirm)) => Some(confirm.clone()),
    };
    let checkpointer = options.checkpointer.clone();
    let (id, goal) = (trace_id.to_owned(), goal.clone());
    let done = tokio::task::spawn_blocking(move || {
        let dry = RestoreOptions {
            dry_run: true,
            force: false,
        };
        let changes = checkpointer.roll_back_goal(&id, &goal.id, dry)?;
        if changes.is_empty() || confirm.is_some_and(|c| !c.confirm(&goal, &changes)) {
            return Ok((goal, Changes::default()));
        }
        let changes = checkpointer.roll_back_goal(&id, &goal.id, RestoreOptions::default())?;
        Ok::<_, agent_checkpoint::CheckpointError>((goal, changes))
    })
    .await;
    match done {
        Ok(Ok((_, changes))) if changes.is_empty() => None,
        Ok(Ok((goal, changes))) => Some(format!(
            "The files goal {} changed were put back as they were when it started \
             ({} restored, {} put back, {} removed).",
            goal.id,
            changes.added.len(),
            changes.modified.len(),
            changes.deleted.len()
        )),
        Ok(Err(error)) => {
            tracing::warn!(trace_id, %error, "the abandoned goal's files were not rolled back");
            None
        }
        Err(error) => {
            tracing::warn!(trace_id, %error, "the rollback task failed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_goal::GoalCommand;

    fn command(json: serde_json::Value) -> GoalCommand {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_goal_call_ends_and_starts_goals() {
        let mut tree = GoalTree::new("mission");
        tree.apply(&command(serde_json::json!({"add": "a, b", "focus": "1"})))
            .unwrap();
        let before = tree.clone();
        tree.apply(&command(serde_json::json!({"abandon": "no"})))
            .unwrap();
        let abandoned = Point::GoalEnd {
            goal_id: "1".into(),
            abandoned: true,
        };
        assert_eq!(boundaries(&before, &tree), [abandoned]);
        let before = tree.clone();
        let second = tree.display_number("2").unwrap();
        tree.apply(&command(serde_json::json!({"focus": second})))
            .unwrap();
        let started = Point::GoalStart {
            goal_id: "2".into(),
        };
        assert_eq!(boundaries(&before, &tree), [started]);
        assert!(boundaries(&tree, &tree).is_empty());
    }
}
