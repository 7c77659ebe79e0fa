//! The conversation as cells, each drawn as lines for a width: what the user said, the model's
//! answer (Markdown, as it streams), its reasoning (dimmed, folded to a line unless unfolded),
//! each tool call with its state (running and for how long, done, and how it ended when it did
//! not succeed: a command's exit code, a refusal, a timeout, a cancellation, each with its own
//! mark and colour), its command or the change it makes, and its output folded to a few lines;
//! a compaction of the context; notices and errors.

use std::time::{Duration, Instant};

use agent_execution::meta::ToolOutcome;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::wrap::{clean, truncate, wrap_text};

/// How many lines of a tool's output are shown.
pub(crate) const OUTPUT_LINES: usize = 4;
/// How many lines of an edit's change are shown.
const CHANGE_LINES: usize = 6;

/// One cell of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A user message.
    User(String),
    /// The model's answer, complete or still streaming.
    Assistant {
        /// The text so far.
        text: String,
        /// Whether more may come.
        streaming: bool,
    },
    /// The model's reasoning.
    Reasoning {
        /// The text so far.
        text: String,
        /// Whether more may come.
        streaming: bool,
    },
    /// A tool call.
    Tool(ToolCell),
    /// The context was compacted: what came before is summarised for the model.
    Compacted {
        /// How many messages of the conversation came before it.
        messages: usize,
        /// The estimate of the model's view before, in tokens.
        tokens_before: Option<u64>,
        /// The summary's own estimate, in tokens.
        tokens_after: Option<u64>,
    },
    /// Something the session says (a goal focused, a turn stopped, a command's answer).
    Notice(String),
    /// Something that went wrong.
    Error(String),
}

/// A tool call and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments, as the model wrote them.
    pub arguments: String,
    /// Where the call is.
    pub state: ToolState,
    /// The result's text, once there is one.
    pub output: String,
    /// How the call ended, when its result says: a command's exit code, a refusal, a timeout.
    pub outcome: Option<ToolOutcome>,
}

/// Where a tool call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Running (or waiting for approval) since then.
    Running(Instant),
    /// Done; how long it took, when recorded.
    Done(Option<u64>),
    /// Failed; how long it took, when recorded.
    Failed(Option<u64>),
}

/// How cells are drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Look {
    /// The width, in columns.
    pub(crate) columns: usize,
    /// The time the running calls' elapsed time is counted to.
    pub(crate) now: Instant,
    /// Whether reasoning is shown whole rather than folded.
    pub(crate) reasoning: bool,
}

fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

impl Cell {
    /// The cell's lines.
    pub(crate) fn lines(&self, look: &Look) -> Vec<Line<'static>> {
        let columns = look.columns;
        match self {
            Cell::User(text) => wrap_text(
                text,
                Style::new().add_modifier(Modifier::BOLD),
                columns,
                &[Span::styled("› ", Style::new().fg(Color::Cyan))],
                &[Span::raw("  ")],
            ),
            Cell::Assistant { text, streaming } => {
                let mut lines = crate::markdown::render(text, columns);
                if *streaming {
                    match lines.last_mut() {
                        Some(line) => line.spans.push(Span::styled(" ▍", dim())),
                        None => lines.push(Line::styled("▍", dim())),
                    }
                }
                lines
            }
            Cell::Reasoning { text, streaming } => reasoning(text, *streaming, look),
            Cell::Tool(tool) => tool.lines(look),
            Cell::Compacted {
                messages,
                tokens_before,
                tokens_after,
            } => compacted(*messages, *tokens_before, *tokens_after, columns),
            Cell::Notice(text) => wrap_text(text, dim(), columns, &[], &[]),
            Cell::Error(text) => wrap_text(
                text,
                Style::new().fg(Color::Red),
                columns,
                &[Span::styled(
                    "✗ error: ",
                    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                )],
                &[Span::raw("  ")],
            ),
        }
    }
}

