//! The chat's slash commands, parsed as the full-screen UI parses them
//! (`agent_runner::interaction::slash`): look at the session (`/plan`, `/cost`, `/trace`,
//! `/model`, `/diff`, `/shells`), steer it (`/goal`, `/compact`, `/fork`, `/rewind`, `/new`, `/resume`), send
//! an MCP server's prompt (`/mcp__SERVER__PROMPT`) or a custom command's (`/NAME args`, expanded
//! by `agent_app`'s factory as at every door) and leave it (`/quit`). A mistake is printed with
//! what would work; it never ends the session.

use agent_execution::TraceStore;
use agent_execution::fork::{self, ForkError, ForkPoint};
use agent_runner::interaction::slash::{self, COMMANDS, ForkAt, SlashCommand};
use agent_runner::stats_with_sub_traces;
use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::output::{clean, note};

/// What the session does after a command.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Read the next line.
    Prompt,
    /// Send this as the next message (a server's prompt, filled in).
    Send(String),
    /// End the session.
    Quit,
}

/// What `/help` adds after the commands, in the line mode.
const MORE: &str = "\
/mcp__S__P k=v  send the prompt P of the MCP server S, its arguments as key=value
Anything else is your next message; Ctrl-C stops a turn.";

/// Runs the command `line` (with its `/`).
pub(crate) async fn run(session: &mut Session, line: &str) -> Result<Next> {
    let command = match slash::parse(line) {
        Some(Ok(command)) => command,
        Some(Err(mistake)) => {
            note(&mistake);
            return Ok(Next::Prompt);
        }
        None => return Ok(Next::Prompt),
    };
    match command {
        SlashCommand::Quit => return Ok(Next::Quit),
        SlashCommand::Help => help(session).await,
        SlashCommand::New => {
            session.trace_id = None;
            note("a new conversation starts with your next message");
        }
        SlashCommand::Trace => match &session.trace_id {
            Some(trace_id) => note(trace_id),
            None => note("no trace yet: it starts with your first message"),
        },
        SlashCommand::Model(name) => model(session, name.as_deref()).await,
        SlashCommand::Plan => plan(session).await?,
        SlashCommand::Goal(text) => return goal(session, &text).await,
        SlashCommand::Cost => cost(session).await?,
        SlashCommand::Compact => compact(session).await?,
        SlashCommand::Fork(at) => fork_at(session, at).await?,
        SlashCommand::Rewind(words) => {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            super::rewind::run(session, &words).await?;
        }
        SlashCommand::Diff(number) => super::rewind::diff(session, &number).await?,
        SlashCommand::Resume(id) => resume(session, id.as_deref()).await?,
        SlashCommand::Shells(kill) => shells(session, kill.as_deref()),
        SlashCommand::Other { name, args } if name.starts_with(agent_mcp::TOOL_PREFIX) => {
            match crate::mcp_catalog::prompt_message(&session.mcp, &name, &args).await {
                Ok(message) => return Ok(Next::Send(message)),
                Err(error) => note(&error),
            }
        }
        SlashCommand::Other { name, .. } => {
            // A custom command (`.agent/commands/NAME.md`) is sent as its prompt.
            let workspace = session.setup.request.workspace.clone();
            match session
                .setup
                .factory
                .commands(workspace.as_deref())
                .expand(line)
            {
                Some(Ok(expanded)) => return Ok(Next::Send(expanded.task)),
                Some(Err(error)) => note(&format!("agent: {error}")),
                None => note(&format!("unknown command /{name}; /help lists them")),
            }
        }
        // A command the line mode does not know yet.
        _ => note(&format!(
            "{} is not available in the line mode",
            line.trim()
        )),
    }
    Ok(Next::Prompt)
}

