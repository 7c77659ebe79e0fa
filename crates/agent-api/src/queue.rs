//! Runs that execute elsewhere: a server with a run queue
//! ([`RunQueue`], e.g. the PostgreSQL store's) queues the runs
//! it is asked for (start, resume, continue) instead of running them, and workers — `agent
//! worker`, or a server started with `--worker` — claim and execute them (see
//! [`crate::worker`]). Cancel requests, messages for a running run and decisions on its risky
//! calls go through the queue too, so any node steers a run wherever it executes.
//!
//! This module holds what the API puts in a queued run: [`QueuedSettings`].

use serde::{Deserialize, Serialize};

pub use agent_execution::queue::{QueueError, QueuedRun, RunKind, RunQueue};

use crate::config::ApprovalMode;

/// The settings a queued run carries: what the request asked for, never credentials (a worker
/// reaches its model the way `agent run` does).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueuedSettings {
    /// The model; the worker's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model calls allowed for the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Cost budget of the trace in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// How risky calls are handled.
    pub approval: ApprovalMode,
    /// The folder the tools work in, relative to the worker's workspace; the worker's
    /// workspace itself when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

impl QueuedSettings {
    /// The settings as a queued run stores them.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The settings of a queued run; an error names what this build cannot read.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        serde_json::from_value(value.clone())
            .map_err(|error| format!("the run's settings cannot be read: {error}"))
    }
}

/// A pending approval as the queue keeps it, and back.
pub(crate) fn waiting_call(call: &crate::PendingApproval) -> agent_execution::queue::WaitingCall {
    agent_execution::queue::WaitingCall {
        tool_call_id: call.tool_call_id.clone(),
        tool_name: call.tool_name.clone(),
        arguments: call.arguments.clone(),
        requested_at: call.requested_at.clone(),
    }
}

/// See [`waiting_call`].
pub(crate) fn pending_approval(
    call: agent_execution::queue::WaitingCall,
) -> crate::PendingApproval {
    crate::PendingApproval {
        tool_call_id: call.tool_call_id,
        tool_name: call.tool_name,
        arguments: call.arguments,
        requested_at: call.requested_at,
    }
}

/// A runner's decision as the queue keeps it, and back.
pub(crate) fn decision(
    decision: &agent_runner::ApprovalDecision,
) -> agent_execution::queue::Decision {
    match decision {
        agent_runner::ApprovalDecision::Approve => agent_execution::queue::Decision {
            approve: true,
            reason: String::new(),
        },
        agent_runner::ApprovalDecision::Reject { reason } => agent_execution::queue::Decision {
            approve: false,
            reason: reason.clone(),
        },
    }
}

/// See [`decision`].
pub(crate) fn approval_decision(
    decision: agent_execution::queue::Decision,
) -> agent_runner::ApprovalDecision {
    if decision.approve {
        agent_runner::ApprovalDecision::Approve
    } else {
        agent_runner::ApprovalDecision::Reject {
            reason: decision.reason,
        }
    }
}
