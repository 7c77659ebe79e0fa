//! The MCP servers of runs: the enabled ones of `[mcp.servers.<name>]` in agent.toml and of the
//! user's enabled plugins, plus those an override names ([`start`]), and those an editor names for a session ([`start_named`]).
//! Their stdio servers start in the run's sandbox (a server's own `sandbox = "off"` is said),
//! whichever front end starts them; who answers their questions (the [`Elicitor`]) is the front
//! end's choice, given in the [`ClientOptions`].
//!
//! [`Elicitor`]: agent_mcp::Elicitor

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agent_mcp::{ClientOptions, Elicitor, McpServers, ServerConfig, TokenStore};
use agent_runner::Instruction;
use agent_tools::sandbox::SandboxMode;

use crate::config::FileConfig;
use crate::error::{Error, Result};
use crate::sandbox::Sandbox;

/// The tokens of the servers signed in to: `mcp-tokens/` in the user's agent folder.
pub fn tokens(user_dir: Option<&Path>) -> Option<TokenStore> {
    user_dir.map(|dir| TokenStore::new(dir.join("mcp-tokens")))
}

/// What the servers of a run in `workspace` are offered: the workspace as their root, `elicitor`
/// to answer their questions, and the tokens of the servers signed in to.
pub fn client_options(
    workspace: &Path,
    elicitor: Arc<dyn Elicitor>,
    user_dir: Option<&Path>,
) -> ClientOptions {
    let options = ClientOptions::new(workspace.to_path_buf(), elicitor);
    match tokens(user_dir) {
        Some(tokens) => options.with_tokens(tokens),
        None => options,
    }
}

/// Starts the MCP servers of a run: every enabled server of `file`, then of the enabled plugins
/// of the user whose agent folder is `user_dir` (a server of `file` of the same name wins),
/// and those in `named`, their stdio servers in `sandbox`. A server that fails to start is a
/// warning (logged by agent-mcp); an unknown name or an invalid server is a usage error, but a
/// plugin's that cannot be read is a notice. The notices say which servers run without the
/// sandbox by their own configuration.
pub async fn start(
    file: &FileConfig,
    user_dir: Option<&Path>,
    named: &[String],
    client: ClientOptions,
    sandbox: &Sandbox,
) -> Result<(McpServers, Vec<String>)> {
    let mut config = file.mcp.clone().unwrap_or_default();
    let mut notices = Vec::new();
    for (plugin, dir) in user_dir.map(crate::plugins::enabled).unwrap_or_default() {
        match crate::plugins::mcp_servers(&dir) {
            Ok(servers) => {
                for (name, server) in servers {
                    config.servers.entry(name).or_insert(server);
                }
            }
            Err(error) => notices.push(format!(
                "agent: the MCP servers of the plugin {plugin} do not start: {error}"
            )),
        }
    }
    let selected = config
        .select(named)
        .map_err(|error| Error::usage(error.to_string()))?;
    let (servers, mut more) = start_servers(selected, client, sandbox).await;
    notices.append(&mut more);
    Ok((servers, notices))
}

/// Starts servers an editor named for a session, in `sandbox`, with `client`'s options.
pub async fn start_named(
    servers: BTreeMap<String, ServerConfig>,
    client: ClientOptions,
    sandbox: &Sandbox,
) -> (McpServers, Vec<String>) {
    start_servers(servers, client, sandbox).await
}

async fn start_servers(
    selected: BTreeMap<String, ServerConfig>,
    client: ClientOptions,
    sandbox: &Sandbox,
) -> (McpServers, Vec<String>) {
    let mut notices = Vec::new();
    if sandbox.mode() != SandboxMode::Off {
        for (name, server) in &selected {
            if server.command.is_some() && server.sandbox == Some(SandboxMode::Off) {
                notices.push(format!(
                    "agent: the MCP server {name} runs without the sandbox (`sandbox = \"off\"` \
                     in its [mcp.servers.{name}]): it reads and writes anything you can, reaches \
                     the network and sees your environment"
                ));
            }
        }
    }
    let client = client.with_sandbox(sandbox.config.clone());
    (McpServers::start_with(selected, client).await, notices)
}

/// What the servers say about using their tools, for the system prompt.
pub fn instructions(servers: &McpServers) -> Vec<Instruction> {
    servers
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
        .collect()
}
