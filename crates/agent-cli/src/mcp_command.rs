//! `agent mcp`: `list` (each server's tools and sign-in state), `login`, `logout`, and
//! `prompts`, `resources`, `read`, whose output is `mcp_catalog.rs`'s.

use std::collections::BTreeMap;

use agent_mcp::{McpConfig, McpError, McpServers, SignInState, TokenStore, TransportKind};
use agent_tools::{Risk, Tool};
use anyhow::Result;
use serde_json::json;

use agent_app::App;

use crate::cli::{McpAction, McpArgs};
use crate::exit::{ExitCode, UsageError};
use crate::mcp::{on_terminal, open_browser};
use crate::mcp_catalog;
use crate::output::{note, one_line, print, truncate};

/// The application of an `agent mcp` command: agent.toml and the environment, read once.
fn app() -> Result<App> {
    crate::settings::app(agent_app::Overrides::default())
}

/// The servers of agent.toml.
fn servers(app: &App) -> McpConfig {
    app.file().mcp.clone().unwrap_or_default()
}

/// A configuration mistake about MCP servers, as a usage error.
fn usage(error: McpError) -> anyhow::Error {
    UsageError(error.to_string()).into()
}

/// The folder of the servers' tokens, when there is a home.
fn tokens(app: &App) -> Option<TokenStore> {
    agent_app::mcp::tokens(app.config().user_dir().as_deref())
}

/// The servers' questions asked on this terminal, the current folder their root.
fn terminal(app: &App) -> Result<agent_mcp::ClientOptions> {
    Ok(on_terminal(app, &std::env::current_dir()?))
}

/// `agent mcp ...`.
pub(crate) async fn command(args: McpArgs) -> Result<ExitCode> {
    match args.action {
        McpAction::List { names, json } => list(&names, json).await,
        McpAction::Login { name } => login(&name).await,
        McpAction::Logout { name } => logout(&name),
        McpAction::Prompts { names, json } => {
            let (wanted, session) = open(&names).await?;
            let code = mcp_catalog::prompts(&session, &wanted, json).await;
            session.shutdown().await;
            Ok(code)
        }
        McpAction::Resources { names, json } => {
            let (wanted, session) = open(&names).await?;
            let code = mcp_catalog::resources(&session, &wanted, json);
            session.shutdown().await;
            Ok(code)
        }
        McpAction::Read { name, uri, json } => {
            let (_, session) = open(std::slice::from_ref(&name)).await?;
            let code = mcp_catalog::read(&session, &name, &uri, json).await;
            session.shutdown().await;
            Ok(code)
        }
    }
}

/// The configured servers named in `names` (all when none), disabled ones too, started with
/// the terminal's client options: their names and the session. A usage error for an unknown
/// name, or when none is configured.
async fn open(names: &[String]) -> Result<(Vec<String>, McpServers)> {
    let app = app()?;
    let config = servers(&app);
    if config.servers.is_empty() {
        return Err(UsageError(
            "no MCP servers are configured; add [mcp.servers.NAME] tables to agent.toml".into(),
        )
        .into());
    }
    let wanted = wanted(&config, names)?;
    let selected = wanted
        .iter()
        .map(|name| (name.clone(), config.servers[name].clone()))
        .collect();
    Ok((
        wanted,
        McpServers::start_with(selected, terminal(&app)?).await,
    ))
}

/// The servers `names` asks for (all configured when none); a usage error for an unknown one.
fn wanted(config: &McpConfig, names: &[String]) -> Result<Vec<String>> {
    if names.is_empty() {
        return Ok(config.servers.keys().cloned().collect());
    }
    for name in names {
        if !config.servers.contains_key(name) {
            return Err(usage(McpError::UnknownServer {
                name: name.clone(),
                known: config.servers.keys().cloned().collect(),
            }));
        }
    }
    Ok(names.to_vec())
}

/// The configuration of the server `name`, or a usage error naming the configured ones.
fn configured(app: &App, name: &str) -> Result<agent_mcp::ServerConfig> {
    let config = servers(app);
    config.servers.get(name).cloned().ok_or_else(|| {
        usage(McpError::UnknownServer {
            name: name.to_owned(),
            known: config.servers.keys().cloned().collect(),
        })
    })
}

fn token_folder(app: &App) -> Result<TokenStore> {
    tokens(app).ok_or_else(|| {
        UsageError("neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep the token".into())
            .into()
    })
}

/// `agent mcp login NAME`: signs in through the browser (the address is printed too, for a
/// machine without one) and keeps the token.
async fn login(name: &str) -> Result<ExitCode> {
    let app = app()?;
    let server = configured(&app, name)?;
    let tokens = token_folder(&app)?;
    let open = |url: &str| {
        note(&format!("Open this page to sign in to {name}:\n  {url}"));
        open_browser(url);
    };
    match agent_mcp::login(name, &server, &tokens, &open).await {
        Ok(()) => {
            note(&format!(
                "signed in to {name}; the token is kept in {}",
                tokens.path(name).display()
            ));
            Ok(ExitCode::Completed)
        }
        Err(error @ McpError::Config { .. }) => Err(usage(error)),
        Err(error) => {
            note(&error.to_string());
            Ok(ExitCode::Failed)
        }
    }
}

