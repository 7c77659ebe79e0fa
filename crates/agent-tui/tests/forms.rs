//! A tool's server asks the person (MCP elicitation): the form modal drawn on a test backend
//! (snapshots), and the keys that fill it in, decline or cancel it, with the answer that
//! reaches the asker.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agent_tui::{Action, App, FormAnswer, FormQuestion, Status};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use tokio::sync::oneshot;

fn app() -> App {
    App::new(Status {
        model: "gpt-4o-mini".into(),
        approval: "ask".into(),
        sandbox: "workspace-write".into(),
        ..Status::default()
    })
}

fn screen(app: &mut App, columns: u16, rows: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(columns, rows)).unwrap();
    terminal.draw(|frame| agent_tui::draw(frame, app)).unwrap();
    let buffer = terminal.backend().buffer();
    buffer
        .content()
        .chunks(buffer.area.width as usize)
        .map(|row| {
            let line: String = row.iter().map(|cell| cell.symbol()).collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "title": "Name", "description": "As you like to be called"},
        "colour": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
        "age": {"type": "integer", "title": "Age"},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": true}
    }, "required": ["name"]})
}

fn asked(app: &mut App) -> oneshot::Receiver<FormAnswer> {
    let form = agent_runner::interaction::Form::from_schema(&schema());
    let (question, answer) = FormQuestion::new("asking", "Who is there?", Some(form), None);
    app.elicit(question);
    answer
}

fn key(app: &mut App, code: KeyCode) -> Action {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

#[test]
fn the_form_asks_field_by_field_and_sends_the_answer() {
    let mut app = app();
    let mut answer = asked(&mut app);
    insta::assert_snapshot!("form_first_field", screen(&mut app, 80, 16));
    // A required field left empty says so and stays.
    key(&mut app, KeyCode::Enter);
    assert!(screen(&mut app, 80, 16).contains("Name is required"));
    typed(&mut app, "Ada");
    key(&mut app, KeyCode::Enter);
    // The choice starts on its default; → picks the next one.
    key(&mut app, KeyCode::Right);
    insta::assert_snapshot!("form_choice", screen(&mut app, 80, 16));
    key(&mut app, KeyCode::Enter);
    typed(&mut app, "x");
    key(&mut app, KeyCode::Enter);
    assert!(screen(&mut app, 80, 16).contains("Age: a whole number is needed"));
    key(&mut app, KeyCode::Backspace);
    typed(&mut app, "36");
    key(&mut app, KeyCode::Enter);
    assert!(answer.try_recv().is_err(), "answered before the last field");
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(key(&mut app, KeyCode::Enter), Action::Nothing);
    let expected = json!({"name": "Ada", "colour": "blue", "age": 36, "subscribe": false});
    assert_eq!(
        answer.try_recv().unwrap(),
        FormAnswer::Accept(expected.as_object().unwrap().clone())
    );
    // The form is gone, and keys edit the message again.
    assert!(!screen(&mut app, 80, 16).contains("asking asks"));
    typed(&mut app, "hi");
    assert_eq!(key(&mut app, KeyCode::Enter), Action::Send("hi".into()));
}

#[test]
fn defaults_are_kept_with_enter_and_esc_declines_ctrl_c_cancels() {
    let mut app = app();
    let mut answer = asked(&mut app);
    typed(&mut app, "Bo");
    for _ in 0..4 {
        key(&mut app, KeyCode::Enter);
    }
    let expected = json!({"name": "Bo", "colour": "green", "subscribe": true});
    assert_eq!(
        answer.try_recv().unwrap(),
        FormAnswer::Accept(expected.as_object().unwrap().clone())
    );

    let mut declined = asked(&mut app);
    let mut cancelled = asked(&mut app);
    assert!(screen(&mut app, 80, 16).contains("(1 of 2)"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(declined.try_recv().unwrap(), FormAnswer::Decline);
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(cancelled.try_recv().unwrap(), FormAnswer::Cancel);
}

#[test]
fn a_page_to_open_is_shown_with_its_address() {
    let mut app = app();
    let (question, mut answer) = FormQuestion::new(
        "billing",
        "Confirm the payment in your browser",
        None,
        Some("https://example.com/pay/42".into()),
    );
    app.elicit(question);
    insta::assert_snapshot!("form_url", screen(&mut app, 80, 12));
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        answer.try_recv().unwrap(),
        FormAnswer::Accept(Default::default())
    );
}
