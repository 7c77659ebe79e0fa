//! End-to-end runs on the filesystem store: what lands on disk, reopening it, and a run killed
//! with SIGKILL mid-tool that is then resumed under the same trace id.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::{Role, TraceStatus, TraceStore};
use agent_goal::GoalStatus;
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::context::render_transcript;
use agent_runner::{AgentRunner, RunnerOptions};
use agent_store_fs::FileSystemTraceStore;
use agent_tools::ToolRegistry;
use serde_json::json;

fn runner(
    dir: &std::path::Path,
    workspace: &std::path::Path,
    turns: Vec<ScriptedTurn>,
) -> (AgentRunner, Arc<ScriptedClient>) {
    let store = Arc::new(FileSystemTraceStore::open(dir).unwrap());
    let llm = Arc::new(ScriptedClient::new(turns));
    let options = RunnerOptions::new("scripted", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    (
        AgentRunner::new(store, llm.clone(), ToolRegistry::with_builtins(), options),
        llm,
    )
}

#[tokio::test]
async fn a_run_is_recorded_in_the_contract_layout_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (runner, _) = runner(
        dir.path(),
        workspace.path(),
        vec![
            ScriptedTurn::tool_call(
                "goal",
                json!({"add": "Write, Try a shortcut, Check", "focus": "1"}),
            ),
            ScriptedTurn::tool_call("write_file", json!({"path": "out.txt", "content": "42\n"})),
            ScriptedTurn::tool_call("goal", json!({"done": "out.txt holds 42", "focus": "2"})),
            ScriptedTurn::tool_call("read_file", json!({"path": "../outside.txt"})),
            ScriptedTurn::tool_call(
                "goal",
                json!({"abandon": "the shortcut leaves the workspace"}),
            ),
            ScriptedTurn::tool_call("goal", json!({"focus": "2"})),
            ScriptedTurn::tool_call("no_such_tool", json!("{oops")),
            ScriptedTurn::tool_call("read_file", json!({"path": "out.txt"})),
            ScriptedTurn::tool_call("goal", json!({"done": "checked"})),
            ScriptedTurn::text("out.txt says 42."),
        ],
    );
    let outcome = runner.run("Write and check out.txt").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    drop(runner);

    // The Contract layout.
    let folder = dir.path().join(&outcome.trace_id);
    for file in ["meta.json", "goal.json", "events.jsonl"] {
        assert!(folder.join(file).is_file(), "{file} missing");
    }
    let message_files = std::fs::read_dir(folder.join("messages")).unwrap().count();
    assert_eq!(message_files as u64, outcome.stats.total_messages);
    let goal_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("goal.json")).unwrap()).unwrap();
    assert_eq!(goal_json["mission"], "Write and check out.txt");
    assert_eq!(goal_json["goals"][1]["status"], "abandoned");

    // A fresh store reads back the same trace.
    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let trace = store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Completed);
    assert_eq!(trace.total_messages, outcome.stats.total_messages);
    let tree = store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    let statuses: Vec<GoalStatus> = tree.goals().iter().map(|g| g.status).collect();
    assert_eq!(
        statuses,
        vec![
            GoalStatus::Completed,
            GoalStatus::Abandoned,
            GoalStatus::Completed
        ]
    );
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let outputs: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.text())
        .collect();
    assert!(
        outputs[3].contains("outside the workspace"),
        "{}",
        outputs[3]
    );
    assert!(outputs[6].contains("unknown tool"), "{}", outputs[6]);
    let by_goal = store
        .get_messages_by_goal(&outcome.trace_id, "1")
        .await
        .unwrap();
    assert!(
        by_goal
            .iter()
            .any(|m| m.tool_name.as_deref() == Some("write_file"))
    );
    let events = store.get_events(&outcome.trace_id, 0).await.unwrap();
    let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn limits_and_cancellation_end_fs_traces_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (runner, _) = runner(
        dir.path(),
        workspace.path(),
        vec![
            ScriptedTurn::tool_call("bash", json!({"command": "sleep 30"})),
            ScriptedTurn::text("x"),
        ],
    );
    let handle = runner.start("Sleep").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle.cancel();
    let outcome = handle.wait().await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Cancelled);

    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let trace = store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Cancelled);
    assert!(trace.error.unwrap().starts_with("cancelled:"));
}

#[tokio::test]
async fn a_run_killed_mid_tool_is_resumed_under_the_same_id() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_e2e-child"))
        .arg(dir.path())
        .arg(workspace.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let trace_id = line.trim().to_owned();
    assert!(!trace_id.is_empty(), "the child printed no trace id");

    // Wait until the bash call is recorded, then kill the child while the tool runs.
    let events = dir.path().join(&trace_id).join("events.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&events)
        .unwrap_or_default()
        .contains("tool call: bash")
    {
        assert!(
            Instant::now() < deadline,
            "the child never reached the bash call"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();

    // The killed trace loads as it was: running, the bash call without a result.
    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Running);
    let before = store.get_trace_messages(&trace_id).await.unwrap();
    assert_eq!(before.last().unwrap().role, Role::Assistant);
    assert!(workspace.path().join("a.txt").is_file());
    drop(store);

    let (runner, llm) = runner(
        dir.path(),
        workspace.path(),
        vec![
            ScriptedTurn::tool_call("goal", json!({"done": "waited"})),
            ScriptedTurn::text("Resumed and finished."),
        ],
    );
    let outcome = runner.resume(&trace_id).await.unwrap();
    assert_eq!(outcome.trace_id, trace_id);
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert_eq!(outcome.response.as_deref(), Some("Resumed and finished."));

    // Nothing recorded before the kill was lost; the call got its interrupted result.
    let store = runner.store();
    let after = store.get_trace_messages(&trace_id).await.unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(after[before.len()].content.text().contains("interrupted"));
    let seen = render_transcript(&llm.requests()[0].messages);
    assert!(seen.contains("error: interrupted"), "{seen}");
    // The goal tree came back too: goal 1 done, goal 2 current.
    assert!(seen.contains("[→] 2. Wait ← current"), "{seen}");
    let events = store.get_events(&trace_id, 0).await.unwrap();
    let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_bash_timeout_and_max_iterations_end_fs_runs_as_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (timeout_runner, _) = runner(
        dir.path(),
        workspace.path(),
        vec![
            ScriptedTurn::tool_call("bash", json!({"command": "sleep 20", "timeout_secs": 1})),
            ScriptedTurn::text("It timed out."),
        ],
    );
    let started = Instant::now();
    let outcome = timeout_runner.run("Wait too long").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(outcome.status, TraceStatus::Completed);
    drop(timeout_runner);

    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let result = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(
        result.content.text().contains("timed out") && result.content.is_error(),
        "{:?}",
        result.content
    );
    drop(store);

    let turns = (0..5)
        .map(|_| ScriptedTurn::tool_call("read_progress", json!({})))
        .collect();
    let store = Arc::new(FileSystemTraceStore::open(dir.path()).unwrap());
    let llm = Arc::new(ScriptedClient::new(turns));
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.max_iterations = 2;
    let limited = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    let outcome = limited.run("Loop").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert!(
        outcome
            .error
            .as_deref()
            .unwrap()
            .starts_with("max_iterations:")
    );
    let trace = store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Failed);
    let events = store.get_events(&outcome.trace_id, 0).await.unwrap();
    assert_eq!(events.last().unwrap().kind.name(), "trace_completed");
}
