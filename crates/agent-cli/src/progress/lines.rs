//! The progress lines of a run, from its stored events: `▶ goal 2 …` when a goal starts, `✓` or
//! `✗` when one ends (children before their parent), a line per tool call and its result, the
//! changes of file edits when nobody approved them, reasoning, sub-traces and loop warnings;
//! and the status the spinner shows.
//!
//! Goal numbers are the plan's display numbers, which renumber the goals after one that is
//! abandoned: a goal keeps in its lines the number it was first shown with, and when an
//! abandonment renumbers goals already shown, one line says which number each now has, so that
//! the last number printed for a goal is the one `agent fork --goal` takes.

use std::collections::{HashMap, HashSet};

use agent_execution::meta::MessageMeta;
use agent_execution::{EventKind, Message, NoticeKind, Role};
use agent_goal::{GoalStatus, GoalTree};

use crate::output::{clean, one_line, truncate};

/// `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// At most this many lines of an edit's change are shown.
const EDIT_LINES: usize = 6;

/// What progress knows about the run.
#[derive(Default)]
pub(super) struct State {
    tree: Option<GoalTree>,
    current: Option<String>,
    /// The number each goal was shown with.
    numbers: HashMap<String, String>,
    iterations: u64,
    tokens: u64,
    cost: f64,
    /// Whether reasoning is printed in full rather than summarised.
    show_reasoning: bool,
    /// Whether file edits are shown with their change.
    show_edits: bool,
    /// Whether marks may be coloured.
    color: bool,
    /// The ids of `goal` calls, whose results the goal lines already say.
    goal_calls: HashSet<String>,
    /// The tool calls of the last turn still waiting for their result, by id: the first one
    /// is shown in the status.
    running: Vec<(String, String)>,
}

impl State {
    pub(super) fn new(show_reasoning: bool, show_edits: bool) -> Self {
        Self {
            show_reasoning,
            show_edits,
            color: crate::output::color(true),
            ..Self::default()
        }
    }

    /// Applies one event; returns the lines to print.
    pub(super) fn apply(&mut self, kind: &EventKind) -> Vec<String> {
        let mut lines = Vec::new();
        match kind {
            EventKind::TraceCreated { goal_tree, .. }
            | EventKind::GoalTreeUpdated { goal_tree } => {
                if let Some(before) = self.tree.take() {
                    lines.extend(self.finished_goals(&before, goal_tree));
                    lines.extend(self.renumbered(goal_tree));
                }
                self.tree = Some(goal_tree.clone());
                let current = goal_tree.current().map(|g| g.id.clone());
                if current != self.current {
                    self.current = current;
                    if let Some(goal) = self.current_label() {
                        lines.push(format!("▶ goal {goal}"));
                    }
                }
            }
            EventKind::MessageAdded { message, .. } => lines.extend(self.message(message)),
            EventKind::SubTraceStarted {
                agent_type, task, ..
            } => {
                lines.push(format!(
                    "  ⇉ {agent_type}: {}",
                    truncate(&one_line(task), 100)
                ));
            }
            EventKind::SubTraceCompleted {
                status, trace_id, ..
            } => {
                let short = trace_id.rsplit('@').next().unwrap_or(trace_id);
                lines.push(format!("  ⇇ {short}: {}", super::status_word(*status)));
            }
            EventKind::LoopDetected {
                pattern, detail, ..
            } => {
                lines.push(format!(
                    "  ⚠ loop ({}): {}",
                    pattern.name(),
                    truncate(&one_line(detail), 120)
                ));
            }
            EventKind::Notice { kind, message, .. } => {
                let mark = if *kind == NoticeKind::ContextWindow {
                    "ⓘ"
                } else {
                    "⚠"
                };
                lines.push(format!("  {mark} {}", one_line(message)));
            }
            EventKind::CompactionFailed { reason } => {
                lines.push(format!("  ⚠ compaction failed: {}", one_line(reason)));
            }
            EventKind::GoalChecked { check, result, .. } => {
                let (mark, verdict) = match result.passed {
                    true => ("✓", "passed"),
                    false => ("✗", "failed"),
                };
                let code = result
                    .exit_code
                    .map(|code| format!(" (exit code {code})"))
                    .unwrap_or_default();
                lines.push(format!(
                    "  {mark} check {verdict}: {}{code}",
                    truncate(&check.describe(), 100)
                ));
            }
            EventKind::TraceCompleted { .. } => self.running.clear(),
            _ => {}
        }
        lines
    }

