//! Approval of risky tool calls (confirmation mode): whether a risky call runs, is refused, or
//! waits for a handler's decision (the trace is `waiting` meanwhile).

use std::sync::Arc;

use async_trait::async_trait;

/// What the model is told when a runner has no approval policy.
pub const NO_POLICY: &str = "risky tools are refused: no approval policy is set for this run";

/// Who decides whether a risky tool call (`bash`, writes, MCP tools not marked read-only) runs.
///
/// The default refuses them: a runner runs nothing risky unless its embedder chose how, with
/// [`Approval::Allow`] or a handler.
#[derive(Clone)]
pub enum Approval {
    /// Risky calls are refused without asking; the model is told this reason.
    Refuse(String),
    /// Risky calls run without asking (what `--yes` means).
    Allow,
    /// Each risky call waits for the handler's decision.
    Ask(Arc<dyn ApprovalHandler>),
}

impl Default for Approval {
    fn default() -> Self {
        Self::Refuse(NO_POLICY.to_owned())
    }
}

impl std::fmt::Debug for Approval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refuse(reason) => f.debug_tuple("Refuse").field(reason).finish(),
            Self::Allow => f.write_str("Allow"),
            Self::Ask(_) => f.write_str("Ask(..)"),
        }
    }
}

impl Approval {
    /// Asks `handler` about each risky call.
    pub fn ask(handler: impl ApprovalHandler + 'static) -> Self {
        Self::Ask(Arc::new(handler))
    }
}

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
    /// Why this call is asked about although it would not be otherwise (a deny rule cannot
    /// check its script); `None` for an ordinary risky call.
    pub note: Option<String>,
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

/// Approves everything; as a handler it still marks the trace `waiting` around each decision,
/// which [`Approval::Allow`] does not.
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

/// A `bash` command the sandbox seems to have refused, waiting for a decision on running it
/// again without the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunRequest {
    /// The trace whose command it is.
    pub trace_id: String,
    /// The id of the `bash` call, when the runner gave one ([`crate::ToolContext::call_id`]):
    /// a front end offers a rerun only for a call a person approved (see
    /// [`SessionApprovals::may_offer_rerun`](crate::interaction::SessionApprovals::may_offer_rerun)).
    pub tool_call_id: Option<String>,
    /// The command, as the model wrote it.
    pub command: String,
    /// What it printed when the sandbox refused it (its exit status and output).
    pub output: String,
}

/// Asks a person whether a command the sandbox refused runs once more without it (codex's
/// "on-request"). Only a front end where a person answers installs one
/// ([`crate::BashTool::with_rerun`]); a refused command is never run again without asking.
#[async_trait]
pub trait RerunApprover: Send + Sync {
    /// Whether to run `request`'s command again, once, without the sandbox; `false` unless a
    /// person said yes.
    async fn rerun_unsandboxed(&self, request: RerunRequest) -> bool;
}

/// What a call comes to once the approval rules and the policy have spoken
/// ([`Approval::decide`]).
pub enum Decision<'a> {
    /// It runs.
    Run,
    /// It does not run; the model is told this.
    Refuse(String),
    /// The handler is asked, with this note for the person (when there is one).
    Ask(&'a dyn ApprovalHandler, Option<String>),
}

impl Approval {
    /// Whether the call of tool `name` (of `risk`) with `arguments` runs: the `rules` first (a
    /// deny refuses, an allow runs, a command they cannot read asks), then, for a risky tool,
    /// this policy. `note` goes to the person when the handler is asked.
    pub fn decide<'a>(
        &'a self,
        rules: &crate::ApprovalRules,
        (name, arguments, risk): (&str, &str, Option<crate::Risk>),
        workspace: &std::path::Path,
        note: Option<String>,
    ) -> Decision<'a> {
        use crate::RuleVerdict;
        match rules.verdict(name, arguments, workspace) {
            Some(RuleVerdict::Deny(rule)) => Decision::Refuse(format!(
                "{name} was not run: the approval rule `{rule}` denies it"
            )),
            Some(RuleVerdict::Ask { rule, why }) => match self {
                Approval::Ask(handler) => {
                    let why = format!("the rule `{rule}` cannot check this command: {why}");
                    let why = note.map_or(why.clone(), |note| format!("{note}; {why}"));
                    Decision::Ask(handler.as_ref(), Some(why))
                }
                _ => Decision::Refuse(format!(
                    "{name} was not run: the approval rule `{rule}` cannot check it ({why}) and \
                     nobody was asked; write the command so that each program it runs is named \
                     plainly"
                )),
            },
            Some(RuleVerdict::Allow(_)) => Decision::Run,
            None if risk != Some(crate::Risk::Risky) => Decision::Run,
            None => match self {
                Approval::Allow => Decision::Run,
                Approval::Refuse(reason) => {
                    Decision::Refuse(format!("{name} was not run: {reason}"))
                }
                Approval::Ask(handler) => Decision::Ask(handler.as_ref(), note),
            },
        }
    }
}
