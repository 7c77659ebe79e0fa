//! `agent run --continue`: an ended trace, named by a unique prefix of its id or by `--last`,
//! takes the next user message under the same id; `show` and `resume` take prefixes too, and an
//! ambiguous or unknown prefix is a usage error (exit 2).

use agent_execution::{NewTrace, TraceStore};
use agent_store_fs::FileSystemTraceStore;
use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::{Value, json};

use crate::agent_env;

fn result_of(output: &std::process::Output) -> Value {
    assert_eq!(code(output), 0, "stderr: {}", stderr(output));
    serde_json::from_str(stdout(output).trim()).unwrap()
}

#[tokio::test]
async fn a_trace_continues_by_prefix_and_by_last_with_the_message_last_in_the_request() {
    let env = agent_env();
    let work = env.work();
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "goal", json!({"add": "Answer", "focus": "1"})),
        Turn::tool_call("c2", "goal", json!({"done": "it is 42"})),
        Turn::text("The answer is 42."),
        Turn::text("42 in French is quarante-deux."),
    ])
    .await;
    let base = server.openai_base();
    let model = [
        "--provider",
        "openai",
        "--base-url",
        base.as_str(),
        "--api-key",
        "sk-test",
        "--model",
        "gpt-test",
        "--workspace",
        work.as_str(),
        "--json",
    ];
    let mut first = vec!["run"];
    first.extend(model);
    first.push("What is the answer?");
    let result = result_of(&env.run(&first).await);
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();

    let mut next = vec!["run", "--continue", &trace_id[..8]];
    next.extend(model);
    next.push("Say it in French");
    let result = result_of(&env.run(&next).await);
    assert_eq!(result["trace_id"], trace_id.as_str());
    assert_eq!(result["status"], "completed");
    assert_eq!(result["response"], "42 in French is quarante-deux.");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let messages = requests[3].body["messages"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "Say it in French");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("[✓] 1. Answer"),
        "the plan is carried over: {messages:?}"
    );

    // --last with the scripted provider; show takes the prefix too.
    let script = env.write("again.json", &json!([{"text": "Once more."}]).to_string());
    let output = env
        .run(&[
            "run",
            "--continue",
            "--last",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Again",
        ])
        .await;
    let result = result_of(&output);
    assert_eq!(result["trace_id"], trace_id.as_str());
    assert_eq!(result["response"], "Once more.");
    let shown = env.run(&["show", &trace_id[..8], "--json"]).await;
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    assert!(stdout(&shown).contains("Again"));
}

#[tokio::test]
async fn an_ambiguous_or_unknown_prefix_is_a_usage_error() {
    let env = agent_env();
    let work = env.work();
    let store = FileSystemTraceStore::open(env.traces()).unwrap();
    for id in [
        "7d1e2c58-1111-4000-8000-000000000000",
        "7d1e2c58-2222-4000-8000-000000000000",
    ] {
        store
            .create_trace(NewTrace::agent("task").with_id(id))
            .await
            .unwrap();
    }
    let script = env.write("s.json", &json!([{"text": "x"}]).to_string());
    let output = env
        .run(&[
            "run",
            "--continue",
            "7d1e",
            "--script",
            &script,
            "--workspace",
            &work,
            "More",
        ])
        .await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("ambiguous"), "{message}");
    assert!(
        message.contains("7d1e2c58-1111-4000-8000-000000000000"),
        "{message}"
    );
    assert!(
        message.contains("7d1e2c58-2222-4000-8000-000000000000"),
        "{message}"
    );

    let output = env.run(&["show", "7d1e2c58-1"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).contains("7d1e2c58-1111-4000-8000-000000000000"));

    let output = env.run(&["resume", "ffff", "--script", &script]).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no trace ffff"),
        "{}",
        stderr(&output)
    );
    // Without an id, --continue takes the newest trace of the folder.
    drop(store);
    let output = env
        .run(&[
            "run",
            "--continue",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "More",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["trace_id"], "7d1e2c58-2222-4000-8000-000000000000");
}
