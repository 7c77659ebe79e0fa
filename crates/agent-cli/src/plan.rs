//! `agent plan`: plan mode on the terminal. The model writes only the goal tree and the plan
//! is stored as a trace with status `planned` (`agent_plan::plan`); this module prints it,
//! opens it in an editor, saves it as a template (`.agent/plans/NAME.md`,
//! `agent_plan::plan_templates`), lists templates and starts runs from them for
//! `agent run --plan NAME --var KEY=VALUE`.
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

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use agent_execution::TraceStore;
use agent_plan::plan::{self as plan_mode, PlanError, PlanOutcome};
use agent_plan::plan_templates::{self as templates, PlanTemplate, TemplateError};
use agent_runner::AgentRunner;
use agent_runner::agents::PLAN;
use anyhow::{Context, Result, bail};
use serde_json::json;

use agent_tools::SandboxMode;

use crate::cli::{PlanAction, PlanArgs, TraceDirArg};
use crate::exit::exit_code;
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};

/// `agent plan ...`.
pub(crate) async fn command(args: PlanArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    match args.action {
        Some(PlanAction::Edit {
            trace_id,
            trace_dir,
        }) => edit(&trace_id, &trace_dir).await,
        Some(PlanAction::Save {
            trace_id,
            name,
            description,
            force,
            workspace,
            trace_dir,
        }) => {
            save(SaveArgs {
                trace_id: &trace_id,
                name: &name,
                description: &description,
                force,
                workspace: workspace.as_deref(),
                trace_dir: &trace_dir,
            })
            .await
        }
        Some(PlanAction::List { workspace, json }) => list(workspace.as_deref(), json),
        None => {
            let task = args
                .task
                .ok_or_else(|| UsageError("agent plan needs a task".into()))?;
            plan(&task, &args.model, sandbox).await
        }
    }
}

/// Runs the model in plan mode and stores the result as a `planned` trace.
async fn plan(
    task: &str,
    model: &crate::cli::ModelArgs,
    sandbox: Option<SandboxMode>,
) -> Result<ExitCode> {
    // The `plan` profile (or the one `--agent` names) reads the code before it plans: the
    // read-only built-in tools and the read-only tools of the MCP servers, as its tool filter
    // allows.
    let app = crate::settings::app(crate::settings::overrides(model, sandbox))?;
    let door = crate::setup::door(app, None, |app, workspace| {
        crate::mcp::on_terminal(app, workspace)
    })
    .await?;
    let setup = crate::setup::setup(&door, Some(PLAN), model.yes, None, model.otel.as_deref())?;
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
            door.mcp.shutdown().await;
            return Ok(exit_code(&outcome));
        }
    };
    door.mcp.shutdown().await;
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
async fn edit(given: &str, trace_dir: &TraceDirArg) -> Result<ExitCode> {
    let store = crate::settings::store_for(trace_dir).await?;
    let trace_id = crate::ids::resolve(store.as_ref(), given).await?;
    let trace_id = trace_id.as_str();
    check_is_plan(store.as_ref(), trace_id).await?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("plan.txt");
    let original = plan_mode::text(store.as_ref(), trace_id).await?;
    std::fs::write(&path, &original)?;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let editor = env("VISUAL")
        .or_else(|| env("EDITOR"))
        .unwrap_or_else(|| "vi".into());
    loop {
        run_editor(&editor, &path)?;
        let text = std::fs::read_to_string(&path)?;
        let text = without_error_comment(&text);
        if text == original {
            note("the plan is unchanged");
            return Ok(ExitCode::Completed);
        }
        match plan_mode::edit(store.as_ref(), trace_id, &text).await {
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

/// `agent plan save`: the plan as a template, `.agent/plans/NAME.md` in the workspace (or the
/// file a path-like NAME names), to start runs from with `agent run --plan NAME`.
async fn save(args: SaveArgs<'_>) -> Result<ExitCode> {
    // agent.toml is read once: for the store and for the workspace.
    let mut overrides = crate::settings::traces(args.trace_dir);
    overrides.workspace = args.workspace.map(Path::to_path_buf);
    let app = crate::settings::app(overrides)?;
    crate::settings::say(app.store_notice());
    let store = agent_app::store::open_to_read(app.store_location().0).await?;
    let trace_id = crate::ids::resolve(store.as_ref(), args.trace_id).await?;
    let text = plan_mode::text(store.as_ref(), &trace_id).await?;
    let mission = store
        .get_trace(&trace_id)
        .await?
        .map(|trace| trace.task)
        .unwrap_or_default();
    if is_file(args.name) {
        let file = Path::new(args.name);
        let stem = file
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let template = PlanTemplate::from_plan(&stem, args.description, &mission, &text)
            .map_err(template_error)?;
        std::fs::write(file, template.to_file_text())
            .with_context(|| format!("cannot write {}", file.display()))?;
        note(&format!(
            "plan saved to {}; reuse it with `agent run --plan {}`",
            file.display(),
            file.display()
        ));
        return Ok(ExitCode::Completed);
    }
    let workspace = match app.named_workspace() {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let template = PlanTemplate::from_plan(args.name, args.description, &mission, &text)
        .map_err(template_error)?;
    let path = templates::save(&workspace, &template, args.force).map_err(template_error)?;
    note(&format!(
        "plan template {:?} saved to {}\n  parameters: write {{{{name}}}} in its mission and goals and \
         `name: default` under `params:`\n  run it:     agent run --plan {}",
        args.name,
        path.display(),
        args.name
    ));
    Ok(ExitCode::Completed)
}

/// What `agent plan save` was given.
struct SaveArgs<'a> {
    trace_id: &'a str,
    name: &'a str,
    description: &'a str,
    force: bool,
    workspace: Option<&'a Path>,
    trace_dir: &'a TraceDirArg,
}

/// `agent plan list`: the templates of the workspace.
fn list(workspace_arg: Option<&Path>, as_json: bool) -> Result<ExitCode> {
    let workspace = workspace(workspace_arg)?;
    let templates = templates::list(&workspace).map_err(template_error)?;
    if as_json {
        let list: Vec<_> = templates
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "mission": t.mission,
                    "params": t.params,
                    "file": workspace.join(templates::TEMPLATES_DIR).join(format!("{}.md", t.name)),
                })
            })
            .collect();
        print(&json!({ "templates": list }).to_string());
        return Ok(ExitCode::Completed);
    }
    if templates.is_empty() {
        note(&format!(
            "no plan templates in {}; save one with `agent plan save TRACE_ID NAME`",
            workspace.join(templates::TEMPLATES_DIR).display()
        ));
        return Ok(ExitCode::Completed);
    }
    let rows: Vec<[String; 3]> = templates
        .iter()
        .map(|t| {
            let params: Vec<String> = t
                .params
                .iter()
                .map(|p| match &p.default {
                    Some(default) => format!("{}={default}", p.name),
                    None => p.name.clone(),
                })
                .collect();
            let params = if params.is_empty() {
                "-".to_owned()
            } else {
                params.join(", ")
            };
            [t.name.clone(), params, t.description.clone()]
        })
        .collect();
    print(&crate::output::table(
        ["NAME", "PARAMETERS", "DESCRIPTION"],
        &rows,
    ));
    Ok(ExitCode::Completed)
}