fn reasoning(text: &str, streaming: bool, look: &Look) -> Vec<Line<'static>> {
    let style = dim().add_modifier(Modifier::ITALIC);
    if look.reasoning {
        return wrap_text(
            text.trim(),
            style,
            look.columns,
            &[Span::styled("thinking: ", style)],
            &[Span::raw("  ")],
        );
    }
    let words = text.split_whitespace().count();
    let unit = if words == 1 { "word" } else { "words" };
    let state = if streaming { "thinking…" } else { "thought" };
    vec![Line::styled(
        format!("{state} ({words} {unit}) · Ctrl-T unfolds"),
        style,
    )]
}

/// `n` tokens as `950`, `12.3k` or `1.2M`.
pub(crate) fn tokens_text(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// The notice of a compaction: what was summarised, and the tokens before and after.
fn compacted(
    messages: usize,
    before: Option<u64>,
    after: Option<u64>,
    columns: usize,
) -> Vec<Line<'static>> {
    let what = match messages {
        1 => "the message before this point was summarised".to_owned(),
        n => format!("the {n} messages before this point were summarised"),
    };
    let tokens = match (before, after) {
        (Some(before), Some(after)) => {
            format!(" · {} → {} tokens", tokens_text(before), tokens_text(after))
        }
        _ => String::new(),
    };
    let style = Style::new().fg(Color::Cyan);
    wrap_text(
        &format!("context compacted: {what}{tokens}; the model goes on from the summary"),
        style,
        columns,
        &[Span::styled("⟲ ", style.add_modifier(Modifier::BOLD))],
        &[Span::raw("  ")],
    )
}

