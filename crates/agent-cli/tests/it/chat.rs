//! `agent chat` as a user meets it: on a pseudo-terminal, against the mock model server
//! streaming its answers. What matters is what is on the screen when the session waits for a
//! key: the prompt, the question of an approval, the plan's changes, the cost of a turn.

use std::time::Duration;

use agent_test_support::cli::CliEnv;
use agent_test_support::mock_model::{MockModelServer, Reply, Turn, Usage};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

/// `agent chat` on a pty, on `server`, in the environment's workspace.
fn chat(env: &CliEnv, server: &MockModelServer, extra: &[&str]) -> Terminal {
    let base = server.openai_base();
    let work = env.work();
    let mut args = vec![
        "chat",
        "--provider",
        "openai",
        "--base-url",
        &base,
        "--api-key",
        "sk-test",
        "--model",
        "gpt-4o-mini",
        "--workspace",
        &work,
    ];
    args.extend_from_slice(extra);
    // The line mode; the full-screen UI is tested in tui.rs.
    let mut command = env.command(&args);
    command.env("AGENT_TUI", "0");
    Terminal::spawn(command)
}

fn call(id: &str, name: &str, arguments: Value) -> Turn {
    Turn::tool_call(id, name, arguments).with_usage(Usage::new(100, 10))
}

/// Whether the cursor waits on an empty prompt.
fn at_prompt(terminal: &Terminal) -> bool {
    terminal.cursor_row().trim_end() == "›"
}

fn wait_for_prompt(terminal: &Terminal, what: &str) -> String {
    terminal.wait_until(what, |_| at_prompt(terminal))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_streams_asks_shows_the_plan_and_continues_the_same_trace() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        call(
            "c1",
            "goal",
            json!({"add": "Write the greeting", "focus": "1"}),
        ),
        call(
            "c2",
            "write_file",
            json!({"path": "hello.txt", "content": "hello"}),
        ),
        call("c3", "goal", json!({"done": "hello.txt says hello"})),
        Turn::text("I wrote hello.txt for you.").with_usage(Usage::new(100, 10)),
        Turn::text("It holds \u{1b}[31mhello\u{1b}[0m.").with_usage(Usage::new(120, 8)),
    ])
    .await;
    let mut terminal = chat(&env, &server, &[]);
    let screen = wait_for_prompt(&terminal, "the first prompt");
    assert!(screen.contains("agent chat · gpt-4o-mini"), "{screen}");

    terminal.send("Write a greeting file\r");
    // The approval question is on the screen, whole, while the answer is read: the spinner
    // does not erase it.
    let screen = terminal.wait_for("[y/n/a]");
    assert!(terminal.cursor_row().starts_with("  [y/n/a]"), "{screen}");
    assert!(
        screen.contains("? write_file wants to create hello.txt:"),
        "{screen}"
    );
    assert!(screen.contains("  +hello"), "{screen}");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(terminal.screen(), screen, "the question stays as it is");
    terminal.send("y\r");
    let screen = wait_for_prompt(&terminal, "the prompt after the first turn");
    assert!(screen.contains("▶ goal 1 Write the greeting"), "{screen}");
    assert!(
        screen.contains("✓ 1 Write the greeting — hello.txt says hello"),
        "{screen}"
    );
    assert!(screen.contains("I wrote hello.txt for you."), "{screen}");
    assert!(screen.contains("this turn"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(env.path("work/hello.txt")).unwrap(),
        "hello"
    );

    terminal.send("/plan\r");
    terminal.wait_for("[✓] 1. Write the greeting");
    wait_for_prompt(&terminal, "the prompt after /plan");

    // The second turn continues the same trace: the model sees the whole conversation.
    terminal.send("What is in it?\r");
    terminal.wait_for("It holds hello.");
    let screen = wait_for_prompt(&terminal, "the prompt after the second turn");
    // The model's escape codes were not passed to the terminal.
    assert!(!screen.contains("[31m"), "{screen}");
    let last = server.requests().last().unwrap().body.clone();
    let texts: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("Write a greeting file")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "What is in it?"), "{texts:?}");

    // Lines typed ahead (or pasted together) are all read, one after the other.
    terminal.send("/cost\r/quit\r");
    assert_eq!(terminal.wait_exit(), Some(0));
    // The screen may show the last output a moment after the exit.
    terminal.wait_for("\n10 messages · 629 tokens");
    let traces: Vec<_> = std::fs::read_dir(env.traces()).unwrap().collect();
    assert_eq!(traces.len(), 1, "one conversation, one trace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_turn_and_a_second_one_at_the_prompt_quits() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Reply::from(Turn::text("Too late.")).with_delay(Duration::from_secs(60)),
        Reply::from(Turn::text("Back again.")),
    ])
    .await;
    let mut terminal = chat(&env, &server, &[]);
    wait_for_prompt(&terminal, "the first prompt");
    terminal.send("Think for a long time\r");
    terminal.wait_until("the request", |_| server.request_count() == 1);
    terminal.send("\u{3}");
    let screen = wait_for_prompt(&terminal, "the prompt after Ctrl-C");
    assert!(
        screen.contains("stopped; what was done is kept"),
        "{screen}"
    );
    // The spinner left nothing behind: the line after the task is the note.
    let lines: Vec<&str> = screen.lines().collect();
    let task = lines
        .iter()
        .position(|l| l.contains("Think for a long time"))
        .unwrap();
    assert_eq!(
        lines[task + 1],
        "stopping the turn (Ctrl-C again to quit)...",
        "{screen}"
    );

    // The stopped conversation goes on where it was.
    terminal.send("Try again\r");
    terminal.wait_for("Back again.");
    wait_for_prompt(&terminal, "the prompt after the second turn");

    terminal.send("\u{3}");
    terminal.wait_for("(Ctrl-C again, Ctrl-D or /quit to leave)");
    terminal.send("\u{3}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test]
async fn lines_from_a_pipe_are_turns_and_answers_go_to_stdout() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::text("One."),
        Turn::text("The user said first; the answer was One."),
        Turn::text("Two."),
    ])
    .await;
    let base = server.openai_base();
    let mut child = env
        .agent(&[
            "chat",
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--api-key",
            "sk-test",
            "--model",
            "gpt-4o-mini",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"first\n/bogus\n/compact\nsecond\n")
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "One.\nTwo.\n");
    assert!(stderr.contains("unknown command /bogus"), "{stderr}");
    assert!(stderr.contains("compacted"), "{stderr}");
    // The turn after /compact starts from the summary.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let last = requests[2].body["messages"].to_string();
    assert!(
        last.contains("The user said first; the answer was One."),
        "{last}"
    );
}
