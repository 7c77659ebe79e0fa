//! `POST /api/traces/{id}/rewind` and `GET /api/traces/{id}/goals/{goal_id}/diff` over the
//! checkpoints of a real run: a dry run changes nothing, a rewind puts the files back as at the
//! goal's start and forks the trace there, a file the user changed since is kept unless
//! `force`, `files_only` forks nothing; every mistake is a 4xx.

use std::path::Path;
use std::sync::Arc;

use crate::common::{get, post_json};
use agent_api::{ApiConfig, AppState};
use agent_checkpoint::{FolderCheckpoints, Limits, TraceCheckpoints};
use agent_execution::{InMemoryTraceStore, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, Approval, CheckpointOptions, RunnerOptions};
use agent_tools::ToolRegistry;
use axum::http::{StatusCode, header};
use serde_json::json;

/// Goal 1 writes `a.txt`; goal 2 writes `b.txt` and changes `a.txt`.
fn script() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::tool_call("goal", json!({"add": "Write a, Write b", "focus": "1"})),
        ScriptedTurn::tool_call("write_file", json!({"path": "a.txt", "content": "A"})),
        ScriptedTurn::tool_call("goal", json!({"done": "a written", "focus": "2"})),
        ScriptedTurn::tool_call("write_file", json!({"path": "b.txt", "content": "B"})),
        ScriptedTurn::tool_call("write_file", json!({"path": "a.txt", "content": "A2"})),
        ScriptedTurn::tool_call("goal", json!({"done": "b written"})),
        ScriptedTurn::text("Both written."),
    ]
}

struct Setup {
    store: Arc<dyn TraceStore>,
    workspace: tempfile::TempDir,
    checkpoints: tempfile::TempDir,
    trace_id: String,
}

impl Setup {
    /// A server over the run's store, with its checkpoints and `roots` (the workspace by
    /// default).
    fn state(&self, roots: Option<Vec<std::path::PathBuf>>) -> AppState {
        let config = ApiConfig {
            workspace_roots: roots.unwrap_or_else(|| vec![self.workspace.path().to_path_buf()]),
            ..ApiConfig::default()
        };
        AppState::builder(self.store.clone())
            .checkpoints(TraceCheckpoints::new(
                self.checkpoints.path(),
                Limits::default(),
            ))
            .config(config)
            .build()
            .unwrap()
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.workspace.path().join(name)).ok()
    }
}

async fn run() -> Setup {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let checkpoints = tempfile::tempdir().unwrap();
    let folder = FolderCheckpoints::new(checkpoints.path(), workspace.path(), Limits::default());
    let options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(Approval::Allow)
        .with_checkpoints(CheckpointOptions::new(Arc::new(folder)));
    let runner = AgentRunner::new(
        store.clone(),
        Arc::new(ScriptedClient::new(script()).with_fallback("done")),
        ToolRegistry::with_builtins(),
        options,
    );
    let outcome = runner.run("Write two files").await.unwrap();
    Setup {
        store,
        workspace,
        checkpoints,
        trace_id: outcome.trace_id,
    }
}

fn files(answer: &serde_json::Value, kind: &str) -> Vec<String> {
    serde_json::from_value(answer["changes"][kind].clone()).unwrap()
}

