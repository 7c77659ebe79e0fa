//! The model's Markdown as a terminal shows it, rendered while it streams.
//!
//! Each line is rendered as soon as it ends: headings, emphasis, lists, quotes, rules, inline
//! code and links through `pulldown-cmark`, word-wrapped to the terminal's width with list items
//! and quotes hanging from their marker. A fenced code block streams line by line in its own
//! colour, without its fences; a table is held until its last row, then drawn in aligned
//! columns. Only the unfinished line (or the open table) is held back, and what is written
//! depends on the text alone, never on how it was cut into pieces. Terminal control sequences
//! the model wrote are dropped before anything is parsed.

mod inline;
mod layout;
#[cfg(test)]
mod tests;

use self::inline::{Colour, Span, Style};

/// What the renderer is inside of.
#[derive(Debug)]
enum Block {
    /// Lines of text, each rendered alone.
    Text,
    /// A fenced code block opened by `fence` (three or more backticks or tildes).
    Fence { fence: String },
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
        let spans = [Span::new(text, Style::default())];
        // A column to spare, so that no row of the preview makes the terminal wrap.
        let wrapped = layout::wrap(&spans, self.width - 1, ("", 0), 0, false);
        let skip = wrapped.len().saturating_sub(rows);
        Some(wrapped[skip..].join("\n"))
    }

    /// Renders one complete line (its newline included, or not for the last).
    fn line(&mut self, raw: &str, out: &mut String) {
        let line = crate::output::clean(raw.trim_end_matches(['\n', '\r']));
        match &mut self.block {
            Block::Fence { fence } => {
                if closes(&line, fence) {
                    self.block = Block::Text;
                } else {
                    let code = Style::default().colour(Colour::Cyan);
                    self.emit(&format!("  {}", code.paint(&line, self.color)), out);
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
        if let Some(fence) = opens_fence(&line) {
            self.block = Block::Fence { fence };
            return;
        }
        if is_table_row(&line) {
            self.block = Block::Table(vec![line]);
            return;
        }
        self.text(&line, out);
    }

    /// A line of text: parsed, styled, wrapped under its marker.
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
        let parsed = inline::line(content);
        if parsed.rule {
            let rule = "─".repeat(self.width.saturating_sub(indent).min(80));
            let rule = Style::default().dim().paint(&rule, self.color);
            self.emit(&format!("{}{rule}", " ".repeat(indent)), out);
            return;
        }
        let mut first = " ".repeat(indent);
        let mut hang = indent;
        for span in &parsed.prefix {
            first.push_str(&span.style.paint(&span.text, self.color));
            hang += layout::width(&span.text);
        }
        for row in layout::wrap(&parsed.spans, self.width, (&first, hang), hang, self.color) {
            self.emit(&row, out);
        }
    }

    /// A table, or its rows as lines of text when they are not one.
    fn table(&mut self, rows: &[String], out: &mut String) {
        match layout::table(rows, self.width, self.color) {
            Some(lines) => {
                for line in lines {
                    self.emit(&line, out);
                }
            }
            None => {
                for row in rows {
                    self.text(row, out);
                }
            }
        }
    }

    fn emit(&mut self, row: &str, out: &mut String) {
        out.push_str(row.trim_end());
        out.push('\n');
        self.blank = false;
    }
}

/// The fence a line opens (its run of backticks or tildes), if it opens one.
fn opens_fence(line: &str) -> Option<String> {
    let content = line.trim_start();
    if line.len() - content.len() > 3 {
        return None;
    }
    let mark = content.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let fence: String = content.chars().take_while(|c| *c == mark).collect();
    let info = &content[fence.len()..];
    // A backtick fence's info string has no backtick (else it is inline code).
    let info_ok = mark == '~' || !info.contains('`');
    (fence.len() >= 3 && info_ok).then_some(fence)
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
