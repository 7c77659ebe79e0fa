//! The model's Markdown as styled terminal lines: headings, emphasis, inline code, links (their
//! address after their text), lists (nested, numbered, task lists), quotes, rules, code blocks
//! (comments dimmed, whatever the language; long lines broken, never cut) and tables with
//! aligned columns, words wrapped to a width. An unfinished construct (a fence not closed yet)
//! renders as what it is so far.
//!
//! This is the one layout of Markdown: the full-screen UI draws its lines as they are, rendering
//! the answer again as each piece streams in, and the line mode (`agent-cli`) paints them as
//! ANSI text into the scrollback, committing each block once it is complete ([`code_header`]
//! and [`code_line`] for a fenced block it streams line by line).
//!
//! ```
//! let lines = agent_tui::markdown::render("Some **bold** [docs](https://e.org)", 80);
//! assert_eq!(lines[0].to_string(), "Some bold docs (https://e.org)");
//! ```

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::wrap::{clean, truncate, width, wrap};

/// `text` rendered for a terminal `columns` wide, without a blank line at its end.
pub fn render(text: &str, columns: usize) -> Vec<Line<'static>> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let text = clean(text);
    let mut renderer = Renderer {
        columns: columns.max(8),
        ..Renderer::default()
    };
    for event in Parser::new_ext(&text, options) {
        renderer.event(event);
    }
    renderer.flush();
    if let Some((language, code)) = renderer.code.take() {
        renderer.code_block(&language, &code);
    }
    while renderer
        .lines
        .last()
        .is_some_and(|line| line.spans.is_empty())
    {
        renderer.lines.pop();
    }
    renderer.lines
}

/// The first line of a fenced code block in `language`: its name, dim, under a corner.
pub fn code_header(language: &str) -> Line<'static> {
    Line::from(vec![
        Span::raw("  "),
        Span::styled(format!("╭ {language}"), dim_style()),
    ])
}

/// A line of code in `language`, indented and highlighted (keywords, strings, numbers and
/// comments of the languages the `highlight` module knows; in another, one colour
/// with whole-line comments dimmed), broken into rows that fit `columns` (nothing is cut).
pub fn code_line(language: &str, text: &str, columns: usize) -> Vec<Line<'static>> {
    let text = clean(text);
    let columns = columns.saturating_sub(2).max(8);
    let mut lines = Vec::new();
    let mut row: Vec<Span<'static>> = vec![Span::raw("  ")];
    let mut used = 0;
    for (piece, style) in crate::highlight::line(language, &text) {
        let mut part = String::new();
        for c in piece.chars() {
            let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + w > columns {
                if !part.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut part), style));
                }
                lines.push(Line::from(std::mem::replace(
                    &mut row,
                    vec![Span::raw("  ")],
                )));
                used = 0;
            }
            part.push(c);
            used += w;
        }
        if !part.is_empty() {
            row.push(Span::styled(part, style));
        }
    }
    lines.push(Line::from(row));
    lines
}

/// A table being read: its rows of cells, the first one the header, and how each column is
/// aligned.
#[derive(Default)]
struct Table {
    align: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: String,
}

#[derive(Default)]
struct Renderer {
    columns: usize,
    lines: Vec<Line<'static>>,
    /// The text of the paragraph (or heading, or list item line) being read.
    inline: Vec<Span<'static>>,
    /// The styles of the open inline elements, innermost last.
    styles: Vec<Style>,
    /// The open lists: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// The marker of a list item whose first line is not written yet.
    marker: Option<String>,
    quotes: usize,
    /// The code block being read: its language and text.
    code: Option<(String, String)>,
    table: Option<Table>,
    /// The open links: their address, and where their text starts in `inline`.
    links: Vec<(String, usize)>,
}

use crate::highlight::code_style;

