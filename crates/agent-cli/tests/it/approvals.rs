//! Approvals as a user meets them: the question on a pseudo-terminal (the whole command, the
//! choices, still there while the answer is read), "always for this prefix" and "always for this
//! tool" stopping the next question, a reason the model reads, calls refused without a terminal
//! counted on the last line, and `[approvals]` rules of agent.toml applied before anyone is
//! asked.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

fn bash(id: &str, command: &str) -> Turn {
    Turn::tool_call(id, "bash", json!({ "command": command }))
}

/// `agent run <extra> TASK` against `server` in the environment's workspace.
fn run_args(env: &CliEnv, server: &MockModelServer, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(env, server));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.push("Say hello".into());
    args
}

/// The tool results the model was sent in the last request.
fn tool_results(server: &MockModelServer) -> Vec<String> {
    let last = server.requests().last().unwrap().body.clone();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_a_prefix_stops_the_next_question_and_a_reason_reaches_the_model() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        bash("c1", "echo hello one"),
        bash("c2", "echo hello two"),
        bash("c3", "echo bye"),
        Turn::text("Done."),
    ])
    .await;
    let args = run_args(&env, &server, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));

    let screen = terminal.wait_for("[y/n/a/p]");
    assert!(
        screen.contains("? bash wants to run:\n  echo hello one"),
        "{screen}"
    );
    assert!(screen.contains("[p] always `echo hello …`"), "{screen}");
    assert!(terminal.cursor_row().starts_with("  [y/n/a/p]"), "{screen}");
    terminal.send("p\r");

    // `echo hello two` runs without a question; `echo bye` asks.
    let screen = terminal.wait_for("echo bye\n");
    assert_eq!(screen.matches("wants to run").count(), 2, "{screen}");
    terminal.send("n: say it in French\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    // The answer streamed once; it is not printed again on the same terminal.
    let screen = terminal.screen();
    assert_eq!(screen.matches("Done.").count(), 1, "{screen}");
    assert!(screen.contains("    ↳ hello one"), "{screen}");
    let results = tool_results(&server);
    assert!(results[0].ends_with("hello one\n"), "{results:?}");
    assert!(results[1].ends_with("hello two\n"), "{results:?}");
    assert_eq!(
        results[2],
        "error: the user rejected this bash call: say it in French"
    );
}

#[tokio::test]
async fn without_a_terminal_refused_calls_are_counted_on_the_last_line() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        bash("c1", "touch a.txt"),
        bash("c2", "touch b.txt"),
        Turn::text("Could not."),
    ])
    .await;
    let args = run_args(&env, &server, &[]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let log = stderr(&output);
    let last = log.lines().last().unwrap();
    assert!(
        last.starts_with("agent: 2 risky tool calls were refused"),
        "{log}"
    );
    assert!(
        last.contains("--yes") && last.contains("[approvals]"),
        "{log}"
    );
    assert!(!env.path("work/a.txt").exists());
}

#[tokio::test]
async fn agent_toml_rules_apply_before_anyone_is_asked() {
    let env = agent_env();
    // Commands write in a folder of the workspace: without user namespaces the sandbox lets
    // them change top-level entries, not add new ones.
    std::fs::create_dir_all(env.path("work/out")).unwrap();
    env.write(
        "agent.toml",
        "[approvals]\nallow = [\"bash(touch)\"]\ndeny = [\"bash(rm)\"]\n",
    );
    let server = MockModelServer::with_replies([
        bash("c1", "touch out/allowed.txt"),
        bash("c2", "rm out/allowed.txt"),
        Turn::text("Done."),
    ])
    .await;
    // Even --yes does not run what a deny rule names.
    let args = run_args(&env, &server, &["--yes"]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Done.\n");
    assert!(env.path("work/out/allowed.txt").exists());
    let results: Vec<Value> = tool_results(&server).into_iter().map(Value::from).collect();
    assert_eq!(
        results[1],
        "error: bash was not run: the approval rule `bash(rm)` denies it"
    );

    // Without --yes and without a terminal, the allowed call still runs.
    std::fs::remove_file(env.path("work/out/allowed.txt")).unwrap();
    let server =
        MockModelServer::with_replies([bash("c1", "touch out/allowed.txt"), Turn::text("Ok.")])
            .await;
    let args = run_args(&env, &server, &[]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(env.path("work/out/allowed.txt").exists());
    assert!(!stderr(&output).contains("refused"), "{}", stderr(&output));

    // A rule that cannot be read is a configuration error naming the file and the rule.
    env.write("agent.toml", "[approvals]\nallow = [\"bash(touch\"]\n");
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("agent.toml"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("bash(touch"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_a_tool_stops_the_next_question_for_that_tool_only() {
    let env = agent_env();
    // Commands write in a folder of the workspace: without user namespaces the sandbox lets
    // them change top-level entries, not add new ones.
    std::fs::create_dir_all(env.path("work/out")).unwrap();
    let write = |id: &str, path: &str| {
        Turn::tool_call(id, "write_file", json!({"path": path, "content": "hi"}))
    };
    let server = MockModelServer::with_replies([
        write("c1", "one.txt"),
        write("c2", "two.txt"),
        bash("c3", "touch out/three.txt"),
        Turn::text("Done."),
    ])
    .await;
    let args = run_args(&env, &server, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));

    let screen = terminal.wait_for("[y/n/a]");
    assert!(
        screen.contains("? write_file wants to create one.txt:"),
        "{screen}"
    );
    terminal.send("a\r");

    // The second file is written without a question; bash is another tool and asks.
    let screen = terminal.wait_for("touch out/three.txt\n");
    assert_eq!(screen.matches("wants to").count(), 2, "{screen}");
    assert!(!screen.contains("wants to create two.txt"), "{screen}");
    assert!(screen.contains("? bash wants to run:"), "{screen}");
    assert!(env.path("work/two.txt").exists());
    terminal.send("y\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert_eq!(
        std::fs::read_to_string(env.path("work/one.txt")).unwrap(),
        "hi"
    );
    assert!(env.path("work/out/three.txt").exists());
    assert!(
        tool_results(&server)
            .iter()
            .all(|r| !r.starts_with("error"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_a_deny_rule_cannot_read_is_asked_about_on_a_terminal_even_when_allowed() {
    let env = agent_env();
    std::fs::create_dir_all(env.path("work/out")).unwrap();
    env.write(
        "agent.toml",
        "[approvals]\nallow = [\"bash\"]\ndeny = [\"bash(rm -rf)\"]\n",
    );
    let server = MockModelServer::with_replies([
        bash("c1", "$(echo touch) out/made.txt"),
        Turn::text("Done."),
    ])
    .await;
    let args = run_args(&env, &server, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));
    // `bash` is allowed, yet the deny rule cannot tell what runs: the person is asked, with
    // why, and offered no "always".
    let screen = terminal.wait_for("[y/n]");
    assert!(
        screen.contains("! the rule `bash(rm -rf)` cannot check this command"),
        "{screen}"
    );
    assert!(!screen.contains("always"), "{screen}");
    terminal.send("y\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(env.path("work/out/made.txt").exists());
}
