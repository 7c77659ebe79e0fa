//! Live progress of a run on stderr: the current goal, iteration, tokens and cost, the model's
//! text as it streams, one line per tool call, and each turn's reasoning (a dimmed summary, or its
//! whole text with `--show-reasoning`). On a terminal a spinner shows the state while the model
//! thinks and the line of text being written; without one, plain lines, each printed once it is
//! complete. With `--output-format stream-json` every event and text delta goes to stdout instead,
//! one JSON object per line.

use std::io::IsTerminal;
use std::time::Duration;

use agent_execution::{DeltaKind, EventKind, LiveDelta, LiveEvent, LiveStream, Message, Role};
use agent_goal::{GoalStatus, GoalTree};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::{clean, one_line, print, truncate};

/// Where progress goes.
enum Sink {
    Spinner(ProgressBar),
    Lines,
    Quiet,
}

impl Sink {
    fn line(&self, text: &str) {
        match self {
            Sink::Spinner(bar) => bar.println(text),
            Sink::Lines => eprintln_safe(text),
            Sink::Quiet => {}
        }
    }
}

#[allow(clippy::print_stderr)]
fn eprintln_safe(text: &str) {
    eprintln!("{text}");
}

/// The terminal mode of standard input before the spinner turned off the echo of control keys,
/// to put back when the spinner ends (or the process exits on Ctrl-C).
static SAVED_MODE: std::sync::Mutex<Option<nix::sys::termios::Termios>> =
    std::sync::Mutex::new(None);

/// Stops the terminal from echoing `^C` while the spinner is drawn: the spinner keeps the
/// cursor at the end of a full line, so an echo would wrap under it and leave the spinner's
/// line behind when it is cleared. Ctrl-C still interrupts. Nothing happens off a terminal.
fn quiet_control_keys() {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return;
    }
    let Ok(mode) = nix::sys::termios::tcgetattr(&stdin) else {
        return;
    };
    let mut quiet = mode.clone();
    quiet
        .local_flags
        .remove(nix::sys::termios::LocalFlags::ECHOCTL);
    if nix::sys::termios::tcsetattr(&stdin, nix::sys::termios::SetArg::TCSANOW, &quiet).is_ok()
        && let Ok(mut saved) = SAVED_MODE.lock()
    {
        *saved = Some(mode);
    }
}

/// Puts back the terminal mode [`quiet_control_keys`] changed, if it did.
pub(crate) fn restore_terminal() {
    let saved = SAVED_MODE.lock().ok().and_then(|mut saved| saved.take());
    if let Some(mode) = saved {
        let _ = nix::sys::termios::tcsetattr(
            std::io::stdin(),
            nix::sys::termios::SetArg::TCSANOW,
            &mode,
        );
    }
}

/// Whether progress is shown, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    /// A spinner on a terminal, plain lines otherwise.
    Auto,
    /// Nothing.
    Off,
    /// Every event and text delta on stdout, one JSON object per line.
    StreamJson,
}

/// Follows a run's events until its `trace_completed` and shows them.
pub(crate) async fn follow(mut events: LiveStream, mode: ProgressMode, show_reasoning: bool) {
    let sink = match mode {
        ProgressMode::Off => Sink::Quiet,
        ProgressMode::StreamJson => return stream_json(events).await,
        ProgressMode::Auto if std::io::stderr().is_terminal() => {
            let bar = ProgressBar::new_spinner();
            let style = ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            crate::output::show_spinner(Some(bar.clone()));
            quiet_control_keys();
            Sink::Spinner(bar)
        }
        ProgressMode::Auto => Sink::Lines,
    };
    let mut state = State {
        show_reasoning,
        color: crate::output::color(true),
        ..State::default()
    };
    while let Some(item) = events.next().await {
        let Ok(item) = item else { break };
        let event = match item {
            LiveEvent::Delta(delta) => {
                for line in state.typing.push(&delta) {
                    sink.line(&line);
                }
                if let Sink::Spinner(bar) = &sink {
                    bar.set_message(state.status_line());
                }
                continue;
            }
            LiveEvent::Stored(event) => event,
        };
        let done = matches!(event.kind, EventKind::TraceCompleted { .. });
        if matches!(&event.kind, EventKind::MessageAdded { message, .. } if message.role == Role::Assistant)
            && let Some(rest) = state.typing.finish()
        {
            sink.line(&rest);
        }
        for line in state.apply(&event.kind) {
            sink.line(&line);
        }
        if let Sink::Spinner(bar) = &sink {
            bar.set_message(state.status_line());
        }
        if done {
            break;
        }
    }
    if let Sink::Spinner(bar) = &sink {
        crate::output::show_spinner(None);
        bar.finish_and_clear();
        restore_terminal();
    }
}

/// Prints every event and delta of the run on stdout, one JSON object per line, until its
/// `trace_completed`. A delta is `{"event": "text_delta" | "reasoning_delta", "trace_id",
/// "goal_id", "delta"}`, as the API's watch sends it.
async fn stream_json(mut events: LiveStream) {
    while let Some(item) = events.next().await {
        let Ok(item) = item else { break };
        let (value, done) = match &item {
            LiveEvent::Delta(delta) => (delta_json(delta), false),
            LiveEvent::Stored(event) => (
                serde_json::to_value(event).unwrap_or_default(),
                matches!(event.kind, EventKind::TraceCompleted { .. }),
            ),
        };
        print(&value.to_string());
        if done {
            break;
        }
    }
}

