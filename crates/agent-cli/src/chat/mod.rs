//! `agent chat`: an interactive session over one trace. A message given with the command is the
//! first turn; then each line typed is a user turn — the
//! first starts the trace, the next ones continue it under the same id — shown as it runs: the
//! model's text as it streams, tool calls and their approvals, the plan's changes, and the cost
//! of the turn. Ctrl-C stops the turn and returns to the prompt; a second one (or one at an empty
//! prompt, twice) quits. Slash commands (`/help`) look at and steer the session.
//!
//! On a terminal the session opens the full-screen UI (`tui.rs`) unless `--no-tui` or
//! `AGENT_TUI=0` asks for this line mode, where the prompt is a line editor (history, editing
//! keys); from a pipe or a file each line is a turn. The model's text streams on stdout,
//! rendered on a terminal and plain in a pipe; Ctrl-C mid-answer keeps what arrived in the
//! trace, marked interrupted.

mod commands;
mod input;
mod rewind;

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use agent_execution::{TraceStatus, watch_live};
use agent_runner::RunOutcome;
use anyhow::Result;
use tokio_util::sync::CancellationToken;

use agent_tools::SandboxMode;

use crate::cli::{ChatArgs, OutputFormat};
use crate::exit::{ExitCode, UsageError};
use crate::ids;
use crate::output::{clean, note, print};
use crate::progress::{self, ProgressMode, status_word};
use crate::setup::{self, Setup};

use self::input::{Input, Read};

/// The session: the runner and the trace the next turn goes to.
pub(crate) struct Session {
    setup: Setup,
    /// The trace of the conversation; `None` until the first turn (or after `/new`).
    trace_id: Option<String>,
    /// The MCP servers of the session, whose prompts are commands.
    mcp: Arc<agent_mcp::McpServers>,
}

/// The token of the turn going on, for the Ctrl-C handler.
type CurrentTurn = Arc<Mutex<Option<CancellationToken>>>;

/// `agent chat`.
pub(crate) async fn chat(args: ChatArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    if args.model.output() != OutputFormat::Text {
        return Err(UsageError(
            "agent chat prints text; for JSON use agent run --output-format json|stream-json"
                .into(),
        )
        .into());
    }
    let app = crate::settings::app(crate::settings::overrides(&args.model, sandbox))?;
    let opened = app.open_store().await?;
    let store = opened.store.clone();
    // -c/--continue [ID], --last, -r/--resume [ID]: an existing trace, with what it ran with.
    let trace_id = match (&args.continue_trace, &args.resume) {
        (_, Some(given)) if given.is_empty() => {
            Some(crate::pick::pick(store.as_ref(), "agent chat --resume").await?)
        }
        (_, Some(given)) => Some(ids::resolve(store.as_ref(), given).await?),
        (Some(given), None) => {
            Some(ids::continued(store.as_ref(), Some(given.as_str()), args.last).await?)
        }
        (None, None) if args.last => Some(ids::last(store.as_ref()).await?),
        (None, None) => None,
    };
    let (app, profile) = match &trace_id {
        Some(id) => {
            let (app, recorded) = crate::run::with_recorded(app, store.as_ref(), id).await?;
            (app, recorded.profile)
        }
        None => (app, None),
    };
    drop(store);
    let tui = crate::tui::wanted(args.no_tui);
    if tui {
        let opening = crate::tui::Opening {
            trace_id,
            message: args.message.clone(),
        };
        return crate::tui::chat(&args.model, app, opened, opening, profile.as_deref()).await;
    }
    let serve = args.model.serve;
    let door = setup::door(app, Some(opened), |app, workspace| {
        crate::mcp::on_terminal(app, workspace)
    })
    .await?;
    let mcp = door.mcp.clone();
    let setup = setup::setup(
        &door,
        profile.as_deref(),
        args.model.yes,
        None,
        args.model.otel.as_deref(),
    )?;
    // A server that says its tools changed is listed again, and the next turn has the new ones.
    let refresh = {
        let (servers, runner) = (mcp.clone(), setup.runner.clone());
        let (factory, request) = (setup.factory.clone(), setup.request.clone());
        tokio::spawn(async move {
            servers
                .follow_tool_changes(|_| runner.replace_tools(factory.registry(&request)))
                .await;
        })
    };
    let _server = match serve {
        Some(port) => Some(crate::serve::background(&setup, port).await?),
        None => None,
    };
    let mut session = Session {
        setup,
        trace_id,
        mcp: mcp.clone(),
    };
    let terminal = std::io::stdin().is_terminal();
    let current: CurrentTurn = Arc::default();
    let interrupts = tokio::spawn(watch_interrupts(current.clone()));
    greet(&session, terminal).await;
    let mut input = Input::new(terminal)?;
    let mut interrupted_prompt = false;
    // A message given with the command is the first turn.
    if let Some(message) = args.message.as_deref().filter(|m| !m.trim().is_empty()) {
        input.remember(message);
        // `/NAME args` of a custom command is its prompt.
        let workspace = session.setup.request.workspace.clone();
        let message = session
            .setup
            .factory
            .expand(message, workspace.as_deref())?;
        turn(&mut session, &message, &current).await?;
    }
    loop {
        match input.read("› ").await? {
            Read::Eof => break,
            Read::Interrupted if interrupted_prompt => break,
            Read::Interrupted => {
                note("(Ctrl-C again, Ctrl-D or /quit to leave)");
                interrupted_prompt = true;
            }
            Read::Line(line) => {
                interrupted_prompt = false;
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                if line.starts_with('/') {
                    match commands::run(&mut session, line).await? {
                        commands::Next::Quit => break,
                        commands::Next::Prompt => {}
                        // A server's prompt, filled in: the message of the next turn.
                        commands::Next::Send(message) => {
                            input.remember(line);
                            turn(&mut session, &message, &current).await?;
                        }
                    }
                    continue;
                }
                input.remember(line);
                // `@server:uri`: the resource's contents go with the message.
                match crate::mcp_mentions::attach(&session.mcp, line).await {
                    Ok(message) => turn(&mut session, &message, &current).await?,
                    Err(error) => note(&error),
                }
            }
        }
    }
    interrupts.abort();
    refresh.abort();
    mcp.shutdown().await;
    Ok(ExitCode::Completed)
}

