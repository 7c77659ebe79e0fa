//! The full-screen UI as a user meets it: `agent chat` on a pseudo-terminal, against the mock
//! model server sending its answers in pieces. What is checked is what the screen shows: the
//! first words while the rest is unsent, the plan panel with the goal the model just focused,
//! the approval modal (answered with `y`, cancelled with Ctrl-C), Ctrl-C mid-answer keeping what
//! arrived, the input history of an earlier session, and the conversation of a continued trace.

use std::time::{Duration, Instant};

use agent_test_support::cli::CliEnv;
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_test_support::pty::Terminal;
use serde_json::json;

use crate::{agent_env, on_server};

/// What the UI shows once it is ready for a message.
const READY: &str = "Type a message and Enter";

/// `agent chat <extra>` on a pty, on `server`, in the environment's workspace.
fn tui(env: &CliEnv, server: &MockModelServer, extra: &[&str]) -> Terminal {
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(env, server));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let terminal = Terminal::spawn(env.command(&args));
    terminal.wait_for(READY);
    terminal
}

/// The ids of the traces in the environment's trace folder.
fn trace_ids(env: &CliEnv) -> Vec<String> {
    std::fs::read_dir(env.traces())
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The status of trace `id`, as its meta.json says.
fn trace_status(env: &CliEnv, id: &str) -> String {
    let meta = std::fs::read_to_string(env.traces().join(id).join("meta.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    meta["status"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_words_are_on_the_screen_while_the_rest_is_unsent() {
    let env = agent_env();
    let (first, middle, last) = ("Early words ", "middle words", " final words");
    let server =
        MockModelServer::with_replies([Reply::from(Turn::text(format!("{first}{middle}{last}")))
            .with_pause(Duration::from_millis(300))])
        .await;
    let mut terminal = tui(&env, &server, &[]);
    terminal.send("Say something slowly\r");
    let screen = terminal.wait_for("Early words");
    assert!(!screen.contains("final words"), "{screen}");
    assert!(screen.contains("› Say something slowly"), "{screen}");
    let screen = terminal.wait_for("Early words middle words final words");
    // The turn is over: the status line says so and the trace is complete.
    terminal.wait_until("the turn to end", |screen| screen.contains("○ gpt-4o-mini"));
    assert!(screen.contains("approval ask"), "{screen}");
    let ids = trace_ids(&env);
    assert_eq!(ids.len(), 1);
    assert_eq!(trace_status(&env, &ids[0]), "completed");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_panel_shows_the_goal_the_model_just_focused() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "c1",
            "goal",
            json!({"add": "Read the code, Fix the bug", "focus": "1"}),
        )),
        // The model takes its time before the next answer: the panel is checked meanwhile.
        Reply::from(Turn::text("Reading it now.")).with_delay(Duration::from_secs(3)),
    ])
    .await;
    let mut terminal = tui(&env, &server, &[]);
    terminal.send("Fix the bug in the parser\r");
    let screen = terminal.wait_for("▶ 1 Read the code");
    assert!(screen.contains(" Plan "), "{screen}");
    assert!(screen.contains("○ 2 Fix the bug"), "{screen}");
    assert!(!screen.contains("Reading it now."), "{screen}");
    terminal.wait_for("Reading it now.");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_modal_answered_with_y_runs_the_call() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "c1",
            "write_file",
            json!({"path": "hello.txt", "content": "hello"}),
        ),
        Turn::text("I wrote hello.txt."),
    ])
    .await;
    let mut terminal = tui(&env, &server, &[]);
    terminal.send("Write a greeting file\r");
    let screen = terminal.wait_for("Allow write_file?");
    assert!(
        screen.contains("write_file wants to create hello.txt"),
        "{screen}"
    );
    assert!(screen.contains("+hello"), "{screen}");
    assert!(!env.path("work/hello.txt").exists());
    crate::answer_question(&mut terminal, "y\r");
    terminal.wait_for("I wrote hello.txt.");
    assert_eq!(
        std::fs::read_to_string(env.path("work/hello.txt")).unwrap(),
        "hello"
    );
    let screen = terminal.screen();
    assert!(screen.contains("✓ write_file hello.txt"), "{screen}");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_the_modal_cancels_the_turn_within_a_second() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "c1",
            "write_file",
            json!({"path": "never.txt", "content": "x"}),
        ),
        Turn::text("Not reached."),
    ])
    .await;
    let mut terminal = tui(&env, &server, &[]);
    terminal.send("Write a file\r");
    terminal.wait_for("Allow write_file?");
    let asked = Instant::now();
    terminal.send("\u{3}");
    terminal.wait_for("stopped · what was said is kept");
    let took = asked.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the turn stopped after {took:?}"
    );
    assert!(!terminal.screen().contains("Allow write_file?"));
    assert!(!env.path("work/never.txt").exists());
    let ids = trace_ids(&env);
    assert_eq!(trace_status(&env, &ids[0]), "cancelled");
    // The session goes on: a second Ctrl-C quits.
    terminal.send("\u{3}");
    assert_eq!(terminal.wait_exit(), Some(0));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_session_recalls_the_first_ones_input_and_continuing_shows_the_conversation() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Noted, **twice**.")]).await;
    let mut terminal = tui(&env, &server, &[]);
    // A message of two lines (Ctrl-J), sent whole.
    terminal.send("Remember this line\nand this one\r");
    terminal.wait_for("Noted, twice.");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    drop(terminal);

    // Another session of the same project: Up brings the message back, both lines.
    let mut terminal = tui(&env, &server, &[]);
    assert!(!terminal.screen().contains("Remember this line"));
    terminal.send("\u{1b}[A");
    let screen = terminal.wait_for("› Remember this line");
    assert!(screen.contains("  and this one"), "{screen}");
    // Ctrl-C empties the line, Ctrl-D on an empty line quits.
    terminal.send("\u{3}");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    drop(terminal);

    // Continuing the trace shows what was said.
    let ids = trace_ids(&env);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let mut terminal = tui(&env, &server, &["--continue", &ids[0]]);
    let screen = terminal.wait_for("Noted, twice.");
    assert!(screen.contains("› Remember this line"), "{screen}");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_mid_answer_keeps_the_partial_text_on_screen_and_in_the_trace() {
    let env = agent_env();
    // Some words, then nothing more: the model is still "writing" when Ctrl-C comes.
    let server =
        MockModelServer::with_replies([crate::line_mode::unfinished("Half an answer so far")])
            .await;
    let mut terminal = tui(&env, &server, &[]);
    terminal.send("Explain\r");
    terminal.wait_for("Half an answer so far");
    terminal.send("\u{3}");
    // The turn stops at once, and what had arrived stays on the screen.
    let screen = terminal.wait_until("the turn to stop", |screen| {
        screen.contains("○ gpt-4o-mini")
    });
    assert!(screen.contains("Half an answer so far"), "{screen}");
    terminal.send("\u{4}");
    terminal.wait_exit();

    // And in the trace, as an assistant message marked interrupted.
    let ids = trace_ids(&env);
    assert_eq!(ids.len(), 1);
    let shown = env.run(&["show", &ids[0], "--json"]).await;
    let shown: serde_json::Value =
        serde_json::from_str(&agent_test_support::cli::stdout(&shown)).unwrap();
    let kept = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metadata"]["interrupted"] == true)
        .unwrap_or_else(|| panic!("no interrupted message: {shown}"));
    assert_eq!(kept["role"], "assistant");
    assert!(kept.to_string().contains("Half an answer so far"), "{kept}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goal_in_the_ui_sets_a_checked_goal_and_the_panel_shows_its_check() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "goal", json!({"focus": "1"})),
        // Marked done too early: the check refuses it.
        Turn::tool_call("c2", "goal", json!({"done": "written"})),
        Turn::tool_call(
            "c3",
            "write_file",
            json!({"path": "done.txt", "content": "yes"}),
        ),
        Turn::tool_call("c4", "goal", json!({"done": "done.txt written"})),
        Turn::text("done.txt is there."),
    ])
    .await;
    let mut terminal = tui(&env, &server, &[]);
    terminal.send("/goal Write done.txt --check test -f done.txt\r");
    terminal.wait_for("goal 1 set: Write done.txt");
    // The plan panel shows the goal with its check beside it.
    let screen = terminal.wait_for("⚑ check");
    assert!(screen.contains("1 Write done.txt"), "{screen}");
    terminal.wait_for("Allow write_file?");
    crate::answer_question(&mut terminal, "y\r");
    terminal.wait_for("done.txt is there.");
    terminal.wait_until("the turn to end", |screen| screen.contains("○ gpt-4o-mini"));
    let ids = trace_ids(&env);
    assert_eq!(trace_status(&env, &ids[0]), "completed");
    let tree = std::fs::read_to_string(env.traces().join(&ids[0]).join("goal.json")).unwrap();
    let tree: serde_json::Value = serde_json::from_str(&tree).unwrap();
    let goal = &tree["goals"][0];
    assert_eq!(goal["check"]["set_by"], "person");
    assert_eq!(goal["check_result"]["passed"], true, "{goal}");
    assert_eq!(goal["status"], "completed");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_picture_path_is_attached_to_the_next_message() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("A tiny picture.")]).await;
    // A screenshot outside the workspace, as a file manager pastes it: quoted, with a space.
    let shots = tempfile::tempdir().unwrap();
    let shot = shots.path().join("Screen shot.png");
    std::fs::write(&shot, agent_test_support::TINY_PNG).unwrap();
    let mut terminal = tui(&env, &server, &[]);
    terminal.send(&format!("\u{1b}[200~'{}'\u{1b}[201~", shot.display()));
    let screen = terminal.wait_for("[image: Screen shot.png 3×2]");
    assert!(
        !screen.contains(&format!("› '{}", shots.path().display())),
        "not typed: {screen}"
    );
    // Backspace on the empty line takes it off; pasted again, it stays for the message.
    terminal.send("\u{7f}");
    terminal.wait_until("the picture taken off", |s| {
        !s.contains("[image: Screen shot.png")
    });
    terminal.send(&format!(
        "\u{1b}[200~{}\u{1b}[201~",
        shot.display().to_string().replace(' ', "\\ ")
    ));
    terminal.wait_for("[image: Screen shot.png 3×2]");
    terminal.send("What is this?\r");
    terminal.wait_for("A tiny picture.");
    let requests = server.requests();
    let body = requests[0].body.to_string();
    let encoded = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==";
    assert!(
        body.contains(&format!("data:image/png;base64,{encoded}")),
        "{body}"
    );
    assert!(body.contains("What is this?"), "{body}");
    // The message shows its placeholder, and the line above the input is empty again.
    let screen = terminal.wait_until("the attachment gone", |s| !s.contains("📎"));
    assert!(screen.contains("[image: Screen shot.png 3×2]"), "{screen}");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_v_attaches_the_picture_on_the_clipboard() {
    use std::os::unix::fs::PermissionsExt;
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("A copied picture.")]).await;
    // A clipboard holding a PNG, as `wl-paste` gives it; then one holding none.
    let tools = tempfile::tempdir().unwrap();
    let shot = tools.path().join("shot.png");
    std::fs::write(&shot, agent_test_support::TINY_PNG).unwrap();
    let paste = tools.path().join("wl-paste");
    let script = format!(
        "#!/bin/sh\n[ -f {0}.gone ] && exit 1\ncat {0}\ntouch {0}.gone\n",
        shot.display()
    );
    std::fs::write(&paste, script).unwrap();
    std::fs::set_permissions(&paste, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap()
    );
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(&env, &server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = env.command(&args);
    command
        .env("PATH", path)
        .env("WAYLAND_DISPLAY", "wayland-test");
    let mut terminal = Terminal::spawn(command);
    terminal.wait_for(READY);
    terminal.send("\u{16}");
    terminal.wait_for("[image: clipboard 3×2]");
    // The clipboard is empty now: the UI says so and keeps the picture it has.
    terminal.send("\u{16}");
    let screen = terminal.wait_for("the clipboard holds no picture");
    assert_eq!(screen.matches("[image: clipboard").count(), 1, "{screen}");
    terminal.send("What is this?\r");
    terminal.wait_for("A copied picture.");
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("data:image/png;base64,iVBORw0KGgo"), "{body}");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}
