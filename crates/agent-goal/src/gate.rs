//! What holds a goal to its word: a check that gates `done` ([`GoalCheck`]: a shell command
//! that must exit 0, or a judge that must find the goal met), the result of its latest run
//! ([`CheckResult`]), and a goal's own budget ([`GoalBudget`]).
//!
//! This crate runs nothing: the runner runs a check when the model marks its goal done and hands
//! the passing result back with the command ([`crate::GoalCommand::verified`]), which no model can
//! set. Without it, `done` on a goal with a check is refused, and a cascade stops at such a goal
//! (it stays in progress until it is marked done itself, so its check runs).
//!
//! The JSON form is part of `goal.json` (a Contract, extended here): `"check": {"command":
//! "python3 -m unittest -q", "set_by": "person"}` or `{"judge": "…", "set_by": "model"}`,
//! `"check_result": {"passed", "exit_code", "output", "duration_ms", "checked_at"}`, `"budget":
//! {"iterations", "tokens", "seconds"}`. Every field is optional on a goal, so trees written
//! before they existed read unchanged.

use serde::{Deserialize, Serialize};

/// How a check decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A shell command run in the run's sandbox: the goal is met when it exits 0.
    Command(String),
    /// What a judge (one model call reading the goal, its summary and the evidence the model
    /// cites) must find for the goal to be met; empty means the goal's description.
    Judge(String),
}

/// Who set a check, which decides whether running it needs an approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckAuthor {
    /// The model, through the goal tool: its command runs only as a `bash` call of the model
    /// would (the same approval rules and policy). The default, so a check of unknown origin
    /// is never trusted.
    #[default]
    Model,
    /// A person: the API, the viewer, `/goal`, a plan text or a template. Its command runs
    /// without asking, in the same sandbox.
    Person,
}

/// A check that gates `done` on a goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalCheck {
    /// A command or a judge.
    #[serde(flatten)]
    pub kind: CheckKind,
    /// How long the command may run, in seconds; the run's tool timeout when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Who set it.
    #[serde(default)]
    pub set_by: CheckAuthor,
}

impl GoalCheck {
    /// A command check set by `author`.
    pub fn command(command: impl Into<String>, author: CheckAuthor) -> Self {
        Self {
            kind: CheckKind::Command(command.into()),
            timeout_secs: None,
            set_by: author,
        }
    }

    /// A judge check set by `author`: `criteria` is what the judge must find (empty: the goal's
    /// description).
    pub fn judge(criteria: impl Into<String>, author: CheckAuthor) -> Self {
        Self {
            kind: CheckKind::Judge(criteria.into()),
            timeout_secs: None,
            set_by: author,
        }
    }

    /// The check in a few words, e.g. `` `python3 -m unittest -q` `` or `a judge (<criteria>)`.
    pub fn describe(&self) -> String {
        match &self.kind {
            CheckKind::Command(command) => format!("`{}`", one_line(command)),
            CheckKind::Judge(criteria) if criteria.trim().is_empty() => "a judge".to_owned(),
            CheckKind::Judge(criteria) => format!("a judge ({})", one_line(criteria)),
        }
    }
}

/// The result of one run of a goal's check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Whether the goal was found met: the command exited 0, or the judge said met.
    pub passed: bool,
    /// The command's exit code; absent for a judge, or a command killed by a signal or its
    /// timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The tail of the command's output, or the judge's reason.
    #[serde(default)]
    pub output: String,
    /// How long the check took, in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
    /// When it finished (RFC 3339).
    #[serde(default)]
    pub checked_at: String,
}

/// A passing check handed to [`crate::GoalTree::apply`] with the command that completes its
/// goal: the runner's word that the check of `goal_id` ran and passed just now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The goal whose check passed.
    pub goal_id: String,
    /// The check's result, recorded on the goal.
    pub result: CheckResult,
}

/// A goal's own budget: what it may spend (its sub-goals' spending included) before the model
/// is told to finish or abandon it, and then before it is abandoned. Unset parts are unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalBudget {
    /// Model calls made while it (or a sub-goal) was current.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// Tokens of its messages and its sub-goals'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Seconds its model calls and tool calls took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
}

impl GoalBudget {
    /// True when no part is set (or every part is 0), which limits nothing.
    pub fn is_empty(&self) -> bool {
        self.iterations.unwrap_or(0) == 0
            && self.tokens.unwrap_or(0) == 0
            && self.seconds.unwrap_or(0) == 0
    }

    /// The budget as stored on a goal: parts of 0 (which limit nothing) left unset, and `None`
    /// when no part is left, so a stored budget never carries a 0.
    pub fn stored(self) -> Option<Self> {
        let set = |n: Option<u64>| n.filter(|n| *n > 0);
        let budget = Self {
            iterations: self.iterations.filter(|n| *n > 0),
            tokens: set(self.tokens),
            seconds: set(self.seconds),
        };
        (!budget.is_empty()).then_some(budget)
    }

    /// The budget in words, e.g. `10 model calls, 50000 tokens, 600 s`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.iterations.filter(|n| *n > 0) {
            parts.push(format!("{n} model calls"));
        }
        if let Some(n) = self.tokens.filter(|n| *n > 0) {
            parts.push(format!("{n} tokens"));
        }
        if let Some(n) = self.seconds.filter(|n| *n > 0) {
            parts.push(format!("{n} s"));
        }
        parts.join(", ")
    }

    /// The plan text form: `iterations 10, tokens 50000, seconds 600` (set parts only).
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.iterations.filter(|n| *n > 0) {
            parts.push(format!("iterations {n}"));
        }
        if let Some(n) = self.tokens.filter(|n| *n > 0) {
            parts.push(format!("tokens {n}"));
        }
        if let Some(n) = self.seconds.filter(|n| *n > 0) {
            parts.push(format!("seconds {n}"));
        }
        parts.join(", ")
    }

    /// Reads the plan text form (`iterations 10, tokens 50000, seconds 600`, in any order,
    /// `=` or `:` allowed between name and number); `None` when it is not one.
    pub fn parse_text(text: &str) -> Option<Self> {
        let mut budget = Self::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let part = part.replace(['=', ':'], " ");
            let mut words = part.split_whitespace();
            let (name, value) = (words.next()?, words.next()?);
            if words.next().is_some() {
                return None;
            }
            match name {
                "iterations" => budget.iterations = Some(value.parse().ok()?),
                "tokens" => budget.tokens = Some(value.parse().ok()?),
                "seconds" => budget.seconds = Some(value.parse().ok()?),
                _ => return None,
            }
        }
        (!budget.is_empty()).then_some(budget)
    }
}

/// `text` on one line, white space runs as one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
