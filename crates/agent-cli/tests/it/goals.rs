//! The plan holds a run of the `agent` binary to its word: a model that stops with goals open
//! ends with exit code 5, the goals named on stderr and in `--json`, and `agent resume` takes
//! them up; `/goal` in the chat sets a goal with a check, which gates its `done`.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use serde_json::{Value, json};

use crate::agent_env;

/// A script whose model adds three goals, finishes one and then keeps saying it is finished.
fn stops_early(env: &CliEnv) -> String {
    let goal = |args: Value| json!({"tool_calls": [{"name": "goal", "arguments": args}]});
    let script = json!({
        "turns": [
            goal(json!({"add": "Parse the input, Compute the total, Print it", "focus": "1"})),
            goal(json!({"done": "parsed"})),
        ],
        "fallback": "I am finished."
    });
    env.write("script.json", &script.to_string())
}

#[tokio::test]
async fn a_run_that_leaves_goals_open_ends_incomplete_with_exit_code_5() {
    let env = agent_env();
    let script = stops_early(&env);
    let work = env.work();
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Total it",
        ])
        .await;
    assert_eq!(code(&output), 5, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["status"], "incomplete", "{result}");
    assert_eq!(result["stop"], "incomplete");
    assert_eq!(result["response"], "I am finished.");
    // Two model calls, the premature answer and three more.
    assert_eq!(result["iterations"], 6);
    let pending: Vec<(String, String)> = result["pending_goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let text = |key: &str| g[key].as_str().unwrap().to_owned();
            (text("number"), text("status"))
        })
        .collect();
    assert_eq!(
        pending,
        [
            ("2".to_owned(), "pending".to_owned()),
            ("3".to_owned(), "pending".to_owned())
        ]
    );

    // As text: the answers on stdout, the open goals and how to go on on stderr, with each time
    // the model was sent back.
    let text = env
        .run(&["run", "--script", &script, "--workspace", &work, "Total it"])
        .await;
    assert_eq!(code(&text), 5);
    assert!(stdout(&text).trim().ends_with("I am finished."));
    let err = stderr(&text);
    assert_eq!(
        err.matches("↻ Your plan still has open goals:").count(),
        3,
        "{err}"
    );
    assert!(
        err.contains("the run ended incomplete: the model stopped with 2 goal(s) of its plan open")
            && err.contains("2. Compute the total (pending)")
            && err.contains("3. Print it (pending)")
            && err.contains("agent resume"),
        "{err}"
    );
    // `agent resume` takes an incomplete trace up (where `completed` would be refused): the
    // model is sent back to the goals it left.
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    let goal = |args: Value| json!({"tool_calls": [{"name": "goal", "arguments": args}]});
    let finish = json!({"turns": [
        goal(json!({"focus": "2"})),
        goal(json!({"done": "42", "focus": "3"})),
        goal(json!({"done": "printed 42"})),
        {"text": "The total is 42."}
    ]});
    let finish = env.write("finish.json", &finish.to_string());
    let resumed = env
        .run(&[
            "resume",
            &trace_id,
            "--script",
            &finish,
            "--workspace",
            &work,
        ])
        .await;
    assert_eq!(code(&resumed), 0, "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed).trim(), "The total is 42.");
}

#[tokio::test]
async fn goal_in_the_chat_sets_a_checked_goal_and_the_run_sees_it_through() {
    let env = agent_env();
    std::fs::write(env.path("work").join("version.txt"), "1\n").unwrap();
    let call = |name: &str, args: Value| json!({"tool_calls": [{"name": name, "arguments": args}]});
    let script = json!({
        "turns": [
            call("goal", json!({"focus": "1"})),
            call("goal", json!({"done": "bumped"})),
            call("write_file", json!({"path": "version.txt", "content": "2\n"})),
            call("goal", json!({"done": "bumped to 2"})),
            {"text": "Version 2."}
        ]
    });
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    let mut child = env
        .agent(&["chat", "--yes", "--script", &script, "--workspace", &work])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = b"/goal\n/goal Bump the version --check grep -qx 2 version.txt\n/goal\n";
    tokio::io::AsyncWriteExt::write_all(&mut stdin, lines)
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("no goal yet: /goal TEXT"), "{err}");
    assert!(err.contains("goal 1 set: Bump the version"), "{err}");
    assert!(
        err.contains("✗ check failed: `grep -qx 2 version.txt` (exit code 1)"),
        "{err}"
    );
    assert!(
        err.contains("✓ check passed: `grep -qx 2 version.txt` (exit code 0)"),
        "{err}"
    );
    assert!(err.contains("every goal is done or abandoned"), "{err}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "Version 2.");
}
