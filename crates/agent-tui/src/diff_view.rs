//! A goal's file changes (`/diff N`), or the whole output of a tool call (Ctrl-O), in a
//! scrollable view over the conversation and the plan panel: a unified diff with added lines
//! green, removed lines red, hunk headers cyan and file headers bold, an output as it is;
//! Up/Down, PageUp/PageDown (or Space), Home/End scroll, Esc, `q` or Ctrl-O closes. The
//! workspace's text and the tools' output are not trusted to drive the terminal: control
//! characters are shown as `?`, tabs as spaces.

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::wrap::truncate;

/// The diff or output shown, and how far it is scrolled.
#[derive(Debug, Clone, Default)]
pub(crate) struct DiffView {
    /// `Diff` or `Output`, before the title.
    kind: &'static str,
    title: String,
    lines: Vec<String>,
    /// The first line shown.
    top: usize,
    /// The lines that fit, as last drawn: a page.
    page: usize,
}

impl DiffView {
    fn last_top(&self) -> usize {
        self.lines.len().saturating_sub(self.page.max(1))
    }

    fn scroll_by(&mut self, lines: isize) {
        let top = self.top.saturating_add_signed(lines);
        self.top = top.min(self.last_top());
    }
}

impl DiffView {
    /// The view of `diff` (a unified diff) titled `title`; an empty diff says that nothing
    /// changed.
    pub(crate) fn new(title: String, diff: &str) -> Self {
        let mut lines: Vec<String> = diff.lines().map(shown).collect();
        if lines.is_empty() {
            lines.push("(no file changed)".to_owned());
        }
        Self {
            kind: "Diff",
            title,
            lines,
            top: 0,
            page: 0,
        }
    }

    /// The view of a tool call's whole `output`, titled `title`, from its first line.
    pub(crate) fn output(title: String, output: &str) -> Self {
        Self {
            kind: "Output",
            lines: output.lines().map(shown).collect(),
            ..Self::new(title, "")
        }
    }

    /// Takes a key: scrolls, or closes the view (returns `false`).
    pub(crate) fn key(&mut self, key: KeyEvent) -> bool {
        let page = self.page.max(1) as isize;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c' | 'd' | 'o') if ctrl => return false,
            KeyCode::Esc | KeyCode::Char('q') => return false,
            KeyCode::Up | KeyCode::Char('k') => self.scroll_by(-1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Enter => self.scroll_by(1),
            KeyCode::PageUp | KeyCode::Char('b') => self.scroll_by(-page),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll_by(page),
            KeyCode::Home | KeyCode::Char('g') => self.top = 0,
            KeyCode::End | KeyCode::Char('G') => self.top = self.last_top(),
            _ => {}
        }
        true
    }
}

/// A line as it may be drawn: tabs as four spaces, other control characters as `?`.
fn shown(line: &str) -> String {
    line.chars()
        .flat_map(|c| match c {
            '\t' => vec![' '; 4],
            c if c.is_control() => vec!['?'],
            c => vec![c],
        })
        .collect()
}

/// The style of a diff line, by its first characters.
fn style(line: &str) -> Style {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
        Style::new().add_modifier(Modifier::BOLD)
    } else if line.starts_with('+') {
        Style::new().fg(Color::Green)
    } else if line.starts_with('-') {
        Style::new().fg(Color::Red)
    } else if line.starts_with("@@") {
        Style::new().fg(Color::Cyan)
    } else {
        Style::new()
    }
}

/// Draws the diff over `area`.
pub(crate) fn draw(frame: &mut Frame<'_>, view: &mut DiffView, area: Rect) {
    let rows = area.height.saturating_sub(2) as usize;
    view.page = rows;
    view.top = view.top.min(view.last_top());
    let columns = area.width.saturating_sub(2) as usize;
    let shown_to = (view.top + rows).min(view.lines.len());
    let lines: Vec<Line<'_>> = view.lines[view.top..shown_to]
        .iter()
        .map(|line| {
            let style = match view.kind {
                "Diff" => style(line),
                _ => Style::new(),
            };
            Line::from(Span::styled(truncate(line, columns), style))
        })
        .collect();
    let title = Line::from(vec![
        Span::styled(
            format!(" {} · {} ", view.kind, view.title),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                "· lines {}-{} of {} · ↑↓ PgUp PgDn scroll · Esc closes ",
                view.top + 1,
                shown_to,
                view.lines.len()
            ),
            Style::new().fg(Color::DarkGray),
        ),
    ]);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::DarkGray))
        .title(title);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
