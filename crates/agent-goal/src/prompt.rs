//! The plan as text: `to_prompt` for the end of every system prompt (a Contract format) and
//! `to_todo_string` for the `read_progress` tool.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::model::{Goal, GoalStatus, GoalTree, GoalType};
use crate::numbering::{Fold, Row};

/// One level of indentation.
const INDENT: &str = "    ";

/// The longest `→` line an exploration's merge goal gets in the plan, in characters: its
/// summary is the whole merged report, which the model already has as the tool result, and
/// the plan is sent on every call.
pub const MERGE_SUMMARY_PROMPT_CHARS: usize = 300;

impl GoalTree {
    /// The plan as appended to the system prompt (Contract: format).
    ///
    /// ```text
    /// ## Current Plan
    /// **Mission**: <mission>
    /// **Current**: 2.2 <description>
    /// **Progress**:
    /// [✓] 1. <description>
    ///     → <summary of a completed goal>
    /// [→] 2. <description>
    ///     [✓] 2.1 <description>
    ///     [→] 2.2 <description> ← current
    ///     [ ] 2.3 <description>
    /// [ ] 3. <description>
    /// ```
    ///
    /// Top-level numbers end with a dot, deeper ones do not; each level indents four spaces.
    /// Abandoned goals and everything under them are left out. A completed goal is one line
    /// with its sub-goals folded into it; a completed top-level goal is followed by its summary
    /// on a `→` line (deeper completed goals sit under a goal in progress, whose conversation
    /// already carries their summaries). With nothing focused the current line reads
    /// `**Current**: none`; with no goals the progress reads `(no goals yet)`. Exploration
    /// goals carry a note such as `(explored branches A, B)` or `(exploration merge, selected
    /// branch A)`; an open goal with a check or a budget says so, e.g. `` (check: `make test`;
    /// budget: 10 model calls)``. Line breaks inside texts are folded into spaces. The text ends
    /// with a newline.
    pub fn to_prompt(&self) -> String {
        let rows = self.outline(Fold::CompletedSubtrees);
        let mut out = String::from("## Current Plan\n");
        let _ = writeln!(out, "**Mission**: {}", one_line(&self.mission));
        let current = self.current_id.as_deref().and_then(|id| {
            let index = self.index_of(id)?;
            let number = match rows.iter().find(|row| row.index == index) {
                Some(row) => row.number.clone(),
                None => self.display_number(id)?,
            };
            Some((number, &self.goals[index]))
        });
        match current {
            Some((number, goal)) => {
                let _ = writeln!(out, "**Current**: {number} {}", one_line(&goal.description));
            }
            None => out.push_str("**Current**: none\n"),
        }
        out.push_str("**Progress**:\n");
        self.write_rows(&mut out, &rows, Summaries::TopLevel);
        out
    }

    /// The compact progress list behind the `read_progress` tool: every visible goal, sub-goals
    /// of completed goals included, one line each with its `[✓]`/`[→]`/`[ ]` marker and
    /// ` ← current` on the current goal, without summaries. Ends with a newline.
    pub fn to_todo_string(&self) -> String {
        let rows = self.outline(Fold::Nothing);
        let mut out = String::new();
        self.write_rows(&mut out, &rows, Summaries::None);
        out
    }

    fn write_rows(&self, out: &mut String, rows: &[Row], summaries: Summaries) {
        if rows.is_empty() {
            out.push_str("(no goals yet)\n");
            return;
        }
        for row in rows {
            let goal = &self.goals[row.index];
            for _ in 0..row.depth {
                out.push_str(INDENT);
            }
            let marker = match goal.status {
                GoalStatus::Completed => "[✓]",
                GoalStatus::InProgress => "[→]",
                GoalStatus::Pending | GoalStatus::Abandoned => "[ ]",
            };
            let dot = if row.depth == 0 { "." } else { "" };
            let _ = write!(
                out,
                "{marker} {}{dot} {}",
                row.number,
                one_line(&goal.description)
            );
            write_explore_note(out, goal);
            write_gate_note(out, goal);
            if self.current_id.as_deref() == Some(goal.id.as_str()) {
                out.push_str(" ← current");
            }
            out.push('\n');
            let show_summary = summaries == Summaries::TopLevel
                && row.depth == 0
                && goal.status == GoalStatus::Completed;
            if let Some(summary) = goal.summary.as_deref().filter(|_| show_summary) {
                for _ in 0..=row.depth {
                    out.push_str(INDENT);
                }
                let line = one_line(summary);
                let line = if goal.goal_type == GoalType::ExploreMerge {
                    bounded(&line, MERGE_SUMMARY_PROMPT_CHARS)
                } else {
                    line
                };
                let _ = writeln!(out, "→ {line}");
            }
        }
    }
}

/// At most `max` characters of `text`, ending with `…` when cut.
fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    if text.chars().count() <= max {
        return Cow::Borrowed(text);
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    Cow::Owned(cut)
}

/// Which completed goals get a `→ <summary>` line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Summaries {
    /// None of them.
    None,
    /// Completed top-level goals.
    TopLevel,
}

/// Appends what gates an open goal: its check and its budget, e.g. `` (check: `make test`;
/// budget: 10 model calls)``.
fn write_gate_note(out: &mut String, goal: &Goal) {
    if goal.status.is_finished() {
        return;
    }
    let mut notes = Vec::new();
    if let Some(check) = &goal.check {
        notes.push(format!("check: {}", check.describe()));
    }
    if let Some(budget) = goal.budget.filter(|budget| !budget.is_empty()) {
        notes.push(format!("budget: {}", budget.describe()));
    }
    if !notes.is_empty() {
        let _ = write!(out, " ({})", notes.join("; "));
    }
}

/// Appends the note that marks an exploration goal.
fn write_explore_note(out: &mut String, goal: &Goal) {
    match goal.goal_type {
        GoalType::Normal => {}
        GoalType::ExploreStart => {
            let verb = if goal.status == GoalStatus::Completed {
                "explored"
            } else {
                "exploring"
            };
            match goal.branch_ids.as_deref() {
                Some(branches) if !branches.is_empty() => {
                    let _ = write!(out, " ({verb} branches {})", branches.join(", "));
                }
                _ => {
                    let _ = write!(out, " ({verb})");
                }
            }
        }
        GoalType::ExploreMerge => match goal.selected_branch.as_deref() {
            Some(branch) => {
                let _ = write!(out, " (exploration merge, selected branch {branch})");
            }
            None => out.push_str(" (exploration merge)"),
        },
    }
}

/// Folds the lines of `text` into one line, so a text cannot break the plan's layout.
fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\r']) {
        return Cow::Borrowed(text.trim());
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    Cow::Owned(out)
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
