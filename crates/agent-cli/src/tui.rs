//! The full-screen UI (`agent-tui`) wired to the command line: `agent chat` (and `agent` with no
//! arguments) on a terminal opens it, with the runner built by the one factory as for every run
//! and risky calls asked in its modal; `--no-tui`, `AGENT_TUI=0` or a pipe keep the line mode.
//! While the screen is up, standard error goes to the log file (`logs.rs`).

use std::io::IsTerminal;
use std::sync::Arc;

use agent_app::App;
use agent_app::store::Opened;
use agent_runner::Approval;
use anyhow::{Context, Result};

use crate::cli::ModelArgs;
use crate::exit::ExitCode;
use crate::output::note;

/// Whether a chat opens the full-screen UI: both ends on a terminal, and neither `--no-tui` nor
/// `AGENT_TUI=0`.
pub(crate) fn wanted(no_tui: bool) -> bool {
    !no_tui
        && std::env::var("AGENT_TUI").map_or(true, |value| value != "0")
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
}

/// How a session in the full-screen UI opens.
pub(crate) struct Opening {
    /// The trace to continue, if any.
    pub(crate) trace_id: Option<String>,
    /// A first message, sent as the screen opens.
    pub(crate) message: Option<String>,
}

/// A chat in the full-screen UI of `app`, continuing the opening's trace when it names one (run
/// as `profile`, the agent profile it recorded), recording into `opened`. The runner comes from
/// the one factory, as every door's: risky calls and reruns are asked in the UI's modal, and the
/// MCP servers' questions are its forms.
pub(crate) async fn chat(
    args: &ModelArgs,
    app: App,
    opened: Opened,
    opening: Opening,
    profile: Option<&str>,
) -> Result<ExitCode> {
    let (asker, forms) = agent_tui::FormAsker::new();
    let door = crate::setup::door(app, Some(opened), |app, workspace| {
        crate::mcp::in_tui(app, workspace, asker)
    })
    .await?;
    let mcp = door.mcp.clone();
    // The workspace as the factory resolves it, for the rules the "always" answers add.
    let workspace = door.factory.workspace().to_path_buf();
    let shown_in = workspace.clone();
    let describe: agent_tui::Describe = Arc::new(move |request: &agent_runner::ApprovalRequest| {
        crate::approve::describe_plain(request, &shown_in)
    });
    let (approver, questions) = agent_tui::Approver::new(describe, workspace);
    let approval = (
        Approval::Ask(approver.clone()),
        approver as Arc<dyn agent_runner::RerunApprover>,
    );
    let setup = crate::setup::setup(
        &door,
        profile,
        args.yes,
        Some(approval),
        args.otel.as_deref(),
    )?;
    let refresh = {
        let (servers, runner) = (mcp.clone(), setup.runner.clone());
        let (factory, request) = (setup.factory.clone(), setup.request.clone());
        tokio::spawn(async move {
            servers
                .follow_tool_changes(|_| runner.replace_tools(factory.registry(&request)))
                .await;
        })
    };
    // `--serve`: the viewer and the API beside the session, announced before the screen opens.
    let _server = match args.serve {
        Some(port) => Some(crate::serve::background(&setup, port).await?),
        None => None,
    };
    let status = agent_tui::Status {
        model: setup.runner.spec().model.clone(),
        context_window: setup.provider.context_window.map(|window| window as u64),
        approval: if args.yes { "yes" } else { "ask" }.to_owned(),
        sandbox: door.factory.sandbox().mode().as_str().to_owned(),
        ..agent_tui::Status::default()
    };
    // A turn that fails says what to fix, in the words `agent run` uses.
    let provider = setup.provider.clone();
    let explain: agent_tui::Explain = Arc::new(move |outcome: &agent_runner::RunOutcome| {
        crate::failure::explain_turn(outcome, &provider)
    });
    let options = agent_tui::Options {
        explain: Some(explain),
        log_file: crate::logs::log_file(),
        runner: setup.runner.clone(),
        questions,
        status,
        trace_id: opening.trace_id,
        message: opening
            .message
            .map(|message| door.factory.expand(&message, None))
            .transpose()?,
        workspace: setup.runner.options().workspace.clone(),
        show_reasoning: setup.show_reasoning,
        notify: door.app.terminal_notify(),
        forms: Some(forms),
        extensions: Some(Arc::new(
            crate::tui_mcp::McpExtensions::new(
                mcp.clone(),
                door.factory
                    .commands(Some(&setup.runner.options().workspace)),
            )
            .await,
        )),
    };
    // While the screen is up, standard error (log lines, notices) goes to the log file.
    let redirect = crate::logs::Redirect::begin("agent chat");
    let ended = agent_tui::run(options).await;
    refresh.abort();
    if let Some(redirect) = redirect {
        let path = redirect.path.clone();
        let wrote = redirect.wrote();
        drop(redirect);
        if wrote {
            note(&format!(
                "log lines of the session are in {}",
                path.display()
            ));
        }
    }
    mcp.shutdown().await;
    if let Some(trace_id) = ended.context("the terminal failed")? {
        crate::otel::send(setup.otel.as_ref(), setup.store.as_ref(), &trace_id).await;
        // The shortest prefix that names the trace, as people type it.
        let prefix = agent_execution::lookup::shortest_prefix(setup.store.as_ref(), &trace_id)
            .await
            .unwrap_or_else(|_| trace_id.clone());
        note(&format!(
            "resume this conversation with `agent -r {prefix}`"
        ));
    }
    Ok(ExitCode::Completed)
}
