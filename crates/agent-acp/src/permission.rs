//! Approvals through the client: a risky tool call becomes `session/request_permission`.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionNotification, SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_llm::ToolCall as ModelCall;
use agent_runner::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use async_trait::async_trait;

use crate::session::Sessions;
use crate::updates::{diff_of, kind_of, status_update, title_of};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";
const REJECT_ALWAYS: &str = "reject_always";

/// Asks the client about risky calls; remembers "always" answers per session and tool.
pub(crate) struct Permissions {
    /// The connection to the client, set when it initializes.
    pub(crate) connection: OnceLock<ConnectionTo<Client>>,
    /// The sessions, for their working directory and their "always" answers.
    pub(crate) sessions: Arc<Sessions>,
}

/// The session a trace belongs to: a sub-trace's id starts with its main trace's id and `@`.
pub(crate) fn session_of(trace_id: &str) -> &str {
    trace_id.split('@').next().unwrap_or(trace_id)
}

#[async_trait]
impl ApprovalHandler for Permissions {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let session_id = session_of(&request.trace_id).to_owned();
        let (cwd, remembered) = {
            let sessions = self.sessions.lock().await;
            match sessions.get(&session_id) {
                Some(session) => (
                    session.cwd.clone(),
                    session.remembered.get(&request.tool_name).copied(),
                ),
                None => (PathBuf::from("."), None),
            }
        };
        let call = ModelCall::new(
            request.tool_call_id.clone(),
            request.tool_name.clone(),
            request.arguments.clone(),
        );
        if let Some(connection) = self.connection.get() {
            // The call is announced before anything is said about it, whoever gets there first.
            let announcer = crate::updates::Announcer {
                connection: connection.clone(),
                session_id: session_id.clone(),
                sessions: self.sessions.clone(),
            };
            announcer.announce(&call, &cwd).await;
        }
        let connection = match (remembered, self.connection.get()) {
            (Some(true), Some(connection)) => {
                started(connection, &session_id, &request.tool_call_id);
                return ApprovalDecision::Approve;
            }
            (Some(false), _) => return rejected("the user rejects this tool for the session"),
            (_, None) => return rejected("no client is connected to approve it"),
            (None, Some(connection)) => connection,
        };
        let mut fields = ToolCallUpdateFields::new()
            .title(title_of(&call))
            .kind(kind_of(&call.name))
            .status(ToolCallStatus::Pending)
            .raw_input(
                serde_json::from_str::<serde_json::Value>(&request.arguments).unwrap_or_default(),
            );
        if let Some(path) = serde_json::from_str::<serde_json::Value>(&request.arguments)
            .ok()
            .and_then(|args| {
                let path = args.get("path")?.as_str()?.to_owned();
                agent_tools::resolve_in_workspace(&cwd, &path).ok()
            })
            && let Some(diff) = diff_of(&call, &path, true)
        {
            fields = fields.content(vec![ToolCallContent::Diff(diff)]);
        }
        let options = vec![
            PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Always allow {}", request.tool_name),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                REJECT_ALWAYS,
                format!("Always reject {}", request.tool_name),
                PermissionOptionKind::RejectAlways,
            ),
        ];
        let ask = RequestPermissionRequest::new(
            session_id.clone(),
            ToolCallUpdate::new(request.tool_call_id.clone(), fields),
            options,
        );
        let answer = match connection.send_request(ask).block_task().await {
            Ok(answer) => answer,
            Err(error) => return rejected(&format!("the client did not answer: {error}")),
        };
        let chosen = match answer.outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
            _ => return rejected("the user cancelled the question"),
        };
        let always = match chosen.as_str() {
            ALLOW_ALWAYS => Some(true),
            REJECT_ALWAYS => Some(false),
            _ => None,
        };
        if let Some(allow) = always
            && let Some(session) = self.sessions.lock().await.get_mut(&session_id)
        {
            session.remembered.insert(request.tool_name.clone(), allow);
        }
        match chosen.as_str() {
            ALLOW_ONCE | ALLOW_ALWAYS => {
                started(connection, &session_id, &request.tool_call_id);
                ApprovalDecision::Approve
            }
            _ => rejected("the user rejected the call"),
        }
    }
}

/// Tells the client the call was approved and runs now.
fn started(connection: &ConnectionTo<Client>, session_id: &str, call_id: &str) {
    let update = SessionUpdate::ToolCallUpdate(status_update(call_id, ToolCallStatus::InProgress));
    let _ = connection.send_notification(SessionNotification::new(session_id.to_owned(), update));
}

fn rejected(reason: &str) -> ApprovalDecision {
    ApprovalDecision::Reject {
        reason: reason.to_owned(),
    }
}
