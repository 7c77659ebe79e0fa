//! What the commands that run the agent on this terminal (`agent run`, `resume`, `chat`, `plan`)
//! build first, through the application's one factory (`agent_app::AppFactory`): the store, the
//! sandbox protecting its trace folder, the MCP servers, and the runner — with the terminal's
//! own part (who answers approvals, reruns and rollbacks, what progress shows).

use std::sync::Arc;

use agent_app::factory::RunRequest;
use agent_app::provider::ProviderConfig;
use agent_app::store::Opened;
use agent_app::{App, AppFactory};
use agent_execution::TraceStore;
use agent_mcp::{ClientOptions, McpServers};
use agent_runner::{AgentRunner, Approval};
use anyhow::Result;

use crate::approve;
use crate::output::note;
use crate::settings::say;

/// Everything a run needs, resolved from flags, environment and agent.toml.
pub(crate) struct Setup {
    pub(crate) store: Arc<dyn TraceStore>,
    pub(crate) runner: AgentRunner,
    pub(crate) provider: ProviderConfig,
    /// The factory the runner came from, for the tools a changed MCP server brings.
    pub(crate) factory: Arc<AppFactory>,
    /// The request the runner was built for.
    pub(crate) request: RunRequest,
    /// Whether progress prints reasoning in full (`--show-reasoning`, or agent.toml).
    pub(crate) show_reasoning: bool,
    /// Whether progress shows the changes of file edits (`--yes`: no approval showed them).
    pub(crate) show_edits: bool,
    /// The terminal approver, when risky calls are asked about (not with `--yes`).
    pub(crate) approver: Option<Arc<approve::TerminalApprover>>,
    /// Where the run's spans go when it ends (`--otel`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub(crate) otel: Option<crate::otel::Exporter>,
}

impl Setup {
    /// How a run of this setup is shown, with progress in `mode`.
    pub(crate) fn shown(&self, mode: crate::progress::ProgressMode) -> crate::progress::Shown {
        crate::progress::Shown {
            mode,
            show_reasoning: self.show_reasoning,
            show_edits: self.show_edits,
        }
    }

    /// Says on stderr how many risky calls were refused for lack of a terminal since the last
    /// time, and how to allow them.
    pub(crate) fn report_refusals(&self) {
        let refused = self.approver.as_ref().map_or(0, |a| a.take_refused());
        if refused > 0 {
            let calls = if refused == 1 {
                "call was"
            } else {
                "calls were"
            };
            note(&format!(
                "agent: {refused} risky tool {calls} refused: there was no terminal to ask on. \
                 Rerun with --yes to approve them, or allow them in agent.toml, e.g. \
                 [approvals] allow = [\"bash(cargo test)\", \"write_file(src/**)\"]"
            ));
        }
    }
}

/// What a door resolved before its runners: the application, its store, its sandbox and its MCP
/// servers, and the factory over them.
pub(crate) struct Door {
    pub(crate) app: App,
    pub(crate) factory: Arc<AppFactory>,
    pub(crate) mcp: Arc<McpServers>,
}

/// Opens the door of `app`: checks the settings (so a mistake creates no trace folder), opens
/// the store, resolves the sandbox of its trace folder, starts the MCP servers with `client`'s
/// options (`client` gets the workspace), and builds the factory. Says its notices on stderr.
pub(crate) async fn door(
    app: App,
    opened: Option<Opened>,
    client: impl FnOnce(&App, &std::path::Path) -> ClientOptions,
) -> Result<Door> {
    let workspace = app.workspace()?;
    let opened = match opened {
        Some(opened) => opened,
        None => app.open_store().await?,
    };
    say(app.store_notice());
    let sandbox = app.sandbox(&opened.location)?;
    say(sandbox.notices.clone());
    let (servers, notices) = app.start_mcp(client(&app, &workspace), &sandbox).await?;
    say(notices);
    let mcp = Arc::new(servers);
    let factory = Arc::new(agent_app::AppFactory::new(
        app.clone(),
        opened,
        sandbox,
        mcp.clone(),
    )?);
    Ok(Door { app, factory, mcp })
}

/// Builds the runner of a run on this terminal through `door`'s factory, as the profile `agent`
/// (a resumed trace's) unless `--agent` names another: risky calls asked on the terminal unless
/// `approval` (the full-screen UI's) or `--yes` says otherwise, with `otel` for its spans.
pub(crate) fn setup(
    door: &Door,
    agent: Option<&str>,
    yes: bool,
    approval: Option<(Approval, Arc<dyn agent_runner::RerunApprover>)>,
    otel: Option<&str>,
) -> Result<Setup> {
    let workspace = door.factory.workspace().to_path_buf();
    let mut request = RunRequest::new().profile(agent);
    let mut approver = None;
    match approval {
        _ if yes => request = request.approval(Approval::Allow),
        Some((approval, rerun)) => request = request.approval(approval).rerun(rerun),
        None => {
            let terminal = approve::TerminalApprover::new(workspace);
            request = request
                .approval(Approval::Ask(terminal.clone()))
                .rerun(terminal.clone());
            approver = Some(terminal);
        }
    }
    if let Some(confirm) = crate::rollback::terminal() {
        request = request.confirm(confirm);
    }
    let built = door.factory.runner(request.clone())?;
    say(built.notices);
    let otel = crate::otel::exporter(otel, Some(built.provider.kind))?;
    Ok(Setup {
        store: door.factory.store().clone(),
        runner: built.runner,
        provider: built.provider,
        factory: door.factory.clone(),
        request,
        show_reasoning: door.app.show_reasoning(),
        show_edits: yes,
        approver,
        otel,
    })
}
