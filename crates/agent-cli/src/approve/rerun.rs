//! The question whether a command the sandbox refused runs again without it, asked on the
//! terminal of a run that asks its approvals there (never with `--yes`, never without a
//! terminal), and only for a call the user approved in its own question (never for one an
//! approval rule or an earlier "always" let run unasked): the command, then "run it again
//! without the sandbox? [y/N]", after what was typed ahead is thrown away.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agent_tools::{RerunApprover, RerunRequest};
use async_trait::async_trait;

use super::{StopOnDrop, TerminalApprover, read_line};

/// The question, after the command.
pub(crate) const QUESTION: &str =
    "The sandbox refused this command: run it again without the sandbox? [y/N]";

#[async_trait]
impl RerunApprover for TerminalApprover {
    async fn rerun_unsandboxed(&self, request: RerunRequest) -> bool {
        if !std::io::stdin().is_terminal() || !self.session.may_offer_rerun(&request) {
            return false;
        }
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let stopped = stop.0.clone();
        let command = request.command;
        let answer = tokio::task::spawn_blocking(move || {
            crate::output::suspended(|| {
                let mut stderr = std::io::stderr();
                let shown: String = command.lines().collect::<Vec<_>>().join("\n    ");
                super::flush_typed_ahead();
                let _ = write!(stderr, "\n  $ {shown}\n? {QUESTION} ");
                let _ = stderr.flush();
                read_line(&stopped).is_some_and(|line| is_yes(&line))
            })
        })
        .await
        .unwrap_or(false);
        drop(stop);
        answer
    }
}

/// `y` or `yes`, in any case; anything else (an empty line too) is no.
fn is_yes(line: &str) -> bool {
    matches!(line.trim().to_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_yes_is_yes() {
        for (line, yes) in [
            ("y\n", true),
            ("Yes\n", true),
            ("\n", false),
            ("n\n", false),
            ("maybe\n", false),
        ] {
            assert_eq!(super::is_yes(line), yes, "{line:?}");
        }
    }
}
