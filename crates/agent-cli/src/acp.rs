//! `agent acp`: the agent as an Agent Client Protocol agent on stdin/stdout, for editors.
//!
//! Every session gets a runner built as `agent run` builds one (provider, profiles, limits,
//! `agent.toml`, the workspace's instructions, the MCP servers started once here) for the
//! folder the editor names; risky calls are asked through the editor unless `--yes`.
//! Nothing but protocol messages goes to stdout: notes and logs go to stderr.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use agent_acp::{Host, SessionMcpServer};
use agent_execution::TraceStore;
use agent_mcp::{McpServers, ServerConfig};
use agent_runner::approval::RejectAll;
use agent_runner::{AgentRunner, Approval, ApprovalHandler};
use agent_tools::{Tool, ToolRegistry};
use anyhow::Result;

use crate::cli::{AcpArgs, ModelArgs};
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::mcp::{self, RunTools};
use crate::output::note;
use crate::setup::setup_with;

/// Each session's runner and the editor's tools it uses instead of the built-in ones (and the
/// tools of the MCP servers the editor named for it), by session.
type Runners = Arc<std::sync::Mutex<HashMap<String, (AgentRunner, Vec<Arc<dyn Tool>>)>>>;

/// The tools of `registry` with `editor`'s in the place of those of the same name.
fn with_editor_tools(mut registry: ToolRegistry, editor: &[Arc<dyn Tool>]) -> ToolRegistry {
    for tool in editor {
        if let Err(error) = registry.replace(tool.clone()) {
            tracing::warn!("an editor tool is not used: {error}");
        }
    }
    registry
}

/// Runners for the editor's sessions, from the command line's settings.
struct CliHost {
    args: ModelArgs,
    tools: RunTools,
    /// The one store of the process: sessions are listed from it and every runner records
    /// into it.
    store: Arc<dyn TraceStore>,
    context_window: u64,
    /// Where each turn's spans go (`--otel`, the OTLP environment variables).
    otel: Option<Arc<crate::otel::Exporter>>,
    /// The runners built so far (clones share their tools) with the editor's tools each uses,
    /// to give them an MCP server's new tools.
    runners: Runners,
}

/// The configuration of a server an editor named for a session.
fn server_config(server: &SessionMcpServer) -> (String, ServerConfig) {
    match server {
        SessionMcpServer::Stdio {
            name,
            command,
            args,
            env,
        } => {
            let mut config = ServerConfig::stdio(command.to_string_lossy(), args.clone());
            config.env = env.iter().cloned().collect();
            (name.clone(), config)
        }
        SessionMcpServer::Http { name, url, headers } => {
            let mut config = ServerConfig::http(url.clone());
            config.headers = headers.iter().cloned().collect();
            (name.clone(), config)
        }
    }
}

#[agent_runner::async_trait]
impl Host for CliHost {
    async fn mcp_tools(
        &self,
        servers: Vec<SessionMcpServer>,
    ) -> Result<Vec<Arc<dyn Tool>>, String> {
        if servers.is_empty() {
            return Ok(Vec::new());
        }
        let started = McpServers::start(servers.iter().map(server_config).collect()).await;
        for failure in started.failures() {
            note(&format!("agent: {failure}; its tools are not available"));
        }
        // The tools hold their servers: the servers live as long as the session's runner.
        Ok(started
            .tools()
            .into_iter()
            .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
            .collect())
    }

    fn store(&self) -> Arc<dyn TraceStore> {
        self.store.clone()
    }

    fn runner(
        &self,
        session_id: &str,
        cwd: &Path,
        approvals: Arc<dyn ApprovalHandler>,
        editor: Vec<Arc<dyn Tool>>,
    ) -> Result<AgentRunner, String> {
        let mut args = self.args.clone();
        args.workspace = Some(cwd.to_owned());
        let mut tools = self.tools.clone();
        tools.registry = with_editor_tools(tools.registry, &editor);
        let runner = setup_with(
            &args,
            tools,
            None,
            Some(Approval::Ask(approvals)),
            self.store.clone(),
        )
        .map(|setup| setup.runner)
        .map_err(|error| format!("{error:#}"))?;
        self.runners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(session_id.to_owned(), (runner.clone(), editor));
        Ok(runner)
    }

    fn context_window(&self) -> u64 {
        self.context_window
    }

    fn session_closed(&self, session_id: &str) {
        // The session's runner and the MCP servers it alone held go with it.
        self.runners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(session_id);
    }

    fn turn_ended(&self, trace_id: &str) {
        if let Some(exporter) = &self.otel {
            let (exporter, store, id) = (exporter.clone(), self.store.clone(), trace_id.to_owned());
            tokio::spawn(async move {
                crate::otel::send(Some(&exporter), store.as_ref(), &id).await;
            });
        }
    }
}

/// `agent acp`: serves one editor until it closes the connection.
pub(crate) async fn acp(args: AcpArgs) -> Result<ExitCode> {
    let file = FileConfig::load()?;
    let servers = Arc::new(
        mcp::start(
            &file,
            &args.model.mcp,
            mcp::unattended(args.model.workspace.as_deref()),
        )
        .await?,
    );
    let tools = mcp::tools(&servers);
    // A configuration error shows now, with exit code 2, rather than at the first session.
    let refuse: Arc<dyn ApprovalHandler> = Arc::new(RejectAll::default());
    let store = crate::store::open(&args.model.trace_dir, &file)
        .await?
        .store;
    let checked = setup_with(
        &args.model,
        tools.clone(),
        None,
        Some(Approval::Ask(refuse)),
        store.clone(),
    )?;
    let context_window = checked.provider.context_window.unwrap_or_default() as u64;
    let otel = checked.otel.map(Arc::new);
    let runners: Runners = Arc::default();
    // A server that says its tools changed is listed again; every session's next turn has them.
    let refresh = {
        let (servers, runners) = (servers.clone(), runners.clone());
        tokio::spawn(async move {
            servers
                .follow_tool_changes(|servers| {
                    let registry = mcp::registry(servers);
                    for (runner, editor) in runners
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .values()
                    {
                        runner.replace_tools(with_editor_tools(registry.clone(), editor));
                    }
                })
                .await;
        })
    };
    let host = CliHost {
        args: args.model,
        tools,
        store,
        context_window,
        otel,
        runners,
    };
    agent_acp::serve_stdio(Arc::new(host))
        .await
        .map_err(|error| anyhow::anyhow!("acp: {error}"))?;
    refresh.abort();
    servers.shutdown().await;
    Ok(ExitCode::Completed)
}