/// `/shells`: the background shells of the conversation's run, one line each; with an id,
/// stops that one.
fn shells(session: &Session, kill: Option<&str>) {
    use agent_runner::interaction::shells;
    let trace_id = session.trace_id.as_deref().unwrap_or_default();
    if let Some(id) = kill {
        return match shells::kill(trace_id, id) {
            Ok(said) | Err(said) => note(&said),
        };
    }
    let now = chrono::Utc::now();
    let lines: Vec<String> = (shells::of_run(trace_id).iter())
        .map(|status| shells::line(status, now))
        .collect();
    match lines.is_empty() {
        true => note(shells::NONE_RUNNING),
        false => note(&clean(&lines.join("\n"))),
    }
}

/// `/help`: the commands, then the prompts of the session's MCP servers.
async fn help(session: &Session) {
    let listed: Vec<String> = COMMANDS
        .iter()
        .map(|(name, about)| format!("{name} {about}"))
        .collect();
    note(&format!("{}\n{MORE}", listed.join("\n")));
    let workspace = session.setup.request.workspace.clone();
    for command in session
        .setup
        .factory
        .commands(workspace.as_deref())
        .commands
    {
        let hint = command
            .argument_hint
            .map(|hint| format!(" {hint}"))
            .unwrap_or_default();
        let about = crate::output::one_line(&command.description);
        note(&format!("/{}{hint}  {about}", command.name));
    }
    for server in session.mcp.servers() {
        for prompt in server.prompts().await.unwrap_or_default() {
            let command = crate::mcp_catalog::command_name(server.name(), &prompt.name);
            let about = prompt.description.or(prompt.title).unwrap_or_default();
            note(&format!("{command}  {}", crate::output::one_line(&about)));
        }
    }
}

/// `/resume [ID]`: without an id, the recent traces; with one, the session goes on there.
async fn resume(session: &mut Session, id: Option<&str>) -> Result<()> {
    let store = session.setup.store.clone();
    let Some(id) = id else {
        let recent = crate::ids::newest(store.as_ref(), 10).await?;
        if recent.is_empty() {
            note("no traces yet");
            return Ok(());
        }
        let listed: Vec<String> = recent
            .iter()
            .map(|t| {
                let task = t.task.lines().next().unwrap_or_default();
                format!(
                    "{}  {:<9}  {}",
                    crate::ids::short(&t.trace_id),
                    crate::progress::status_word(t.status),
                    crate::output::one_line(task)
                )
            })
            .collect();
        note(&format!(
            "/resume ID continues one of these:\n{}",
            listed.join("\n")
        ));
        return Ok(());
    };
    match crate::ids::resolve(store.as_ref(), id).await {
        Ok(trace_id) => {
            note(&format!("continuing {trace_id}"));
            session.trace_id = Some(trace_id);
        }
        Err(error) => note(&format!("agent: {error}")),
    }
    Ok(())
}

/// The trace of the session, or a note that there is none yet.
fn trace_of(session: &Session) -> Option<String> {
    if session.trace_id.is_none() {
        note("no conversation yet: type a message first");
    }
    session.trace_id.clone()
}

async fn plan(session: &Session) -> Result<()> {
    let Some(trace_id) = trace_of(session) else {
        return Ok(());
    };
    let tree = session
        .setup
        .store
        .get_goal_tree(&trace_id)
        .await?
        .unwrap_or_default();
    note(clean(&tree.to_todo_string()).trim_end());
    Ok(())
}

/// `/goal`: the library reads the line and does the work; a new goal's message is the next
/// turn (on a new trace when the session has none).
async fn goal(session: &mut Session, args: &str) -> Result<Next> {
    use agent_plan::goal_command::{self, GoalRequest};
    let runner = &session.setup.runner;
    let request = match goal_command::parse(args) {
        Ok(request) => request,
        Err(error) => {
            note(&error.to_string());
            return Ok(Next::Prompt);
        }
    };
    match (request, session.trace_id.clone()) {
        (GoalRequest::Set(goal), trace_id) => {
            match goal_command::set_goal(runner, trace_id.as_deref(), &goal).await {
                Ok(set) => {
                    note(&format!("goal {} set: {}", set.number, clean(&goal.text)));
                    session.trace_id = Some(set.trace_id);
                    return Ok(Next::Send(set.message));
                }
                Err(error) => note(&format!("agent: {error}")),
            }
        }
        (GoalRequest::Show, Some(trace_id)) => {
            let tree = session.setup.store.get_goal_tree(&trace_id).await?;
            note(&clean(&goal_command::status(&tree.unwrap_or_default())));
        }
        (GoalRequest::Clear, Some(trace_id)) => {
            match goal_command::clear(runner, &trace_id).await {
                Ok(cleared) if cleared.is_empty() => note("no goal set with /goal is open"),
                Ok(cleared) => note(&format!("abandoned: {}", clean(&cleared.join("; ")))),
                Err(error) => note(&format!("agent: {error}")),
            }
        }
        (_, None) => note("no goal yet: /goal TEXT [--check CMD] sets one"),
    }
    Ok(Next::Prompt)
}

