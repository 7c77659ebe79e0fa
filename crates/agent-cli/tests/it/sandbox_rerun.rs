//! A command the sandbox refused, on a pseudo-terminal in line mode: after the approval, the
//! user is asked whether to run it again without the sandbox; yes reruns it once (the file
//! outside the workspace exists), no leaves the refusal (and the model is told); with `--yes`
//! nobody is asked and the file stays absent. The full-screen UI asks in its modal.

use agent_test_support::cli::CliEnv;
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

const QUESTION: &str = "The sandbox refused this command: run it again without the sandbox? [y/N]";

/// `agent run` with a model that runs `command` once, plus `extra` flags.
fn run_command(env: &CliEnv, command: &str, extra: &[&str]) -> Terminal {
    let script = env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "Done."}
        ])
        .to_string(),
    );
    let work = env.work();
    // `agent run` keeps the line mode on a terminal.
    let mut args = vec!["run", "--script", &script, "--workspace", &work];
    args.extend_from_slice(extra);
    args.push("Write outside");
    Terminal::spawn(env.command(&args))
}

/// The result of the one tool call of the environment's one trace.
async fn tool_result(env: &CliEnv) -> String {
    let trace_id = std::fs::read_dir(env.traces())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .next()
        .unwrap();
    let shown = env.run(&["show", &trace_id, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_runs_again_without_the_sandbox_only_when_the_user_says_yes() {
    for yes in [true, false] {
        let env = agent_env();
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped");
        let command = format!("echo PWN > '{}'", escaped.display());
        let mut terminal = run_command(&env, &command, &[]);
        // A command with a redirection gets no "always" prefix.
        terminal.wait_for("[y/n/a]");
        terminal.send("y\r");
        let screen = terminal.wait_for(QUESTION);
        assert!(screen.contains(&format!("$ {command}")), "{screen}");
        // What it printed and the rule that refused it come before the question.
        assert!(refused(&screen), "{screen}");
        assert!(
            screen.contains("refused by the workspace-write sandbox"),
            "{screen}"
        );
        assert!(!escaped.exists(), "{screen}");
        terminal.send(if yes { "y\r" } else { "n\r" });
        assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
        assert_eq!(escaped.exists(), yes, "{}", terminal.screen());
        let result = tool_result(&env).await;
        if yes {
            assert!(
                result.contains("the user had it run again without the sandbox"),
                "{result}"
            );
            assert!(result.contains("exit code: 0"), "{result}");
        } else {
            assert!(result.contains("Read-only file system"), "{result}");
            assert!(result.contains("said no"), "{result}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_yes_a_refused_command_is_never_rerun() {
    let env = agent_env();
    let outside = tempfile::tempdir().unwrap();
    let escaped = outside.path().join("escaped");
    let command = format!("echo PWN > '{}'", escaped.display());
    let mut terminal = run_command(&env, &command, &["--yes"]);
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    let screen = terminal.screen();
    assert!(!screen.contains(QUESTION), "{screen}");
    assert!(!escaped.exists(), "{screen}");
    let result = tool_result(&env).await;
    assert!(result.contains("Read-only file system"), "{result}");
    assert!(
        result.contains("sandbox, which may have refused it"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_full_screen_ui_asks_in_its_modal() {
    use agent_test_support::mock_model::{MockModelServer, Turn};
    let env = agent_env();
    let outside = tempfile::tempdir().unwrap();
    let escaped = outside.path().join("escaped");
    let command = format!("echo PWN > '{}'", escaped.display());
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "bash", json!({ "command": command })),
        Turn::text("Written."),
    ])
    .await;
    let mut args = vec!["chat".to_owned()];
    args.extend(crate::on_server(&env, &server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));
    // Typed only once the screen is up, as keys sent earlier may be dropped.
    terminal.wait_for("Type a message and Enter");
    terminal.send("Write outside\r");
    terminal.wait_for("Allow bash?");
    crate::answer_question(&mut terminal, "y\r");
    // What the command printed, and the rule that refused it; yes or no, nothing "always".
    let screen = terminal.wait_for("The sandbox refused this command");
    assert!(!escaped.exists(), "{screen}");
    assert!(refused(&screen), "{screen}");
    assert!(
        screen.contains("refused by the workspace-write sandbox: writes go only inside"),
        "{screen}"
    );
    assert!(!screen.contains("always"), "{screen}");
    crate::answer_question(&mut terminal, "y\r");
    terminal.wait_for("Written.");
    assert!(escaped.exists(), "{}", terminal.screen());
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_allowed_by_a_rule_or_an_always_is_never_offered_a_rerun() {
    let outside = tempfile::tempdir().unwrap();
    let escaped = outside.path().join("escaped");
    let command = format!("touch '{}'", escaped.display());
    // Allowed by a rule of agent.toml: nobody saw it, so nobody is asked to unconfine it.
    let env = agent_env();
    env.write("agent.toml", "[approvals]\nallow = [\"bash(touch)\"]\n");
    let mut terminal = run_command(&env, &command, &[]);
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(
        !terminal.screen().contains(QUESTION),
        "{}",
        terminal.screen()
    );
    assert!(!escaped.exists());
    let result = tool_result(&env).await;
    assert!(refused(&result), "{result}");

    // Allowed by an earlier "always": the second call runs unasked, and is not offered a rerun.
    let env = agent_env();
    let script = env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "Done."}
        ])
        .to_string(),
    );
    let work = env.work();
    let mut terminal = Terminal::spawn(env.command(&[
        "run",
        "--script",
        &script,
        "--workspace",
        &work,
        "Write outside",
    ]));
    terminal.wait_for("[y/n/a/p]");
    terminal.send("a\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(
        !terminal.screen().contains(QUESTION),
        "{}",
        terminal.screen()
    );
    assert!(!escaped.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_typed_before_a_question_do_not_answer_it() {
    use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
    use std::time::Duration;
    let env = agent_env();
    env.write("work/keep.txt", "kept\n");
    // The model takes its time; meanwhile "y" and Enter are typed (or injected) ahead.
    let server = MockModelServer::with_replies([
        Reply::from(Turn::tool_call(
            "c1",
            "bash",
            json!({"command": "rm keep.txt"}),
        ))
        .with_pause(Duration::from_millis(1500)),
        Reply::from(Turn::text("Done.")),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("Clean up".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));
    terminal.send("y\r");
    let screen = terminal.wait_for("[y/n/a/p]");
    // The question waits for an answer given after it was shown.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        env.path("work/keep.txt").is_file(),
        "typed-ahead keys answered: {screen}"
    );
    terminal.send("n\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(env.path("work/keep.txt").is_file(), "{}", terminal.screen());
}

/// Whether `text` shows the sandbox's refusal: Landlock says "Permission denied", the helper's
/// read-only mounts "Read-only file system".
fn refused(text: &str) -> bool {
    text.contains("Permission denied") || text.contains("Read-only file system")
}
