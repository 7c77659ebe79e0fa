//! `agent fork`: a finished run forked at a goal prints the new trace's id, the fork names its
//! original and resumes; unknown goals, messages and traces are usage errors (exit code 2). On a
//! model server, a fork continued with a message sends the history and plan of its fork point
//! (at a goal, or after a message) as the original sent them, then the message.

use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use serde_json::{Value, json};

use crate::{agent_env, on_server};

#[tokio::test]
async fn a_trace_forked_at_a_goal_is_printed_named_and_resumable() {
    let env = agent_env();
    let work = env.work();
    let script = env.write(
        "run.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Draft, Polish", "focus": "1"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "drafted", "focus": "2"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "polished"}}]},
            {"text": "Finished."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Write it",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let original = result["trace_id"].as_str().unwrap().to_owned();

    // A unique prefix names the trace, as in `show` and `resume`.
    let output = env.run(&["fork", &original[..8], "--goal", "2"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let forked = stdout(&output).trim().to_owned();
    assert_ne!(forked, original);
    assert!(
        stderr(&output).contains(&format!("agent resume {forked}")),
        "{}",
        stderr(&output)
    );

    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &forked, "--json"]).await.stdout).unwrap();
    assert_eq!(shown["trace"]["forked_from"]["trace_id"], original.as_str());
    assert_eq!(shown["trace"]["status"], "cancelled");
    let statuses: Vec<&str> = shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["in_progress", "pending"]);

    let again = env.write(
        "again.json",
        &json!([
            // Goal 2 never starts in the fork: it is dropped.
            {"tool_calls": [{"name": "goal", "arguments": {"done": "redrafted", "delete": "2"}}]},
            {"text": "Done another way."}
        ])
        .to_string(),
    );
    let output = env
        .run(&["resume", &forked, "--script", &again, "--workspace", &work])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Done another way.\n");

    for args in [
        vec!["fork", original.as_str(), "--goal", "7"],
        vec!["fork", original.as_str(), "--message", "999"],
        vec!["fork", forked.as_str(), "--goal", "2"],
        vec!["fork", original.as_str()],
        vec![
            "fork",
            "00000000-0000-4000-8000-000000000000",
            "--goal",
            "1",
        ],
    ] {
        let output = env.run(&args).await;
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "", "{args:?}");
    }
}

/// `agent run <model options> <args>` to the end; its stdout, after checking it succeeded.
async fn run_on(
    env: &agent_test_support::cli::CliEnv,
    server: &MockModelServer,
    args: &[&str],
) -> String {
    run_on_to(env, server, args, 0).await
}

/// [`run_on`], checking it ended with exit code `expect`.
async fn run_on_to(
    env: &agent_test_support::cli::CliEnv,
    server: &MockModelServer,
    args: &[&str],
    expect: i32,
) -> String {
    let mut all = vec!["run".to_owned()];
    all.extend(on_server(env, server));
    all.extend(args.iter().map(|s| (*s).to_owned()));
    let output = env
        .run(&all.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), expect, "{all:?}: {}", stderr(&output));
    stdout(&output)
}

/// `agent fork <args>`: the new trace's id.
async fn fork_of(env: &agent_test_support::cli::CliEnv, args: &[&str]) -> String {
    let mut all = vec!["fork"];
    all.extend_from_slice(args);
    let output = env.run(&all).await;
    assert_eq!(code(&output), 0, "{args:?}: {}", stderr(&output));
    stdout(&output).trim().to_owned()
}

#[tokio::test]
async fn a_fork_continued_on_a_model_server_sends_the_history_of_the_fork_point_then_the_message() {
    let env = agent_env();
    env.write("work/a.txt", "alpha\n");
    env.write("work/b.txt", "beta\n");
    let read = |id: &str, path: &str| Turn::tool_call(id, "read_file", json!({ "path": path }));
    // Request 2 starts goal 2; request 4 follows the reading of b.txt.
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "goal", json!({"add": "Read a, Read b", "focus": "1"})),
        read("c2", "a.txt"),
        Turn::tool_call("c3", "goal", json!({"done": "a says alpha", "focus": "2"})),
        read("c4", "b.txt"),
        Turn::tool_call("c5", "goal", json!({"done": "b says beta"})),
        Turn::text("All read."),
        Turn::text("Both files were read."),
    ])
    .await;
    let result: Value = serde_json::from_str(
        run_on(&env, &server, &["--json", "Read the files"])
            .await
            .trim(),
    )
    .unwrap();
    assert_eq!(result["status"], "completed");
    let original = result["trace_id"].as_str().unwrap().to_owned();
    let recorded = server.requests();
    assert_eq!(recorded.len(), 7);
    assert_eq!(server.replies_left(), 0);
    // Every later answer is a plain text; the last request is the one looked at. A fork's
    // goals are open again, so a model that only answers leaves its run incomplete (5).
    server.when_empty(|_| Reply::from(Turn::text("Done another way.")));

    // At a goal: the history and plan of the request that started goal 2, then the message.
    let forked = fork_of(&env, &[&original, "--goal", "2"]).await;
    let answer = run_on_to(
        &env,
        &server,
        &["--continue", &forked, "do it another way"],
        5,
    )
    .await;
    assert!(answer.contains("Done another way."), "{answer}");
    let first = server.requests()[recorded.len()].body.clone();
    let messages = first["messages"].as_array().unwrap();
    let at_goal = recorded[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), at_goal.len() + 1, "{messages:#?}");
    assert_eq!(messages[..at_goal.len()], at_goal[..]);
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("[→] 1. Read a ← current\n[ ] 2. Read b"),
        "the plan of just before goal 2 started: {}",
        messages[0]["content"]
    );
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "do it another way"})
    );
    assert_eq!(first["tools"], recorded[2].body["tools"]);

    // After a message: the reading of b.txt and its result are kept, nothing after them.
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &original, "--json"]).await.stdout).unwrap();
    let reading = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m.to_string().contains("b.txt") && m["role"] == "assistant")
        .expect("the call that read b.txt is recorded");
    let sequence = reading["sequence"].as_u64().unwrap().to_string();
    let forked_at_message = fork_of(&env, &[&original[..8], "--message", &sequence]).await;
    assert_ne!(forked_at_message, forked);
    let shown: Value = serde_json::from_slice(
        &env.run(&["show", &forked_at_message, "--json"])
            .await
            .stdout,
    )
    .unwrap();
    assert_eq!(shown["trace"]["forked_from"]["trace_id"], original.as_str());
    let before = server.request_count();
    run_on_to(
        &env,
        &server,
        &["--continue", &forked_at_message, "go on"],
        5,
    )
    .await;
    let first = server.requests()[before].body.clone();
    let messages = first["messages"].as_array().unwrap();
    let after_reading = recorded[4].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), after_reading.len() + 1, "{messages:#?}");
    assert_eq!(messages[..after_reading.len()], after_reading[..]);
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "go on"})
    );
}
