//! Snapshots of the UI's screens on a test backend, fed with the events a store really records
//! (an in-memory store, written as the runner writes): streaming Markdown, tool cells, the plan
//! panel with done, current, abandoned and branch goals, the approval modal, an error, and a
//! narrow terminal. Each snapshot is the screen's text, one row a line.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agent_execution::meta::{self, ToolOutcome};
use agent_execution::{
    AssistantContent, DeltaKind, Event, EventKind, InMemoryTraceStore, LiveDelta, LiveEvent,
    NewMessage, NewTrace, NoticeKind, ToolCall, TraceStore,
};
use agent_goal::{GoalCommand, GoalTree};
use agent_runner::interaction::shells::{ShellState, ShellStatus};
use agent_runner::{Notice, RerunRequest};
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

    /// A tool result that says how its call ended, as the runner records it.
    async fn ended(&self, id: &str, name: &str, output: &str, outcome: ToolOutcome) {
        let mut message = if outcome == ToolOutcome::Refused {
            NewMessage::tool_error(id, name, output)
        } else {
            NewMessage::tool(id, name, output)
        };
        message
            .metadata
            .insert(meta::OUTCOME.into(), serde_json::to_value(outcome).unwrap());
        self.store
            .add_message(TRACE, message.duration_ms(1_500))
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
    app.on_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL));
    assert!(!screen(&mut app, 120, 22).contains("Plan"));
    app.on_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL));
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

