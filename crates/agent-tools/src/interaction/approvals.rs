//! A session's answers to risky calls, by the same rules in every front end.
//!
//! A front end's [`ApprovalHandler`](crate::ApprovalHandler) asks [`SessionApprovals::check`]
//! first: a call an earlier "always" answer covers runs without asking ([`Check::Approved`]);
//! any other is a [`Question`] to show. The person's [`Answer`] goes back through
//! [`SessionApprovals::answer`], which gives the decision and remembers "always" answers.
//!
//! One rule for a call a deny rule cannot verify (the runner's request carries the warning in
//! [`ApprovalRequest::note`], e.g. `x=rm; $x -rf target` under a `bash(rm -rf)` deny rule): it
//! is always asked, whatever was answered before; the question carries the warning and offers
//! no "always"; an "always" answer to it counts as a yes for this call only; and where nobody
//! can be asked ([`SessionApprovals::unattended`]) it is refused, the warning in the reason.
//!
//! A command the sandbox refused may be offered a rerun without the sandbox only when a person
//! approved that very call in its question ([`SessionApprovals::may_offer_rerun`]): never for a
//! call an approval rule, an earlier "always" or a blanket approval let run unasked.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use crate::approval::{ApprovalDecision, ApprovalRequest, RerunRequest};
use crate::rules::{ApprovalRules, RuleVerdict, suggested_prefix};

/// What a person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run the call.
    Yes,
    /// Do not run it; the reason (may be empty) is told to the model.
    No(String),
    /// Run it, and every call of this tool for the rest of the session.
    AlwaysTool,
    /// Run it, and every command starting with this prefix for the rest of the session.
    AlwaysPrefix(String),
}

/// A risky call to ask a person about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The tool.
    pub tool: String,
    /// Its arguments, as the model wrote them.
    pub arguments: String,
    /// Why this call is asked about although an answer or a rule would not ask otherwise: a
    /// deny rule cannot check it. Shown with the question; no "always" is offered then.
    pub warning: Option<String>,
    /// The command prefix an "always" may allow, for a `bash` call that has no warning.
    pub prefix: Option<String>,
}

impl Question {
    /// Whether "always" answers are offered: not for a call with a warning.
    pub fn offers_always(&self) -> bool {
        self.warning.is_none()
    }

    /// The command of a `bash` call.
    pub fn command(&self) -> Option<String> {
        command_of(&self.tool, &self.arguments)
    }
}

/// What to do with a request before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// An earlier "always" answer covers it: run it.
    Approved,
    /// Ask the person.
    Ask(Question),
}

/// The "always" answers of a session and the calls a person approved.
#[derive(Debug)]
pub struct SessionApprovals {
    workspace: PathBuf,
    always: Mutex<ApprovalRules>,
    /// `(trace id, tool call id)` of the calls a person approved in their own question.
    approved: Mutex<HashSet<(String, String)>>,
}

impl SessionApprovals {
    /// No answers yet; "always" rules are matched against calls in `workspace`.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            always: Mutex::new(ApprovalRules::default()),
            approved: Mutex::new(HashSet::new()),
        }
    }

    /// Whether `request` runs on an earlier "always" answer or is asked about. A call with a
    /// warning (a deny rule cannot check it) is always asked.
    pub fn check(&self, request: &ApprovalRequest) -> Check {
        if request.note.is_none() && self.covered(request) {
            return Check::Approved;
        }
        let warning = request.note.clone();
        let prefix = match &warning {
            None => command_of(&request.tool_name, &request.arguments)
                .and_then(|command| suggested_prefix(&command)),
            Some(_) => None,
        };
        Check::Ask(Question {
            tool: request.tool_name.clone(),
            arguments: request.arguments.clone(),
            warning,
            prefix,
        })
    }

    /// The decision for the person's `answer` to `request`. An "always" answer is remembered
    /// for the session, unless the call had a warning: then it runs this once.
    pub fn answer(&self, request: &ApprovalRequest, answer: Answer) -> ApprovalDecision {
        let remember = request.note.is_none();
        let rule = match answer {
            Answer::No(reason) if reason.trim().is_empty() => {
                return ApprovalDecision::Reject {
                    reason: "the user declined".into(),
                };
            }
            Answer::No(reason) => return ApprovalDecision::Reject { reason },
            Answer::Yes => None,
            Answer::AlwaysTool => Some(request.tool_name.clone()),
            Answer::AlwaysPrefix(prefix) => Some(format!("bash({prefix})")),
        };
        if let Some(rule) = rule.filter(|_| remember) {
            let mut always = self.always.lock().unwrap_or_else(PoisonError::into_inner);
            // A rule built from a tool name or a suggested prefix reads.
            let _ = always.allow(&rule);
        }
        self.approved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((request.trace_id.clone(), request.tool_call_id.clone()));
        ApprovalDecision::Approve
    }

    /// The decision where nobody can be asked: refused with `reason`, and for a call with a
    /// warning the warning too.
    pub fn unattended(request: &ApprovalRequest, reason: &str) -> ApprovalDecision {
        let reason = match &request.note {
            Some(warning) => format!("{reason} ({warning})"),
            None => reason.to_owned(),
        };
        ApprovalDecision::Reject { reason }
    }

    /// Whether a rerun without the sandbox may be offered for `request`'s command: only when a
    /// person approved that call in its own question in this session.
    pub fn may_offer_rerun(&self, request: &RerunRequest) -> bool {
        let Some(call) = &request.tool_call_id else {
            return false;
        };
        self.approved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&(request.trace_id.clone(), call.clone()))
    }

    /// Whether an "always" answer covers `request`.
    fn covered(&self, request: &ApprovalRequest) -> bool {
        let always = self.always.lock().unwrap_or_else(PoisonError::into_inner);
        matches!(
            always.verdict(&request.tool_name, &request.arguments, &self.workspace),
            Some(RuleVerdict::Allow(_))
        )
    }
}

/// The command of a `bash` call.
fn command_of(tool: &str, arguments: &str) -> Option<String> {
    if tool != "bash" {
        return None;
    }
    let args: serde_json::Value = serde_json::from_str(arguments).ok()?;
    args.get("command")?.as_str().map(str::to_owned)
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
