//! Approval of risky tool calls (confirmation mode): while a handler decides, the trace waits.

use async_trait::async_trait;

/// A risky tool call waiting for a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The trace making the call.
    pub trace_id: String,
    /// The call's id, as the model gave it.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The arguments, as the model wrote them.
    pub arguments: String,
}

/// What the handler decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Do not run it; the model is told why.
    Reject {
        /// Why, shown to the model (may be empty).
        reason: String,
    },
}

/// Decides on risky tool calls: a terminal prompt, an HTTP endpoint, a policy.
///
/// The runner sets the trace to `waiting` while [`decide`](ApprovalHandler::decide) runs and
/// back to `running` after, and the run's cancellation ends the wait.
#[async_trait]
pub trait ApprovalHandler: Send + Sync {
    /// Decides on one call.
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision;
}

/// Approves everything (what `--yes` means).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

#[async_trait]
impl ApprovalHandler for ApproveAll {
    async fn decide(&self, _request: ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Approve
    }
}

/// Rejects everything with a fixed reason (e.g. no terminal to ask on).
#[derive(Debug, Clone, Default)]
pub struct RejectAll {
    /// The reason given to the model.
    pub reason: String,
}

#[async_trait]
impl ApprovalHandler for RejectAll {
    async fn decide(&self, _request: ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Reject {
            reason: self.reason.clone(),
        }
    }
}
