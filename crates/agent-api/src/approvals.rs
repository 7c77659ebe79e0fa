//! Approvals over HTTP: an [`ApprovalHandler`] that parks each risky tool call until a client
//! decides on it with `POST /api/traces/{id}/approvals/{tool_call_id}`.
//!
//! Pending calls are listed per trace (`pending_approvals` of `GET /api/traces/{id}`). A call
//! leaves the list when it is decided, or when its run stops waiting (e.g. it was cancelled).
//! The ids of recently decided calls are remembered, so a second decision gets 409 rather
//! than 404 (the waiting board, `board.rs`, shared with elicitations).
//!
//! The server's [`ApprovalMode`](agent_worker::ApprovalMode) becomes the runner's approval of
//! each run started over HTTP through [`agent_worker::approval::apply`].

use std::convert::Infallible;

use agent_execution::ids::now_rfc3339;
use agent_execution::queue::WaitingCall;
use agent_runner::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use async_trait::async_trait;
use serde::Serialize;

use crate::board::{Board, Refusal};
use crate::error::ApiError;

pub use agent_worker::NEVER_REASON;

/// How many decided call ids are remembered per trace.
const DECIDED_MEMORY: usize = 1024;

/// A risky tool call waiting for a decision, as `GET /api/traces/{id}` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PendingApproval {
    /// The call's id, as the model gave it; the last segment of the approval URL.
    pub tool_call_id: String,
    /// The tool, e.g. `bash` or `write_file`.
    pub tool_name: String,
    /// The arguments, as the model wrote them (JSON text, possibly malformed).
    pub arguments: String,
    /// When the run started waiting (RFC 3339).
    pub requested_at: String,
    /// Why this call is asked about although it would not be otherwise: an approval rule cannot
    /// check it (a `bash` script whose programs cannot all be known); shown with the question.
    /// Absent for an ordinary risky call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl PendingApproval {
    /// A call a run queue keeps, as the API lists it.
    pub(crate) fn from_waiting(call: WaitingCall) -> Self {
        Self {
            tool_call_id: call.tool_call_id,
            tool_name: call.tool_name,
            arguments: call.arguments,
            requested_at: call.requested_at,
            warning: call.warning,
        }
    }
}

/// The approval handler of runs started over HTTP (and of any run it is given to, e.g. one
/// the CLI started with `--serve`).
pub struct HttpApprovals {
    board: Board<PendingApproval, ApprovalDecision>,
}

impl Default for HttpApprovals {
    fn default() -> Self {
        Self {
            board: Board::new(DECIDED_MEMORY),
        }
    }
}

impl std::fmt::Debug for HttpApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpApprovals")
            .field("waiting", &self.board.waiting())
            .finish()
    }
}

impl HttpApprovals {
    /// An empty board.
    pub fn new() -> Self {
        Self::default()
    }

    /// The calls of a trace waiting for a decision, oldest first.
    pub fn pending(&self, trace_id: &str) -> Vec<PendingApproval> {
        self.board.pending(trace_id)
    }

    /// Decides on a waiting call. 404 if the trace has no such waiting call, 409 if it was
    /// decided already or its run stopped waiting.
    pub fn resolve(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), ApiError> {
        let accept = |_: &PendingApproval| Ok::<(), Infallible>(());
        self.board
            .resolve(trace_id, tool_call_id, accept, decision)
            .map_err(|refusal| match refusal {
                Refusal::Unknown => ApiError::NotFound(format!(
                    "trace {trace_id} has no tool call {tool_call_id} waiting for approval"
                )),
                Refusal::Resolved => ApiError::conflict(
                    "already_decided",
                    format!("tool call {tool_call_id} of trace {trace_id} was already decided"),
                ),
                Refusal::NotWaiting => ApiError::conflict(
                    "not_waiting",
                    format!(
                        "the run of trace {trace_id} stopped waiting for tool call {tool_call_id}"
                    ),
                ),
                Refusal::Invalid(never) => match never {},
            })
    }
}

#[async_trait]
impl ApprovalHandler for HttpApprovals {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let approval = PendingApproval {
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            arguments: request.arguments.clone(),
            requested_at: now_rfc3339(),
            warning: request.note.clone(),
        };
        // The call leaves the board however the wait ends, the run's cancel included.
        let (_waiting, receiver) = self.board.park(&request.trace_id, |_| {
            (request.tool_call_id.clone(), approval)
        });
        receiver.await.unwrap_or_else(|_| ApprovalDecision::Reject {
            reason: "the approval was withdrawn".into(),
        })
    }
}
