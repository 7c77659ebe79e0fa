//! `agent plan edit` never throws away what the user typed: on a terminal a plan that cannot be
//! read reopens the editor with the error on top; without one the text is saved and the error
//! says where.

use agent_test_support::cli::{CliEnv, code, stderr};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

/// A planned trace with the goals "Write notes" and "Check notes".
async fn planned(env: &CliEnv) -> String {
    let script = env.write(
        "plan.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Write notes, Check notes"}}]},
            {"text": "Two goals."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "plan",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--json",
            "Make notes",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value =
        serde_json::from_str(String::from_utf8_lossy(&output.stdout).trim()).unwrap();
    result["trace_id"].as_str().unwrap().to_owned()
}

/// An executable editor script.
fn editor(env: &CliEnv, body: &str) -> String {
    let path = env.write("editor.sh", &format!("#!/bin/sh\n{body}"));
    std::process::Command::new("chmod")
        .args(["+x", &path])
        .status()
        .unwrap();
    path
}

async fn goals(env: &CliEnv, trace_id: &str) -> Vec<String> {
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", trace_id, "--json"]).await.stdout).unwrap();
    shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        // The planning goal holds the planner's reading; the plan is what follows it.
        .filter(|g| g["agent"] != "plan")
        .map(|g| g["description"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn without_a_terminal_an_unreadable_plan_is_saved_and_named() {
    let env = agent_env();
    let trace_id = planned(&env).await;
    let editor = editor(
        &env,
        "printf 'Write notes\\n\\tIndented with a tab\\n' > \"$1\"\n",
    );
    let output = env
        .agent(&["plan", "edit", &trace_id])
        .env("EDITOR", &editor)
        .output()
        .await
        .unwrap();
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    let log = stderr(&output);
    let saved = env.path(&format!("plan-{}.txt", &trace_id[..8]));
    assert!(log.contains(&saved.display().to_string()), "{log}");
    assert!(log.contains("tab"), "{log}");
    assert_eq!(
        std::fs::read_to_string(&saved).unwrap(),
        "Write notes\n\tIndented with a tab\n"
    );
    assert_eq!(goals(&env, &trace_id).await, ["Write notes", "Check notes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_the_editor_reopens_with_the_error_on_top() {
    let env = agent_env();
    let trace_id = planned(&env).await;
    let seen = env.path("seen.txt");
    // First round: a tab in the indent. Second round: keep what the editor was given (the
    // error on top, the text below), then write a readable plan.
    let editor = editor(
        &env,
        &format!(
            "if [ -f {seen} ]; then cp \"$1\" {seen}.second; \
             printf 'Write notes\\n  Spell-check them\\n' > \"$1\"; \
             else cp \"$1\" {seen}.first; printf 'Write notes\\n\\tbad\\n' > \"$1\"; \
             touch {seen}; fi\n",
            seen = seen.display()
        ),
    );
    let mut command = env.command(&["plan", "edit", &trace_id]);
    command.env("EDITOR", &editor);
    let mut terminal = Terminal::spawn(command);
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(
        terminal.screen().contains("plan updated"),
        "{}",
        terminal.screen()
    );
    assert_eq!(
        goals(&env, &trace_id).await,
        ["Write notes", "Spell-check them"]
    );
    let second = std::fs::read_to_string(format!("{}.second", seen.display())).unwrap();
    let mut lines = second.lines();
    let first = lines.next().unwrap();
    assert!(
        first.starts_with("# error") && first.contains("tab"),
        "{second}"
    );
    assert_eq!(lines.collect::<Vec<_>>(), ["Write notes", "\tbad"]);
}