async fn cost(session: &Session) -> Result<()> {
    let Some(trace_id) = trace_of(session) else {
        return Ok(());
    };
    let store = session.setup.store.as_ref();
    let total = stats_with_sub_traces(store, &trace_id).await?;
    let own = store
        .get_trace(&trace_id)
        .await?
        .map(|t| t.stats())
        .unwrap_or_default();
    let estimated = agent_runner::tokens_estimated(store, &trace_id).await?;
    let mut line = format!(
        "{} messages · {} · ${:.4}",
        total.total_messages,
        crate::run::tokens_text(total.total_tokens, estimated),
        total.total_cost
    );
    if total != own {
        line.push_str(&format!(
            " with sub-agents (this conversation alone: {} messages · ${:.4})",
            own.total_messages, own.total_cost
        ));
    }
    note(&line);
    Ok(())
}

async fn compact(session: &Session) -> Result<()> {
    let Some(trace_id) = trace_of(session) else {
        return Ok(());
    };
    let before = session
        .setup
        .store
        .get_trace(&trace_id)
        .await?
        .map(|t| t.total_tokens);
    match session
        .setup
        .runner
        .compact(&trace_id, &CancellationToken::new())
        .await
    {
        Ok(true) => note(&format!(
            "compacted: the next turn starts from a summary of the {} tokens so far",
            before.unwrap_or_default()
        )),
        Ok(false) => note("the summariser gave no summary; the conversation is unchanged"),
        Err(error) => note(&format!("agent: cannot compact: {error}")),
    }
    Ok(())
}

async fn fork_at(session: &mut Session, at: ForkAt) -> Result<()> {
    let Some(trace_id) = trace_of(session) else {
        return Ok(());
    };
    let point = match at {
        ForkAt::Goal(number) => ForkPoint::Goal(number),
        ForkAt::Message(sequence) => ForkPoint::Message(sequence),
    };
    let store: &dyn TraceStore = session.setup.store.as_ref();
    match fork::fork(store, &trace_id, &point).await {
        Ok(forked) => {
            note(&format!(
                "forked {trace_id} into {} ({} messages); this conversation goes on there \
                 (the original is untouched)",
                forked.trace_id, forked.messages
            ));
            session.trace_id = Some(forked.trace_id);
        }
        Err(error @ ForkError::NotFound { .. }) => note(&format!("agent: {error}")),
        Err(error) if error.is_bad_request() => note(&format!("agent: {error}")),
        Err(error) => return Err(error.into()),
    }
    Ok(())
}

/// `/model`: the session's model, or (`/model NAME`) another one of the same provider from the
/// next turn on, recorded in the trace as the full-screen UI's `/model` does.
async fn model(session: &Session, name: Option<&str>) {
    let runner = &session.setup.runner;
    let now = runner.spec().model.clone();
    let Some(name) = name else {
        return note(&format!(
            "model {now} · /model NAME asks another model of the same provider from the next turn"
        ));
    };
    if name == now {
        return note(&format!("the model is {now} already"));
    }
    match runner.switch_model(name, session.trace_id.as_deref()).await {
        Ok(()) => note(&format!(
            "model {name} from the next turn on (was {now}); the trace records it"
        )),
        Err(error) => note(&format!("cannot switch the model: {error}")),
    }
}
