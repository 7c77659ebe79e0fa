//! Snapshots of the UI's screens on a test backend, fed with the events a store really records
//! (an in-memory store, written as the runner writes): streaming Markdown, tool cells, the plan
//! panel with done, current, abandoned and branch goals, the approval modal, an error, and a
//! narrow terminal. Each snapshot is the screen's text, one row a line.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agent_execution::{
    AssistantContent, DeltaKind, Event, EventKind, InMemoryTraceStore, LiveDelta, LiveEvent,
    NewMessage, NewTrace, NoticeKind, ToolCall, TraceStore,
};
use agent_goal::{GoalCommand, GoalTree};
use agent_tui::{Action, Answer, App, Ask, Status};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

const TRACE: &str = "3f2a1b9c-0000-4000-8000-000000000001";

fn app() -> App {
    App::new(Status {
        model: "gpt-4o-mini".into(),
        context_window: Some(128_000),
        approval: "ask".into(),
        sandbox: "workspace-write".into(),
        ..Status::default()
    })
}

/// The screen's text after drawing `app` on a `columns` × `rows` terminal.
fn screen(app: &mut App, columns: u16, rows: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(columns, rows)).unwrap();
    terminal.draw(|frame| agent_tui::draw(frame, app)).unwrap();
    let buffer = terminal.backend().buffer();
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

/// A store holding a trace with the fixed id, and a way to read its new events.
struct Recorder {
    store: InMemoryTraceStore,
    seen: u64,
}

impl Recorder {
    async fn new(task: &str) -> Self {
        let store = InMemoryTraceStore::new();
        let mut new = NewTrace::agent(task);
        new.trace_id = Some(TRACE.into());
        store.create_trace(new).await.unwrap();
        store
            .add_message(TRACE, NewMessage::user(task))
            .await
            .unwrap();
        Self { store, seen: 0 }
    }

    /// The events recorded since the last call, into `app`.
    async fn feed(&mut self, app: &mut App) {
        for event in self.store.get_events(TRACE, self.seen).await.unwrap() {
            self.seen = event.event_id;
            app.apply(&LiveEvent::Stored(event));
        }
    }

    async fn goal(&self, command: GoalCommand) {
        self.store.apply_goal_command(TRACE, command).await.unwrap();
    }

    async fn call(&self, id: &str, name: &str, arguments: &str) {
        let turn = AssistantContent::new(None, vec![ToolCall::new(id, name, arguments)]);
        self.store
            .add_message(TRACE, NewMessage::assistant(turn).usage(1_200, 0.0012))
            .await
            .unwrap();
    }

    async fn result(&self, id: &str, name: &str, output: &str, ms: u64) {
        self.store
            .add_message(TRACE, NewMessage::tool(id, name, output).duration_ms(ms))
            .await
            .unwrap();
    }
}

fn delta(text: &str) -> LiveEvent {
    LiveEvent::Delta(LiveDelta {
        trace_id: TRACE.into(),
        goal_id: None,
        kind: DeltaKind::Text,
        delta: text.into(),
    })
}

fn command(add: Option<&str>, focus: Option<&str>, done: Option<&str>) -> GoalCommand {
    GoalCommand {
        add: add.map(str::to_owned),
        focus: focus.map(str::to_owned),
        done: done.map(str::to_owned),
        ..GoalCommand::default()
    }
}

const MARKDOWN: &str = "## What I found\n\nThe parser is **fine**; the bug is in `lexer.rs`:\n\n\
1. numbers with a *leading* dot\n2. empty strings\n   - inside quotes\n\n\
```rust\n// the fix\nlet dot = text.starts_with('.');\n```\n\n\
| case | before | after |\n|------|--------|-------|\n| .5 | error | 0.5 |\n| \"\" | panic | ok |\n\n\
Now I will run the tes";

#[tokio::test]
async fn streaming_text_is_rendered_as_markdown_as_it_arrives() {
    let mut recorder = Recorder::new("Why does the lexer fail?").await;
    let mut app = app();
    recorder.feed(&mut app).await;
    // The answer arrives in pieces; the screen shows what came so far.
    for piece in MARKDOWN.split_inclusive(' ') {
        app.apply(&delta(piece));
    }
    insta::assert_snapshot!(screen(&mut app, 80, 30));
}