/// A duration as `12ms`, `2.4s`, `12s` or `2m05s`.
pub(crate) fn duration_text(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs == 0 && !elapsed.is_zero() && elapsed.as_millis() < 1000 {
        format!("{}ms", elapsed.as_millis())
    } else if secs < 10 {
        format!("{:.1}s", elapsed.as_secs_f64())
    } else if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

impl ToolCell {
    fn args(&self) -> Value {
        serde_json::from_str(&self.arguments).unwrap_or(Value::Null)
    }

    /// What the call does, in one line: the command, the path, the pattern.
    fn summary(&self) -> String {
        let args = self.args();
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(clean);
        let picked = match self.name.as_str() {
            "bash" => text("command"),
            "read_file" | "write_file" | "edit_file" => text("path"),
            "glob_files" => text("pattern"),
            "grep" => text("pattern").map(|p| match text("path") {
                Some(path) => format!("{p} in {path}"),
                None => p,
            }),
            "delegate" => text("task"),
            _ => None,
        };
        picked.unwrap_or_else(|| match &args {
            Value::Null => clean(&self.arguments),
            args => clean(&args.to_string()),
        })
    }

    /// The call in a few words, for the title of its output's view: `bash · cargo test`.
    pub(crate) fn title(&self) -> String {
        truncate(
            &format!("{} · {}", self.name, self.summary().replace('\n', " ⏎ ")),
            80,
        )
    }

    /// The lines of the change a `write_file` or `edit_file` makes.
    fn change(&self) -> Vec<Line<'static>> {
        let args = self.args();
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(clean);
        let (old, new) = match self.name.as_str() {
            "edit_file" => (
                text("old").unwrap_or_default(),
                text("new").unwrap_or_default(),
            ),
            "write_file" => (String::new(), text("content").unwrap_or_default()),
            _ => return Vec::new(),
        };
        let red = Style::new().fg(Color::Red);
        let green = Style::new().fg(Color::Green);
        let mut changed: Vec<(String, Style)> = old
            .lines()
            .map(|line| (format!("-{line}"), red))
            .chain(new.lines().map(|line| (format!("+{line}"), green)))
            .collect();
        let more = changed.len().saturating_sub(CHANGE_LINES);
        changed.truncate(CHANGE_LINES);
        let mut lines: Vec<Line<'static>> = changed
            .into_iter()
            .map(|(text, style)| Line::from(vec![Span::raw("    "), Span::styled(text, style)]))
            .collect();
        if more > 0 {
            lines.push(Line::styled(format!("    … +{more} lines"), dim()));
        }
        lines
    }

    /// Whether the call did not do what was asked: it failed, or ended other than with a
    /// command's exit code 0.
    pub(crate) fn failed(&self) -> bool {
        match (self.state, self.outcome) {
            (ToolState::Running(_), _) => false,
            (_, Some(outcome)) => !outcome.succeeded(),
            (state, None) => matches!(state, ToolState::Failed(_)),
        }
    }

    /// The mark before the call, in its colour, and what is said of its state.
    fn mark(&self, look: &Look) -> (Span<'static>, String) {
        // What is said, then how long it took when recorded (`exit 1 · 2.4s`, `failed 2.4s`).
        let took = |ms: Option<u64>, what: &str| {
            let time = ms.map(|ms| duration_text(Duration::from_millis(ms)));
            match time {
                Some(time) => format!("{what} {time}").trim_start().to_owned(),
                None => what.trim_end_matches(" ·").to_owned(),
            }
        };
        let mark =
            |symbol: &str, color: Color| Span::styled(format!("{symbol} "), Style::new().fg(color));
        let ms = match self.state {
            ToolState::Running(since) => {
                let running = look.now.saturating_duration_since(since);
                return (
                    mark("●", Color::Yellow),
                    format!("running {}", duration_text(running)),
                );
            }
            ToolState::Done(ms) | ToolState::Failed(ms) => ms,
        };
        match self.outcome {
            Some(ToolOutcome::Exited { code }) if code != 0 => {
                (mark("✗", Color::Red), took(ms, &format!("exit {code} ·")))
            }
            Some(ToolOutcome::Killed { signal }) => (
                mark("✗", Color::Red),
                took(ms, &format!("killed by signal {signal} ·")),
            ),
            Some(ToolOutcome::Refused) => (mark("⊘", Color::Magenta), "refused".to_owned()),
            Some(ToolOutcome::TimedOut) => (mark("◷", Color::Yellow), took(ms, "timed out ·")),
            Some(ToolOutcome::Cancelled) => (mark("■", Color::DarkGray), "stopped".to_owned()),
            _ if matches!(self.state, ToolState::Failed(_)) => {
                (mark("✗", Color::Red), took(ms, "failed"))
            }
            _ => (mark("✓", Color::Green), took(ms, "")),
        }
    }

    fn lines(&self, look: &Look) -> Vec<Line<'static>> {
        let (mark, state) = self.mark(look);
        let name = Span::styled(
            format!("{} ", self.name),
            Style::new().add_modifier(Modifier::BOLD),
        );
        let state_width = crate::wrap::width(&state) + 2;
        let room = look
            .columns
            .saturating_sub(2 + crate::wrap::width(&name.content) + state_width);
        let summary = truncate(&self.summary().replace('\n', " ⏎ "), room.max(4));
        let mut header = vec![mark, name, Span::raw(summary)];
        if !state.is_empty() {
            header.push(Span::styled(format!("  {state}"), dim()));
        }
        let mut lines = vec![Line::from(header)];
        lines.extend(self.change());
        lines.extend(self.output_lines(look.columns));
        lines
    }

    /// The output, folded: its first lines that say something, and how many more there are.
    fn output_lines(&self, columns: usize) -> Vec<Line<'static>> {
        let failed = self.failed();
        let output = clean(&self.output);
        // The header says a command's exit status when the result did.
        let exited = matches!(self.outcome, Some(ToolOutcome::Exited { .. }));
        let shown: Vec<&str> = output
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.starts_with("--- "))
            .filter(|line| !line.starts_with("exit code: 0"))
            .filter(|line| !(exited && line.starts_with("exit code: ")))
            .collect();
        let style = if failed {
            Style::new().fg(Color::Red)
        } else {
            dim()
        };
        let mut lines: Vec<Line<'static>> = shown
            .iter()
            .take(OUTPUT_LINES)
            .enumerate()
            .map(|(i, line)| {
                let lead = if i == 0 { "  └ " } else { "    " };
                Line::from(vec![
                    Span::styled(lead, dim()),
                    Span::styled(truncate(line, columns.saturating_sub(4).max(4)), style),
                ])
            })
            .collect();
        if shown.len() > OUTPUT_LINES {
            lines.push(Line::styled(
                format!("    … +{} lines", shown.len() - OUTPUT_LINES),
                dim(),
            ));
        }
        lines
    }
}
/// A status as its JSON word (`completed`, `failed`, ...).
pub(crate) fn status_word(status: agent_execution::TraceStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{status:?}").to_lowercase())
}