/// `agent run --plan NAME|FILE [--var KEY=VALUE ...] [TASK]`: creates a trace whose task is
/// `task`, else the template's mission, and whose goals are the template's, placeholders
/// filled. Template errors (unknown name, a value for no parameter, a parameter without a
/// value) are usage errors that name what is wrong.
pub(crate) async fn start_from_template(
    runner: &AgentRunner,
    plan: &str,
    vars: &[String],
    task: Option<String>,
) -> Result<String> {
    let mut values = BTreeMap::new();
    for var in vars {
        let Some((key, value)) = var.split_once('=') else {
            return Err(UsageError(format!("--var {var:?}: expected KEY=VALUE")).into());
        };
        if values
            .insert(key.trim().to_owned(), value.to_owned())
            .is_some()
        {
            return Err(UsageError(format!("--var {:?} is given twice", key.trim())).into());
        }
    }
    let workspace = &runner.options().workspace;
    let template = if is_file(plan) {
        templates::load_file(Path::new(plan))
    } else {
        match templates::load(workspace, plan) {
            // A plan file in the current folder named without an extension, as before.
            Err(TemplateError::NotFound { .. }) if Path::new(plan).is_file() => {
                templates::load_file(Path::new(plan))
            }
            other => other,
        }
    }
    .map_err(template_error)?;
    let rendered = template.render(&values).map_err(template_error)?;
    let Some(task) = task.or(rendered.mission) else {
        return Err(UsageError(format!(
            "the plan template {:?} has no mission: give the task, agent run --plan {plan} \"TASK\"",
            template.name
        ))
        .into());
    };
    let trace_id = runner.create(&task).await?;
    plan_mode::load_into(runner.store().as_ref(), &trace_id, &rendered.text).await?;
    Ok(trace_id)
}

/// Whether a `--plan` or `agent plan save` value names a file rather than a template: it has a
/// path separator or ends in `.md` or `.txt`.
fn is_file(value: &str) -> bool {
    value.contains(std::path::is_separator)
        || value.contains('/')
        || value.ends_with(".md")
        || value.ends_with(".txt")
}

/// The workspace templates are read from and saved to: the flag, else agent.toml's, else the
/// current folder.
fn workspace(given: Option<&Path>) -> Result<PathBuf> {
    let mut overrides = agent_app::Overrides::default();
    overrides.workspace = given.map(Path::to_path_buf);
    match crate::settings::app(overrides)?.named_workspace() {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("cannot read the current folder"),
    }
}

/// A template error: a usage error (exit 2) unless a file could not be read or written.
fn template_error(error: TemplateError) -> anyhow::Error {
    match error {
        TemplateError::Io { .. } => error.into(),
        other => UsageError(other.to_string()).into(),
    }
}
