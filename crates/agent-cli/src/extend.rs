//! `agent skills` and `agent commands`: what extends the agent in a project
//! (`agent_app::skills` and `agent_app::commands` find it), and where each piece came from.

use anyhow::Result;
use serde_json::json;

use crate::cli::AgentsArgs;
use crate::exit::ExitCode;
use crate::output::print;

/// `agent skills`: every skill a run in the workspace sees, the first of a name winning, and
/// what could not be read (on standard error).
pub(crate) fn skills(args: AgentsArgs) -> Result<ExitCode> {
    let (app, workspace) = app_of(&args)?;
    let found = agent_app::skills::discover(&workspace, app.config().user_dir().as_deref());
    for warning in &found.warnings {
        crate::output::note(&format!("agent: {warning}"));
    }
    if args.json {
        let list: Vec<_> = found
            .skills
            .iter()
            .map(|skill| {
                json!({
                    "name": skill.name,
                    "description": skill.description,
                    "source": skill.source.to_string(),
                    "path": skill.file(),
                    "allowed_tools": skill.allowed_tools,
                })
            })
            .collect();
        print(&json!({ "skills": list }).to_string());
        return Ok(ExitCode::Completed);
    }
    if found.skills.is_empty() {
        print("no skills (add folders with a SKILL.md to .agent/skills/)");
        return Ok(ExitCode::Completed);
    }
    let rows: Vec<[String; 3]> = found
        .skills
        .iter()
        .map(|skill| {
            [
                skill.name.clone(),
                skill.source.to_string(),
                skill.description.replace('\n', " "),
            ]
        })
        .collect();
    print(&crate::output::table(
        ["NAME", "SOURCE", "DESCRIPTION"],
        &rows,
    ));
    Ok(ExitCode::Completed)
}

/// The application and workspace `args` name.
fn app_of(args: &AgentsArgs) -> Result<(agent_app::App, std::path::PathBuf)> {
    let mut overrides = agent_app::Overrides::default();
    overrides.workspace.clone_from(&args.workspace);
    let app = crate::settings::app(overrides)?;
    let workspace = match app.named_workspace() {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    Ok((app, workspace))
}

/// `agent commands`: every custom command of the workspace and the user, the first of a name
/// winning, and what could not be read (on standard error).
pub(crate) fn commands(args: AgentsArgs) -> Result<ExitCode> {
    let (app, workspace) = app_of(&args)?;
    let found = agent_app::commands::discover(&workspace, app.config().user_dir().as_deref());
    for warning in &found.warnings {
        crate::output::note(&format!("agent: {warning}"));
    }
    if args.json {
        let list: Vec<_> = found
            .commands
            .iter()
            .map(|command| {
                json!({
                    "name": command.name,
                    "description": command.description,
                    "argument_hint": command.argument_hint,
                    "model": command.model,
                    "allowed_tools": command.allowed_tools,
                    "source": command.source,
                    "path": command.path,
                })
            })
            .collect();
        print(&json!({ "commands": list }).to_string());
        return Ok(ExitCode::Completed);
    }
    if found.commands.is_empty() {
        print("no custom commands (add NAME.md files to .agent/commands/)");
        return Ok(ExitCode::Completed);
    }
    let rows: Vec<[String; 3]> = found
        .commands
        .iter()
        .map(|command| {
            let (name, about) = command.listed();
            [name, command.source.clone(), about]
        })
        .collect();
    print(&crate::output::table(
        ["COMMAND", "SOURCE", "DESCRIPTION"],
        &rows,
    ));
    Ok(ExitCode::Completed)
}