/// A delta as one JSON object.
fn delta_json(delta: &LiveDelta) -> serde_json::Value {
    let event = match delta.kind {
        DeltaKind::Text => "text_delta",
        DeltaKind::Reasoning => "reasoning_delta",
    };
    serde_json::json!({
        "event": event,
        "trace_id": delta.trace_id,
        "goal_id": delta.goal_id,
        "delta": delta.delta,
    })
}

/// The text the model is writing: complete lines are printed as they end, the line being
/// written is shown on the spinner.
#[derive(Default)]
struct Typing {
    line: String,
}

impl Typing {
    /// Takes a delta; returns the lines it completed. Reasoning is shown with its message.
    fn push(&mut self, delta: &LiveDelta) -> Vec<String> {
        if delta.kind != DeltaKind::Text {
            return Vec::new();
        }
        self.line.push_str(&delta.delta);
        let mut lines = Vec::new();
        while let Some(end) = self.line.find('\n') {
            let rest = self.line.split_off(end + 1);
            let line = std::mem::replace(&mut self.line, rest);
            lines.push(clean(line.trim_end()));
        }
        lines
    }

    /// The unfinished line when the message is complete, if any.
    fn finish(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.line);
        (!line.trim().is_empty()).then(|| clean(line.trim_end()))
    }
}

/// What progress knows about the run.
#[derive(Default)]
struct State {
    /// The text of the answer being streamed.
    typing: Typing,
    tree: Option<GoalTree>,
    current: Option<String>,
    iterations: u64,
    tokens: u64,
    cost: f64,
    /// Whether reasoning is printed in full rather than summarised.
    show_reasoning: bool,
    /// Whether reasoning may be dimmed.
    color: bool,
    /// The ids of `goal` calls, whose results the goal lines already say.
    goal_calls: std::collections::HashSet<String>,
}

impl State {
    /// Applies one event; returns the lines to print.
    fn apply(&mut self, kind: &EventKind) -> Vec<String> {
        let mut lines = Vec::new();
        match kind {
            EventKind::TraceCreated { goal_tree, .. }
            | EventKind::GoalTreeUpdated { goal_tree } => {
                if let Some(before) = &self.tree {
                    lines.extend(finished_goals(before, goal_tree, self.color));
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
                lines.push(format!("  ⇇ {short}: {}", status_word(*status)));
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
            _ => {}
        }
        lines
    }

    fn message(&mut self, message: &Message) -> Vec<String> {
        self.tokens += message.tokens.unwrap_or(0);
        self.cost += message.cost.unwrap_or(0.0);
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
                for call in message.content.tool_calls() {
                    if call.name == "goal" {
                        self.goal_calls.insert(call.id.clone());
                    }
                }
                let calls = message
                    .content
                    .tool_calls()
                    .iter()
                    .filter(|call| call.name != "goal")
                    .map(|call| {
                        format!(
                            "  · {} {}",
                            call.name,
                            truncate(&one_line(&call.arguments), 100)
                        )
                    });
                reasoning.into_iter().chain(calls).collect()
            }
            Role::Tool => {
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
                    result_summary(text).into_iter().collect()
                }
            }
            _ => Vec::new(),
        }
    }

    fn current_label(&self) -> Option<String> {
        let tree = self.tree.as_ref()?;
        let goal = tree.current()?;
        let number = tree.display_number(&goal.id).unwrap_or_default();
        Some(format!("{number} {}", one_line(&goal.description)))
    }

    fn status_line(&self) -> String {
        if !self.typing.line.trim().is_empty() {
            let tail: String = one_line(&self.typing.line);
            let skip = tail.chars().count().saturating_sub(100);
            return format!("✎ {}", tail.chars().skip(skip).collect::<String>());
        }
        let goal = self.current_label().unwrap_or_else(|| "planning".into());
        format!(
            "step {} · {} · {} tokens · ${:.4}",
            self.iterations,
            truncate(&goal, 60),
            self.tokens,
            self.cost
        )
    }
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

/// One line per goal that `after` finished and `before` had open: `✓ 1 Read the code — <its
/// summary>` or `✗ 2 Try the cache — abandoned: <why>`.
fn finished_goals(before: &GoalTree, after: &GoalTree, color: bool) -> Vec<String> {
    after
        .goals()
        .iter()
        .filter(|goal| goal.status.is_finished())
        .filter(|goal| {
            before
                .get(&goal.id)
                .is_none_or(|was| !was.status.is_finished())
        })
        .map(|goal| {
            let number = after.display_number(&goal.id).unwrap_or_default();
            let summary = goal.summary.as_deref().map(one_line).unwrap_or_default();
            let (mark, said) = match goal.status {
                GoalStatus::Abandoned => ("✗", format!("abandoned: {summary}")),
                _ => ("✓", summary),
            };
            let mark = match (color, goal.status) {
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

/// A status as its JSON word (`completed`, `failed`, ...).
pub(crate) fn status_word(status: agent_execution::TraceStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{status:?}").to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_result_is_one_line_with_a_count_of_the_rest() {
        assert_eq!(
            result_summary("wrote 5 bytes to a.txt (created)").as_deref(),
            Some("    ↳ wrote 5 bytes to a.txt (created)")
        );
        assert_eq!(
            result_summary("exit code: 0\n--- stdout ---\nhello\nworld\n\u{1b}[31mred\n")
                .as_deref(),
            Some("    ↳ hello (+2 lines)")
        );
        assert_eq!(
            result_summary("exit code: 2\n--- stderr ---\nno such file\n").as_deref(),
            Some("    ↳ exit code: 2 (+1 line)")
        );
        assert_eq!(result_summary("  \n"), None);
    }
}
