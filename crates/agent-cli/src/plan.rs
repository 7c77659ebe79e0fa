//! Plan mode: the model writes only the goal tree; the plan is stored as a trace with status
//! `planned`, shown and edited as text, saved as a template, and run with `agent run --trace`.
//!
//! The text form is one goal a line, two spaces of indent per level; lines starting with `#`
//! and blank lines are ignored:
//!
//! ```text
//! # Plan: Add a cache
//! Read the code
//! Implement
//!   Design the interface
//!   Write it
//! Test
//! ```

use std::path::Path;

use agent_execution::{TraceStatus, TraceStore, TraceUpdate};
use agent_goal::{Goal, GoalStatus, GoalTree, GoalType};
use agent_runner::agents::PLAN;
use agent_tools::ToolRegistry;
use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::cli::{PlanAction, PlanArgs, TraceDirArg};
use crate::config;
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};
use crate::run::{exit_code, setup};

/// `agent plan ...`.
pub(crate) async fn command(args: PlanArgs) -> Result<ExitCode> {
    match args.action {
        Some(PlanAction::Edit {
            trace_id,
            trace_dir,
        }) => edit(&trace_id, &trace_dir).await,
        Some(PlanAction::Save {
            trace_id,
            file,
            trace_dir,
        }) => save(&trace_id, &file, &trace_dir).await,
        None => {
            let task = args
                .task
                .ok_or_else(|| UsageError("agent plan needs a task".into()))?;
            plan(&task, &args.model).await
        }
    }
}

/// Runs the model in plan mode and stores the result as a `planned` trace.
async fn plan(task: &str, model: &crate::cli::ModelArgs) -> Result<ExitCode> {
    // The `plan` profile (or the one `--agent` names): the goal tools only, unless the profile
    // admits others.
    let setup = setup(model, ToolRegistry::with_builtins(), Some(PLAN))?;
    let outcome = setup.runner.run(task).await?;
    if outcome.status != TraceStatus::Completed {
        note(&format!(
            "agent: planning ended {:?}: {}",
            outcome.status,
            outcome.error.as_deref().unwrap_or("no error recorded")
        ));
        return Ok(exit_code(&outcome));
    }
    let store = setup.store.as_ref();
    let tree = store
        .get_goal_tree(&outcome.trace_id)
        .await?
        .unwrap_or_default();
    // The plan starts fresh: every goal pending, nothing focused.
    let fresh = tree_from_plan(&tree, &parse_plan(&plan_text(&tree))?);
    store
        .update_goal_tree(&outcome.trace_id, fresh.clone())
        .await?;
    let planned = TraceUpdate {
        status: Some(TraceStatus::Planned),
        ..TraceUpdate::default()
    };
    store.update_trace(&outcome.trace_id, planned).await?;
    if model.json {
        print(
            &json!({"trace_id": outcome.trace_id, "status": "planned", "goal_tree": fresh})
                .to_string(),
        );
    } else {
        print(&plan_text(&fresh));
        note(&format!(
            "plan stored in trace {id}\n  edit it:  agent plan edit {id}\n  run it:   agent run --trace {id}",
            id = outcome.trace_id
        ));
    }
    Ok(ExitCode::Completed)
}

/// Fails unless `trace_id` is a stored plan.
pub(crate) async fn check_is_plan(store: &dyn TraceStore, trace_id: &str) -> Result<()> {
    let trace = store
        .get_trace(trace_id)
        .await?
        .with_context(|| format!("there is no trace {trace_id}"))?;
    if trace.status != TraceStatus::Planned {
        bail!(
            "trace {trace_id} is not a plan (its status is {:?}); use `agent resume {trace_id}` to continue it",
            trace.status
        );
    }
    Ok(())
}

/// `agent plan edit`: the plan in $VISUAL / $EDITOR, read back into the trace.
async fn edit(trace_id: &str, trace_dir: &TraceDirArg) -> Result<ExitCode> {
    let store = config::store_for(trace_dir)?;
    check_is_plan(&store, trace_id).await?;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("plan.txt");
    std::fs::write(&path, plan_text(&tree))?;
    let editor = config::env("VISUAL")
        .or_else(|| config::env("EDITOR"))
        .unwrap_or_else(|| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status()
        .with_context(|| format!("cannot start the editor {editor:?}"))?;
    if !status.success() {
        bail!("the editor {editor:?} exited with {status}; the plan is unchanged");
    }
    let text = std::fs::read_to_string(&path)?;
    let edited = tree_from_plan(&tree, &parse_plan(&text)?);
    store.update_goal_tree(trace_id, edited.clone()).await?;
    print(&plan_text(&edited));
    note(&format!(
        "plan updated; run it with `agent run --trace {trace_id}`"
    ));
    Ok(ExitCode::Completed)
}

/// `agent plan save`: the plan as a text file, reusable with `agent run --plan FILE`.
async fn save(trace_id: &str, file: &Path, trace_dir: &TraceDirArg) -> Result<ExitCode> {
    let store = config::store_for(trace_dir)?;
    let tree = store
        .get_goal_tree(trace_id)
        .await?
        .with_context(|| format!("there is no trace {trace_id}"))?;
    std::fs::write(file, plan_text(&tree))
        .with_context(|| format!("cannot write {}", file.display()))?;
    note(&format!(
        "plan saved to {}; reuse it with `agent run --plan {} <TASK>`",
        file.display(),
        file.display()
    ));
    Ok(ExitCode::Completed)
}

/// Replaces a new trace's goal tree with the plan in `file`.
pub(crate) async fn load_into(store: &dyn TraceStore, trace_id: &str, file: &Path) -> Result<()> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the plan {}", file.display()))?;
    let items = parse_plan(&text).with_context(|| format!("invalid plan in {}", file.display()))?;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    store
        .update_goal_tree(trace_id, tree_from_plan(&tree, &items))
        .await?;
    Ok(())
}

