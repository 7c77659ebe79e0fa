//! What a key or a paste does: answers the question on screen when there is one and the person
//! means to (`modal.rs`: a pick and Enter, after a pause; Esc or Ctrl-C refuses it and stops the
//! turn at once), else edits the message, completes a command or a path (Tab), scrolls (PageUp,
//! PageDown, the mouse wheel), unfolds the newest tool output in a scrollable view (Ctrl-O),
//! folds and unfolds (Ctrl-P the plan, Ctrl-T reasoning), stops the turn (Ctrl-C, Esc) or quits
//! (a second Ctrl-C, Ctrl-D on an empty line). A paste never answers a question. While the
//! `/shells` view is open, keys are its own (`shells.rs`).

use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind,
};

use agent_runner::interaction::shells::ShellStatus;
use chrono::{DateTime, Utc};

use crate::app::App;
use crate::cells::Cell;
use crate::input::Edit;
use crate::shells::{ShellsKey, ShellsView};

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
                // A paste is typing: a key right after it does not answer a question either.
                self.last_key = Some(self.now);
                let text = text.replace("\r\n", "\n").replace('\r', "\n");
                match &mut self.modal.reason {
                    Some(reason) if !self.asks.is_empty() => reason.push_str(&text),
                    _ => {
                        if !self.attach_pasted(&text) {
                            self.input.insert(&text);
                            self.complete();
                        }
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
        let previous = self.last_key.replace(self.now);
        if self.forms.is_open() {
            self.forms.key(key);
            return Action::Nothing;
        }
        if !self.asks.is_empty() {
            match self.modal_key(key, previous) {
                Some(action) => return action,
                // Typing that went on as the question appeared: the message box's.
                None => return self.edit(key),
            }
        }
        if let Some(action) = self.shells_key(key) {
            return action;
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
            KeyCode::Backspace if self.input.text.is_empty() && !self.attached.is_empty() => {
                self.attached.pop();
                Action::Nothing
            }
            KeyCode::Char('o') if ctrl => {
                self.show_last_output();
                Action::Nothing
            }
            KeyCode::Char('v') if ctrl => {
                self.attach_clipboard();
                Action::Nothing
            }
            KeyCode::Char('p') if ctrl => {
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
                    if !self.attached.is_empty() {
                        self.notice("say what to do with the picture, then Enter");
                    }
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

    /// Shows `shells` (a run's background shells, as of `at`) in the `/shells` view, or
    /// refreshes the open view, keeping the chosen shell chosen.
    pub fn show_shells(&mut self, shells: Vec<ShellStatus>, at: DateTime<Utc>) {
        self.shells = Some(ShellsView::new(self.shells.as_ref(), shells, at));
    }

    /// Whether the `/shells` view is open.
    pub fn shells_shown(&self) -> bool {
        self.shells.is_some()
    }

    /// A key while the `/shells` view is open: `None` when it is not.
    fn shells_key(&mut self, key: KeyEvent) -> Option<Action> {
        match self.shells.as_mut()?.key(key) {
            ShellsKey::Stay => Some(Action::Nothing),
            ShellsKey::Close => {
                self.shells = None;
                Some(Action::Nothing)
            }
            ShellsKey::Kill(id) => Some(Action::Command(format!("shells kill {id}"))),
        }
    }

    /// Opens the output of the newest tool call in a scrollable view (Ctrl-O).
    pub fn show_last_output(&mut self) {
        let newest = self.cells.iter().rev().find_map(|cell| match cell {
            Cell::Tool(tool) => Some(tool),
            _ => None,
        });
        match newest {
            Some(tool) => {
                let output = match tool.output.is_empty() {
                    true => "(no output yet)".to_owned(),
                    false => tool.output.clone(),
                };
                self.diff = Some(crate::diff_view::DiffView::output(tool.title(), &output));
            }
            None => self.notice("no tool has run yet: Ctrl-O shows the newest tool output"),
        }
    }
}
