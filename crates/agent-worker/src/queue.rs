//! Runs that execute elsewhere: a server with a run queue
//! ([`RunQueue`], e.g. the PostgreSQL store's) queues the runs
//! it is asked for (start, resume, continue) instead of running them, and workers — `agent
//! worker`, or a server started with `--worker` — claim and execute them (see
//! [`crate::Worker`]). Cancel requests, messages for a running run and decisions on its risky
//! calls go through the queue too, so any node steers a run wherever it executes.
//!
//! This module holds what a node puts in a queued run ([`QueuedSettings`]) and how a decision on
//! a risky call is kept in the queue ([`decision`], [`approval_decision`]).

use serde::{Deserialize, Serialize};

pub use agent_execution::queue::{QueueError, QueuedRun, RunKind, RunQueue};

use crate::approval::ApprovalMode;
use crate::choices::BuildChoices;

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
    /// Streaming and the sandbox, as the request chose them (written only when chosen, so
    /// runs queued before they existed read the same).
    #[serde(flatten)]
    pub choices: BuildChoices,
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

/// A runner's decision as the queue keeps it, and back.
pub fn decision(decision: &agent_runner::ApprovalDecision) -> agent_execution::queue::Decision {
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
pub fn approval_decision(
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
