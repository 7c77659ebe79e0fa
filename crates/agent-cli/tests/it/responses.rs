//! The `agent` binary on the OpenAI Responses API (`--provider openai-responses`) against the
//! mock model server: a run with a tool call completes, and the model's reasoning item goes
//! back, as the server issued it, before the call it preceded.

use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn, Usage};
use serde_json::{Value, json};

use crate::agent_env;

#[tokio::test]
async fn a_run_carries_the_reasoning_item_across_its_tool_call() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "read_file", json!({"path": "notes.txt"}))
            .with_reasoning_item("The notes hold the answer.")
            .with_usage(Usage::new(50, 5)),
        Turn::text("The notes say 42.").with_usage(Usage::new(60, 5).with_cache_read(40)),
    ])
    .await;
    let work = env.work();
    std::fs::write(env.path("work/notes.txt"), "42\n").unwrap();
    let output = env
        .run(&[
            "run",
            "--provider",
            "openai-responses",
            "--base-url",
            &server.openai_base(),
            "--api-key",
            "sk-test",
            "--model",
            "gpt-5-codex",
            "--workspace",
            &work,
            "--json",
            "What do the notes say?",
        ])
        .await;
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["status"], "completed");
    assert_eq!(result["response"], "The notes say 42.");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    let first_output = &requests[0].body;
    assert_eq!(first_output["store"], false);
    // The second request returns the reasoning item right before the call it preceded; the
    // mock accepted it, so its encrypted content was the one it issued.
    let input = requests[1].body["input"].as_array().unwrap();
    let at = input
        .iter()
        .position(|item| item["type"] == "reasoning")
        .expect("the reasoning item went back");
    assert_eq!(input[at]["id"], "rs_mock_1");
    assert!(
        input[at]["encrypted_content"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    assert_eq!(
        input[at]["summary"],
        json!([{"type": "summary_text", "text": "The notes hold the answer."}])
    );
    assert_eq!(input[at + 1]["type"], "function_call");
    assert_eq!(input[at + 1]["call_id"], "call_1");
    let answer = &input[at + 2];
    assert_eq!(answer["type"], "function_call_output");
    assert_eq!(answer["call_id"], "call_1");
    assert!(
        answer["output"].as_str().unwrap().contains("42"),
        "{answer}"
    );
}
