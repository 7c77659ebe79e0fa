//! Approvals through the client: a risky tool call becomes `session/request_permission`, by the
//! session rules every front end shares (`agent_runner::interaction::SessionApprovals`): an
//! "allow always" covers the tool's later calls, except a call an approval rule cannot check,
//! which is always asked, with the warning as the first content of the tool call and without
//! the "always" options. "Reject always" refuses the tool for the rest of the session.

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
use agent_runner::interaction::{Answer, Check, SessionApprovals};
use agent_runner::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use async_trait::async_trait;

use crate::session::Sessions;
use crate::updates::{diff_of, kind_of, status_update, title_of};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";
const REJECT_ALWAYS: &str = "reject_always";

/// Asks the client about risky calls; remembers "always" answers per session.
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
        let (cwd, approvals, rejected) = {
            let sessions = self.sessions.lock().await;
            match sessions.get(&session_id) {
                Some(session) => (
                    session.cwd.clone(),
                    Some(session.approvals.clone()),
                    session.rejected.contains(&request.tool_name),
                ),
                None => (PathBuf::from("."), None, false),
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
        let approvals = approvals.unwrap_or_else(|| Arc::new(SessionApprovals::new(cwd.clone())));
        let question = match approvals.check(&request) {
            Check::Approved => {
                if let Some(connection) = self.connection.get() {
                    started(connection, &session_id, &request.tool_call_id);
                }
                return ApprovalDecision::Approve;
            }
            Check::Ask(question) => question,
        };
        // "Reject always" holds for the tool; a warned call is refused with its warning too.
        if rejected {
            return SessionApprovals::unattended(
                &request,
                "the user rejects this tool for the session",
            );
        }
        let Some(connection) = self.connection.get() else {
            return SessionApprovals::unattended(&request, "no client is connected to approve it");
        };
        let mut fields = ToolCallUpdateFields::new()
            .title(title_of(&call))
            .kind(kind_of(&call.name))
            .status(ToolCallStatus::Pending)
            .raw_input(
                serde_json::from_str::<serde_json::Value>(&request.arguments).unwrap_or_default(),
            );
        let mut content = Vec::new();
        // An approval rule cannot check this call: the editor shows why before the choices.
        if let Some(warning) = &question.warning {
            content.push(ToolCallContent::from(format!("⚠ {warning}")));
        }
        if let Some(path) = serde_json::from_str::<serde_json::Value>(&request.arguments)
            .ok()
            .and_then(|args| {
                let path = args.get("path")?.as_str()?.to_owned();
                agent_tools::resolve_in_workspace(&cwd, &path).ok()
            })
            && let Some(diff) = diff_of(&call, &path, true)
        {
            content.push(ToolCallContent::Diff(diff));
        }
        if !content.is_empty() {
            fields = fields.content(content);
        }
        let mut options = vec![PermissionOption::new(
            ALLOW_ONCE,
            "Allow",
            PermissionOptionKind::AllowOnce,
        )];
        if question.offers_always() {
            options.push(PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Always allow {}", request.tool_name),
                PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(PermissionOption::new(
            REJECT_ONCE,
            "Reject",
            PermissionOptionKind::RejectOnce,
        ));
        options.push(PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {}", request.tool_name),
            PermissionOptionKind::RejectAlways,
        ));
        let ask = RequestPermissionRequest::new(
            session_id.clone(),
            ToolCallUpdate::new(request.tool_call_id.clone(), fields),
            options,
        );
        let answer = match connection.send_request(ask).block_task().await {
            Ok(answer) => answer,
            Err(error) => return rejected_with(&format!("the client did not answer: {error}")),
        };
        let chosen = match answer.outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
            _ => return rejected_with("the user cancelled the question"),
        };
        let answer = match chosen.as_str() {
            // An "always" the question did not offer is a yes for this call (the session's
            // rules do not remember it).
            ALLOW_ALWAYS => Answer::AlwaysTool,
            ALLOW_ONCE => Answer::Yes,
            REJECT_ALWAYS => {
                if let Some(session) = self.sessions.lock().await.get_mut(&session_id) {
                    session.rejected.insert(request.tool_name.clone());
                }
                Answer::No("the user rejected the call".into())
            }
            _ => Answer::No("the user rejected the call".into()),
        };
        let decision = approvals.answer(&request, answer);
        if decision == ApprovalDecision::Approve {
            started(connection, &session_id, &request.tool_call_id);
        }
        decision
    }
}

/// Tells the client the call was approved and runs now.
fn started(connection: &ConnectionTo<Client>, session_id: &str, call_id: &str) {
    let update = SessionUpdate::ToolCallUpdate(status_update(call_id, ToolCallStatus::InProgress));
    let _ = connection.send_notification(SessionNotification::new(session_id.to_owned(), update));
}

fn rejected_with(reason: &str) -> ApprovalDecision {
    ApprovalDecision::Reject {
        reason: reason.to_owned(),
    }
}
