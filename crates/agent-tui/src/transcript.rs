//! The conversation kept in the terminal when the session ends. The screen is the terminal's
//! alternate one, which it gives back as it was before the session; so once it is left, the
//! session's conversation is written to the normal screen, in its colours and at the terminal's
//! width, as it was drawn (tool output folded, reasoning as it was shown), where it stays in the
//! scrollback as a line-mode session's would. The greeting is left out.

use std::io::Write;

use ratatui::backend::IntoCrossterm;
use ratatui::text::Line;

use crate::app::App;
use crate::cells::Look;

/// The conversation of `app` as lines of text with the terminal's colour sequences, `columns`
/// wide, each ending with a line break; empty when nothing was said.
pub(crate) fn ansi(app: &App, columns: usize) -> String {
    let look = Look {
        columns: columns.max(20),
        now: app.now,
        reasoning: app.reasoning,
    };
    let cells = app.cells.get(app.kept_from..).unwrap_or_default();
    let lines = crate::view::conversation_lines(cells, &look);
    let mut out = String::new();
    for line in &lines {
        out.push_str(&line_ansi(line));
        out.push('\n');
    }
    out
}

/// One line: each span in its style, the line's own style under it.
fn line_ansi(line: &Line<'_>) -> String {
    line.spans
        .iter()
        .map(|span| {
            let style = line.style.patch(span.style).into_crossterm();
            style.apply(span.content.as_ref()).to_string()
        })
        .collect()
}

/// Writes the conversation of `app` to standard output, after the screen was left. Nothing
/// written is not an error worth reporting: the trace keeps the conversation.
pub(crate) fn print(app: &App) {
    let columns = ratatui::crossterm::terminal::size().map_or(80, |(columns, _)| columns);
    let text = ansi(app, columns as usize);
    if text.trim().is_empty() {
        return;
    }
    let mut out = std::io::stdout();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use crate::app::{App, Status};
    use crate::cells::Cell;

    #[test]
    fn the_conversation_is_kept_in_its_colours_and_the_greeting_is_not() {
        let mut app = App::new(Status::default());
        app.notice("agent · gpt · /work\nType a message and Enter");
        app.kept_from = app.cells.len();
        app.cells.push(Cell::User("Fix the **lexer**".into()));
        app.cells.push(Cell::Assistant {
            text: "Fixed: `lexer.rs` now reads `.5`.".into(),
            streaming: false,
        });
        let text = super::ansi(&app, 60);
        let plain = crate::wrap::clean(&text);
        assert!(!plain.contains("Type a message"), "{plain:?}");
        assert!(plain.contains("› Fix the **lexer**"), "{plain:?}");
        assert!(plain.contains("Fixed: lexer.rs now reads .5."), "{plain:?}");
        // The user's words are bold and the prompt mark cyan, as on the screen.
        assert!(text.contains("\u{1b}[1m"), "{text:?}");
        assert!(text.contains("\u{1b}[38;5;6m› "), "{text:?}");
        assert_eq!(text.lines().count(), 3, "{text:?}");
        // Nothing was said: nothing is written.
        app.cells.truncate(app.kept_from);
        assert_eq!(super::ansi(&app, 60), "");
    }
}