#[tokio::test]
async fn tool_cells_show_state_command_change_and_folded_output() {
    let mut recorder = Recorder::new("Fix the lexer").await;
    let mut app = app();
    recorder
        .call("c1", "edit_file", r#"{"path":"src/lexer.rs","old":"let dot = false;","new":"let dot = text.starts_with('.');\nlet sign = text.starts_with('-');"}"#)
        .await;
    recorder
        .result("c1", "edit_file", "edited src/lexer.rs", 12)
        .await;
    recorder
        .call("c2", "bash", r#"{"command":"cargo test -p lexer"}"#)
        .await;
    recorder
        .result(
            "c2",
            "bash",
            "exit code: 0\n--- stdout ---\nrunning 7 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\ntest d ... ok\ntest e ... ok\n",
            2_400,
        )
        .await;
    recorder
        .call("c3", "read_file", r#"{"path":"src/parse.rs"}"#)
        .await;
    recorder
        .store
        .add_message(
            TRACE,
            NewMessage::tool_error("c3", "read_file", "no such file: src/parse.rs"),
        )
        .await
        .unwrap();
    recorder
        .call("c4", "bash", r#"{"command":"cargo build --release"}"#)
        .await;
    recorder.feed(&mut app).await;
    // The last call has been running for three seconds.
    app.now += Duration::from_secs(3);
    insta::assert_snapshot!(screen(&mut app, 80, 24));
}

/// A trace whose plan has a done goal, an abandoned one, an exploration with two branches (one
/// running) and a current goal.
async fn planned() -> (Recorder, App) {
    let mut recorder = Recorder::new("Make the build faster").await;
    let mut app = app();
    recorder
        .goal(command(
            Some("Measure the build, Try a cache, Explore the options, Apply the best"),
            Some("1"),
            None,
        ))
        .await;
    recorder
        .goal(command(
            None,
            Some("2"),
            Some("cold build takes 94 s; codegen dominates"),
        ))
        .await;
    recorder
        .goal(GoalCommand {
            abandon: Some("sccache is not installed on CI".into()),
            ..GoalCommand::default()
        })
        .await;
    // Goal numbers never shift: "Explore the options" stays 3 although 2 was abandoned.
    recorder.goal(command(None, Some("2"), None)).await;
    let mut tree: GoalTree = recorder.store.get_goal_tree(TRACE).await.unwrap().unwrap();
    let branches = vec![format!("{TRACE}@explore-1"), format!("{TRACE}@explore-2")];
    tree.start_explore("Compare linkers", branches.clone(), "2026-01-01T00:00:00Z")
        .unwrap();
    recorder.store.update_goal_tree(TRACE, tree).await.unwrap();
    recorder.feed(&mut app).await;
    let started = |trace_id: &str, task: &str| {
        LiveEvent::Stored(Event {
            event_id: 0,
            kind: EventKind::SubTraceStarted {
                trace_id: trace_id.into(),
                parent_goal_id: Some("5".into()),
                agent_type: "explore".into(),
                task: task.into(),
            },
            commit_continues: false,
        })
    };
    app.apply(&started(&branches[0], "Try mold as the linker"));
    app.apply(&started(&branches[1], "Try lld as the linker"));
    app.apply(&LiveEvent::Stored(Event {
        event_id: 0,
        kind: EventKind::SubTraceCompleted {
            trace_id: branches[0].clone(),
            status: agent_execution::TraceStatus::Completed,
            summary: Some("mold: 41 s".into()),
            stats: agent_execution::TraceStats::default(),
        },
        commit_continues: false,
    }));
    (recorder, app)
}

#[tokio::test]
async fn the_plan_panel_shows_done_current_abandoned_and_branch_goals() {
    let (_recorder, mut app) = planned().await;
    app.apply(&delta("Comparing the two linkers side by side."));
    insta::assert_snapshot!(screen(&mut app, 120, 22));
    // A key hides it, and shows it again.
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert!(!screen(&mut app, 120, 22).contains("Plan"));
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert!(screen(&mut app, 120, 22).contains("Plan"));
}

#[tokio::test]
async fn a_narrow_terminal_puts_the_plan_above_the_conversation() {
    let (_recorder, mut app) = planned().await;
    for piece in MARKDOWN.split_inclusive(' ') {
        app.apply(&delta(piece));
    }
    insta::assert_snapshot!(screen(&mut app, 60, 40));
}

#[tokio::test]
async fn the_approval_modal_shows_the_whole_command_and_answers_with_keys() {
    let mut recorder = Recorder::new("Clean the build").await;
    let mut app = app();
    recorder
        .call(
            "c1",
            "bash",
            r#"{"command":"cargo clean && rm -rf target/tmp"}"#,
        )
        .await;
    recorder.feed(&mut app).await;
    let (ask, answer) = Ask::new(
        "bash",
        "bash wants to run:\n  cargo clean && rm -rf target/tmp",
        Some("cargo clean".into()),
    );
    app.ask(ask);
    insta::assert_snapshot!(screen(&mut app, 100, 20));

    // `n`, a reason, Enter: refused with the reason.
    app.on_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
    for c in "keep target".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    assert!(screen(&mut app, 100, 20).contains("why not? (the model reads it) keep target"));
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(answer.await.unwrap(), Answer::No("keep target".into()));

    // Ctrl-C refuses at once and stops the turn.
    let (ask, answer) = Ask::new("bash", "bash wants to run:\n  ls", None);
    app.ask(ask);
    let action = app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(action, Action::Stop);
    assert!(matches!(answer.await.unwrap(), Answer::No(_)));

    let (ask, answer) = Ask::new(
        "write_file",
        "write_file wants to create a.txt:\n  +hello",
        None,
    );
    app.ask(ask);
    app.on_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE));
    assert_eq!(answer.await.unwrap(), Answer::Yes);
}

#[tokio::test]
async fn an_error_is_a_cell_of_its_own() {
    let mut recorder = Recorder::new("Say hello").await;
    let mut app = app();
    recorder.feed(&mut app).await;
    app.apply(&delta("Hel"));
    app.error(
        "the turn ended failed: the model server answered 401 Unauthorized: check the API key \
         (--api-key or OPENAI_API_KEY)",
    );
    insta::assert_snapshot!(screen(&mut app, 80, 12));
}

#[tokio::test]
async fn notices_and_compactions_are_told_in_the_conversation() {
    let mut recorder = Recorder::new("Read big.txt").await;
    let told = EventKind::Notice {
        kind: NoticeKind::ContextWindow,
        message: "the context window of smollm2 is 4,096 tokens (from the server's /props)".into(),
        tokens: Some(4096),
    };
    recorder.store.append_event(TRACE, told).await.unwrap();
    let mut summary = NewMessage::user("Summary: big.txt lists numbered notes.");
    for (key, value) in [
        ("compaction", json!(true)),
        ("tokens_before", json!(12_345)),
        ("tokens_after", json!(321)),
    ] {
        summary.metadata.insert(key.into(), value);
    }
    recorder.store.add_message(TRACE, summary).await.unwrap();
    let warned = EventKind::Notice {
        kind: NoticeKind::ToolsNotShown,
        message: "the server's chat template is not showing the model its tools".into(),
        tokens: None,
    };
    recorder.store.append_event(TRACE, warned).await.unwrap();
    let mut app = app();
    recorder.feed(&mut app).await;
    let shown = screen(&mut app, 100, 14);
    assert!(
        shown.contains("ⓘ the context window of smollm2 is 4,096 tokens"),
        "{shown}"
    );
    assert!(
        shown.contains("⟲ compacted the conversation: 12345 → 321 tokens"),
        "{shown}"
    );
    assert!(
        shown.contains("⚠ the server's chat template is not showing"),
        "{shown}"
    );
    assert!(
        !shown.contains("Summary: big.txt"),
        "the summary is not a user turn: {shown}"
    );
}

#[test]
fn ctrl_c_stops_a_running_turn_and_a_second_one_quits() {
    let mut app = app();
    app.running = true;
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(app.on_key(ctrl_c), Action::Stop);
    assert_eq!(app.on_key(ctrl_c), Action::Quit);
}

#[test]
fn slash_commands_complete_with_tab_and_are_sent_as_commands() {
    let mut app = app();
    for c in "/pl".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    assert!(screen(&mut app, 80, 12).contains("/plan  show or hide the plan panel"));
    app.on_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    let action = app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(action, Action::Command("plan".into()));
}
