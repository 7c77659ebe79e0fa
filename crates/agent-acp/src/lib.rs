//! The agent as an [Agent Client Protocol](https://agentclientprotocol.com) agent: editors
//! (Zed, JetBrains IDEs, Neovim plugins) start it as a child process and drive it over stdio.
//!
//! This crate owns the mapping between ACP and the runtime, on the `agent-client-protocol`
//! crate (protocol version 1, schema 1.17, plus the unstable `session/fork`):
//!
//! - A **session is a trace**: its id is the trace id. `session/new` names a new trace (it is
//!   created with the first prompt, whose text becomes its task), `session/load` replays a
//!   stored trace's history (`user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk`,
//!   tool calls with their results, the plan), `session/resume` reattaches without replay,
//!   `session/list` lists the main traces, `session/close` ends a session's work, and
//!   `session/fork` copies a trace (at a goal or a message through `_meta`, as `agent fork`).
//! - `session/prompt` is a user turn: the first runs the task, later ones continue the trace
//!   under the same id. While it runs, the text streams as `agent_message_chunk`, reasoning as
//!   `agent_thought_chunk`, each tool call as `tool_call` then `tool_call_update`
//!   (pending → in_progress → completed/failed, file edits as `diff` content), the goal tree as
//!   `plan` updates (every visible goal in display order, numbered, abandoned goals left out)
//!   and the cost as `usage_update`. `session/cancel` stops the turn (`cancelled`); the run's
//!   `max_iterations` ends it with `max_turn_requests`; a run that leaves goals of its plan open
//!   ends the turn (`end_turn`) with the goals named as the agent's last words.
//! - Slash commands are advertised with `available_commands_update` when a session opens:
//!   `/goal TEXT [--check CMD]` gives the session a goal and works on it, `/goal` alone says
//!   where the plan is, `/goal clear` drops it (the runner's `goal_command`); the host's commands
//!   (custom commands, `/name args`) follow it, and a prompt that starts with one is expanded by
//!   the host ([`Host::expand`]) before the turn runs.
//! - Risky tool calls ask the client with `session/request_permission` (allow once or always
//!   for the session, reject once or always).
//! - When the client offers `fs/read_text_file` / `fs/write_text_file`, `read_file` and
//!   `write_file` go through it (unsaved buffers included), inside the session's folder.
//!
//! It depends on `agent-runner` (the loop), `agent-execution` (the store and the live feed) and
//! `agent-goal`; it must not depend on a concrete store, a model provider, the command line or
//! the HTTP server: the embedder gives it a [`Host`] that builds runners.
//!
//! ```
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! use agent_acp::Host;
//! use agent_execution::{InMemoryTraceStore, TraceStore};
//! use agent_llm::{ScriptedClient, ScriptedTurn};
//! use agent_runner::{AgentRunner, Approval, ApprovalHandler, RunnerOptions};
//! use agent_tools::{Tool, ToolRegistry};
//!
//! /// Every session answers "Hello!" from a scripted model.
//! struct Demo(Arc<InMemoryTraceStore>);
//!
//! impl Host for Demo {
//!     fn store(&self) -> Arc<dyn TraceStore> {
//!         self.0.clone()
//!     }
//!     fn runner(
//!         &self,
//!         _session_id: &str,
//!         cwd: &Path,
//!         approvals: Arc<dyn ApprovalHandler>,
//!         tools: Vec<Arc<dyn Tool>>,
//!     ) -> Result<AgentRunner, String> {
//!         let model = ScriptedClient::new(vec![ScriptedTurn::text("Hello!")]);
//!         let options = RunnerOptions::new("scripted", cwd).with_approval(Approval::Ask(approvals));
//!         let mut registry = ToolRegistry::with_builtins();
//!         for tool in tools {
//!             registry.replace(tool).map_err(|e| e.to_string())?;
//!         }
//!         Ok(AgentRunner::new(self.0.clone(), Arc::new(model), registry, options))
//!     }
//! }
//!
//! // `agent_acp::serve_stdio(Arc::new(Demo(...)))` then serves an editor on stdin/stdout.
//! let _host: Arc<dyn Host> = Arc::new(Demo(Arc::new(InMemoryTraceStore::new())));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent;
mod client_fs;
mod commands;
mod mcp;
mod permission;
mod plan;
mod prompt;
mod replay;
mod session;
mod state;
mod updates;

use std::path::Path;
use std::sync::Arc;

use agent_execution::TraceStore;
use agent_runner::{AgentRunner, ApprovalHandler};
use agent_tools::Tool;

pub use agent::{serve, serve_stdio};
pub use mcp::SessionMcpServer;
pub use plan::plan_of;

/// A command a session offers the client, typed as `/name input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCommand {
    /// The name, without the `/`.
    pub name: String,
    /// What it does.
    pub description: String,
    /// What to type after it, when it takes input.
    pub hint: Option<String>,
}

/// What the ACP agent needs from its embedder: where traces are kept and how to build a
/// runner for a session's working directory.
#[agent_runner::async_trait]
pub trait Host: Send + Sync + 'static {
    /// The store sessions are listed and loaded from.
    fn store(&self) -> Arc<dyn TraceStore>;

    /// A runner for session `session_id` working in `cwd` (an absolute folder the client
    /// named), asking `approvals`
    /// before risky tool calls, with `tools` in the place of its tools of the same name (the
    /// editor's `read_file` and `write_file` when it offers its file system). The error is
    /// shown to the client as it is.
    fn runner(
        &self,
        session_id: &str,
        cwd: &Path,
        approvals: Arc<dyn ApprovalHandler>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<AgentRunner, String>;

    /// Called when the client closed session `session_id`: what the host keeps for it (its
    /// runner, its MCP servers) can go. Does nothing by default.
    fn session_closed(&self, session_id: &str) {
        let _ = session_id;
    }

    /// Starts the MCP servers a client named for a session and returns their tools (which keep
    /// the servers running as long as a runner holds them). By default the servers are not
    /// started and their tools are not offered.
    async fn mcp_tools(
        &self,
        servers: Vec<SessionMcpServer>,
    ) -> Result<Vec<Arc<dyn Tool>>, String> {
        if !servers.is_empty() {
            tracing::warn!(
                "this host starts no MCP servers for sessions; {} left out",
                servers.len()
            );
        }
        Ok(Vec::new())
    }

    /// The commands a session working in `cwd` offers (`available_commands_update`, sent when
    /// a session opens): each one's name (without `/`), description and input hint. None by
    /// default.
    fn commands(&self, cwd: &Path) -> Vec<SessionCommand> {
        let _ = cwd;
        Vec::new()
    }

    /// The message a prompt's text becomes in a session working in `cwd`: a host may expand a
    /// command (`/name args`) into its prompt. An error is shown to the client and no turn
    /// runs. The text as it is by default.
    fn expand(&self, cwd: &Path, text: &str) -> Result<String, String> {
        let _ = cwd;
        Ok(text.to_owned())
    }

    /// The model's context window in tokens, for `usage_update` (0 when unknown).
    fn context_window(&self) -> u64 {
        0
    }

    /// Called when a turn of the session `trace_id` ended, before the prompt is answered: e.g.
    /// to send the trace's spans somewhere. Does nothing by default.
    fn turn_ended(&self, trace_id: &str) {
        let _ = trace_id;
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
