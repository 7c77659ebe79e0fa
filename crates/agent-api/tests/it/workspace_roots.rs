//! Workspace roots: a run's workspace (the request's `workspace`, resolved and canonicalised,
//! symbolic links included) must lie under one of the server's roots; anything else is 403
//! `workspace_not_allowed`, a missing folder under a root 400 `invalid_workspace`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::{ScriptedFactory, post_json, wait_for_status};
use agent_api::{ApiConfig, AppState, ApprovalMode};
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore, TraceUpdate};
use agent_llm::{ScriptedClient, ScriptedTurn};
use axum::http::StatusCode;
use serde_json::json;

/// `<tmp>/root/work` (the factory's workspace) with `sub/`, a file, and `escape` (a symbolic
/// link to `<tmp>/outside`); `<tmp>/root/other`, and `<tmp>/outside`.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("work/sub")).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(root.join("work/file.txt"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("work/escape")).unwrap();
        std::os::unix::fs::symlink(root.join("other"), root.join("work/inside")).unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A server whose factory works in `root/work`, with `roots`, running risky calls.
    fn state(&self, roots: Vec<PathBuf>) -> (AppState, Arc<dyn TraceStore>) {
        let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
        // Runs one after the other: each writes, then answers.
        let turns = (0..8)
            .flat_map(|_| {
                [
                    ScriptedTurn::tool_call(
                        "write_file",
                        json!({"path": "out.txt", "content": "hi"}),
                    ),
                    ScriptedTurn::text("Written."),
                ]
            })
            .collect();
        let factory = ScriptedFactory {
            client: ScriptedClient::new(turns).with_fallback("done"),
            workspace: self.path("root/work"),
            ended: Default::default(),
        };
        let config = ApiConfig {
            approval: ApprovalMode::Auto,
            workspace_roots: roots,
            ..ApiConfig::default()
        };
        let state = AppState::builder(store.clone())
            .runner_factory(Arc::new(factory))
            .config(config)
            .build()
            .unwrap();
        (state, store)
    }
}

async fn start(state: &AppState, workspace: &str) -> crate::common::Answer {
    let body = json!({"task": "Write", "workspace": workspace});
    post_json(state, "/api/traces", body).await
}

/// Waits for the run and returns where it wrote `out.txt`.
async fn wrote_in(store: &Arc<dyn TraceStore>, answer: &crate::common::Answer, dir: &Path) {
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let trace_id = answer.json["trace_id"].as_str().unwrap();
    wait_for_status(store, trace_id, TraceStatus::Completed).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap(),
        "hi",
        "{}",
        dir.display()
    );
}

#[tokio::test]
async fn a_workspace_outside_the_roots_is_refused_whatever_the_path_says() {
    let site = Site::new();
    let (state, store) = site.state(vec![site.path("root")]);
    let outside = site.path("outside").display().to_string();
    let missing_outside = site.path("nowhere/at/all").display().to_string();
    for workspace in [
        "../../../etc",
        "../../../../../../../../../../etc",
        "/etc",
        "/",
        outside.as_str(),
        missing_outside.as_str(),
        "../..",
        "sub/../../..",
        "escape",
        "escape/.",
        "./escape",
    ] {
        let answer = start(&state, workspace).await;
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{workspace}: {}",
            answer.text
        );
        assert_eq!(answer.code(), "workspace_not_allowed", "{workspace}");
        let message = answer.json["error"]["message"].as_str().unwrap();
        assert!(message.contains(workspace), "{message}");
        // The answer names what was asked, never where the server's folders are.
        assert!(
            !message.contains(&site.path("root").display().to_string()) || workspace == outside,
            "{message}"
        );
    }
    // Under a root but not a folder: a request error.
    for workspace in ["missing", "sub/missing", "file.txt", "", "  "] {
        let answer = start(&state, workspace).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{workspace:?}: {}",
            answer.text
        );
        assert_eq!(answer.code(), "invalid_workspace", "{workspace:?}");
    }
    let traces = store
        .list_traces(&agent_execution::TraceFilter::default())
        .await
        .unwrap();
    assert!(traces.is_empty(), "nothing was started: {traces:?}");

    // Inside: a subfolder, `..` that stays inside, a symbolic link to another folder under the
    // root, and the other folder by its absolute path.
    wrote_in(
        &store,
        &start(&state, "sub").await,
        &site.path("root/work/sub"),
    )
    .await;
    wrote_in(
        &store,
        &start(&state, "../other").await,
        &site.path("root/other"),
    )
    .await;
    std::fs::remove_file(site.path("root/other/out.txt")).unwrap();
    wrote_in(
        &store,
        &start(&state, "inside").await,
        &site.path("root/other"),
    )
    .await;
    let other = site.path("root/other").display().to_string();
    std::fs::remove_file(site.path("root/other/out.txt")).unwrap();
    wrote_in(
        &store,
        &start(&state, &other).await,
        &site.path("root/other"),
    )
    .await;
    assert!(!site.path("outside/out.txt").exists());
}

#[tokio::test]
async fn without_roots_only_the_factory_workspace_is_allowed() {
    let site = Site::new();
    let (state, store) = site.state(Vec::new());
    for workspace in ["../other", "..", "escape", "inside"] {
        let answer = start(&state, workspace).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{workspace}");
        assert_eq!(answer.code(), "workspace_not_allowed");
    }
    wrote_in(
        &store,
        &start(&state, "sub").await,
        &site.path("root/work/sub"),
    )
    .await;
    // No workspace: the factory's own.
    let answer = post_json(&state, "/api/traces", json!({"task": "Write"})).await;
    wrote_in(&store, &answer, &site.path("root/work")).await;
}

#[tokio::test]
async fn a_resume_is_held_to_the_roots_too() {
    let site = Site::new();
    let (state, store) = site.state(vec![site.path("root/work")]);
    let answer = start(&state, "sub").await;
    wrote_in(&store, &answer, &site.path("root/work/sub")).await;
    let trace_id = answer.json["trace_id"].as_str().unwrap();
    let stopped = TraceUpdate {
        status: Some(TraceStatus::Cancelled),
        ..TraceUpdate::default()
    };
    store.update_trace(trace_id, stopped).await.unwrap();
    let resume = post_json(
        &state,
        &format!("/api/traces/{trace_id}/resume"),
        json!({"workspace": "../other"}),
    )
    .await;
    assert_eq!(resume.status, StatusCode::FORBIDDEN, "{}", resume.text);
    assert_eq!(resume.code(), "workspace_not_allowed");
}

#[tokio::test]
async fn a_root_that_is_not_a_folder_is_a_configuration_error() {
    let site = Site::new();
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    for root in [site.path("missing"), site.path("root/work/file.txt")] {
        let config = ApiConfig {
            workspace_roots: vec![root.clone()],
            ..ApiConfig::default()
        };
        let built = AppState::builder(store.clone()).config(config).build();
        assert!(built.is_err(), "{}", root.display());
    }
}
