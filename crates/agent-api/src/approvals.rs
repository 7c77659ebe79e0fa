//! Approvals over HTTP: an [`ApprovalHandler`] that parks each risky tool call until a client
//! decides on it with `POST /api/traces/{id}/approvals/{tool_call_id}`.
//!
//! Pending calls are listed per trace (`pending_approvals` of `GET /api/traces/{id}`). A call
//! leaves the list when it is decided, or when its run stops waiting (e.g. it was cancelled).
//! The ids of recently decided calls are remembered, so a second decision gets 409 rather
//! than 404.
//!
//! The server's [`ApprovalMode`](agent_worker::ApprovalMode) becomes the runner's approval of
//! each run started over HTTP through [`agent_worker::approval::apply`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use agent_execution::ids::now_rfc3339;
use agent_execution::queue::WaitingCall;
use agent_runner::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use async_trait::async_trait;
use serde::Serialize;
use tokio::sync::oneshot;

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
}

impl PendingApproval {
    /// A call a run queue keeps, as the API lists it.
    pub(crate) fn from_waiting(call: WaitingCall) -> Self {
        Self {
            tool_call_id: call.tool_call_id,
            tool_name: call.tool_name,
            arguments: call.arguments,
            requested_at: call.requested_at,
        }
    }
}

struct Parked {
    key: u64,
    approval: PendingApproval,
    sender: oneshot::Sender<ApprovalDecision>,
}

#[derive(Default)]
struct Board {
    next_key: u64,
    pending: HashMap<String, Vec<Parked>>,
    decided: HashMap<String, VecDeque<String>>,
}

/// The approval handler of runs started over HTTP (and of any run it is given to, e.g. one
/// the CLI started with `--serve`).
#[derive(Default)]
pub struct HttpApprovals {
    board: Mutex<Board>,
}

impl std::fmt::Debug for HttpApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting: usize = self.board().pending.values().map(Vec::len).sum();
        f.debug_struct("HttpApprovals")
            .field("waiting", &waiting)
            .finish()
    }
}

impl HttpApprovals {
    /// An empty board.
    pub fn new() -> Self {
        Self::default()
    }

    fn board(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The calls of a trace waiting for a decision, oldest first.
    pub fn pending(&self, trace_id: &str) -> Vec<PendingApproval> {
        self.board()
            .pending
            .get(trace_id)
            .map(|parked| parked.iter().map(|p| p.approval.clone()).collect())
            .unwrap_or_default()
    }

    /// Decides on a waiting call. 404 if the trace has no such waiting call, 409 if it was
    /// decided already or its run stopped waiting.
    pub fn resolve(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), ApiError> {
        let mut board = self.board();
        let position = board.pending.get(trace_id).and_then(|parked| {
            parked
                .iter()
                .position(|p| p.approval.tool_call_id == tool_call_id)
        });
        let Some(position) = position else {
            let decided = board
                .decided
                .get(trace_id)
                .is_some_and(|ids| ids.iter().any(|id| id == tool_call_id));
            return Err(if decided {
                ApiError::conflict(
                    "already_decided",
                    format!("tool call {tool_call_id} of trace {trace_id} was already decided"),
                )
            } else {
                ApiError::NotFound(format!(
                    "trace {trace_id} has no tool call {tool_call_id} waiting for approval"
                ))
            });
        };
        let parked = remove_parked(&mut board, trace_id, position);
        let decided = board.decided.entry(trace_id.to_owned()).or_default();
        if decided.len() >= DECIDED_MEMORY {
            decided.pop_front();
        }
        decided.push_back(tool_call_id.to_owned());
        drop(board);
        parked.sender.send(decision).map_err(|_| {
            ApiError::conflict(
                "not_waiting",
                format!("the run of trace {trace_id} stopped waiting for tool call {tool_call_id}"),
            )
        })
    }

    fn park(&self, request: &ApprovalRequest) -> (u64, oneshot::Receiver<ApprovalDecision>) {
        let (sender, receiver) = oneshot::channel();
        let mut board = self.board();
        board.next_key += 1;
        let key = board.next_key;
        let approval = PendingApproval {
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            arguments: request.arguments.clone(),
            requested_at: now_rfc3339(),
        };
        board
            .pending
            .entry(request.trace_id.clone())
            .or_default()
            .push(Parked {
                key,
                approval,
                sender,
            });
        (key, receiver)
    }

    fn unpark(&self, trace_id: &str, key: u64) {
        let mut board = self.board();
        let position = board
            .pending
            .get(trace_id)
            .and_then(|parked| parked.iter().position(|p| p.key == key));
        if let Some(position) = position {
            remove_parked(&mut board, trace_id, position);
        }
    }
}

fn remove_parked(board: &mut Board, trace_id: &str, position: usize) -> Parked {
    let list = board.pending.entry(trace_id.to_owned()).or_default();
    let parked = list.remove(position);
    if list.is_empty() {
        board.pending.remove(trace_id);
    }
    parked
}

/// Takes a parked call off the board when its wait ends in any way, including the runner
/// dropping the wait because the run was cancelled.
struct Unpark<'a> {
    approvals: &'a HttpApprovals,
    trace_id: String,
    key: u64,
}

impl Drop for Unpark<'_> {
    fn drop(&mut self) {
        self.approvals.unpark(&self.trace_id, self.key);
    }
}

#[async_trait]
impl ApprovalHandler for HttpApprovals {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let (key, receiver) = self.park(&request);
        let _unpark = Unpark {
            approvals: self,
            trace_id: request.trace_id.clone(),
            key,
        };
        receiver.await.unwrap_or_else(|_| ApprovalDecision::Reject {
            reason: "the approval was withdrawn".into(),
        })
    }
}
