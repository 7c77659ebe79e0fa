//! A trace whose writer died is shown as interrupted, not as running forever: `agent traces`
//! and `agent show` tell a live run from one whose process was killed, and say how to resume it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, code, stdout};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::agent_env;

async fn listed(env: &CliEnv) -> Vec<Value> {
    let output = env.run(&["traces", "--json"]).await;
    assert_eq!(code(&output), 0);
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[tokio::test]
async fn a_run_whose_process_was_killed_is_interrupted() {
    let env = agent_env();
    let script = env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Wait"}}]},
            {"delay_ms": 60000, "text": "Never."}
        ])
        .to_string(),
    );
    let mut run = env
        .agent(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "Wait a minute",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Running, with a live writer: not interrupted, here or in a server's view of the folder.
    let deadline = Instant::now() + Duration::from_secs(60);
    let trace = loop {
        let traces = listed(&env).await;
        if let Some(trace) = traces.first()
            && trace["total_messages"].as_u64() >= Some(2)
        {
            break trace.clone();
        }
        assert!(Instant::now() < deadline, "the run did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(trace["status"], "running");
    assert!(trace.get("interrupted").is_none(), "{trace}");
    let id = trace["trace_id"].as_str().unwrap().to_owned();

    kill(Pid::from_raw(run.id().unwrap() as i32), Signal::SIGKILL).unwrap();
    run.wait().await.unwrap();
    let traces = listed(&env).await;
    assert_eq!(traces[0]["status"], "running");
    assert_eq!(traces[0]["interrupted"], true);
    let table = env.run(&["traces"]).await;
    let text = stdout(&table);
    let row = text.lines().find(|l| l.starts_with(&id)).unwrap();
    assert_eq!(row.split_whitespace().nth(1), Some("interrupted"), "{text}");
    assert!(
        String::from_utf8_lossy(&table.stderr).contains("agent resume"),
        "{table:?}"
    );
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &id, "--json"]).await.stdout).unwrap();
    assert_eq!(shown["trace"]["interrupted"], true);

    // A server started afterwards on the same folder says so too.
    let served = env.serve(&[]);
    let (status, list) = served.request("GET", "/api/traces", None);
    assert_eq!(status, 200);
    assert_eq!(list["interrupted"], json!([id]), "{list}");
    let (_, detail) = served.request("GET", &format!("/api/traces/{id}"), None);
    assert_eq!(detail["interrupted"], true, "{detail}");
}