    fn message(&mut self, message: &Message) -> Vec<String> {
        self.tokens += message.tokens.unwrap_or(0);
        self.cost += message.cost.unwrap_or(0.0);
        let meta = MessageMeta::of(message);
        if meta.compaction {
            let figure = |tokens: Option<u64>| tokens.map_or("?".to_owned(), thousands);
            return vec![format!(
                "  ⟲ compacted the conversation: {} → {} tokens (the trace keeps every message)",
                figure(meta.tokens_before),
                figure(meta.tokens_after)
            )];
        }
        match message.role {
            Role::Assistant => {
                self.iterations += 1;
                let reasoning = message
                    .content
                    .as_assistant()
                    .and_then(|turn| {
                        crate::reasoning::shown(&turn.reasoning_text(), self.show_reasoning)
                    })
                    .map(|shown| crate::reasoning::dim(&format!("  {shown}"), self.color));
                let mut lines: Vec<String> = reasoning.into_iter().collect();
                self.running.clear();
                for call in message.content.tool_calls() {
                    if call.name == "goal" {
                        self.goal_calls.insert(call.id.clone());
                        continue;
                    }
                    let args = truncate(&one_line(&call.arguments), 100);
                    lines.push(format!("  · {} {args}", call.name));
                    if self.show_edits {
                        lines.extend(edit_lines(&call.name, &call.arguments, self.color));
                    }
                    self.running
                        .push((call.id.clone(), format!("{} {args}", call.name)));
                }
                lines
            }
            Role::Tool => {
                if let Some(id) = &message.tool_call_id {
                    self.running.retain(|(call, _)| call != id);
                }
                let text = message.content.text();
                let goal = message
                    .tool_call_id
                    .as_ref()
                    .is_some_and(|id| self.goal_calls.contains(id));
                if goal && !message.content.is_error() {
                    Vec::new()
                } else if message.content.is_error() {
                    vec![format!("    ✗ {}", truncate(&one_line(text), 120))]
                } else {
                    let mut lines: Vec<String> = result_summary(text).into_iter().collect();
                    lines.extend(placeholders(message));
                    lines
                }
            }
            // The runner's own words to the model: open goals it sent it back to, a goal's
            // spent budget, a background delegate's end.
            Role::User => {
                let meta = agent_execution::meta::MessageMeta::of(message);
                let background = meta.turn == Some(agent_execution::meta::Turn::Background);
                if meta.goals_pending.is_some() || meta.goal_budget.is_some() || background {
                    let first = message.content.text().lines().next().unwrap_or_default();
                    vec![format!("  ↻ {}", truncate(&one_line(first), 120))]
                } else {
                    placeholders(message)
                }
            }
            _ => Vec::new(),
        }
    }

    /// The number of goal `id` in the lines: the one it was first shown with, else its display
    /// number now (recorded as shown).
    fn number(&mut self, tree: &GoalTree, id: &str) -> String {
        if let Some(number) = self.numbers.get(id) {
            return number.clone();
        }
        let number = tree.display_number(id).unwrap_or_else(|| "-".to_owned());
        self.numbers.insert(id.to_owned(), number.clone());
        number
    }

    fn current_label(&mut self) -> Option<String> {
        let tree = self.tree.clone()?;
        let goal = tree.current()?;
        let number = self.number(&tree, &goal.id);
        Some(format!("{number} {}", one_line(&goal.description)))
    }

    /// One line per goal that `after` finished and `before` had open, children before their
    /// parent: `✓ 1 Read the code — <its summary>` or `✗ 2 Try the cache — abandoned: <why>`.
    fn finished_goals(&mut self, before: &GoalTree, after: &GoalTree) -> Vec<String> {
        let mut finished: Vec<&agent_goal::Goal> = after
            .goals()
            .iter()
            .filter(|goal| goal.status.is_finished())
            .filter(|goal| {
                before
                    .get(&goal.id)
                    .is_none_or(|was| !was.status.is_finished())
            })
            .collect();
        // A cascade completes the parent with its last child: the deepest goal first.
        finished.sort_by_key(|goal| std::cmp::Reverse(after.ancestors(&goal.id).len()));
        finished
            .into_iter()
            .map(|goal| {
                // An abandoned goal has no display number left: the one it had.
                let number = match self.numbers.get(&goal.id) {
                    Some(number) => number.clone(),
                    None => {
                        let had = before.display_number(&goal.id);
                        let number = had.or_else(|| after.display_number(&goal.id));
                        let number = number.unwrap_or_else(|| "-".to_owned());
                        self.numbers.insert(goal.id.clone(), number.clone());
                        number
                    }
                };
                let summary = goal.summary.as_deref().map(one_line).unwrap_or_default();
                let (mark, said) = match goal.status {
                    GoalStatus::Abandoned => ("✗", format!("abandoned: {summary}")),
                    _ => ("✓", summary),
                };
                let mark = match (self.color, goal.status) {
                    (false, _) => mark.to_owned(),
                    (true, GoalStatus::Abandoned) => format!("\x1b[31m{mark}\x1b[0m"),
                    (true, _) => format!("\x1b[32m{mark}\x1b[0m"),
                };
                let line = format!("{mark} {number} {}", one_line(&goal.description));
                if said.is_empty() {
                    line
                } else {
                    format!("{line} — {}", truncate(&said, 160))
                }
            })
            .collect()
    }

