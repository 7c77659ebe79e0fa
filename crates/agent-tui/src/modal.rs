//! The question of an approval on the screen, and how it is answered so that nothing typed
//! before it appeared can answer it. Typing a message while a turn runs is expected, and a
//! question may appear in the middle of a word: so a key answers only once the person has been
//! still for a moment ([`QUIET`]) since the question appeared and since their last key; until
//! then keys go on into the message box, as they were meant to. Answering takes a deliberate
//! choice: an arrow (or the choice's letter or number) picks a choice, and Enter confirms it;
//! Enter with nothing picked does nothing, and a letter typed right after another is typing (its
//! pick is dropped). Esc or Ctrl-C refuses every question waiting and stops the turn at once.
//! "No" asks for a reason the model reads, typed on the next line and sent with Enter.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph};

use crate::app::App;
use crate::approval::{Answer, Ask, AskKind, Modal};
use crate::keys::Action;
use crate::wrap::{clean, rows, wrap, wrap_text};

/// How long the person must have been still (since the question appeared, and since their last
/// key) before a key answers it rather than going on into the message box.
pub(crate) const QUIET: Duration = Duration::from_millis(700);

/// One answer the modal offers.
struct Choice {
    /// The letter that picks it.
    key: char,
    /// What it says.
    label: String,
    /// The answer it gives.
    answer: Answer,
}

/// The choices of `ask`, in the order shown.
fn choices(ask: &Ask) -> Vec<Choice> {
    let choice = |key, label: String, answer| Choice { key, label, answer };
    match &ask.kind {
        AskKind::Rerun(_) => vec![
            choice(
                'y',
                "Yes, run it again once, without the sandbox".into(),
                Answer::Yes,
            ),
            choice(
                'n',
                "No, leave it refused".into(),
                Answer::No(String::new()),
            ),
        ],
        AskKind::Call => {
            let mut all = vec![choice('y', "Yes".into(), Answer::Yes)];
            if let Some(prefix) = ask.prefix.as_ref().filter(|_| ask.always) {
                all.push(choice(
                    'p',
                    format!("Yes, and commands starting `{prefix}` for the rest of the session"),
                    Answer::AlwaysPrefix(prefix.clone()),
                ));
            }
            all.extend(ask.always.then(|| {
                choice(
                    'a',
                    format!(
                        "Yes, and every {} call for the rest of the session",
                        ask.tool
                    ),
                    Answer::AlwaysTool,
                )
            }));
            all.push(choice(
                'n',
                "No, and tell the model why".into(),
                Answer::No(String::new()),
            ));
            all
        }
    }
}

impl App {
    /// Whether the person has been still long enough for a key to answer: [`QUIET`] since the
    /// question appeared and since the key before this one (`previous`).
    fn quiet(&self, previous: Option<Instant>) -> bool {
        let still_since = self.modal.opened.max(previous);
        still_since.is_none_or(|since| self.now.saturating_duration_since(since) >= QUIET)
    }

    /// A key while a question is on the screen (`previous`: when the key before it came): what
    /// the session is to do, or `None` when the key is typing, for the message box.
    pub(crate) fn modal_key(&mut self, key: KeyEvent, previous: Option<Instant>) -> Option<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code == KeyCode::Esc || (ctrl && key.code == KeyCode::Char('c')) {
            // Every question waiting is refused, and the turn stops.
            self.modal = Modal::default();
            for ask in self.asks.drain(..) {
                ask.answer(Answer::No("the user cancelled".into()));
            }
            self.quit_armed = true;
            self.notice("cancelled · the turn stops · Ctrl-C again quits");
            return Some(Action::Stop);
        }
        if let Some(reason) = &mut self.modal.reason {
            match key.code {
                KeyCode::Enter => {
                    let reason = std::mem::take(reason);
                    self.answer(Answer::No(reason));
                }
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) if !ctrl => reason.push(c),
                _ => {}
            }
            return Some(Action::Nothing);
        }
        let quiet = self.quiet(previous);
        let count = self.asks.front().map_or(0, |ask| choices(ask).len());
        let picked = match key.code {
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::BackTab => {
                if !quiet && self.modal.selected.is_none() {
                    return None;
                }
                let down = matches!(key.code, KeyCode::Down | KeyCode::Tab);
                Some(match (self.modal.selected, down) {
                    (None, true) => 0,
                    (None, false) => count.saturating_sub(1),
                    (Some(at), true) => (at + 1) % count.max(1),
                    (Some(at), false) => (at + count.max(1) - 1) % count.max(1),
                })
            }
            KeyCode::Char(c) if !ctrl => self.asks.front().and_then(|ask| {
                let all = choices(ask);
                let by_number = c.to_digit(10).and_then(|n| (n as usize).checked_sub(1));
                by_number
                    .filter(|at| *at < all.len())
                    .or_else(|| all.iter().position(|o| o.key == c.to_ascii_lowercase()))
            }),
            KeyCode::Enter => {
                return match self.modal.selected {
                    Some(at) => {
                        self.confirm(at);
                        Some(Action::Nothing)
                    }
                    // Nothing picked: ignored when the person was still, typing otherwise.
                    None => quiet.then_some(Action::Nothing),
                };
            }
            _ => None,
        };
        let arrow = matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::BackTab
        );
        match picked {
            // An arrow moves a pick, however quickly it follows; a letter picks only after a
            // pause.
            Some(at) if quiet || arrow => {
                self.modal.selected = Some(at);
                Some(Action::Nothing)
            }
            // Anything else, or a letter while typing: the message box's, and nothing is picked.
            _ => {
                self.modal.selected = None;
                None
            }
        }
    }

    /// Gives the answer of the choice at `at`: "no" to a call first asks why.
    fn confirm(&mut self, at: usize) {
        let Some(ask) = self.asks.front() else {
            return;
        };
        let Some(choice) = choices(ask).into_iter().nth(at) else {
            return;
        };
        match (&ask.kind, choice.answer) {
            (AskKind::Call, Answer::No(_)) => self.modal.reason = Some(String::new()),
            (_, answer) => self.answer(answer),
        }
    }

    /// Answers the question shown; the next one, if any, appears now.
    fn answer(&mut self, answer: Answer) {
        if let Some(ask) = self.asks.pop_front() {
            ask.answer(answer);
        }
        self.modal.open(self.now);
    }
}

