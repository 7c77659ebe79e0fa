//! How runs started over HTTP or claimed from a queue treat risky tool calls: the
//! [`ApprovalMode`] a server runs in, and [`apply`], which turns it into the runner's
//! [`Approval`].

use std::fmt;
use std::sync::Arc;

use agent_runner::{Approval, ApprovalHandler, RunnerOptions};
use serde::{Deserialize, Serialize};

/// How runs started over HTTP treat risky tool calls (`bash`, writes, MCP tools not marked
/// read-only), from the loosest to the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    /// Risky calls run without asking.
    Auto,
    /// Each risky call waits for `POST /api/traces/{id}/approvals/{tool_call_id}`; the trace is
    /// `waiting` meanwhile.
    #[default]
    Ask,
    /// Risky calls are refused without asking, with a reason the model reads.
    Never,
}

impl ApprovalMode {
    /// The mode's name: `auto`, `ask` or `never`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Ask => "ask",
            Self::Never => "never",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the model reads when a server in [`ApprovalMode::Never`] refuses a risky call.
pub const NEVER_REASON: &str = "this server runs no risky tool calls (its approval mode is \
    `never`); do the task with read-only tools, or say what you would have run";

/// Sets the approval of a run started over HTTP or claimed from a queue in `mode`: `never`
/// refuses risky calls with [`NEVER_REASON`] (and keeps only the deny rules of the options'
/// `approval_rules`, so no allow rule runs a risky call unasked), `auto` runs them, `ask` parks
/// them on `ask` (the HTTP server's board, or the run queue's for a queued run) for a client to
/// decide. The runner applies the rules before the approval: a deny refuses in every mode, an
/// allow runs without asking.
pub fn apply(options: &mut RunnerOptions, mode: ApprovalMode, ask: Arc<dyn ApprovalHandler>) {
    options.approval = match mode {
        ApprovalMode::Never => {
            options.approval_rules = options.approval_rules.deny_only();
            Approval::Refuse(NEVER_REASON.to_owned())
        }
        ApprovalMode::Auto => Approval::Allow,
        ApprovalMode::Ask => Approval::Ask(ask),
    };
}
