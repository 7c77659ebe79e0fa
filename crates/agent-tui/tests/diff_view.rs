//! Snapshots of a goal's diff in its scrollable view (`/diff N`): drawn over the conversation
//! and the plan panel, added lines green and removed lines red, scrolled by the keys, closed by
//! Esc; an empty diff says nothing changed.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agent_tui::{Action, App, Status};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;

const DIFF: &str = "\
diff --git a/notes.md b/notes.md
index 1111111..2222222 100644
--- a/notes.md
+++ b/notes.md
@@ -1,3 +1,3 @@
 title
-draft
+revised
 end
diff --git a/extra.md b/extra.md
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/extra.md
@@ -0,0 +1,6 @@
+one
+two\tthree
+four \u{1b}[31m
+five
+six
+seven
";

fn app() -> App {
    App::new(Status {
        model: "gpt-4o-mini".into(),
        approval: "ask".into(),
        sandbox: "workspace-write".into(),
        ..Status::default()
    })
}

fn draw(app: &mut App, columns: u16, rows: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(columns, rows)).unwrap();
    terminal.draw(|frame| agent_tui::draw(frame, app)).unwrap();
    terminal.backend().buffer().clone()
}

fn text(buffer: &Buffer) -> String {
    buffer
        .content()
        .chunks(buffer.area.width as usize)
        .map(|row| {
            row.iter()
                .map(|cell| cell.symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The colour of the first cell of the row whose text starts (after the border) with `start`.
fn colour_of(buffer: &Buffer, start: &str) -> Color {
    let width = buffer.area.width as usize;
    let rows: Vec<&[ratatui::buffer::Cell]> = buffer.content().chunks(width).collect();
    let row = rows
        .iter()
        .find(|row| {
            let line: String = row.iter().map(|cell| cell.symbol()).collect();
            line.trim_start_matches('│').starts_with(start)
        })
        .unwrap_or_else(|| panic!("no row starts with {start:?}:\n{}", text(buffer)));
    row[1].fg
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn a_goals_diff_is_shown_coloured_and_scrolls_and_esc_closes_it() {
    let mut app = app();
    app.notice("an earlier notice, hidden by the diff");
    app.show_diff("goal 2", DIFF);
    assert!(app.diff_shown());
    let buffer = draw(&mut app, 70, 16);
    insta::assert_snapshot!("diff_view_top", text(&buffer));
    assert_eq!(colour_of(&buffer, "+revised"), Color::Green);
    assert_eq!(colour_of(&buffer, "-draft"), Color::Red);
    assert_eq!(colour_of(&buffer, "@@ -1,3"), Color::Cyan);
    assert!(!text(&buffer).contains("an earlier notice"));

    // A page down shows the end; the escape sequence of the file is shown, not sent.
    assert_eq!(app.on_key(key(KeyCode::PageDown)), Action::Nothing);
    let buffer = draw(&mut app, 70, 16);
    insta::assert_snapshot!("diff_view_scrolled", text(&buffer));
    assert!(text(&buffer).contains("+seven"));
    assert!(!text(&buffer).contains('\u{1b}'));

    // Keys go to the view while it is open, not to the message being typed.
    app.on_key(key(KeyCode::Char('x')));
    app.on_key(key(KeyCode::Esc));
    assert!(!app.diff_shown());
    let buffer = draw(&mut app, 70, 16);
    assert!(
        text(&buffer).contains("an earlier notice"),
        "{}",
        text(&buffer)
    );
    assert!(!text(&buffer).contains("Diff · goal 2"));
}

#[test]
fn an_empty_diff_says_nothing_changed() {
    let mut app = app();
    app.show_diff("goal 1", "");
    let screen = text(&draw(&mut app, 60, 8));
    assert!(screen.contains("(no file changed)"), "{screen}");
}
