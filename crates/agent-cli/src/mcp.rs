//! MCP servers in the command line: `agent mcp list` (and `prompts`, `resources`, `read`, whose
//! output is `mcp_catalog.rs`'s), and the servers a run uses (the enabled ones of
//! `[mcp.servers.<name>]` in agent.toml, plus those named with `--mcp NAME`), whose stdio
//! servers start in this process's sandbox when it has one (a server's `sandbox = "off"` is
//! said on stderr).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_mcp::{
    ClientOptions, McpConfig, McpError, McpServers, NoElicitor, SignInState, TokenStore,
    TransportKind,
};
use agent_runner::Instruction;
use agent_tools::sandbox::{SandboxConfig, SandboxMode};
use agent_tools::{Risk, Tool, ToolRegistry};
use anyhow::Result;
use serde_json::json;

use crate::cli::{McpAction, McpArgs};
use crate::config::FileConfig;
use crate::elicit::TerminalElicitor;
use crate::exit::{ExitCode, UsageError};
use crate::mcp_catalog;
use crate::output::{note, one_line, print, truncate};

/// Starts the MCP servers of a run: every enabled server and those in `named`. A server that
/// fails to start is a warning (logged by agent-mcp); an unknown name or an invalid server is a
/// usage error. `client` says what the servers are offered: roots, and who answers questions.
pub(crate) async fn start(
    file: &FileConfig,
    named: &[String],
    client: ClientOptions,
) -> Result<McpServers> {
    let config = file.mcp.clone().unwrap_or_default();
    let selected = config.select(named).map_err(usage)?;
    if client
        .sandbox
        .as_ref()
        .is_some_and(|s| s.mode != SandboxMode::Off)
    {
        for (name, server) in &selected {
            if server.command.is_some() && server.sandbox == Some(SandboxMode::Off) {
                note(&format!(
                    "agent: the MCP server {name} runs without the sandbox (`sandbox = \"off\"` \
                     in its [mcp.servers.{name}]): it reads and writes anything you can, reaches \
                     the network and sees your environment"
                ));
            }
        }
    }
    Ok(McpServers::start_with(selected, client).await)
}

/// `options` with this process's sandbox for the stdio servers, once it is resolved.
fn confined(options: ClientOptions) -> ClientOptions {
    match crate::sandbox::resolved() {
        Some(sandbox) => options.with_sandbox(sandbox),
        None => options,
    }
}

/// For a run shown on a terminal: the workspace (default: the current folder) as the root, the
/// servers' questions asked on the terminal (declined without one), and a server that asks for
/// a wider scope signed in to again through the browser.
pub(crate) fn on_terminal(workspace: Option<&Path>) -> ClientOptions {
    confined(with_tokens(ClientOptions::new(
        root(workspace),
        Arc::new(TerminalElicitor),
    )))
    .with_browser(Arc::new(TerminalBrowser))
}

/// Shows a sign-in page: its address on stderr, and the browser when there is one.
#[derive(Debug)]
struct TerminalBrowser;

impl agent_mcp::Browser for TerminalBrowser {
    fn open(&self, url: &str) {
        note(&format!(
            "Open this page to sign in again, with a wider scope:\n  {url}"
        ));
        open_browser(url);
    }
}

/// For a server or an editor's agent, where the terminal is not the person's: the workspace as
/// the root, and every question declined.
pub(crate) fn unattended(workspace: Option<&Path>) -> ClientOptions {
    confined(with_tokens(ClientOptions::new(
        root(workspace),
        Arc::new(NoElicitor),
    )))
}

/// For `agent run`: with `--serve`, the servers' questions wait for an answer over HTTP (the
/// viewer shows them beside the run); otherwise they are asked on the terminal.
pub(crate) fn for_run(model: &crate::cli::ModelArgs) -> ClientOptions {
    match model.serve {
        Some(_) => served(model.workspace.as_deref(), crate::elicit_http::run_board()),
        None => on_terminal(model.workspace.as_deref()),
    }
}

/// For `agent chat`: in the full-screen UI (`tui`), the servers' questions are forms on its
/// screen, arriving on the returned receiver; otherwise they are asked on the terminal.
pub(crate) fn for_chat(
    workspace: Option<&Path>,
    tui: bool,
) -> (ClientOptions, Option<agent_tui::FormQuestions>) {
    if !tui {
        return (on_terminal(workspace), None);
    }
    let (asker, forms) = agent_tui::FormAsker::new();
    let elicitor = Arc::new(crate::elicit_tui::TuiElicitor::new(asker));
    let options = with_tokens(ClientOptions::new(root(workspace), elicitor))
        .with_browser(Arc::new(TerminalBrowser));
    (options, Some(forms))
}

/// For runs served over HTTP (`agent serve`): the workspace as the root, and the servers'
/// questions waiting on `board` for an answer over HTTP (declined after its timeout).
pub(crate) fn served(
    workspace: Option<&Path>,
    board: Arc<agent_api::HttpElicitations>,
) -> ClientOptions {
    with_tokens(ClientOptions::new(
        root(workspace),
        Arc::new(crate::elicit_http::HttpElicitor::new(board)),
    ))
}

