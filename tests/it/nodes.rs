//! Several nodes sharing a PostgreSQL store, each a real process on a throwaway cluster: two
//! `agent serve` nodes that only queue runs and two `agent worker`s that execute them. A run
//! started on one node is watched live, approved and cancelled from the other; a worker killed
//! in the middle of a run loses its lease and another worker finishes the trace with nothing
//! acknowledged lost, dense event ids and one result per tool call.

use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use agent_execution::TraceStore;
use agent_store_pg::PgTraceStore;
use agent_test_support::cli::{CliEnv, Served, build_agent};
use agent_test_support::postgres::Cluster;
use futures::StreamExt;
use serde_json::{Value, json};

/// An `agent worker` process, killed when dropped; its log goes to a file of the environment.
struct WorkerProcess {
    child: Child,
    log: std::path::PathBuf,
}

impl WorkerProcess {
    fn start(env: &CliEnv, name: &str, store: &str, script: &str) -> Self {
        let log = env.path(&format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let work = env.work();
        let child = env
            .command(&[
                "worker",
                "--store",
                store,
                "--provider",
                "scripted",
                "--script",
                script,
                "--workspace",
                &work,
                "--concurrency",
                "1",
            ])
            .env("AGENT_WORKER_LEASE", "2")
            .env("RUST_LOG", "agent_worker=info")
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap();
        Self { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `GET /api/traces/{id}` on `node` until `done` holds (at most 60 s).
async fn wait_until(
    node: &Served,
    trace_id: &str,
    logs: &dyn Fn() -> String,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, detail) = node.request("GET", &format!("/api/traces/{trace_id}"), None);
        if status == 200 && done(&detail) {
            return detail;
        }
        assert!(Instant::now() < deadline, "{status} {detail}\n{}", logs());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn start(node: &Served, task: &str) -> String {
    let (status, answer) = node.request("POST", "/api/traces", Some(&json!({"task": task})));
    assert_eq!(status, 201, "{answer}\n{}", node.log());
    answer["trace_id"].as_str().unwrap().to_owned()
}

/// Each run: a risky shell call, then an answer, every model call taking 100 ms.
fn approval_script(env: &CliEnv) -> String {
    let run = [
        json!({"delay_ms": 100, "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi >> shell.txt"}}]}),
        json!({"delay_ms": 100, "text": "Done."}),
    ];
    // Made beforehand: without user namespaces the sandbox lets commands write files that
    // exist at the top of the workspace, not add new entries there.
    env.write("work/shell.txt", "");
    let turns: Vec<Value> = (0..6).flat_map(|_| run.clone()).collect();
    env.write(
        "script.json",
        &json!({"turns": turns, "fallback": "Done."}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_started_on_one_node_is_watched_approved_and_cancelled_from_another() {
    let cluster = Cluster::start();
    let store = cluster.url("postgres");
    let env = CliEnv::new(build_agent());
    let script = approval_script(&env);
    let node_a = env.serve(&["--store", &store]);
    let node_b = env.serve(&["--store", &store]);
    assert!(
        node_a.log().contains("queued for the workers"),
        "{}",
        node_a.log()
    );
    let workers = [
        WorkerProcess::start(&env, "worker-1", &store, &script),
        WorkerProcess::start(&env, "worker-2", &store, &script),
    ];
    let logs = || {
        format!(
            "node A:\n{}\nnode B:\n{}\nworker 1:\n{}\nworker 2:\n{}\n{}",
            node_a.log(),
            node_b.log(),
            workers[0].log(),
            workers[1].log(),
            cluster.log()
        )
    };

    let trace_id = start(&node_a, "Run it");
    let address = node_b.url.trim_start_matches("http://").to_owned();
    let url = format!("ws://{address}/api/traces/{trace_id}/watch?since_event_id=0");
    let (mut socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let watcher = tokio::spawn(async move {
        let mut events: Vec<Value> = Vec::new();
        while let Ok(Some(Ok(frame))) =
            tokio::time::timeout(Duration::from_secs(60), socket.next()).await
        {
            let Ok(text) = frame.to_text() else { continue };
            let Ok(event) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if event["event"] == "connected" || event["event_id"].as_u64().is_none() {
                continue; // connected, text deltas
            }
            let done = event["event"] == "trace_completed";
            events.push(event);
            if done {
                break;
            }
        }
        events
    });

    // The risky call waits; node B, which runs nothing itself, lists it and approves it.
    let detail = wait_until(&node_b, &trace_id, &logs, |d| {
        d["pending_approvals"]
            .as_array()
            .is_some_and(|pending| !pending.is_empty())
    })
    .await;
    assert_eq!(detail["trace"]["status"], "waiting", "{}", logs());
    let call = detail["pending_approvals"][0]["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(detail["pending_approvals"][0]["tool_name"], "bash");
    let (status, answer) = node_b.request(
        "POST",
        &format!("/api/traces/{trace_id}/approvals/{call}"),
        Some(&json!({"approve": true})),
    );
    assert_eq!(status, 200, "{answer}\n{}", logs());
    let (status, _) = node_b.request(
        "POST",
        &format!("/api/traces/{trace_id}/approvals/{call}"),
        Some(&json!({"approve": true})),
    );
    assert_eq!(
        status, 409,
        "a second decision on the same call is a conflict"
    );

    let events = watcher.await.unwrap();
    let ids: Vec<u64> = events
        .iter()
        .map(|e| e["event_id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "{}",
        logs()
    );
    let finished = wait_until(&node_b, &trace_id, &logs, |d| {
        d["trace"]["status"] == "completed"
    })
    .await;
    assert_eq!(
        finished["trace"]["summary"].as_str().map(str::trim),
        Some("Done.")
    );
    let shell = std::fs::read_to_string(env.path("work").join("shell.txt")).unwrap();
    assert_eq!(
        shell, "hi\n",
        "the approved call ran once, in the worker's workspace"
    );
    // The same trace, seen from the node that started it.
    let (_, on_a) = node_a.request("GET", &format!("/api/traces/{trace_id}"), None);
    assert_eq!(on_a["trace"]["status"], "completed");

    // A second run, cancelled from node B while it waits on node... wherever it runs.
    let second = start(&node_a, "Run it again");
    wait_until(&node_b, &second, &logs, |d| {
        d["trace"]["status"] == "waiting"
    })
    .await;
    let (status, answer) = node_b.request("POST", &format!("/api/traces/{second}/cancel"), None);
    assert_eq!(status, 202, "{answer}\n{}", logs());
    wait_until(&node_b, &second, &logs, |d| {
        d["trace"]["status"] == "cancelled"
    })
    .await;
    // The trace says `cancelled` a moment before its worker lets go of the queued run: a
    // second cancel is a conflict once it has.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _) = node_b.request("POST", &format!("/api/traces/{second}/cancel"), None);
        if status == 409 || Instant::now() > deadline {
            assert_eq!(status, 409, "nothing runs the trace any more");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A run of `steps` shell calls of about 200 ms each, then an answer.
fn long_script(env: &CliEnv, steps: usize) -> String {
    let mut turns: Vec<Value> = (0..steps)
        .map(|i| {
            json!({"delay_ms": 50, "tool_calls": [{"name": "bash", "arguments": {"command": format!("sleep 0.15; echo {i} >> steps.txt")}}]})
        })
        .collect();
    // Made beforehand: without user namespaces the sandbox lets commands write files that
    // exist at the top of the workspace, not add new entries there.
    env.write("work/steps.txt", "");
    turns.push(json!({"text": "All steps done."}));
    env.write(
        "long.json",
        &json!({"turns": turns, "fallback": "All steps done."}).to_string(),
    )
}

/// How many workers the PostgreSQL crash test kills (`CRASH_MATRIX_ITERATIONS`, which `cargo
/// xtask soak --kills` sets for the filesystem matrix too; 2 by default).
fn kills() -> u64 {
    std::env::var("CRASH_MATRIX_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_run_is_finished_by_another_worker_with_nothing_lost() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let env = CliEnv::new(build_agent());
    let script = long_script(&env, 10);
    let node = env.serve(&["--store", &url, "--approval", "auto"]);
    let store = PgTraceStore::connect(&url).await.unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut rng = seed | 1;
    let mut acknowledged_total = 0;
    for kill in 0..kills() {
        // A kill after 2 to 18 of the run's 22 messages.
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let at = 2 + (rng >> 33) % 17;
        let context = format!("kill {kill} after {at} messages (seed {seed})");
        acknowledged_total +=
            killed_and_finished(&env, &node, &store, &url, &script, at, &context).await;
    }
    eprintln!(
        "POSTGRES-KILLS {{\"kills\":{},\"acknowledged_events\":{acknowledged_total},\"losses\":0,\"seed\":{seed}}}",
        kills()
    );
}

/// One run whose worker is killed once the trace has `at` messages, finished by another
/// worker; checks what a crash may not do and returns how many events were acknowledged.
async fn killed_and_finished(
    env: &CliEnv,
    node: &Served,
    store: &PgTraceStore,
    url: &str,
    script: &str,
    at: u64,
    context: &str,
) -> usize {
    let mut first = WorkerProcess::start(env, "worker-1", url, script);
    let trace_id = start(node, "Ten steps");
    // Kill the first worker in the middle of the run.
    let deadline = Instant::now() + Duration::from_secs(60);
    while store
        .get_trace(&trace_id)
        .await
        .unwrap()
        .map_or(0, |t| t.total_messages)
        < at
    {
        assert!(
            Instant::now() < deadline,
            "{context}\n{}\n{}",
            node.log(),
            first.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let acknowledged = store.get_events(&trace_id, 0).await.unwrap();
    assert_eq!(
        store.get_trace(&trace_id).await.unwrap().unwrap().status,
        agent_execution::TraceStatus::Running
    );

    let second = WorkerProcess::start(env, "worker-2", url, script);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
        if trace.status.is_finished() {
            assert_eq!(
                trace.status,
                agent_execution::TraceStatus::Completed,
                "{context}\n{}",
                second.log()
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}\n{}\n{}",
            node.log(),
            first.log(),
            second.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The second worker took the run over after the first one's lease ran out.
    assert!(
        second.log().contains("attempt=2"),
        "{context}\n{}",
        second.log()
    );
    let events = store.get_events(&trace_id, 0).await.unwrap();
    assert_eq!(
        &events[..acknowledged.len()],
        &acknowledged[..],
        "{context}: an acknowledged event changed or went"
    );
    let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "{context}: event ids are dense"
    );
    // Every tool call has exactly one result.
    let messages: Vec<Value> = store
        .get_trace_messages(&trace_id)
        .await
        .unwrap()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    let mut results: BTreeMap<String, usize> = BTreeMap::new();
    let mut calls = Vec::new();
    for message in &messages {
        for call in message["content"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            calls.push(call["id"].as_str().unwrap().to_owned());
        }
        if let Some(id) = message["tool_call_id"].as_str() {
            *results.entry(id.to_owned()).or_default() += 1;
        }
    }
    assert!(calls.len() >= 10, "{calls:?}");
    for call in &calls {
        assert_eq!(
            results.get(call),
            Some(&1),
            "{context}: call {call}: {messages:#?}"
        );
    }
    assert_eq!(
        results.len(),
        calls.len(),
        "{context}: no result without its call"
    );
    acknowledged.len()
}
