//! A run watched from another process: `agent serve` in one process, `agent run` in another on
//! the same trace folder. The WebSocket watcher of the server gets every event of the run live,
//! in order, with no gap and no duplicate; a trace whose writer was killed is reported as
//! interrupted, not as running forever.

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, build_agent};
use futures::StreamExt;
use serde_json::{Value, json};

/// A script of `turns` model calls, each answering after `delay_ms`, then a final answer.
fn slow_script(env: &CliEnv, turns: usize, delay_ms: u64) -> String {
    let mut script: Vec<Value> = (0..turns)
        .map(|i| {
            json!({"delay_ms": delay_ms, "tool_calls": [
                {"name": "glob_files", "arguments": {"pattern": format!("step{i}/*")}}
            ]})
        })
        .collect();
    script.push(json!({"delay_ms": delay_ms, "text": "All steps done."}));
    env.write("script.json", &Value::from(script).to_string())
}

/// Waits for the first trace of the server's list.
async fn first_trace(served: &agent_test_support::cli::Served) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = served.request("GET", "/api/traces", None);
        assert_eq!(status, 200);
        if let Some(id) = body["traces"][0]["trace_id"].as_str() {
            return id.to_owned();
        }
        assert!(Instant::now() < deadline, "no trace appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_watches_a_run_of_another_process_live() {
    let env = CliEnv::new(build_agent());
    let served = env.serve(&[]);
    let script = slow_script(&env, 6, 150);
    let mut run = env
        .agent(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "Six steps",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let trace_id = first_trace(&served).await;
    let address = served.url.trim_start_matches("http://");
    let url = format!("ws://{address}/api/traces/{trace_id}/watch?since_event_id=0");
    let (mut socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();

    let mut ids = Vec::new();
    let mut live = 0;
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(30), socket.next())
            .await
            .expect("the watcher heard nothing for 30 s")
            .unwrap()
            .unwrap();
        let event: Value = serde_json::from_str(frame.to_text().unwrap()).unwrap();
        if event["event"] == "connected" {
            continue;
        }
        let Some(id) = event["event_id"].as_u64() else {
            continue; // deltas
        };
        ids.push(id);
        // An event that arrives while the writer still runs was delivered live.
        if run.try_wait().unwrap().is_none() {
            live += 1;
        }
        if event["event"] == "trace_completed" {
            break;
        }
    }
    let output = run.wait_with_output().await.unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let expected: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expected, "every event once, in order");
    assert!(live >= 10, "only {live} of {} events came live", ids.len());
    let (_, trace) = served.request("GET", &format!("/api/traces/{trace_id}"), None);
    assert_eq!(trace["trace"]["status"], "completed", "{trace}");
}