/// `agent mcp logout NAME`: forgets the server's token.
fn logout(name: &str) -> Result<ExitCode> {
    let app = app()?;
    configured(&app, name)?;
    if token_folder(&app)?.remove(name)? {
        note(&format!("signed out of {name}"));
    } else {
        note(&format!("{name}: not signed in"));
    }
    Ok(ExitCode::Completed)
}

/// The sign-in state of an HTTP server, for `agent mcp list`.
fn sign_in(app: &App, name: &str, url: Option<&str>) -> serde_json::Value {
    let (Some(url), Some(tokens)) = (url, tokens(app)) else {
        return serde_json::Value::Null;
    };
    match tokens.state(name, url) {
        SignInState::SignedOut => json!({"signed_in": false}),
        SignInState::SignedIn {
            expires_at,
            refreshable,
            scopes,
        } => json!({
            "signed_in": true,
            "expires_at": expires_at,
            "refreshable": refreshable,
            "scopes": scopes,
        }),
    }
}

/// `agent mcp list`: connects to each server (disabled ones too), lists its tools and reports
/// the servers that fail. Exit code 1 when one failed.
async fn list(names: &[String], as_json: bool) -> Result<ExitCode> {
    let app = app()?;
    let config = servers(&app);
    if config.servers.is_empty() {
        note("no MCP servers are configured; add [mcp.servers.NAME] tables to agent.toml");
        if as_json {
            print(&json!({"servers": []}).to_string());
        }
        return Ok(ExitCode::Completed);
    }
    let wanted = wanted(&config, names)?;
    // Disabled servers are listed too; an invalid one is reported like a server that failed.
    let selected: BTreeMap<String, _> = wanted
        .iter()
        .map(|name| (name.clone(), config.servers[name].clone()))
        .collect();
    let session = McpServers::start_with(selected, terminal(&app)?).await;
    let tools = session.tools();
    let mut reports = Vec::new();
    for name in &wanted {
        let server = &config.servers[name];
        let error = session
            .failures()
            .iter()
            .find(|failure| failure.server() == Some(name.as_str()))
            .map(ToString::to_string);
        let offered: Vec<_> = tools
            .iter()
            .filter(|tool| tool.server().name() == name)
            .collect();
        let listed = session
            .server(name)
            .map_or(0, |server| server.listed_tools().len());
        reports.push(json!({
            "name": name,
            "transport": transport_word(server.transport(name).ok()),
            "target": target(&config, name),
            "enabled": server.enabled,
            "tools": offered.iter().map(|tool| json!({
                "name": tool.name(),
                "mcp_name": tool.mcp_name(),
                "description": tool.definition().description,
                "read_only": tool.risk() == Risk::ReadOnly,
            })).collect::<Vec<_>>(),
            "hidden": listed - offered.len(),
            "auth": sign_in(&app, name, server.url.as_deref()),
            "error": error,
        }));
    }
    session.shutdown().await;
    let failed = reports.iter().any(|report| !report["error"].is_null());
    if as_json {
        print(&json!({ "servers": reports }).to_string());
    } else {
        print(&render(&reports));
    }
    Ok(if failed {
        ExitCode::Failed
    } else {
        ExitCode::Completed
    })
}

fn transport_word(kind: Option<TransportKind>) -> &'static str {
    match kind {
        Some(TransportKind::Stdio) => "stdio",
        Some(TransportKind::Http) => "http",
        None => "invalid",
    }
}

/// The command line or URL of a server, for people.
fn target(config: &McpConfig, name: &str) -> String {
    let server = &config.servers[name];
    match (&server.command, &server.url) {
        (Some(command), _) => std::iter::once(command.as_str())
            .chain(server.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => url.clone(),
        (None, None) => String::new(),
    }
}

/// The text form of `agent mcp list`.
fn render(reports: &[serde_json::Value]) -> String {
    let mut out = Vec::new();
    for report in reports {
        let mut head = format!(
            "{}  {}  {}",
            report["name"].as_str().unwrap_or_default(),
            report["transport"].as_str().unwrap_or_default(),
            truncate(report["target"].as_str().unwrap_or_default(), 80)
        );
        if report["enabled"] == false {
            head.push_str("  (disabled: only with --mcp)");
        }
        if report["auth"]["signed_in"] == true {
            head.push_str("  (signed in)");
        }
        out.push(head);
        if let Some(error) = report["error"].as_str() {
            out.push(format!("  error: {}", one_line(error)));
            continue;
        }
        let tools = report["tools"].as_array().cloned().unwrap_or_default();
        let width = tools
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .map(str::len)
            .max()
            .unwrap_or(0);
        for tool in &tools {
            let risk = if tool["read_only"] == true {
                "read-only"
            } else {
                "risky"
            };
            out.push(format!(
                "  {:width$}  {risk:9}  {}",
                tool["name"].as_str().unwrap_or_default(),
                truncate(
                    &one_line(tool["description"].as_str().unwrap_or_default()),
                    70
                ),
            ));
        }
        if tools.is_empty() {
            out.push("  (no tools)".to_owned());
        }
        let hidden = report["hidden"].as_u64().unwrap_or(0);
        if hidden > 0 {
            out.push(format!("  ({hidden} more hidden by allow/deny)"));
        }
    }
    out.join("\n")
}