/// The plan as text: visible goals, nested by indentation.
pub(crate) fn plan_text(tree: &GoalTree) -> String {
    let mut out = format!(
        "# Plan: {}\n# One goal a line; indent two spaces per level. Lines starting with # are ignored.\n",
        one_line(&tree.mission)
    );
    fn walk(tree: &GoalTree, parent: Option<&str>, depth: usize, out: &mut String) {
        for goal in tree.children(parent) {
            if goal.status == GoalStatus::Abandoned || goal.goal_type != GoalType::Normal {
                continue;
            }
            out.push_str(&"  ".repeat(depth));
            out.push_str(&one_line(&goal.description));
            out.push('\n');
            walk(tree, Some(&goal.id), depth + 1, out);
        }
    }
    walk(tree, None, 0, &mut out);
    out
}

fn one_line(text: &str) -> String {
    crate::output::one_line(text)
}

/// One line of a plan: its depth and the goal's description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanItem {
    pub(crate) depth: usize,
    pub(crate) description: String,
}

/// Parses the text form; errors name the line.
pub(crate) fn parse_plan(text: &str) -> Result<Vec<PlanItem>> {
    let mut items: Vec<PlanItem> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if line[..indent].contains('\t') {
            bail!("line {number}: indent with spaces, not tabs");
        }
        if indent % 2 != 0 {
            bail!("line {number}: indent by two spaces per level (found {indent} spaces)");
        }
        let depth = indent / 2;
        let allowed = items.last().map_or(0, |last| last.depth + 1);
        if depth > allowed {
            bail!("line {number}: indented more than one level below the goal above it");
        }
        items.push(PlanItem {
            depth,
            description: trimmed.to_owned(),
        });
    }
    if items.is_empty() {
        bail!("the plan has no goals");
    }
    Ok(items)
}

/// A fresh tree for `items`: every goal pending, nothing focused, ids continuing after the old
/// tree's so none is ever reused.
pub(crate) fn tree_from_plan(old: &GoalTree, items: &[PlanItem]) -> GoalTree {
    let now = agent_goal::now_rfc3339();
    let highest = old
        .goals
        .iter()
        .filter_map(|g| g.id.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let mut next = old.next_id.max(highest + 1).max(1);
    let mut tree = GoalTree {
        mission: old.mission.clone(),
        current_id: None,
        goals: Vec::new(),
        next_id: 0,
    };
    let mut parents: Vec<String> = Vec::new();
    for item in items {
        parents.truncate(item.depth);
        let id = next.to_string();
        next += 1;
        tree.goals.push(Goal::new(
            id.clone(),
            parents.last().cloned(),
            item.description.clone(),
            &now,
        ));
        parents.push(id);
    }
    tree.next_id = next;
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_round_trips_through_text() {
        let items =
            parse_plan("# Plan: x\nRead\nBuild\n  Design\n  Write\n    Test it\nShip\n").unwrap();
        let tree = tree_from_plan(&GoalTree::new("Make a thing"), &items);
        assert!(tree.goals.iter().all(|g| g.status == GoalStatus::Pending));
        assert_eq!(tree.current_id, None);
        let text = plan_text(&tree);
        assert_eq!(
            text,
            "# Plan: Make a thing\n# One goal a line; indent two spaces per level. Lines starting with # are ignored.\n\
             Read\nBuild\n  Design\n  Write\n    Test it\nShip\n"
        );
        assert_eq!(parse_plan(&text).unwrap(), items);
        assert_eq!(tree.display_number("5").as_deref(), Some("2.2.1"));
    }

    #[test]
    fn ids_continue_after_the_old_tree() {
        let mut old = GoalTree::new("m");
        old.next_id = 7;
        let tree = tree_from_plan(&old, &parse_plan("A\nB").unwrap());
        let ids: Vec<&str> = tree.goals.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["7", "8"]);
        assert_eq!(tree.next_id, 9);
    }

    #[test]
    fn bad_plans_name_the_line() {
        let error = |text: &str| format!("{:#}", parse_plan(text).unwrap_err());
        assert!(error("A\n   B").contains("line 2"));
        assert!(error("A\n    B").contains("line 2: indented more than one level"));
        assert!(error("\tA").contains("line 1: indent with spaces"));
        assert!(error("# only comments\n\n").contains("no goals"));
    }
}
