//! `agent run --output-format stream-json`: every event and text delta on stdout as it comes, one
//! JSON object per line, then the result; the first words arrive while the model is still
//! sending.

use std::process::Stdio;
use std::time::Duration;

use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::agent_env;

const ANSWER: &str = "Every word of this answer is streamed.";

#[tokio::test]
async fn stream_json_prints_the_first_words_before_the_model_call_ends() {
    let env = agent_env();
    // Three pieces of text, 200 ms apart.
    let server = MockModelServer::with_replies([
        Reply::from(Turn::text(ANSWER)).with_pause(Duration::from_millis(200))
    ])
    .await;
    let base = server.openai_base();
    let work = env.work();
    let args = [
        "run",
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
        "--output-format",
        "stream-json",
        "Say something",
    ];
    let mut child = env
        .agent(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();

    let mut seen: Vec<Value> = Vec::new();
    let mut running_at_first_delta = None;
    while let Some(line) = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("no line within 30 s")
        .unwrap()
    {
        let value: Value = serde_json::from_str(&line).expect("every stdout line is JSON");
        if value["event"] == "text_delta" && running_at_first_delta.is_none() {
            running_at_first_delta = Some(child.try_wait().unwrap().is_none());
        }
        seen.push(value);
    }
    let status = child.wait().await.unwrap();
    assert!(status.success());
    assert_eq!(running_at_first_delta, Some(true), "{seen:#?}");

    let first_delta = seen
        .iter()
        .position(|v| v["event"] == "text_delta")
        .unwrap();
    let message = seen
        .iter()
        .position(|v| v["event"] == "message_added" && v["message"]["role"] == "assistant")
        .expect("the assistant message is an event");
    assert!(first_delta < message, "{seen:#?}");
    let deltas: String = seen
        .iter()
        .filter(|v| v["event"] == "text_delta")
        .map(|v| v["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, ANSWER);
    assert!(
        seen.iter()
            .filter(|v| v["event"] == "text_delta")
            .all(|v| v.get("event_id").is_none())
    );
    // The stored events of the run carry consecutive ids; the result comes last.
    let ids: Vec<u64> = seen.iter().filter_map(|v| v["event_id"].as_u64()).collect();
    assert_eq!(ids, (ids[0]..ids[0] + ids.len() as u64).collect::<Vec<_>>());
    let result = seen.last().unwrap();
    assert_eq!(result["event"], "result");
    assert_eq!(result["status"], "completed");
    assert_eq!(result["response"], ANSWER);
    assert!(seen.iter().any(|v| v["event"] == "trace_completed"));
}
