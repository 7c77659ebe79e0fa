//! `agent skills` and `agent commands`: what extends the agent in a project
//! (`agent_app::skills` and `agent_app::commands` find it), and where each piece came from;
//! `agent trust`: accepting the project's agent.toml, so that its hooks run
//! (`agent_app::trust`); `agent plugin`: installing plugins (`agent_app::plugins`).

use anyhow::Result;
use serde_json::json;

use crate::cli::{AgentsArgs, PluginAction, PluginArgs, TrustArgs};
use crate::exit::ExitCode;
use crate::exit::UsageError;
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

/// `agent trust`: shows the hooks of this folder's agent.toml and records that the user accepts
/// the file as it is (asked on a terminal, `--yes` otherwise).
pub(crate) fn trust(args: &TrustArgs) -> Result<ExitCode> {
    let app = crate::settings::app(agent_app::Overrides::default())?;
    let config = app.config();
    let Some(project) = config.project() else {
        return Err(UsageError("there is no agent.toml in this folder to accept".into()).into());
    };
    let path = project.source.to_string();
    let Some(data_dir) = config.env().data_dir() else {
        return Err(
            UsageError("no data folder to keep the accepted files in (set HOME)".into()).into(),
        );
    };
    crate::output::note(&format!("{path} asks to run these commands as hooks:"));
    for (event, specs) in &project.file.hooks {
        for spec in specs {
            let commands = spec
                .command
                .iter()
                .chain(spec.hooks.iter().map(|h| &h.command));
            for command in commands {
                let matcher = spec
                    .matcher
                    .as_deref()
                    .map(|m| format!(" [{m}]"))
                    .unwrap_or_default();
                crate::output::note(&format!("  {event}{matcher}: {command}"));
            }
        }
    }
    if project.file.hooks.is_empty() {
        crate::output::note("  (none)");
    }
    if !args.yes {
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return Err(UsageError("not a terminal: accept with agent trust --yes".into()).into());
        }
        crate::output::note("Accept this file as it is? [y/N]");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::stdin().lock(), &mut line)?;
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            crate::output::note("not accepted");
            return Ok(ExitCode::Completed);
        }
    }
    agent_app::trust::accept(&data_dir, std::path::Path::new(&path))?;
    print(&format!("accepted {path}"));
    Ok(ExitCode::Completed)
}

/// `agent plugin`.
pub(crate) fn plugin(args: PluginArgs) -> Result<ExitCode> {
    let app = crate::settings::app(agent_app::Overrides::default())?;
    let Some(user_dir) = app.config().user_dir() else {
        return Err(UsageError("no user folder to install plugins in (set HOME)".into()).into());
    };
    match args.action {
        PluginAction::Add { source } => {
            let plugin = agent_app::plugins::add(&user_dir, &source)?;
            print(&format!(
                "installed {} in {}",
                plugin.name,
                plugin.dir.display()
            ));
        }
        PluginAction::List { json: true } => {
            let list: Vec<_> = agent_app::plugins::list(&user_dir)
                .into_iter()
                .map(|p| {
                    json!({
                        "name": p.name,
                        "description": p.description,
                        "version": p.version,
                        "enabled": p.enabled,
                        "path": p.dir,
                    })
                })
                .collect();
            print(&json!({ "plugins": list }).to_string());
        }
        PluginAction::List { json: false } => {
            let rows: Vec<[String; 4]> = agent_app::plugins::list(&user_dir)
                .into_iter()
                .map(|p| {
                    [
                        p.name,
                        p.version.unwrap_or_else(|| "-".into()),
                        if p.enabled { "enabled" } else { "disabled" }.into(),
                        p.description.unwrap_or_default(),
                    ]
                })
                .collect();
            print(&crate::output::table(
                ["NAME", "VERSION", "STATE", "DESCRIPTION"],
                &rows,
            ));
        }
        PluginAction::Enable { name } => agent_app::plugins::set_enabled(&user_dir, &name, true)?,
        PluginAction::Disable { name } => {
            agent_app::plugins::set_enabled(&user_dir, &name, false)?;
        }
        PluginAction::Remove { name } => agent_app::plugins::remove(&user_dir, &name)?,
    }
    Ok(ExitCode::Completed)
}