/// The first lines: the model, the workspace, the trace when one is continued, and how to
/// get help.
async fn greet(session: &Session, terminal: bool) {
    let spec = session.setup.runner.spec();
    let mut line = format!(
        "agent chat · {} · {}",
        spec.model,
        session.setup.runner.options().workspace.display()
    );
    if let Some(trace_id) = &session.trace_id {
        line.push_str(&format!(" · continuing {trace_id}"));
        if let Ok(Some(trace)) = session.setup.store.get_trace(trace_id).await {
            line.push_str(&format!(
                " ({}, {} messages)",
                status_word(trace.status),
                trace.total_messages
            ));
        }
    }
    note(&line);
    if terminal {
        note("/help lists the commands · Ctrl-C stops a turn · Ctrl-D quits");
    }
}

/// One user turn: a new trace for the first, the next message of the trace otherwise; shown
/// as it runs, with the cost of the turn at the end. Errors that leave the session usable
/// (a provider that fails, a trace that cannot continue) are printed, not returned.
async fn turn(session: &mut Session, message: &str, current: &CurrentTurn) -> Result<()> {
    let runner = &session.setup.runner;
    let store = session.setup.store.clone();
    let cancel = CancellationToken::new();
    let (trace_id, before) = match &session.trace_id {
        Some(trace_id) => {
            let before = store.get_trace(trace_id).await?.map(|t| t.stats());
            (trace_id.clone(), before)
        }
        None => (runner.create(message).await?, None),
    };
    session.trace_id = Some(trace_id.clone());
    let since = store
        .get_events(&trace_id, 0)
        .await?
        .last()
        .map_or(0, |e| e.event_id);
    let progress = tokio::spawn(progress::follow(
        watch_live(store.clone(), &trace_id, since),
        session.setup.shown(ProgressMode::Auto),
    ));
    set_turn(current, Some(cancel.clone()));
    let started = match before {
        Some(_) => {
            runner
                .continue_in_background(&trace_id, message, cancel)
                .await
        }
        None => runner.resume_in_background(&trace_id, cancel).await,
    };
    let outcome = match started {
        Ok(handle) => handle.wait().await,
        Err(error) => Err(error),
    };
    set_turn(current, None);
    let streamed = match tokio::time::timeout(std::time::Duration::from_secs(2), progress).await {
        Ok(Ok(streamed)) => streamed,
        _ => String::new(),
    };
    crate::otel::send(session.setup.otel.as_ref(), store.as_ref(), &trace_id).await;
    match outcome {
        Ok(outcome) => report(
            &outcome,
            before.as_ref(),
            &streamed,
            &session.setup.provider,
        ),
        Err(error) => note(&format!("agent: {error}")),
    }
    session.setup.report_refusals();
    Ok(())
}

/// After a turn: the answer when it did not stream on stdout, how the turn ended when it did
/// not complete, and what the turn cost.
fn report(
    outcome: &RunOutcome,
    before: Option<&agent_execution::TraceStats>,
    streamed: &str,
    provider: &agent_app::provider::ProviderConfig,
) {
    match outcome.status {
        TraceStatus::Completed => {
            let answer = outcome.response.as_deref().unwrap_or_default();
            if !streamed.contains(answer.trim()) {
                print(&clean(answer));
            }
        }
        TraceStatus::Cancelled => note("stopped; what was done is kept — type to go on"),
        _ => note(&crate::failure::explain_turn(outcome, provider)),
    }
    let now = &outcome.stats;
    let (messages, tokens, cost) = match before {
        Some(before) => (
            now.total_messages.saturating_sub(before.total_messages),
            now.total_tokens.saturating_sub(before.total_tokens),
            now.total_cost - before.total_cost,
        ),
        None => (now.total_messages, now.total_tokens, now.total_cost),
    };
    note(&format!(
        "· {messages} messages · {tokens} tokens · ${cost:.4} this turn · ${:.4} in all",
        outcome.stats_with_sub_traces.total_cost
    ));
}

/// Records the token of the turn going on (`None` between turns).
fn set_turn(current: &CurrentTurn, turn: Option<CancellationToken>) {
    *current
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = turn;
}

/// Ctrl-C while a turn runs stops it; a second one, or one with no turn running (from a pipe,
/// where the prompt is not a line editor), quits with 130.
async fn watch_interrupts(current: CurrentTurn) {
    while tokio::signal::ctrl_c().await.is_ok() {
        let turn = current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match turn {
            Some(cancel) if !cancel.is_cancelled() => {
                // Cancelled first: an approval question being asked ends at once, and the
                // note can then be written.
                cancel.cancel();
                tokio::task::block_in_place(|| note("stopping the turn (Ctrl-C again to quit)..."));
            }
            _ => {
                note("");
                progress::restore_terminal();
                std::process::exit(ExitCode::Cancelled as i32);
            }
        }
    }
}