fn dim_style() -> Style {
    Style::new().fg(Color::DarkGray)
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::new(), |style, inner| style.patch(*inner))
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(style);
    }

    fn blank(&mut self) {
        if self.lines.last().is_some_and(|line| !line.spans.is_empty()) {
            self.lines.push(Line::default());
        }
    }

    /// The prefixes of the lines of a block: quote bars, the list indent, the item's marker on
    /// its first line.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut base = Vec::new();
        if self.quotes > 0 {
            base.push(Span::styled(
                "│ ".repeat(self.quotes),
                Style::new().fg(Color::DarkGray),
            ));
        }
        let depth = self.lists.len();
        if depth == 0 {
            return (base.clone(), base);
        }
        let indent = "  ".repeat(depth - 1);
        let (first, rest) = match self.marker.take() {
            Some(marker) => {
                let pad = " ".repeat(width(&marker));
                (format!("{indent}{marker}"), format!("{indent}{pad}"))
            }
            None => {
                let pad = "  ".repeat(depth);
                (pad.clone(), pad)
            }
        };
        let mut first_spans = base.clone();
        first_spans.push(Span::styled(first, Style::new().fg(Color::Yellow)));
        let mut rest_spans = base;
        rest_spans.push(Span::raw(rest));
        (first_spans, rest_spans)
    }

    /// Writes the inline text read so far as wrapped lines.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            if self.marker.is_some() {
                let (first, _) = self.prefixes();
                self.lines.push(Line::from(first));
            }
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        let lines = wrap(&spans, self.columns, &first, &rest);
        self.lines.extend(lines);
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((_, code)) = &mut self.code {
            match event {
                Event::Text(text) => code.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((language, code)) = self.code.take() {
                        self.code_block(&language, &code);
                    }
                }
                _ => {}
            }
            return;
        }
        if let Some(table) = &mut self.table {
            match event {
                Event::Text(text) | Event::Code(text) => table.cell.push_str(&text),
                Event::End(TagEnd::TableCell) => {
                    let cell = std::mem::take(&mut table.cell);
                    table.row.push(cell.trim().to_owned());
                }
                Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
                Event::End(TagEnd::Table) => {
                    if let Some(table) = self.table.take() {
                        self.table_lines(&table.rows, &table.align);
                        self.blank();
                    }
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                let style = self.style();
                self.inline.push(Span::styled(text.into_string(), style));
            }
            Event::Code(text) => {
                let style = self.style().patch(code_style());
                self.inline.push(Span::styled(text.into_string(), style));
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                let style = self.style();
                self.inline.push(Span::styled(text.into_string(), style));
            }
            Event::SoftBreak => self.inline.push(Span::raw(" ")),
            Event::HardBreak => self.inline.push(Span::raw("\n")),
            Event::Rule => {
                self.flush();
                let rule = "─".repeat(self.columns.min(40));
                self.lines
                    .push(Line::styled(rule, Style::new().fg(Color::DarkGray)));
                self.blank();
            }
            Event::TaskListMarker(done) => {
                self.inline
                    .push(Span::raw(if done { "[x] " } else { "[ ] " }));
            }
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush();
                let style = match level {
                    HeadingLevel::H1 => Style::new()
                        .fg(Color::Magenta)
                        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                    HeadingLevel::H2 => {
                        Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)
                    }
                    _ => Style::new().add_modifier(Modifier::BOLD | Modifier::ITALIC),
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quotes += 1;
                self.push_style(Style::new().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(first) => {
                self.flush();
                self.lists.push(first);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len();
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ if depth > 1 => "◦ ".to_owned(),
                    _ => "• ".to_owned(),
                };
                self.marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.links.push((dest_url.into_string(), self.inline.len()));
                self.push_style(
                    Style::new()
                        .fg(Color::Blue)
                        .add_modifier(Modifier::UNDERLINED),
                );
            }
            Tag::Table(align) => {
                self.flush();
                self.table = Some(Table {
                    align,
                    ..Table::default()
                });
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.blank();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.styles.pop();
                self.quotes = self.quotes.saturating_sub(1);
                self.blank();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                // The address follows the text, unless the text is the address.
                if let Some((url, start)) = self.links.pop() {
                    let text: String = self.inline[start.min(self.inline.len())..]
                        .iter()
                        .map(|span| span.content.as_ref())
                        .collect();
                    if !url.is_empty() && text != url && !url.starts_with('#') {
                        self.inline
                            .push(Span::styled(format!(" ({url})"), self.style()));
                    }
                }
            }
            _ => {}
        }
    }

    /// A code block: a dim line naming its language, then its lines, indented, comments dimmed.
    fn code_block(&mut self, language: &str, code: &str) {
        let (first, _) = self.prefixes();
        let room = self
            .columns
            .saturating_sub(crate::wrap::spans_width(&first));
        let mut lines = Vec::new();
        if !language.is_empty() {
            lines.push(code_header(language));
        }
        for text in code.trim_end_matches('\n').split('\n') {
            lines.extend(code_line(language, text, room));
        }
        for line in lines {
            let mut spans = first.clone();
            spans.extend(line.spans);
            self.lines.push(Line::from(spans));
        }
        self.blank();
    }

    /// A table with its columns aligned, the header bold and ruled, cells cut to fit.
    fn table_lines(&mut self, rows: &[Vec<String>], align: &[Alignment]) {
        let count = rows.iter().map(Vec::len).max().unwrap_or(0);
        if count == 0 {
            return;
        }
        let mut widths = vec![0usize; count];
        for row in rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(width(cell));
            }
        }
        let room = self.columns.saturating_sub(3 * (count - 1));
        while widths.iter().sum::<usize>() > room {
            let Some(widest) = widths.iter_mut().max() else {
                break;
            };
            if *widest <= 3 {
                break;
            }
            *widest -= 1;
        }
        let rule = Style::new().fg(Color::DarkGray);
        for (index, row) in rows.iter().enumerate() {
            let style = if index == 0 {
                Style::new().add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            let mut spans = Vec::new();
            for (i, column) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", rule));
                }
                let cell = truncate(row.get(i).map_or("", String::as_str), *column);
                let pad = column.saturating_sub(width(&cell));
                let (before, after) = match align.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                let padded = format!("{}{cell}{}", " ".repeat(before), " ".repeat(after));
                spans.push(Span::styled(padded, style));
            }
            self.lines.push(Line::from(spans));
            if index == 0 {
                let ruled: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.lines.push(Line::styled(ruled.join("─┼─"), rule));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str, columns: usize) -> Vec<String> {
        render(text, columns)
            .iter()
            .map(|line| line.to_string().trim_end().to_owned())
            .collect()
    }

    #[test]
    fn blocks_render_with_their_markers() {
        let text = "# Title\n\nSome *words* and `code`.\n\n- one\n- two\n  1. inner\n\n```rust\n// note\nfn main() {}\n```\n\n| a | bb |\n|---|----|\n| 1 | 2 |\n";
        assert_eq!(
            texts(text, 40),
            [
                "Title",
                "",
                "Some words and code.",
                "",
                "• one",
                "• two",
                "  1. inner",
                "",
                "  ╭ rust",
                "  // note",
                "  fn main() {}",
                "",
                "a │ bb",
                "──┼───",
                "1 │ 2",
            ]
        );
    }

    #[test]
    fn links_keep_their_address_and_columns_their_alignment() {
        assert_eq!(
            texts("[docs](https://e.org) and <https://e.org>", 80),
            ["docs (https://e.org) and https://e.org"]
        );
        assert_eq!(
            texts("| name | n |\n|---|--:|\n| a | 1 |\n| bb | 22 |", 80),
            ["name │  n", "─────┼───", "a    │  1", "bb   │ 22"]
        );
        // A long line of code is broken, not cut.
        assert_eq!(
            texts("```\nabcdefghijkl\n```", 10),
            ["  abcdefgh", "  ijkl"]
        );
    }

    #[test]
    fn an_open_fence_renders_as_code_so_far() {
        assert_eq!(texts("Look:\n\n```\nlet x", 40), ["Look:", "", "  let x"]);
    }
}
