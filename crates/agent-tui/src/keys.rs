//! What a key or a paste does: answers the question on screen when there is one (`y`, `n` and
//! a reason, `a`, `p`; Esc or Ctrl-C refuses it and stops the turn at once), else edits the
//! message, completes a command or a path (Tab), scrolls (PageUp, PageDown, the mouse wheel),
//! folds and unfolds
//! (Ctrl-O the plan, Ctrl-T reasoning), stops the turn (Ctrl-C, Esc) or quits (a second Ctrl-C,
//! Ctrl-D on an empty line).

use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind,
};

use crate::app::App;
use crate::approval::Answer;
use crate::input::Edit;

/// What the session is to do after an input event.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing but draw again.
    Nothing,
    /// Send this message (the next turn, or to the running one).
    Send(String),
    /// Run this slash command (without its `/`).
    Command(String),
    /// Stop the running turn.
    Stop,
    /// Leave.
    Quit,
}

/// The lines the conversation scrolls by for PageUp and PageDown.
const PAGE: usize = 10;
/// The lines the conversation scrolls by for a notch of the mouse wheel.
const WHEEL: usize = 3;

impl App {
    /// Takes an input event of the terminal.
    pub fn on_event(&mut self, event: &Event) -> Action {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(*key),
            Event::Paste(text) => {
                let text = text.replace("\r\n", "\n").replace('\r', "\n");
                match &mut self.reason {
                    Some(reason) if !self.asks.is_empty() => reason.push_str(&text),
                    _ => {
                        self.input.insert(&text);
                        self.complete();
                    }
                }
                Action::Nothing
            }
            Event::Mouse(mouse) => {
                match mouse.kind {
                    MouseEventKind::ScrollUp => self.scroll += WHEEL,
                    MouseEventKind::ScrollDown => self.scroll = self.scroll.saturating_sub(WHEEL),
                    _ => {}
                }
                Action::Nothing
            }
            _ => Action::Nothing,
        }
    }

    /// Takes a key.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let interrupt = ctrl && key.code == KeyCode::Char('c');
        if self.forms.is_open() {
            self.forms.key(key);
            return Action::Nothing;
        }
        if !self.asks.is_empty() {
            return self.answer_key(key, interrupt);
        }
        if let Some(diff) = &mut self.diff {
            if !diff.key(key) {
                self.diff = None;
            }
            return Action::Nothing;
        }
        let armed = std::mem::take(&mut self.quit_armed);
        match key.code {
            _ if interrupt => {
                if armed {
                    return Action::Quit;
                }
                self.quit_armed = true;
                if self.running {
                    self.notice("stopping the turn · Ctrl-C again quits");
                    return Action::Stop;
                }
                if !self.input.text.is_empty() {
                    self.input.clear();
                    self.complete();
                    self.quit_armed = false;
                    return Action::Nothing;
                }
                self.notice("Ctrl-C again (or Ctrl-D, /quit) quits");
                Action::Nothing
            }
            KeyCode::Char('d') if ctrl && self.input.text.is_empty() => Action::Quit,
            KeyCode::Char('o') if ctrl => {
                self.toggle_plan();
                Action::Nothing
            }
            KeyCode::Char('t') if ctrl => {
                self.reasoning = !self.reasoning;
                Action::Nothing
            }
            KeyCode::PageUp => {
                self.scroll += PAGE;
                Action::Nothing
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_sub(PAGE);
                Action::Nothing
            }
            KeyCode::Tab => {
                self.accept_completion();
                Action::Nothing
            }
            KeyCode::Esc if !self.completion.items.is_empty() => {
                self.completion = crate::complete::Candidates::default();
                Action::Nothing
            }
            KeyCode::Esc if self.running => {
                self.notice("stopping the turn");
                Action::Stop
            }
            _ => self.edit(key),
        }
    }

    fn edit(&mut self, key: KeyEvent) -> Action {
        let edit = self.input.key(key, &self.history);
        let action = match edit {
            Edit::Submit(text) => {
                let text = text.trim_end().to_owned();
                if text.trim().is_empty() {
                    Action::Nothing
                } else {
                    self.history.add(&text);
                    self.scroll = 0;
                    match text.strip_prefix('/') {
                        Some(command) => Action::Command(command.trim().to_owned()),
                        None => Action::Send(text),
                    }
                }
            }
            Edit::Changed | Edit::Ignored => Action::Nothing,
        };
        self.complete();
        action
    }

    /// Computes the candidates for the text before the cursor.
    fn complete(&mut self) {
        let before = &self.input.text[..self.input.cursor];
        self.completion = crate::complete::candidates(before, &self.files);
        // The embedder's commands complete as the built-in ones do.
        if before.starts_with('/') && !before.contains(char::is_whitespace) {
            let extra = self.extra_commands.iter().map(|(name, _)| name);
            let matching = extra.filter(|name| name.starts_with(before) && name.as_str() != before);
            self.completion.items.extend(matching.cloned());
        }
    }

    fn accept_completion(&mut self) {
        let Some(chosen) = self.completion.items.first().cloned() else {
            return;
        };
        let start = self.completion.start;
        let cursor = self.input.cursor;
        self.input
            .text
            .replace_range(start..cursor, &format!("{chosen} "));
        self.input.cursor = start + chosen.len() + 1;
        self.complete();
    }

    /// A key while a question is on the screen.
    fn answer_key(&mut self, key: KeyEvent, interrupt: bool) -> Action {
        if interrupt || key.code == KeyCode::Esc {
            // Every question waiting is refused, and the turn stops.
            self.reason = None;
            for ask in self.asks.drain(..) {
                ask.answer(Answer::No("the user cancelled".into()));
            }
            self.quit_armed = true;
            self.notice("cancelled · the turn stops · Ctrl-C again quits");
            return Action::Stop;
        }
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let reason = std::mem::take(reason);
                    self.reason = None;
                    self.answer(Answer::No(reason));
                }
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) => reason.push(c),
                _ => {}
            }
            return Action::Nothing;
        }
        let (always, prefix) = match self.asks.front() {
            Some(ask) if ask.always => (true, ask.prefix.clone()),
            _ => (false, None),
        };
        match (key.code, prefix) {
            (KeyCode::Char('y' | 'Y'), _) => self.answer(Answer::Yes),
            (KeyCode::Char('n' | 'N'), _) => self.reason = Some(String::new()),
            (KeyCode::Char('a' | 'A'), _) if always => self.answer(Answer::AlwaysTool),
            (KeyCode::Char('p' | 'P'), Some(prefix)) => self.answer(Answer::AlwaysPrefix(prefix)),
            _ => {}
        }
        Action::Nothing
    }

    fn answer(&mut self, answer: Answer) {
        if let Some(ask) = self.asks.pop_front() {
            ask.answer(answer);
        }
    }
}
