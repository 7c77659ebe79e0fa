//! The ACP connection: the session table and a handler per request.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, CloseSessionRequest, CloseSessionResponse, ForkSessionRequest,
    ForkSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionForkCapabilities,
    SessionInfo, SessionListCapabilities, SessionNotification, SessionResumeCapabilities,
    SessionUpdate, UnstructuredCommandInput,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, Stdio};
use agent_execution::fork::{ForkPoint, fork};
use agent_execution::{TraceFilter, TraceMode, ids::new_trace_id};

use crate::Host;
use crate::permission::Permissions;
use crate::replay::history;
use crate::session::{Session, Sessions, internal, unknown};
use crate::state::State;

/// JSON-RPC's "invalid params".
const INVALID_PARAMS: i32 = -32602;

/// Serves one client on this process's stdin and stdout until it disconnects.
pub async fn serve_stdio(host: Arc<dyn Host>) -> Result<(), Error> {
    serve(host, Stdio::new()).await
}

/// Serves one client on `transport` until it disconnects.
pub async fn serve(
    host: Arc<dyn Host>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    let sessions = Arc::new(Sessions::default());
    let permissions = Arc::new(Permissions {
        connection: OnceLock::new(),
        sessions: sessions.clone(),
    });
    let state = Arc::new(State {
        host,
        sessions,
        permissions,
        client_fs: std::sync::Mutex::new((false, false)),
    });
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state,
    );
    Agent
        .v1()
        .name("agent")
        .on_receive_request(
            async move |request: InitializeRequest, responder, cx: ConnectionTo<Client>| {
                let _ = s1.permissions.connection.set(cx);
                let fs = &request.client_capabilities.fs;
                *s1.client_fs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    (fs.read_text_file, fs.write_text_file);
                responder.respond(initialize())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                let _ = s2.permissions.connection.set(cx.clone());
                let mcp = crate::mcp::servers_of(&request.mcp_servers);
                match open(&s2, &request.cwd, new_trace_id(), false, mcp).await {
                    Ok(id) => {
                        responder.respond(NewSessionResponse::new(id.clone()))?;
                        announce_commands(&s2, &cx, &id, &request.cwd)
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                let _ = s3.permissions.connection.set(cx.clone());
                let id = request.session_id.0.to_string();
                let mcp = crate::mcp::servers_of(&request.mcp_servers);
                if let Err(error) = attach(&s3, &request.cwd, &id, mcp).await {
                    return responder.respond_with_error(error);
                }
                let store = s3.host.store();
                match history(store.as_ref(), &id, &request.cwd).await {
                    Ok(updates) => {
                        for update in updates {
                            cx.send_notification(SessionNotification::new(id.clone(), update))?;
                        }
                        responder.respond(LoadSessionResponse::new())?;
                        announce_commands(&s3, &cx, &id, &request.cwd)
                    }
                    Err(error) => responder.respond_with_error(internal(&error)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, cx: ConnectionTo<Client>| {
                let _ = s4.permissions.connection.set(cx.clone());
                let mcp = crate::mcp::servers_of(&request.mcp_servers);
                let id = request.session_id.0.to_string();
                match attach(&s4, &request.cwd, &id, mcp).await {
                    Ok(()) => {
                        responder.respond(ResumeSessionResponse::new())?;
                        announce_commands(&s4, &cx, &id, &request.cwd)
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, _cx: ConnectionTo<Client>| {
                match list(&s5, request.cwd.as_deref()).await {
                    Ok(sessions) => responder.respond(ListSessionsResponse::new(sessions)),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let _ = s6.permissions.connection.set(cx.clone());
                crate::prompt::start(s6.clone(), request, responder, cx).await
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notice: CancelNotification, _cx: ConnectionTo<Client>| {
                if let Some(session) = s7.sessions.lock().await.get(&*notice.session_id.0)
                    && let Some((_, turn)) = &session.turn
                {
                    turn.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder, _cx: ConnectionTo<Client>| match s8
                .sessions
                .lock()
                .await
                .remove(&*request.session_id.0)
            {
                Some(session) => {
                    if let Some((_, turn)) = session.turn {
                        turn.cancel();
                    }
                    s8.host.session_closed(&request.session_id.0);
                    responder.respond(CloseSessionResponse::new())
                }
                None => responder.respond_with_error(unknown(&request.session_id.0)),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ForkSessionRequest, responder, _cx: ConnectionTo<Client>| {
                match fork_session(&s9, &request).await {
                    Ok(id) => responder.respond(ForkSessionResponse::new(id)),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await
}

/// What this agent offers: loading sessions, listing, resuming, closing and forking them, and
/// prompts of text with embedded files.
fn initialize() -> InitializeResponse {
    let sessions = SessionCapabilities::new()
        .list(SessionListCapabilities::new())
        .resume(SessionResumeCapabilities::new())
        .close(SessionCloseCapabilities::new())
        .fork(SessionForkCapabilities::new());
    // Protocol version 1 is the one implemented, whatever the client asks for.
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().embedded_context(true).image(true))
                .session_capabilities(sessions),
        )
        .agent_info(Implementation::new("agent", env!("CARGO_PKG_VERSION")).title("agent"))
}

/// Tells the client the commands of session `id` working in `cwd`, when the host has any.
fn announce_commands(
    state: &State,
    cx: &ConnectionTo<Client>,
    id: &str,
    cwd: &Path,
) -> Result<(), Error> {
    let mut available = vec![crate::commands::goal_command()];
    available.extend(state.host.commands(cwd).into_iter().map(|command| {
        let input = command
            .hint
            .map(|hint| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint)));
        AvailableCommand::new(command.name, command.description).input(input)
    }));
    let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(available));
    cx.send_notification(SessionNotification::new(id.to_owned(), update))
}

/// Adds session `id` working in `cwd` (its trace exists when `created`), with a runner for it
/// that also has the tools of the MCP servers the client named.
async fn open(
    state: &State,
    cwd: &Path,
    id: String,
    created: bool,
    mcp: Vec<crate::SessionMcpServer>,
) -> Result<String, Error> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(Error::new(
            INVALID_PARAMS,
            format!("cwd {} is not an absolute path to a folder", cwd.display()),
        ));
    }
    let mut tools = editor_tools(state, &id);
    tools.extend(
        state
            .host
            .mcp_tools(mcp)
            .await
            .map_err(|error| internal(&error))?,
    );
    let runner = state
        .host
        .runner(&id, cwd, state.permissions.clone(), tools)
        .map_err(|error| internal(&error))?;
    state.sessions.lock().await.insert(
        id.clone(),
        Session {
            cwd: cwd.to_owned(),
            runner: Arc::new(runner),
            created,
            turn: None,
            approvals: Arc::new(agent_runner::interaction::SessionApprovals::new(cwd)),
            rejected: std::collections::HashSet::new(),
            announced: std::collections::HashSet::new(),
        },
    );
    Ok(id)
}

/// The tools that go through the client's file system, as far as it offers one.
fn editor_tools(state: &State, id: &str) -> Vec<Arc<dyn agent_tools::Tool>> {
    let (read, write) = *state
        .client_fs
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(connection) = state.permissions.connection.get() else {
        return Vec::new();
    };
    let builtin = |name: &str| {
        agent_tools::builtin_tools()
            .into_iter()
            .find(|tool| tool.definition().name == name)
    };
    let mut tools: Vec<Arc<dyn agent_tools::Tool>> = Vec::new();
    if read && let Some(builtin) = builtin("read_file") {
        tools.push(Arc::new(crate::client_fs::EditorRead {
            builtin,
            connection: connection.clone(),
            session_id: id.to_owned(),
        }));
    }
    if write && let Some(builtin) = builtin("write_file") {
        tools.push(Arc::new(crate::client_fs::EditorWrite {
            builtin,
            connection: connection.clone(),
            session_id: id.to_owned(),
        }));
    }
    tools
}

/// Makes the stored main trace `id` a session of this connection.
async fn attach(
    state: &State,
    cwd: &Path,
    id: &str,
    mcp: Vec<crate::SessionMcpServer>,
) -> Result<(), Error> {
    if state.sessions.lock().await.contains_key(id) {
        return Ok(());
    }
    match state.host.store().get_trace(id).await {
        Ok(Some(trace)) if trace.parent_trace_id.is_none() => {
            open(state, cwd, id.to_owned(), true, mcp).await.map(drop)
        }
        Ok(_) => Err(unknown(id)),
        Err(error) => Err(internal(&error)),
    }
}

/// The main traces, newest first, as sessions (their task's first line as the title).
async fn list(state: &State, cwd: Option<&Path>) -> Result<Vec<SessionInfo>, Error> {
    let filter = TraceFilter {
        mode: Some(TraceMode::Agent),
        ..TraceFilter::default()
    };
    let traces = state
        .host
        .store()
        .list_traces(&filter)
        .await
        .map_err(|error| internal(&error))?;
    let here = match cwd {
        Some(cwd) => cwd.to_owned(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    Ok(traces
        .into_iter()
        .filter(|trace| trace.parent_trace_id.is_none())
        .map(|trace| {
            let title = trace.task.lines().next().unwrap_or_default().to_owned();
            SessionInfo::new(trace.trace_id.clone(), here.clone())
                .title(title)
                .updated_at(trace.updated_at.clone())
        })
        .collect())
}

/// `session/fork`: a copy of the session's trace, whole, or cut before a goal
/// (`_meta: {"goal": "2.1"}`) or after a message (`_meta: {"message_sequence": 42}`).
async fn fork_session(state: &State, request: &ForkSessionRequest) -> Result<String, Error> {
    let store = state.host.store();
    let original = request.session_id.0.to_string();
    let meta = request.meta.as_ref();
    let point = match (
        meta.and_then(|m| m.get("goal")),
        meta.and_then(|m| m.get("message_sequence")),
    ) {
        (Some(goal), _) => ForkPoint::Goal(
            goal.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| goal.to_string()),
        ),
        (None, Some(sequence)) => ForkPoint::Message(sequence.as_u64().ok_or_else(|| {
            Error::new(INVALID_PARAMS, "_meta.message_sequence must be a number")
        })?),
        (None, None) => {
            let last = store
                .get_trace_messages_shared(&original)
                .await
                .map_err(|error| internal(&error))?
                .last()
                .map_or(0, |m| m.sequence);
            ForkPoint::Message(last)
        }
    };
    let forked = fork(store.as_ref(), &original, &point)
        .await
        .map_err(|error| match error {
            agent_execution::fork::ForkError::NotFound { .. } => unknown(&original),
            other => Error::new(INVALID_PARAMS, other.to_string()),
        })?;
    let mcp = crate::mcp::servers_of(&request.mcp_servers);
    open(state, &request.cwd, forked.trace_id, true, mcp).await
}
