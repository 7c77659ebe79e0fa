//! The conversation as cells, each drawn as lines for a width: what the user said, the model's
//! answer (Markdown, as it streams), its reasoning (dimmed, folded to a line unless unfolded),
//! each tool call with its state (running and for how long, done, failed), its command or the
//! change it makes, and its output folded to a few lines; notices and errors.

use std::time::{Duration, Instant};

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

    fn lines(&self, look: &Look) -> Vec<Line<'static>> {
        let (mark, state) = match self.state {
            ToolState::Running(since) => (
                Span::styled("● ", Style::new().fg(Color::Yellow)),
                format!(
                    "running {}",
                    duration_text(look.now.saturating_duration_since(since))
                ),
            ),
            ToolState::Done(ms) => (
                Span::styled("✓ ", Style::new().fg(Color::Green)),
                ms.map(|ms| duration_text(Duration::from_millis(ms)))
                    .unwrap_or_default(),
            ),
            ToolState::Failed(ms) => (
                Span::styled("✗ ", Style::new().fg(Color::Red)),
                match ms {
                    Some(ms) => format!("failed {}", duration_text(Duration::from_millis(ms))),
                    None => "failed".to_owned(),
                },
            ),
        };
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
        let failed = matches!(self.state, ToolState::Failed(_));
        let output = clean(&self.output);
        let shown: Vec<&str> = output
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.starts_with("--- "))
            .filter(|line| !line.starts_with("exit code: 0"))
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
