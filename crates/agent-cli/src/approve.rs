//! Approval of risky tool calls on the terminal: without `--yes`, the user is asked; without a
//! terminal to ask on, the call is refused (fail closed).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use agent_runner::{Approval, ApprovalDecision, ApprovalHandler, ApprovalRequest};
use async_trait::async_trait;

use crate::output::{one_line, truncate};

/// The approval of a run: everything with `--yes`, else the terminal (or refusal).
pub(crate) fn policy(yes: bool) -> Approval {
    if yes {
        Approval::Allow
    } else {
        Approval::Ask(Arc::new(TerminalApprover))
    }
}

/// Asks on the terminal, one call at a time.
pub(crate) struct TerminalApprover;

/// The reason given to the model when nobody could be asked.
pub(crate) const NO_TERMINAL: &str = "risky tool calls need approval, and there is no terminal to ask on; rerun with --yes to approve them";

#[async_trait]
impl ApprovalHandler for TerminalApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        if !std::io::stdin().is_terminal() {
            return ApprovalDecision::Reject {
                reason: NO_TERMINAL.into(),
            };
        }
        let question = format!(
            "\nAllow {} {}? [y/N] ",
            request.tool_name,
            truncate(&one_line(&request.arguments), 300)
        );
        let answer = tokio::task::spawn_blocking(move || {
            crate::progress::suspended(|| {
                let mut stderr = std::io::stderr();
                let _ = stderr.write_all(question.as_bytes());
                let _ = stderr.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line)
            })
        })
        .await;
        match answer {
            Ok(Ok(line)) if matches!(line.trim().to_lowercase().as_str(), "y" | "yes") => {
                ApprovalDecision::Approve
            }
            _ => ApprovalDecision::Reject {
                reason: "the user declined".into(),
            },
        }
    }
}
