//! The model's Markdown as a terminal shows it, rendered while it streams.
//!
//! The layout is `agent_tui::markdown`'s, the one the full-screen UI draws too (headings,
//! emphasis, lists, quotes, rules, inline code, links, code blocks and aligned tables, words
//! wrapped to the terminal's width); this module commits it to the scrollback as the text
//! streams and paints it as ANSI text (`paint.rs`). Each line is committed as soon as it ends,
//! its indent kept; a fenced code block streams line by line in its own colour, under the name
//! of its language; a table is held until its last row, then laid out whole. Only the unfinished
//! line (or the open table) is held back, and what is written depends on the text alone, never
//! on how it was cut into pieces. Terminal control sequences the model wrote are dropped before
//! anything is parsed.

mod paint;
#[cfg(test)]
mod tests;

use agent_tui::markdown::{code_header, code_line, render};

/// What the renderer is inside of.
#[derive(Debug)]
enum Block {
    /// Lines of text, each rendered alone.
    Text,
    /// A fenced code block opened by `fence` (three or more backticks or tildes).
    Fence { fence: String, language: String },
    /// The rows of a table so far.
    Table(Vec<String>),
}

/// A streaming Markdown renderer for a terminal `width` columns wide, coloured when `color`.
#[derive(Debug)]
pub(crate) struct Markdown {
    width: usize,
    color: bool,
    /// The unfinished line.
    pending: String,
    block: Block,
    /// Whether the last row written was blank, or nothing was written yet: runs of blank lines
    /// are shown as one, and none opens the text.
    blank: bool,
}

impl Markdown {
    /// A renderer for `width` columns, with colours and weights when `color`.
    pub(crate) fn new(width: usize, color: bool) -> Self {
        Self {
            width: width.max(20),
            color,
            pending: String::new(),
            block: Block::Text,
            blank: true,
        }
    }

    /// Takes the next piece of text; returns the rows it completed, each ending in a newline.
    pub(crate) fn push(&mut self, piece: &str) -> String {
        self.pending.push_str(piece);
        let mut out = String::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            self.line(&line, &mut out);
        }
        out
    }

    /// Ends the text: renders the unfinished line and whatever block is open, and gets ready
    /// for another text.
    pub(crate) fn finish(&mut self) -> String {
        let mut out = String::new();
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.line(&rest, &mut out);
        }
        if let Block::Table(rows) = std::mem::replace(&mut self.block, Block::Text) {
            self.table(&rows, &mut out);
        }
        self.blank = true;
        out
    }

    /// The unfinished line as it stands, wrapped, at most `rows` of its last rows; `None` when
    /// there is none.
    pub(crate) fn preview(&self, rows: usize) -> Option<String> {
        let text = crate::output::clean(&self.pending);
        if text.trim().is_empty() {
            return None;
        }
        // A column to spare, so that no row of the preview makes the terminal wrap; plain, as
        // it is drawn again as it grows.
        let wrapped: Vec<String> = render(&text, self.width - 1)
            .iter()
            .map(|line| paint::line(line, false).trim_end().to_owned())
            .collect();
        let skip = wrapped.len().saturating_sub(rows);
        Some(wrapped[skip..].join("\n"))
    }

    /// Renders one complete line (its newline included, or not for the last).
    fn line(&mut self, raw: &str, out: &mut String) {
        let line = crate::output::clean(raw.trim_end_matches(['\n', '\r']));
        match &mut self.block {
            Block::Fence { fence, language } => {
                if closes(&line, fence) {
                    self.block = Block::Text;
                } else {
                    for row in code_line(language, &line, self.width) {
                        self.emit(&paint::line(&row, self.color), out);
                    }
                }
                return;
            }
            Block::Table(rows) if is_table_row(&line) => {
                rows.push(line);
                return;
            }
            Block::Table(_) => {
                if let Block::Table(rows) = std::mem::replace(&mut self.block, Block::Text) {
                    self.table(&rows, out);
                }
            }
            Block::Text => {}
        }
        if let Some((fence, language)) = opens_fence(&line) {
            if !language.is_empty() {
                self.emit(&paint::line(&code_header(&language), self.color), out);
            }
            self.block = Block::Fence { fence, language };
            return;
        }
        if is_table_row(&line) {
            self.block = Block::Table(vec![line]);
            return;
        }
        self.text(&line, out);
    }

    /// A line of text, laid out alone under its indent.
    fn text(&mut self, line: &str, out: &mut String) {
        if line.trim().is_empty() {
            if !self.blank {
                out.push('\n');
                self.blank = true;
            }
            return;
        }
        let content = line.trim_start();
        let indent: usize = line[..line.len() - content.len()]
            .chars()
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum();
        // The indent is kept (a nested item), within half the width.
        let indent = indent.min(self.width / 2);
        let pad = " ".repeat(indent);
        for row in render(content, self.width - indent) {
            if row.spans.is_empty() {
                continue;
            }
            self.emit(&format!("{pad}{}", paint::line(&row, self.color)), out);
        }
    }

    /// A table laid out whole (or its rows as lines of text when they are not one).
    fn table(&mut self, rows: &[String], out: &mut String) {
        let lines = render(&rows.join("\n"), self.width);
        for line in lines {
            self.emit(&paint::line(&line, self.color), out);
        }
    }

    fn emit(&mut self, row: &str, out: &mut String) {
        out.push_str(row.trim_end());
        out.push('\n');
        self.blank = false;
    }
}

/// The fence a line opens (its run of backticks or tildes) and the language its info string
/// names, if it opens one.
fn opens_fence(line: &str) -> Option<(String, String)> {
    let content = line.trim_start();
    if line.len() - content.len() > 3 {
        return None;
    }
    let mark = content.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let fence: String = content.chars().take_while(|c| *c == mark).collect();
    let info = &content[fence.len()..];
    // A backtick fence's info string has no backtick (else it is inline code).
    let info_ok = mark == '~' || !info.contains('`');
    let language = info
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    (fence.len() >= 3 && info_ok).then_some((fence, language))
}

/// Whether `line` closes a block opened by `fence`.
fn closes(line: &str, fence: &str) -> bool {
    let content = line.trim();
    let Some(mark) = fence.chars().next() else {
        return false;
    };
    content.len() >= fence.len() && content.chars().all(|c| c == mark)
}

/// Whether `line` is a row of a table (it starts with a `|`).
fn is_table_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// The width of the terminal on standard output, in columns (80 when it says none).
pub(crate) fn terminal_width() -> usize {
    console::Term::stdout()
        .size_checked()
        .map_or(80, |(_, columns)| usize::from(columns))
}