/// The style of a line of a call's description: a diff's lines coloured.
fn line_style(text: &str) -> Style {
    let text = text.trim_start();
    if text.starts_with("+++") || text.starts_with("---") {
        Style::new().add_modifier(Modifier::BOLD)
    } else if text.starts_with('+') {
        Style::new().fg(Color::Green)
    } else if text.starts_with('-') {
        Style::new().fg(Color::Red)
    } else if text.starts_with("@@") {
        Style::new().fg(Color::Cyan)
    } else {
        Style::new()
    }
}

/// Draws the question at the front, over everything in `area`.
pub(crate) fn draw(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(ask) = app.asks.front() else {
        return;
    };
    let width = area.width.saturating_sub(4).clamp(20, 110);
    let inner_width = width.saturating_sub(4) as usize;
    let dim = Style::new().fg(Color::DarkGray);
    let key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(warning) = &ask.warning {
        let style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
        let rows = rows(&clean(&format!("⚠ {warning}")), inner_width);
        lines.extend(rows.into_iter().map(|row| Line::styled(row, style)));
    }
    for text in ask.description.lines() {
        let style = line_style(text);
        let rows = rows(&clean(text), inner_width);
        lines.extend(rows.into_iter().map(|row| Line::styled(row, style)));
    }
    let room = area.height.saturating_sub(14) as usize;
    if lines.len() > room {
        let more = lines.len() - room + 1;
        lines.truncate(room.saturating_sub(1));
        lines.push(Line::styled(format!("… {more} more lines"), dim));
    }
    if let AskKind::Rerun(rule) = &ask.kind {
        let warn = Style::new().fg(Color::Yellow);
        lines.extend(wrap_text(
            rule,
            warn,
            inner_width,
            &[Span::styled(
                "refused by ",
                warn.add_modifier(Modifier::BOLD),
            )],
            &[Span::raw("  ")],
        ));
    }
    lines.push(Line::default());
    if let Some(reason) = &app.modal.reason {
        lines.extend(wrap_text(
            &format!("{reason}▍"),
            Style::new(),
            inner_width,
            &[Span::styled("why not? (the model reads it) ", key)],
            &[],
        ));
        lines.push(Line::styled("Enter sends · Esc cancels the turn", dim));
    } else {
        for (at, choice) in choices(ask).iter().enumerate() {
            let picked = app.modal.selected == Some(at);
            let (lead, style) = match picked {
                true => (
                    "› ",
                    Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
                ),
                false => ("  ", Style::new()),
            };
            let spans = vec![
                Span::styled(format!("{}. ", at + 1), style),
                Span::styled(choice.label.clone(), style),
                Span::styled(format!("  ({})", choice.key), key),
            ];
            lines.extend(wrap(
                &spans,
                inner_width,
                &[Span::styled(lead, key)],
                &[Span::raw("     ")],
            ));
        }
        lines.push(Line::default());
        let hint = if app.quiet(app.last_key) {
            "↑↓ or a letter picks · Enter confirms · Esc refuses and stops the turn"
        } else {
            "you are typing: keys go to your message · pause, then pick with ↑↓ or a letter and Enter"
        };
        lines.extend(wrap_text(hint, dim, inner_width, &[], &[]));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let x = area.x + (area.width.saturating_sub(width)) / 2;
    let y = area.y + (area.height.saturating_sub(height)) / 2;
    let modal = Rect::new(x, y, width.min(area.width), height);
    let waiting = match app.asks.len() {
        1 => String::new(),
        n => format!("(1 of {n}) "),
    };
    let title = match &ask.kind {
        AskKind::Call => format!(" Allow {}? {waiting}", ask.tool),
        AskKind::Rerun(_) => format!(
            " The sandbox refused this command: run it again without the sandbox? {waiting}"
        ),
    };
    let block = Block::bordered()
        .border_style(Style::new().fg(Color::Yellow))
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ));
    frame.render_widget(Clear, modal);
    frame.render_widget(
        Paragraph::new(lines).block(block.padding(Padding::horizontal(1))),
        modal,
    );
}
