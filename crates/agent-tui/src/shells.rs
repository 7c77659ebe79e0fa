//! `/shells`: the background shells of the session's run in a view over the conversation, one
//! line each (id, running or how it ended, age, command: `agent_runner::interaction::shells`
//! writes the lines, as for the line mode). Up/Down choose one, `x` or Delete stops it (as
//! `/shells kill ID` does), Esc or `q` closes. The session refreshes the list while it is open.

use agent_runner::interaction::shells::{self, ShellStatus};
use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::wrap::truncate;

/// The shells listed, as of `at`, and the one chosen.
#[derive(Debug, Clone)]
pub(crate) struct ShellsView {
    shells: Vec<ShellStatus>,
    at: DateTime<Utc>,
    chosen: usize,
}

/// What a key does to the view.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ShellsKey {
    /// The view stays open.
    Stay,
    /// Close the view.
    Close,
    /// Stop the shell of this id.
    Kill(String),
}

impl ShellsView {
    /// The view of `shells` (as of `at`), the shell chosen in `previous` still chosen where it
    /// is listed.
    pub(crate) fn new(
        previous: Option<&Self>,
        shells: Vec<ShellStatus>,
        at: DateTime<Utc>,
    ) -> Self {
        let chosen = previous.and_then(|view| {
            let id = &view.shells.get(view.chosen)?.id;
            shells.iter().position(|shell| &shell.id == id)
        });
        Self {
            chosen: chosen.unwrap_or(0),
            shells,
            at,
        }
    }

    /// Takes a key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> ShellsKey {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c' | 'd') if ctrl => return ShellsKey::Close,
            KeyCode::Esc | KeyCode::Char('q') => return ShellsKey::Close,
            KeyCode::Up => self.chosen = self.chosen.saturating_sub(1),
            KeyCode::Down => {
                self.chosen = (self.chosen + 1).min(self.shells.len().saturating_sub(1));
            }
            KeyCode::Char('x') | KeyCode::Delete => {
                if let Some(shell) = self.shells.get(self.chosen) {
                    return ShellsKey::Kill(shell.id.clone());
                }
            }
            _ => {}
        }
        ShellsKey::Stay
    }
}

/// Draws the view over `area`.
pub(crate) fn draw(frame: &mut Frame<'_>, view: &ShellsView, area: Rect) {
    let columns = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line<'_>> = view
        .shells
        .iter()
        .enumerate()
        .map(|(index, shell)| {
            let mark = if index == view.chosen { "▶ " } else { "  " };
            let text = truncate(&format!("{mark}{}", shells::line(shell, view.at)), columns);
            let style = match (index == view.chosen, shell.state.ended()) {
                (true, _) => Style::new().add_modifier(Modifier::REVERSED),
                (false, true) => Style::new().fg(Color::DarkGray),
                (false, false) => Style::new(),
            };
            Line::from(Span::styled(text, style))
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from(truncate(shells::NONE_RUNNING, columns)));
    }
    let running = view.shells.iter().filter(|s| !s.state.ended()).count();
    let title = Line::from(vec![
        Span::styled(
            format!(" Background shells · {running} running "),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            "· ↑↓ choose · x or Del stops it · Esc closes ",
            Style::new().fg(Color::DarkGray),
        ),
    ]);
    let rows = (lines.len() as u16 + 2).min(area.height);
    let area = Rect {
        height: rows,
        ..area
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::DarkGray))
        .title(title);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
