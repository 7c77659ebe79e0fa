//! Installing and configuring `agent`: `agent completions SHELL` (clap_complete), `agent man`
//! (a manual page generated from the command-line definition, clap_mangen), `agent config`
//! (the settings a run here would use and where each comes from) and `agent init` (a commented
//! `agent.toml`).

use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;

use agent_app::config::{FILE_NAME, SandboxFile};
use agent_app::store::Origin;
use agent_llm::ProviderKind;

use crate::cli::{Cli, CompletionsArgs, ConfigArgs, InitArgs};
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};

/// The commented `agent.toml` `agent init` writes.
const TEMPLATE: &str = include_str!("init.toml");

/// `agent completions SHELL`: the shell's completion script on stdout.
pub(crate) fn completions(args: &CompletionsArgs) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "agent", &mut out);
    print(String::from_utf8_lossy(&out).trim_end());
    Ok(ExitCode::Completed)
}

/// `agent man`: the manual page (roff) on stdout.
pub(crate) fn man() -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    print(String::from_utf8_lossy(&out).trim_end());
    Ok(ExitCode::Completed)
}

/// `agent init`: writes a commented `agent.toml` in the current folder; one that is there
/// already is kept unless `--force`.
pub(crate) fn init(args: &InitArgs) -> Result<ExitCode> {
    let path = Path::new(FILE_NAME);
    if path.exists() && !args.force {
        return Err(UsageError(format!(
            "{} already exists; pass --force to replace it",
            FILE_NAME
        ))
        .into());
    }
    std::fs::write(path, TEMPLATE).with_context(|| format!("cannot write {}", path.display()))?;
    note(&format!(
        "wrote {}: every setting in it is commented out; `agent config` shows what is in effect",
        FILE_NAME
    ));
    Ok(ExitCode::Completed)
}

