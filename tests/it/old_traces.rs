//! Traces written before goals could carry checks and budgets (the `agent demo` trace of version
//! 0.1.0, in `agent-store-fs`'s fixtures) read and go on unchanged: continued with the runner on
//! the filesystem store, a plan whose goals are all done or abandoned ends `completed` without
//! the model being sent back to anything, and no field the trace never had is written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_execution::meta::MessageMeta;
use agent_execution::{TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions, StopReason};
use agent_store_fs::FileSystemTraceStore;
use agent_tools::ToolRegistry;

const MAIN: &str = "c6b9176b-e1f0-461a-9020-45c874bc95ac";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/agent-store-fs/tests/fixtures/demo-0.1.0")
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&path, &target);
        } else if path.file_name().is_some_and(|n| n != ".lock") {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[tokio::test]
async fn a_trace_of_an_earlier_version_continues_and_completes_as_it_did() {
    let traces = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), traces.path());
    let before = std::fs::read_to_string(traces.path().join(MAIN).join("goal.json")).unwrap();
    let store = Arc::new(FileSystemTraceStore::open(traces.path()).unwrap());
    let tree = store.get_goal_tree(MAIN).await.unwrap().unwrap();
    assert!(
        tree.goals()
            .iter()
            .all(|g| g.check.is_none() && g.budget.is_none())
    );
    assert!(
        tree.open_goals().is_empty(),
        "every goal of the demo is done or abandoned"
    );

    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text(
        "The most common word is reported.",
    )]));
    let runner = AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::new(),
        RunnerOptions::new("scripted", workspace.path()),
    );
    let outcome = runner
        .continue_trace(MAIN, "Is the report still there?")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert!(outcome.pending_goals.is_empty());
    assert_eq!(llm.served(), 1, "no reminder: nothing was left open");
    let messages = store.get_trace_messages(MAIN).await.unwrap();
    assert!(
        messages
            .iter()
            .all(|m| MessageMeta::of(m).goals_pending.is_none())
    );
    drop(runner);
    drop(store);
    let after = std::fs::read_to_string(traces.path().join(MAIN).join("goal.json")).unwrap();
    for key in ["\"check\"", "\"check_result\"", "\"budget\""] {
        assert!(!after.contains(key), "{key} written to an old plan");
    }
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    assert_eq!(
        parse(&before)["goals"].as_array().unwrap().len(),
        parse(&after)["goals"].as_array().unwrap().len()
    );
}