    /// When goals already shown have another display number in `after` (a goal before them was
    /// abandoned), one line saying which, and their new numbers are the ones shown from then on.
    fn renumbered(&mut self, after: &GoalTree) -> Vec<String> {
        let mut moved = Vec::new();
        for (number, goal) in after.numbered() {
            if let Some(shown) = self.numbers.get_mut(&goal.id)
                && *shown != number
            {
                moved.push(format!("{shown} → {number}"));
                *shown = number;
            }
        }
        if moved.is_empty() {
            return Vec::new();
        }
        vec![format!("  goals renumbered: {}", moved.join(", "))]
    }

    /// What the spinner says: the command running, or the goal being worked on, with the
    /// totals so far.
    pub(super) fn status_line(&self) -> String {
        let doing = match self.running.first() {
            Some((_, call)) => format!("running {}", truncate(call, 60)),
            None => match self.current_goal_text() {
                Some(goal) => truncate(&goal, 60),
                None => "thinking".to_owned(),
            },
        };
        format!(
            "step {} · {doing} · {} tokens · ${:.4}",
            self.iterations, self.tokens, self.cost
        )
    }

    fn current_goal_text(&self) -> Option<String> {
        let tree = self.tree.as_ref()?;
        let goal = tree.current()?;
        let number = self
            .numbers
            .get(&goal.id)
            .cloned()
            .or_else(|| tree.display_number(&goal.id))
            .unwrap_or_default();
        Some(format!("{number} {}", one_line(&goal.description)))
    }
}

/// The change an edit makes, as at most [`EDIT_LINES`] lines of `-` and `+` (removals red and
/// additions green when `color`), and how many more there are; nothing for other tools.
pub(super) fn edit_lines(tool: &str, arguments: &str, color: bool) -> Vec<String> {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let text = |key: &str| args.get(key).and_then(|v| v.as_str()).map(clean);
    let (old, new) = match tool {
        "edit_file" => match (text("old"), text("new")) {
            (Some(old), Some(new)) => (old, new),
            _ => return Vec::new(),
        },
        "write_file" => match text("content") {
            Some(content) => (String::new(), content),
            None => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let diff = similar::TextDiff::from_lines(&old, &new);
    let changed: Vec<String> = diff
        .iter_all_changes()
        .filter_map(|change| {
            let (sign, code) = match change.tag() {
                similar::ChangeTag::Delete => ('-', "31"),
                similar::ChangeTag::Insert => ('+', "32"),
                similar::ChangeTag::Equal => return None,
            };
            let line = truncate(change.value().trim_end_matches('\n'), 100);
            Some(if color {
                format!("    \x1b[{code}m{sign} {line}\x1b[0m")
            } else {
                format!("    {sign} {line}")
            })
        })
        .collect();
    let more = changed.len().saturating_sub(EDIT_LINES);
    let mut lines: Vec<String> = changed.into_iter().take(EDIT_LINES).collect();
    if more > 0 {
        lines.push(format!("    … {more} more changed lines"));
    }
    lines
}

/// A tool result in one line: its first line that says something (the bash tool's `exit code`
/// header skipped), and how many lines follow.
fn result_summary(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("--- "))
        .collect();
    let (first, rest) = match lines.as_slice() {
        [] => return None,
        [header, first, rest @ ..] if header.starts_with("exit code: 0") => (*first, rest.len()),
        [first, rest @ ..] => (*first, rest.len()),
    };
    let more = match rest {
        0 => String::new(),
        1 => " (+1 line)".to_owned(),
        n => format!(" (+{n} lines)"),
    };
    Some(format!("    ↳ {}{more}", truncate(&one_line(first), 100)))
}

/// A line for each picture of `message`: `  [image: shot.png 120×80]`.
fn placeholders(message: &Message) -> Vec<String> {
    agent_execution::meta::images(&message.metadata)
        .iter()
        .map(|image| format!("    {}", image.placeholder()))
        .collect()
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