/// `agent config`: one line per setting — its value and where it comes from (a flag, an
/// environment variable, which agent.toml, the server, or the default).
pub(crate) fn config(args: &ConfigArgs) -> Result<ExitCode> {
    let app = crate::settings::app(crate::settings::overrides(&args.model, None))?;
    let file = app.file();
    let env = |name: &str| app.config().env().get(name).map(str::to_owned);
    let from_file = |field: &str| match &file.path {
        Some(path) => format!("{} ({field})", path.display()),
        None => format!("agent.toml ({field})"),
    };
    let flags = &args.model.llm;
    let mut rows: Vec<[String; 3]> = Vec::new();
    let mut row = |name: &str, value: String, source: String| {
        rows.push([name.to_owned(), value, source]);
    };
    row(
        "config file",
        file.path
            .as_ref()
            .map_or_else(|| "none".to_owned(), |p| p.display().to_string()),
        "the current folder, else the user's config folder".into(),
    );
    let overrides = crate::settings::provider(flags);
    match agent_app::provider::resolve(&overrides, file, app.config().env()) {
        None => row(
            "provider",
            "none".into(),
            "not configured: set OPENAI_API_KEY, OPENAI_BASE_URL or ANTHROPIC_API_KEY, or run \
             `agent init`"
                .into(),
        ),
        Some(provider) => {
            let (key_var, url_var) = agent_app::provider::variables(provider.kind);
            let provider_source = if flags.provider.is_some() {
                "flag --provider".to_owned()
            } else if file.provider.is_some() {
                from_file("provider")
            } else if flags.script.is_some() {
                "flag --script".to_owned()
            } else {
                [
                    "OPENAI_API_KEY",
                    "OPENAI_BASE_URL",
                    "ANTHROPIC_API_KEY",
                    "ANTHROPIC_BASE_URL",
                ]
                .into_iter()
                .find(|var| env(var).is_some())
                .map_or_else(|| "default".to_owned(), |var| format!("environment {var}"))
            };
            row("provider", provider.kind.name().into(), provider_source);
            let model_source = if let Some(model) = &flags.model {
                let on_line = given_on_command_line("--model") || given_on_command_line("-m");
                if !on_line && env("AGENT_MODEL").as_deref() == Some(model.as_str()) {
                    "environment AGENT_MODEL".to_owned()
                } else {
                    "flag --model".to_owned()
                }
            } else if file.model.as_deref() == Some(provider.model.as_str()) {
                from_file("model")
            } else if provider.model_error.is_none()
                && provider.kind == ProviderKind::Openai
                && provider
                    .base_url
                    .as_deref()
                    .is_some_and(|url| !agent_app::provider::is_openai(url))
            {
                "the server (GET /v1/models)".to_owned()
            } else {
                format!("default of {}", provider.kind.name())
            };
            row("model", provider.model.clone(), model_source);
            let url_source = if flags.base_url.is_some() {
                "flag --base-url".to_owned()
            } else if !url_var.is_empty() && env(url_var).is_some() {
                format!("environment {url_var}")
            } else if provider.base_url.is_some() {
                from_file("base_url")
            } else {
                "default of the provider".to_owned()
            };
            row(
                "base URL",
                provider.base_url.clone().unwrap_or_else(|| "-".into()),
                url_source,
            );
            let key_source = if flags.api_key.is_some() {
                "flag --api-key".to_owned()
            } else if !key_var.is_empty() && env(key_var).is_some() {
                format!("environment {key_var}")
            } else if provider.api_key.is_some() {
                from_file("api_key")
            } else {
                "-".to_owned()
            };
            let key = if provider.api_key.is_some() {
                "set"
            } else {
                "not set"
            };
            row("API key", key.into(), key_source);
            let window_source = if flags.context_window.is_some() {
                "flag --context-window".to_owned()
            } else if let Some(model) = file.models.get(&provider.model)
                && model.context_window.is_some()
            {
                from_file(&format!("[models.{:?}] context_window", provider.model))
            } else if file.context_window.is_some() {
                from_file("context_window")
            } else {
                "what the provider reports".to_owned()
            };
            row(
                "context window",
                provider
                    .context_window
                    .map_or_else(|| "-".into(), |w| w.to_string()),
                window_source,
            );
            row(
                "streaming",
                if provider.stream { "on" } else { "off" }.into(),
                if flags.no_stream {
                    "flag --no-stream".into()
                } else if !provider.stream {
                    from_file(&format!("[models.{:?}] stream", provider.model))
                } else {
                    "default".into()
                },
            );
        }
    }
    let (workspace, workspace_source) = match (&args.model.workspace, &file.workspace) {
        (Some(dir), _) => (dir.clone(), "flag --workspace".to_owned()),
        (None, Some(dir)) => (dir.clone(), from_file("workspace")),
        (None, None) => (".".into(), "default: the current folder".to_owned()),
    };
    row(
        "workspace",
        std::fs::canonicalize(&workspace)
            .unwrap_or(workspace.clone())
            .display()
            .to_string(),
        workspace_source,
    );
    let (location, origin) = app.store_location();
    let source = match origin {
        Origin::StoreOverride => flag_or_env("--store", "AGENT_STORE"),
        Origin::TraceDirOverride => flag_or_env("--trace-dir", "AGENT_TRACE_DIR"),
        other => other.to_string(),
    };
    row("traces", location.to_string(), source);
    let limit = |flag: Option<String>, flag_name: &str, in_file: Option<String>, field: &str| match (
        flag, in_file,
    ) {
        (Some(value), _) => (value, format!("flag {flag_name}")),
        (None, Some(value)) => (value, from_file(field)),
        (None, None) => ("-".to_owned(), "the agent profile's".to_owned()),
    };
    let (value, source) = limit(
        args.model.max_iterations.map(|m| m.to_string()),
        "--max-iterations",
        file.max_iterations.map(|m| m.to_string()),
        "max_iterations",
    );
    row("max iterations", value, source);
    let (value, source) = limit(
        args.model.max_cost.map(|c| format!("${c}")),
        "--max-cost",
        file.max_cost.map(|c| format!("${c}")),
        "max_cost",
    );
    row("max cost", value, source);
    let (sandbox, sandbox_source) = match (env("AGENT_SANDBOX"), &file.sandbox) {
        (Some(mode), _) => (mode, "environment AGENT_SANDBOX".to_owned()),
        (None, Some(SandboxFile::Mode(mode))) => (mode.to_string(), from_file("sandbox")),
        (None, Some(SandboxFile::Table(table))) if table.mode.is_some() => (
            table.mode.unwrap_or_default().to_string(),
            from_file("[sandbox] mode"),
        ),
        _ => ("workspace-write".to_owned(), "default".to_owned()),
    };
    row("sandbox", sandbox, sandbox_source);
    print(&crate::output::table(["SETTING", "VALUE", "FROM"], &rows));
    Ok(ExitCode::Completed)
}

/// `flag`, or the environment variable `var` when the flag is not on the command line (clap
/// reads the variable into the flag).
fn flag_or_env(flag: &str, var: &str) -> String {
    if std::env::var_os(var).is_some() && !given_on_command_line(flag) {
        format!("environment {var}")
    } else {
        format!("flag {flag}")
    }
}

/// Whether `flag` (long form) is on this process's command line.
fn given_on_command_line(flag: &str) -> bool {
    std::env::args().any(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_template_is_valid_configuration_that_sets_nothing() {
        let file = agent_app::config::FileConfig::parse(
            super::TEMPLATE,
            std::path::Path::new("init.toml"),
        )
        .unwrap();
        assert!(file.provider.is_none() && file.model.is_none() && file.trace_dir.is_none());
        // Every line is a comment or blank: uncommenting a setting is all there is to do.
        assert!(
            super::TEMPLATE
                .lines()
                .all(|line| line.trim().is_empty() || line.starts_with('#'))
        );
    }
}