/// The tokens of the servers signed in to: `mcp-tokens/` in the user's agent folder.
fn tokens() -> Option<TokenStore> {
    crate::config::user_dir().map(|dir| TokenStore::new(dir.join("mcp-tokens")))
}

fn with_tokens(options: ClientOptions) -> ClientOptions {
    match tokens() {
        Some(tokens) => options.with_tokens(tokens),
        None => options,
    }
}

fn root(workspace: Option<&Path>) -> PathBuf {
    workspace.map_or_else(
        || std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        Path::to_path_buf,
    )
}

/// The built-in tools, `bash` in this process's sandbox, and the tools of `servers`.
pub(crate) fn registry(servers: &McpServers) -> ToolRegistry {
    asking_reruns(registry_in(servers, crate::sandbox::current()))
}

/// `registry` with `bash` asking whether to run a command the sandbox refused again without
/// it, when this process's runs ask their approvals on the terminal.
pub(crate) fn asking_reruns(mut registry: ToolRegistry) -> ToolRegistry {
    if let Some(bash) = crate::sandbox::asking_bash() {
        // `bash` is a valid name.
        let _ = registry.replace(bash);
    }
    registry
}

/// The built-in tools, `bash` in `sandbox`, and the tools of `servers`.
fn registry_in(servers: &McpServers, sandbox: SandboxConfig) -> ToolRegistry {
    let mut registry = ToolRegistry::with_builtins_in(sandbox);
    servers.register(&mut registry);
    registry
}

/// The tools of a run and what their servers said about using them.
#[derive(Clone)]
pub(crate) struct RunTools {
    /// The built-in tools and the MCP servers' tools.
    pub(crate) registry: ToolRegistry,
    /// The `instructions` of each MCP server that gave some, for the system prompt.
    pub(crate) instructions: Vec<Instruction>,
}

impl From<ToolRegistry> for RunTools {
    fn from(registry: ToolRegistry) -> Self {
        Self {
            registry,
            instructions: Vec::new(),
        }
    }
}

/// The tools of `servers` with the built-ins, and the servers' instructions.
pub(crate) fn tools(servers: &McpServers) -> RunTools {
    let mut tools = tools_in(servers, crate::sandbox::current());
    tools.registry = asking_reruns(tools.registry);
    tools
}

/// [`tools`] with `bash` in `sandbox` (a run that asked for a stricter sandbox than this
/// process's).
pub(crate) fn tools_in(servers: &McpServers, sandbox: SandboxConfig) -> RunTools {
    let instructions = servers
        .servers()
        .iter()
        .filter_map(|server| {
            server.instructions().map(|text| {
                Instruction::new(
                    format!("Instructions of the MCP server {}", server.name()),
                    text,
                )
            })
        })
        .collect();
    RunTools {
        registry: registry_in(servers, sandbox),
        instructions,
    }
}

fn usage(error: McpError) -> anyhow::Error {
    UsageError(error.to_string()).into()
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
    let config = FileConfig::load()?.mcp.unwrap_or_default();
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
        McpServers::start_with(selected, on_terminal(None)).await,
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
fn configured(name: &str) -> Result<agent_mcp::ServerConfig> {
    let config = FileConfig::load()?.mcp.unwrap_or_default();
    config.servers.get(name).cloned().ok_or_else(|| {
        usage(McpError::UnknownServer {
            name: name.to_owned(),
            known: config.servers.keys().cloned().collect(),
        })
    })
}

fn token_folder() -> Result<TokenStore> {
    tokens().ok_or_else(|| {
        UsageError("neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep the token".into())
            .into()
    })
}

/// `agent mcp login NAME`: signs in through the browser (the address is printed too, for a
/// machine without one) and keeps the token.
async fn login(name: &str) -> Result<ExitCode> {
    let server = configured(name)?;
    let tokens = token_folder()?;
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

/// Opens `url` in the browser `$BROWSER` names, else the desktop's; does nothing without one.
fn open_browser(url: &str) {
    let command = match crate::config::env("BROWSER") {
        Some(browser) => browser,
        None if cfg!(target_os = "macos") => "open".to_owned(),
        None if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            "xdg-open".to_owned()
        }
        None => return,
    };
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else { return };
    let _ = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// `agent mcp logout NAME`: forgets the server's token.
fn logout(name: &str) -> Result<ExitCode> {
    configured(name)?;
    if token_folder()?.remove(name)? {
        note(&format!("signed out of {name}"));
    } else {
        note(&format!("{name}: not signed in"));
    }
    Ok(ExitCode::Completed)
}

/// The sign-in state of an HTTP server, for `agent mcp list`.
fn sign_in(name: &str, url: Option<&str>) -> serde_json::Value {
    let (Some(url), Some(tokens)) = (url, tokens()) else {
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
    let config = FileConfig::load()?.mcp.unwrap_or_default();
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
    let session = McpServers::start_with(selected, on_terminal(None)).await;
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
            "auth": sign_in(name, server.url.as_deref()),
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
