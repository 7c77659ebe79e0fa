//! `agent acp`: the agent as an Agent Client Protocol agent on stdin/stdout, for editors.
//!
//! Every session gets a runner from the one factory every door uses (provider, profiles,
//! limits, `agent.toml`, the workspace's instructions, the sandbox protecting the trace folder,
//! the MCP servers started once here, the custom commands, offered to the editor and expanded
//! by the factory) for the folder the editor names, with the editor's file
//! tools and the MCP servers it names for the session (started in the same sandbox); risky
//! calls are asked through the editor, by the rules every front end shares, unless `--yes`.
//! Nothing but protocol messages goes to stdout: notes and logs go to stderr.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use agent_acp::{Host, SessionMcpServer};
use agent_app::AppFactory;
use agent_app::factory::RunRequest;
use agent_execution::TraceStore;
use agent_mcp::ServerConfig;
use agent_runner::{AgentRunner, Approval, ApprovalHandler};
use agent_tools::{SandboxMode, Tool};
use anyhow::Result;

use crate::cli::AcpArgs;
use crate::exit::ExitCode;
use crate::output::note;

/// Each session's runner and the request it was built for, by session.
type Runners = Arc<std::sync::Mutex<HashMap<String, (AgentRunner, RunRequest)>>>;

/// Runners for the editor's sessions, from the one factory.
struct CliHost {
    factory: Arc<AppFactory>,
    /// `--yes`: risky calls run without asking the editor.
    yes: bool,
    context_window: u64,
    /// Where each turn's spans go (`--otel`, the OTLP environment variables).
    otel: Option<Arc<crate::otel::Exporter>>,
    /// The runners built so far (clones share their tools), to give them an MCP server's new
    /// tools.
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
        let named: BTreeMap<String, ServerConfig> = servers.iter().map(server_config).collect();
        let app = self.factory.app();
        let client = crate::mcp::unattended(app, self.factory.workspace());
        let (started, notices) =
            agent_app::mcp::start_named(named, client, self.factory.sandbox()).await;
        crate::settings::say(notices);
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
        self.factory.store().clone()
    }

    fn runner(
        &self,
        session_id: &str,
        cwd: &Path,
        approvals: Arc<dyn ApprovalHandler>,
        editor: Vec<Arc<dyn Tool>>,
    ) -> Result<AgentRunner, String> {
        let approval = if self.yes {
            Approval::Allow
        } else {
            Approval::Ask(approvals)
        };
        let request = RunRequest::new()
            .workspace(cwd)
            .approval(approval)
            .tools(editor);
        let built = self
            .factory
            .runner(request.clone())
            .map_err(|error| error.to_string())?;
        crate::settings::say(built.notices);
        self.runners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(session_id.to_owned(), (built.runner.clone(), request));
        Ok(built.runner)
    }

    fn context_window(&self) -> u64 {
        self.context_window
    }

    fn commands(&self, cwd: &Path) -> Vec<agent_acp::SessionCommand> {
        self.factory
            .commands(Some(cwd))
            .commands
            .into_iter()
            .map(|command| agent_acp::SessionCommand {
                name: command.name,
                description: command.description,
                hint: command.argument_hint,
            })
            .collect()
    }

    fn expand(&self, cwd: &Path, text: &str) -> Result<String, String> {
        self.factory
            .expand(text, Some(cwd))
            .map_err(|error| error.to_string())
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
            let store = self.factory.store().clone();
            let (exporter, id) = (exporter.clone(), trace_id.to_owned());
            tokio::spawn(async move {
                crate::otel::send(Some(&exporter), store.as_ref(), &id).await;
            });
        }
    }
}

/// `agent acp`: serves one editor until it closes the connection.
pub(crate) async fn acp(args: AcpArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    let app = crate::settings::app(crate::settings::overrides(&args.model, sandbox))?;
    // A configuration error shows now, with exit code 2, rather than at the first session.
    let door = crate::setup::door(app, None, |app, workspace| {
        crate::mcp::unattended(app, workspace)
    })
    .await?;
    let checked = door
        .factory
        .runner(RunRequest::new())
        .map_err(anyhow::Error::from)?;
    let context_window = checked.provider.context_window.unwrap_or_default() as u64;
    let otel = crate::otel::exporter(args.model.otel.as_deref(), Some(checked.provider.kind))?
        .map(Arc::new);
    drop(checked);
    let runners: Runners = Arc::default();
    // A server that says its tools changed is listed again; every session's next turn has them.
    let refresh = {
        let (servers, runners, factory) = (door.mcp.clone(), runners.clone(), door.factory.clone());
        tokio::spawn(async move {
            servers
                .follow_tool_changes(|_| {
                    for (runner, request) in runners
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .values()
                    {
                        runner.replace_tools(factory.registry(request));
                    }
                })
                .await;
        })
    };
    let host = CliHost {
        factory: door.factory.clone(),
        yes: args.model.yes,
        context_window,
        otel,
        runners,
    };
    agent_acp::serve_stdio(Arc::new(host))
        .await
        .map_err(|error| anyhow::anyhow!("acp: {error}"))?;
    refresh.abort();
    door.mcp.shutdown().await;
    Ok(ExitCode::Completed)
}
