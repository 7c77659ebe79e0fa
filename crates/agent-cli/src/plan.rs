//! `agent plan`: plan mode on the terminal. The model writes only the goal tree and the plan
//! is stored as a trace with status `planned` (`agent_runner::plan`); this module prints it,
//! opens it in an editor, saves it as a template and reads templates for `agent run --plan`.
//!
//! The text form (`agent_goal::parse_plan`) is one goal a line, two spaces of indent per level;
//! lines starting with `#` and blank lines are ignored:
//!
//! ```text
//! # Plan: Add a cache
//! Read the code
//! Implement
//!   Design the interface
//!   Write it
//! Test
//! ```

use std::io::IsTerminal;
use std::path::Path;

use agent_execution::TraceStore;
use agent_runner::AgentRunner;
use agent_runner::agents::PLAN;
use agent_runner::plan::{self as plan_mode, PlanError, PlanOutcome};
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
    let setup = setup(model, ToolRegistry::with_builtins().into(), Some(PLAN))?;
    let (trace_id, tree) = match plan_mode::plan(&setup.runner, task).await? {
        PlanOutcome::Planned {
            trace_id,
            goal_tree,
        } => (trace_id, goal_tree),
        PlanOutcome::Stopped(outcome) => {
            note(&format!(
                "agent: planning ended {:?}: {}",
                outcome.status,
                outcome.error.as_deref().unwrap_or("no error recorded")
            ));
            return Ok(exit_code(&outcome));
        }
    };
    if model.output() != crate::cli::OutputFormat::Text {
        print(&json!({"trace_id": trace_id, "status": "planned", "goal_tree": tree}).to_string());
    } else {
        print(&crate::output::clean(&tree.plan_text()));
        note(&format!(
            "plan stored in trace {trace_id}\n  edit it:  agent plan edit {trace_id}\n  run it:   agent run --trace {trace_id}"
        ));
    }
    Ok(ExitCode::Completed)
}

/// Fails unless `trace_id` is a stored plan; a trace that is not gets a pointer to resume.
async fn check_is_plan(store: &dyn TraceStore, trace_id: &str) -> Result<()> {
    plan_mode::check_is_plan(store, trace_id)
        .await
        .map_err(pointing_to_resume)?;
    Ok(())
}

/// `agent run --trace`: readies the stored plan `trace_id` to run as `runner`'s profile.
pub(crate) async fn prepare_run(runner: &AgentRunner, trace_id: &str) -> Result<()> {
    plan_mode::prepare_run(runner, trace_id)
        .await
        .map_err(pointing_to_resume)
}

/// A plan-mode error, with how to continue a trace that is not a plan.
fn pointing_to_resume(error: PlanError) -> anyhow::Error {
    match &error {
        PlanError::NotAPlan { trace_id, .. } => {
            anyhow::anyhow!("{error}; use `agent resume {trace_id}` to continue it")
        }
        _ => error.into(),
    }
}

/// `agent plan edit`: the plan in $VISUAL / $EDITOR, read back into the trace. What the user
/// typed is never lost: a plan that cannot be read reopens the editor with the error as a `#`
/// comment on top (on a terminal), or is saved to a file that the error names.
async fn edit(trace_id: &str, trace_dir: &TraceDirArg) -> Result<ExitCode> {
    let store = config::store_for(trace_dir)?;
    check_is_plan(&store, trace_id).await?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("plan.txt");
    let original = plan_mode::text(&store, trace_id).await?;
    std::fs::write(&path, &original)?;
    let editor = config::env("VISUAL")
        .or_else(|| config::env("EDITOR"))
        .unwrap_or_else(|| "vi".into());
    loop {
        run_editor(&editor, &path)?;
        let text = std::fs::read_to_string(&path)?;
        let text = without_error_comment(&text);
        if text == original {
            note("the plan is unchanged");
            return Ok(ExitCode::Completed);
        }
        match plan_mode::edit(&store, trace_id, &text).await {
            Ok(edited) => {
                print(&crate::output::clean(&edited.plan_text()));
                note(&format!(
                    "plan updated; run it with `agent run --trace {trace_id}`"
                ));
                return Ok(ExitCode::Completed);
            }
            Err(PlanError::Parse(error)) if std::io::stdin().is_terminal() => {
                std::fs::write(&path, format!("{ERROR_MARK}{error}\n{text}"))?;
            }
            Err(PlanError::Parse(error)) => {
                let kept = std::env::current_dir()?.join(format!(
                    "plan-{}.txt",
                    trace_id.chars().take(8).collect::<String>()
                ));
                std::fs::write(&kept, &text).with_context(|| {
                    format!("cannot save the edited plan to {}", kept.display())
                })?;
                return Err(UsageError(format!(
                    "the edited plan cannot be read: {error}; the plan is unchanged and your text \
                     is saved in {}",
                    kept.display()
                ))
                .into());
            }
            Err(error) => return Err(pointing_to_resume(error)),
        }
    }
}

/// The comment line put on top of a plan the editor reopens with.
const ERROR_MARK: &str = "# error (fix the plan and save; this line is ignored): ";

/// The text without the error comment a previous round put on top.
fn without_error_comment(text: &str) -> String {
    text.lines()
        .filter(|line| !line.starts_with(ERROR_MARK))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Runs the editor on `path` and waits for it.
fn run_editor(editor: &str, path: &Path) -> Result<()> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .with_context(|| format!("cannot start the editor {editor:?}"))?;
    if !status.success() {
        bail!("the editor {editor:?} exited with {status}; the plan is unchanged");
    }
    Ok(())
}

/// `agent plan save`: the plan as a text file, reusable with `agent run --plan FILE`.
async fn save(trace_id: &str, file: &Path, trace_dir: &TraceDirArg) -> Result<ExitCode> {
    let store = config::store_for(trace_dir)?;
    let text = plan_mode::text(&store, trace_id).await?;
    std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))?;
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
    match plan_mode::load_into(store, trace_id, &text).await {
        Ok(_) => Ok(()),
        Err(PlanError::Parse(error)) => {
            Err(error).with_context(|| format!("invalid plan in {}", file.display()))
        }
        Err(error) => Err(error.into()),
    }
}
