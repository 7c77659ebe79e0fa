//! The message being typed: a multi-line buffer with a cursor. Enter sends it; Shift+Enter
//! (where the terminal reports it), Alt+Enter, Ctrl+J and a `\` before Enter start a new line; a
//! paste is inserted whole, line breaks and all. Up and Down walk the history when the cursor is
//! on the first or last line; the usual editing keys work (Ctrl-A/E/U/K/W, Home, End, Delete).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::history::History;

/// What a key did to the editor.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// The text changed or the cursor moved.
    Changed,
    /// Enter: the text is to be sent.
    Submit(String),
    /// The key is not the editor's.
    Ignored,
}

/// The buffer, its cursor (a byte offset), and where the history walk is.
#[derive(Debug, Default)]
pub(crate) struct Editor {
    pub(crate) text: String,
    pub(crate) cursor: usize,
    /// The history entry shown (from the newest, 0 = the first older one), and the text typed
    /// before the walk began.
    walk: Option<(usize, String)>,
}

impl Editor {
    /// Inserts `text` at the cursor.
    pub(crate) fn insert(&mut self, text: &str) {
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
        self.walk = None;
    }

    /// Replaces the whole text, the cursor at its end.
    pub(crate) fn set(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    /// Empties the buffer.
    pub(crate) fn clear(&mut self) {
        self.set("");
        self.walk = None;
    }

    fn before(&self) -> &str {
        &self.text[..self.cursor]
    }

    fn prev_boundary(&self) -> usize {
        self.before()
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .chars()
            .next()
            .map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.before().rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn on_first_line(&self) -> bool {
        !self.before().contains('\n')
    }

    fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// Handles a key; `history` is walked with Up and Down.
    pub(crate) fn key(&mut self, key: KeyEvent, history: &History) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = key
            .modifiers
            .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if newline => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter if self.before().ends_with('\\') => {
                self.text.remove(self.cursor - 1);
                self.cursor -= 1;
                self.insert("\n");
            }
            KeyCode::Enter => {
                let text = std::mem::take(&mut self.text);
                self.cursor = 0;
                self.walk = None;
                return Edit::Submit(text);
            }
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('u') if ctrl => {
                let start = self.line_start();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char('k') if ctrl => {
                let end = self.line_end();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Char('w') if ctrl => {
                let before = self.before().trim_end_matches(' ');
                let start = before.rfind([' ', '\n']).map_or(0, |i| i + 1);
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char(c) if !ctrl => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace if self.cursor > 0 => {
                let start = self.prev_boundary();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Delete if self.cursor < self.text.len() => {
                let end = self.next_boundary();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Left => self.cursor = self.prev_boundary(),
            KeyCode::Right => self.cursor = self.next_boundary(),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up if self.on_first_line() => return self.older(history),
            KeyCode::Down if self.on_last_line() => return self.newer(history),
            KeyCode::Up => self.vertical(-1),
            KeyCode::Down => self.vertical(1),
            _ => return Edit::Ignored,
        }
        Edit::Changed
    }

    /// Moves the cursor one line up or down, to the same column or the line's end.
    fn vertical(&mut self, by: i32) {
        let start = self.line_start();
        let column = self.text[start..self.cursor].chars().count();
        let target = if by < 0 {
            let Some(previous_end) = start.checked_sub(1) else {
                return;
            };
            self.text[..previous_end].rfind('\n').map_or(0, |i| i + 1)
        } else {
            let end = self.line_end();
            if end >= self.text.len() {
                return;
            }
            end + 1
        };
        let line_end = self.text[target..]
            .find('\n')
            .map_or(self.text.len(), |i| target + i);
        self.cursor = self.text[target..line_end]
            .char_indices()
            .nth(column)
            .map_or(line_end, |(i, _)| target + i);
    }

    fn older(&mut self, history: &History) -> Edit {
        let next = self.walk.as_ref().map_or(0, |(index, _)| index + 1);
        let Some(entry) = history.back(next) else {
            return Edit::Ignored;
        };
        let typed = match self.walk.take() {
            Some((_, typed)) => typed,
            None => self.text.clone(),
        };
        self.set(entry);
        self.walk = Some((next, typed));
        Edit::Changed
    }

    fn newer(&mut self, history: &History) -> Edit {
        let Some((index, typed)) = self.walk.take() else {
            return Edit::Ignored;
        };
        match index
            .checked_sub(1)
            .and_then(|i| history.back(i).map(|e| (i, e)))
        {
            Some((i, entry)) => {
                self.set(entry);
                self.walk = Some((i, typed));
            }
            None => self.set(&typed),
        }
        Edit::Changed
    }

    /// The row and column (in characters) of the cursor.
    pub(crate) fn cursor_position(&self) -> (usize, usize) {
        let before = self.before();
        let row = before.matches('\n').count();
        let column = crate::wrap::width(&before[self.line_start()..]);
        (row, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn typed(editor: &mut Editor, text: &str, history: &History) {
        for c in text.chars() {
            editor.key(key(KeyCode::Char(c), KeyModifiers::NONE), history);
        }
    }

    #[test]
    fn new_lines_come_from_shift_enter_ctrl_j_and_a_backslash() {
        let history = History::in_memory(&[]);
        let mut editor = Editor::default();
        typed(&mut editor, "a\\", &history);
        assert_eq!(
            editor.key(key(KeyCode::Enter, KeyModifiers::NONE), &history),
            Edit::Changed
        );
        typed(&mut editor, "b", &history);
        editor.key(key(KeyCode::Enter, KeyModifiers::SHIFT), &history);
        typed(&mut editor, "c", &history);
        editor.key(key(KeyCode::Char('j'), KeyModifiers::CONTROL), &history);
        typed(&mut editor, "d", &history);
        assert_eq!(
            editor.key(key(KeyCode::Enter, KeyModifiers::NONE), &history),
            Edit::Submit("a\nb\nc\nd".into())
        );
        assert_eq!(editor.text, "");
    }

    #[test]
    fn up_walks_the_history_and_down_comes_back_to_what_was_typed() {
        let history = History::in_memory(&["first", "second"]);
        let mut editor = Editor::default();
        typed(&mut editor, "draft", &history);
        editor.key(key(KeyCode::Up, KeyModifiers::NONE), &history);
        assert_eq!(editor.text, "second");
        editor.key(key(KeyCode::Up, KeyModifiers::NONE), &history);
        assert_eq!(editor.text, "first");
        assert_eq!(
            editor.key(key(KeyCode::Up, KeyModifiers::NONE), &history),
            Edit::Ignored
        );
        editor.key(key(KeyCode::Down, KeyModifiers::NONE), &history);
        assert_eq!(editor.text, "second");
        editor.key(key(KeyCode::Down, KeyModifiers::NONE), &history);
        assert_eq!(editor.text, "draft");
    }
}
