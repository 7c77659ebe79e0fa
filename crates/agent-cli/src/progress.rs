//! Live progress of a run on stderr: the current goal, iteration, tokens and cost, and one line
//! per tool call, and each turn's reasoning (a dimmed summary, or its whole text with
//! `--show-reasoning`). On a terminal a spinner shows the state while the model thinks; without one,
//! plain lines.

use std::io::IsTerminal;
use std::time::Duration;

use agent_execution::{EventKind, EventStream, Message, Role};
use agent_goal::GoalTree;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::{one_line, truncate};

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

/// Whether progress is shown, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    /// A spinner on a terminal, plain lines otherwise.
    Auto,
    /// Nothing.
    Off,
}

/// Follows a run's events until its `trace_completed` and shows them.
pub(crate) async fn follow(mut events: EventStream, mode: ProgressMode, show_reasoning: bool) {
    let sink = match mode {
        ProgressMode::Off => Sink::Quiet,
        ProgressMode::Auto if std::io::stderr().is_terminal() => {
            let bar = ProgressBar::new_spinner();
            let style = ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            Sink::Spinner(bar)
        }
        ProgressMode::Auto => Sink::Lines,
    };
    let mut state = State {
        show_reasoning,
        color: matches!(sink, Sink::Spinner(_)) && crate::reasoning::color(true),
        ..State::default()
    };
    while let Some(item) = events.next().await {
        let Ok(event) = item else { break };
        let done = matches!(event.kind, EventKind::TraceCompleted { .. });
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
        bar.finish_and_clear();
    }
}

/// What progress knows about the run.
#[derive(Default)]
struct State {
    tree: Option<GoalTree>,
    current: Option<String>,
    iterations: u64,
    tokens: u64,
    cost: f64,
    /// Whether reasoning is printed in full rather than summarised.
    show_reasoning: bool,
    /// Whether reasoning may be dimmed.
    color: bool,
}

impl State {
    /// Applies one event; returns the lines to print.
    fn apply(&mut self, kind: &EventKind) -> Vec<String> {
        let mut lines = Vec::new();
        match kind {
            EventKind::TraceCreated { goal_tree, .. }
            | EventKind::GoalTreeUpdated { goal_tree } => {
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
                if message.content.is_error() {
                    let text = message.content.text();
                    vec![format!("    ✗ {}", truncate(&one_line(text), 120))]
                } else {
                    Vec::new()
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

/// A status as its JSON word (`completed`, `failed`, ...).
pub(crate) fn status_word(status: agent_execution::TraceStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{status:?}").to_lowercase())
}
