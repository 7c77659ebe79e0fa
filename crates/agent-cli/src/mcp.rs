//! MCP servers in the command line: the servers a run uses (the enabled ones of
//! `[mcp.servers.<name>]` in agent.toml, plus those named with `--mcp NAME`), whose stdio
//! servers start in this process's sandbox when it has one (a server's `sandbox = "off"` is
//! said on stderr).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_mcp::{ClientOptions, McpError, McpServers, NoElicitor, TokenStore};
use agent_runner::Instruction;
use agent_tools::ToolRegistry;
use agent_tools::sandbox::{SandboxConfig, SandboxMode};
use anyhow::Result;

use crate::config::FileConfig;
use crate::elicit::TerminalElicitor;
use crate::exit::UsageError;
use crate::output::note;

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
pub(crate) fn tokens() -> Option<TokenStore> {
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

pub(crate) fn usage(error: McpError) -> anyhow::Error {
    UsageError(error.to_string()).into()
}

/// Opens `url` in the browser `$BROWSER` names, else the desktop's; does nothing without one.
pub(crate) fn open_browser(url: &str) {
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
