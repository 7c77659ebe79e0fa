//! The question at the terminal whether an abandoned goal's file changes are rolled back
//! (`abandon_rollback = "ask"`): asked only where a person can answer (standard input and error
//! on a terminal), after what was typed ahead is thrown away.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use agent_checkpoint::Changes;
use agent_goal::Goal;
use agent_runner::RollbackConfirm;

/// The terminal's confirmation, when a person sits at it.
pub(crate) fn terminal() -> Option<Arc<dyn RollbackConfirm>> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    interactive.then(|| Arc::new(TerminalConfirm) as Arc<dyn RollbackConfirm>)
}

/// Asks at the terminal whether an abandoned goal's changes are rolled back.
struct TerminalConfirm;

impl RollbackConfirm for TerminalConfirm {
    #[allow(clippy::print_stderr)]
    fn confirm(&self, goal: &Goal, changes: &Changes) -> bool {
        crate::output::suspended(|| {
            crate::approve::flush_typed_ahead();
            eprint!(
                "goal {} ({}) was abandoned; roll back its file changes ({} added, {} modified, \
                 {} deleted)? [y/N] ",
                goal.id,
                crate::output::one_line(&goal.description),
                changes.added.len(),
                changes.modified.len(),
                changes.deleted.len()
            );
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            read.is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
        })
    }
}