#[tokio::test]
async fn a_rewind_puts_the_files_back_as_at_the_goals_start_and_forks_there() {
    let setup = run().await;
    assert_eq!(setup.read("a.txt").as_deref(), Some("A2"));
    let state = setup.state(None);
    let uri = format!("/api/traces/{}/rewind", setup.trace_id);

    // A dry run says what would change and changes nothing.
    let answer = post_json(&state, &uri, json!({"goal": "2", "dry_run": true})).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.json["dry_run"], true);
    assert!(answer.json.get("trace_id").is_none());
    assert_eq!(files(&answer.json, "modified"), ["a.txt"]);
    assert_eq!(files(&answer.json, "deleted"), ["b.txt"]);
    assert_eq!(setup.read("b.txt").as_deref(), Some("B"));

    // A file the user changed since the last checkpoint is kept: nothing changes.
    std::fs::write(setup.workspace.path().join("a.txt"), "mine").unwrap();
    let answer = post_json(&state, &uri, json!({"goal": "2"})).await;
    assert_eq!(answer.status, StatusCode::CONFLICT, "{}", answer.text);
    assert_eq!(answer.code(), "files_changed");
    assert!(answer.text.contains("a.txt"), "{}", answer.text);
    assert_eq!(setup.read("a.txt").as_deref(), Some("mine"));
    assert_eq!(setup.read("b.txt").as_deref(), Some("B"));
    let traces = setup.store.list_traces(&Default::default()).await.unwrap();
    assert_eq!(traces.len(), 1, "no fork was made");

    // With force: the files as when goal 2 started, and a fork just before it.
    let answer = post_json(&state, &uri, json!({"goal": "2", "force": true})).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let fork = answer.json["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(
        answer.headers[header::LOCATION],
        format!("/api/traces/{fork}")
    );
    assert_eq!(setup.read("a.txt").as_deref(), Some("A"));
    assert_eq!(setup.read("b.txt"), None);
    let detail = get(&state, &format!("/api/traces/{fork}")).await;
    assert_eq!(
        detail.json["trace"]["forked_from"]["trace_id"],
        setup.trace_id.as_str()
    );
    assert_eq!(detail.json["goal_tree"]["goals"][1]["status"], "pending");

    // Files only, by a prefix of the id: back to goal 1's start, no fork.
    let prefix = &setup.trace_id[..8];
    let answer = post_json(
        &state,
        &format!("/api/traces/{prefix}/rewind"),
        json!({"goal": "1", "files_only": true, "force": true}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert!(answer.json.get("trace_id").is_none());
    assert_eq!(setup.read("a.txt"), None);
    assert_eq!(
        setup
            .store
            .list_traces(&Default::default())
            .await
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn a_goals_diff_shows_its_changes() {
    let setup = run().await;
    let state = setup.state(None);
    let detail = get(&state, &format!("/api/traces/{}", setup.trace_id)).await;
    assert_eq!(detail.json["checkpoints"], true, "{}", detail.text);
    let answer = get(
        &state,
        &format!("/api/traces/{}/goals/2/diff", setup.trace_id),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.json["goal_id"], "2");
    assert_eq!(answer.json["to"], "snapshot");
    let diff = answer.json["diff"].as_str().unwrap();
    assert!(diff.contains("+B"), "{diff}");
    assert!(diff.contains("-A") && diff.contains("+A2"), "{diff}");

    let answer = get(
        &state,
        &format!("/api/traces/{}/goals/9/diff", setup.trace_id),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text);
}

#[tokio::test]
async fn mistakes_are_4xx_never_5xx() {
    let setup = run().await;
    let state = setup.state(None);
    let uri = format!("/api/traces/{}/rewind", setup.trace_id);
    let check = |answer: &crate::common::Answer, status: StatusCode, code: &str| {
        assert_eq!(answer.status, status, "{}", answer.text);
        assert_eq!(answer.code(), code, "{}", answer.text);
    };
    check(
        &post_json(&state, &uri, json!({"goal": "7"})).await,
        StatusCode::BAD_REQUEST,
        "unknown_goal",
    );
    check(
        &post_json(&state, &uri, json!({"goal": "1", "hard": true})).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    check(
        &post_json(&state, &uri, json!({})).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    check(
        &post_json(&state, "/api/traces/nope/rewind", json!({"goal": "1"})).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    check(
        &post_json(&state, "/api/traces/..%2Fx/rewind", json!({"goal": "1"})).await,
        StatusCode::BAD_REQUEST,
        "invalid_trace_id",
    );
    // A trace that ran without checkpoints.
    let other = setup
        .store
        .create_trace(agent_execution::NewTrace::agent("No checkpoints"))
        .await
        .unwrap();
    let detail = get(&state, &format!("/api/traces/{}", other.trace_id)).await;
    assert_eq!(detail.json["checkpoints"], false, "{}", detail.text);
    check(
        &post_json(
            &state,
            &format!("/api/traces/{}/rewind", other.trace_id),
            json!({"goal": "1"}),
        )
        .await,
        StatusCode::NOT_FOUND,
        "no_checkpoints",
    );
    // A server that keeps no checkpoints.
    let bare = AppState::builder(setup.store.clone()).build().unwrap();
    check(
        &post_json(&bare, &uri, json!({"goal": "1"})).await,
        StatusCode::NOT_FOUND,
        "no_checkpoints",
    );
    // A workspace outside the server's roots is not touched.
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = setup.state(Some(vec![elsewhere.path().to_path_buf()]));
    check(
        &post_json(&outside, &uri, json!({"goal": "1"})).await,
        StatusCode::FORBIDDEN,
        "workspace_not_allowed",
    );
    assert_eq!(setup.read("a.txt").as_deref(), Some("A2"));
    assert!(Path::new(&setup.workspace.path().join("b.txt")).exists());
}