/// Types `c` on `app`, `gap` after the key before it.
fn press(app: &mut App, c: char, gap: Duration) -> Action {
    app.now += gap;
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

/// Presses `code` on `app`, `gap` after the key before it.
fn key(app: &mut App, code: KeyCode, gap: Duration) -> Action {
    app.now += gap;
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// A pause long enough for a key to answer a question.
const STILL: Duration = Duration::from_secs(1);
/// The gap between the keys of someone typing.
const TYPING: Duration = Duration::from_millis(60);

#[tokio::test]
async fn the_approval_modal_shows_the_whole_command_and_answers_a_deliberate_choice() {
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
    let (ask, mut answer) = Ask::new(
        "bash",
        "bash wants to run:\n  cargo clean && rm -rf target/tmp",
        Some("cargo clean".into()),
    );
    app.ask(ask);
    // Keys typed as it appears are the message's: "yes" and even Enter answer nothing; the
    // message goes to the turn as typed.
    for c in "yes a".chars() {
        assert_eq!(press(&mut app, c, TYPING), Action::Nothing);
    }
    assert!(answer.try_recv().is_err());
    assert_eq!(
        key(&mut app, KeyCode::Enter, TYPING),
        Action::Send("yes a".into())
    );
    for c in "and then".chars() {
        press(&mut app, c, TYPING);
    }
    assert!(answer.try_recv().is_err());
    // Still for a moment: the choices, nothing picked, the message kept.
    app.now += STILL;
    insta::assert_snapshot!(screen(&mut app, 100, 24));
    // Enter with nothing picked does nothing.
    key(&mut app, KeyCode::Enter, STILL);
    assert!(answer.try_recv().is_err());
    assert!(screen(&mut app, 100, 24).contains("› and then"));

    // `n` picks "no", Enter asks why; a reason and Enter refuse with it.
    press(&mut app, 'n', STILL);
    assert!(screen(&mut app, 100, 24).contains("› 4. No, and tell the model why  (n)"));
    key(&mut app, KeyCode::Enter, TYPING);
    for c in "keep target".chars() {
        press(&mut app, c, TYPING);
    }
    assert!(screen(&mut app, 100, 24).contains("why not? (the model reads it) keep target"));
    key(&mut app, KeyCode::Enter, TYPING);
    assert_eq!(answer.await.unwrap(), Answer::No("keep target".into()));

    // An arrow and Enter answer; a letter typed right after another is typing, and drops
    // the pick.
    let (ask, mut answer) = Ask::new("bash", "bash wants to run:\n  ls", Some("ls".into()));
    app.ask(ask);
    key(&mut app, KeyCode::Down, STILL);
    key(&mut app, KeyCode::Down, TYPING);
    assert!(screen(&mut app, 100, 24).contains("› 2. Yes, and commands starting `ls`"));
    press(&mut app, 'a', TYPING);
    key(&mut app, KeyCode::Enter, TYPING);
    assert!(
        answer.try_recv().is_err(),
        "a pick dropped by typing is not confirmed"
    );
    key(&mut app, KeyCode::Down, STILL);
    key(&mut app, KeyCode::Enter, TYPING);
    assert_eq!(answer.await.unwrap(), Answer::Yes);

    // Ctrl-C refuses at once and stops the turn, while typing too.
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
    press(&mut app, 'y', STILL);
    key(&mut app, KeyCode::Enter, TYPING);
    assert_eq!(answer.await.unwrap(), Answer::Yes);
}

#[tokio::test]
async fn the_sandbox_refusal_shows_the_error_and_the_rule_and_asks_yes_or_no() {
    let mut app = app();
    let request = RerunRequest {
        trace_id: TRACE.into(),
        tool_call_id: Some("c1".into()),
        command: "touch ~/made-outside".into(),
        output: "exit code: 1\n--- stderr ---\ntouch: cannot touch '/home/me/made-outside': \
                 Read-only file system\nnote: this command ran in the workspace-write sandbox, \
                 which may have refused it: writes go only inside the workspace and to $TMPDIR.\n"
            .into(),
        rule: "the workspace-write sandbox: writes go only inside the workspace (not to .git, \
               agent.toml or .agent/) and to $TMPDIR; there is no network"
            .into(),
    };
    let (ask, mut answer) = Ask::rerun(&request);
    app.ask(ask);
    app.now += STILL;
    insta::assert_snapshot!(screen(&mut app, 100, 24));
    // There is no "always" here: `a` picks nothing.
    press(&mut app, 'a', STILL);
    key(&mut app, KeyCode::Enter, TYPING);
    assert!(answer.try_recv().is_err());
    press(&mut app, 'y', STILL);
    key(&mut app, KeyCode::Enter, TYPING);
    assert_eq!(answer.await.unwrap(), Answer::Yes);
}

#[tokio::test]
async fn each_way_a_call_ends_has_its_own_mark_and_only_success_is_ticked() {
    let mut recorder = Recorder::new("Check the build").await;
    let mut app = app();
    let calls = [
        (
            "c1",
            "cargo test",
            "exit code: 0\nok",
            ToolOutcome::Exited { code: 0 },
        ),
        (
            "c2",
            "cargo build",
            "exit code: 1\n--- stderr ---\nerror[E0425]",
            ToolOutcome::Exited { code: 1 },
        ),
        (
            "c3",
            "rm -rf /",
            "error: the user rejected this bash call",
            ToolOutcome::Refused,
        ),
        (
            "c4",
            "sleep 999",
            "error: the command timed out after 1 s",
            ToolOutcome::TimedOut,
        ),
        (
            "c5",
            "kill -9 $$",
            "killed by signal 9",
            ToolOutcome::Killed { signal: 9 },
        ),
    ];
    for (id, command, output, outcome) in calls {
        let arguments = serde_json::json!({ "command": command }).to_string();
        recorder.call(id, "bash", &arguments).await;
        recorder.ended(id, "bash", output, outcome).await;
    }
    recorder.feed(&mut app).await;
    let shown = screen(&mut app, 80, 26);
    insta::assert_snapshot!(shown);
    let ticked: Vec<&str> = shown.lines().filter(|l| l.starts_with('✓')).collect();
    assert_eq!(ticked, ["✓ bash cargo test  1.5s"], "{shown}");
}

#[tokio::test]
async fn a_compaction_is_a_notice_never_a_message_of_the_user() {
    let mut recorder = Recorder::new("Refactor the parser").await;
    let mut app = app();
    recorder
        .call("c1", "read_file", r#"{"path":"src/parse.rs"}"#)
        .await;
    recorder.result("c1", "read_file", "fn parse() {}", 3).await;
    let mut summary = agent_runner::compaction::summary_message(
        "**Goal**: refactor the parser.\n\n**Done**: read src/parse.rs.",
        None,
    );
    summary
        .metadata
        .insert(meta::TOKENS_BEFORE.into(), 48_200.into());
    summary
        .metadata
        .insert(meta::TOKENS_AFTER.into(), 3_100.into());
    recorder.store.add_message(TRACE, summary).await.unwrap();
    recorder.feed(&mut app).await;
    app.apply(&delta("Going on from the summary."));
    let shown = screen(&mut app, 80, 16);
    insta::assert_snapshot!(shown);
    // The user said one thing: the task.
    let said: Vec<&str> = shown.lines().filter(|l| l.starts_with("› ")).collect();
    assert_eq!(said, ["› Refactor the parser"], "{shown}");
    assert!(!shown.contains("**"), "{shown}");
}

#[test]
fn a_retry_is_in_the_status_line_until_an_answer_arrives() {
    let mut app = app();
    app.running = true;
    app.client_notice(&Notice::Retrying {
        error: "the provider's rate limit was hit (429 Too Many Requests)".into(),
        rate_limited: true,
        wait: Duration::from_secs(12),
        attempt: 2,
        attempts: 4,
    });
    let status = screen(&mut app, 120, 8).lines().last().unwrap().to_owned();
    insta::assert_snapshot!(status, @"⟳ rate limited · retrying in 12s (attempt 2 of 4) · gpt-4o-mini · 0 tok · $0.0000 · ask · workspace-write");
    app.now += Duration::from_secs(5);
    assert!(screen(&mut app, 120, 8).contains("retrying in 7s"));
    app.apply(&delta("Here it is"));
    assert!(!screen(&mut app, 120, 8).contains("retrying"));
}

#[tokio::test]
async fn ctrl_o_unfolds_the_newest_tool_output_in_a_scrollable_view() {
    let mut recorder = Recorder::new("Run the tests").await;
    let mut app = app();
    recorder
        .call("c1", "bash", r#"{"command":"cargo test"}"#)
        .await;
    let output: String = (1..=30)
        .map(|n| format!("test case_{n} ... ok\n"))
        .collect();
    recorder.result("c1", "bash", &output, 900).await;
    recorder.feed(&mut app).await;
    let folded = screen(&mut app, 80, 20);
    assert!(folded.contains("… +"), "{folded}");
    assert!(!folded.contains("case_30 "), "{folded}");
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let unfolded = screen(&mut app, 80, 20);
    assert!(
        unfolded.contains(" Output · bash · cargo test "),
        "{unfolded}"
    );
    assert!(unfolded.contains("test case_1 ... ok"), "{unfolded}");
    app.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
    assert!(screen(&mut app, 80, 20).contains("test case_30 ... ok"));
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(!screen(&mut app, 80, 20).contains(" Output · "));
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
        shown.contains("⟲ context compacted:") && shown.contains("12.3k → 321 tokens"),
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

fn shell(id: &str, command: &str, state: ShellState, started_at: &str) -> ShellStatus {
    ShellStatus {
        id: id.into(),
        trace_id: TRACE.into(),
        command: command.into(),
        state,
        output_bytes: 0,
        started_at: started_at.into(),
    }
}

#[test]
fn the_shells_view_lists_each_shell_and_a_key_stops_the_chosen_one() {
    let mut app = app();
    let at = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:10:00Z")
        .unwrap()
        .to_utc();
    let shells = vec![
        shell(
            "sh-3f2a",
            "npm run dev",
            ShellState::Running,
            "2026-01-02T03:04:05Z",
        ),
        shell(
            "sh-91c0",
            "cargo watch -x test",
            ShellState::Exited { code: 101 },
            "2026-01-02T03:09:48Z",
        ),
        shell(
            "sh-0b7e",
            "tail -f log/dev.log",
            ShellState::Killed { signal: Some(9) },
            "2026-01-02T01:00:00Z",
        ),
    ];
    app.show_shells(shells.clone(), at);
    insta::assert_snapshot!(screen(&mut app, 90, 12));

    // The chosen one is stopped by the command that stops it by name.
    assert_eq!(key(&mut app, KeyCode::Down, STILL), Action::Nothing);
    assert_eq!(
        press(&mut app, 'x', STILL),
        Action::Command("shells kill sh-91c0".into())
    );
    // A refresh keeps the chosen shell chosen, wherever it moved.
    let mut fewer = shells[1..].to_vec();
    fewer[0].state = ShellState::Killed { signal: Some(15) };
    app.show_shells(fewer, at);
    assert_eq!(
        key(&mut app, KeyCode::Delete, STILL),
        Action::Command("shells kill sh-91c0".into())
    );
    // Typing does not reach the message box while the view is open; Esc closes it.
    assert_eq!(press(&mut app, 'h', TYPING), Action::Nothing);
    assert_eq!(key(&mut app, KeyCode::Esc, STILL), Action::Nothing);
    assert!(!app.shells_shown());
    assert!(!screen(&mut app, 90, 12).contains("Background shells"));

    // With none, the view says how shells come and go.
    app.show_shells(Vec::new(), at);
    assert!(screen(&mut app, 90, 12).contains("no background shells"));
}

#[tokio::test]
async fn a_background_delegates_end_is_a_notice_not_a_message_of_the_user() {
    let mut recorder = Recorder::new("Ship the release").await;
    let mut told = NewMessage::user(format!(
        "The background delegate {TRACE}@delegate-1 ended.\n\nThe delegated task completed.\n42 open issues"
    ));
    told.metadata
        .insert(meta::TURN.into(), json!(meta::Turn::Background.as_str()));
    recorder.store.add_message(TRACE, told).await.unwrap();
    let mut app = app();
    recorder.feed(&mut app).await;
    let screen = screen(&mut app, 100, 12);
    assert!(
        screen.contains(&format!(
            "↻ The background delegate {TRACE}@delegate-1 ended."
        )),
        "{screen}"
    );
    assert!(!screen.contains("42 open issues"), "{screen}");
}
