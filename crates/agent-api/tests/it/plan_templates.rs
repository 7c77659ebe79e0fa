//! `GET /api/plan_templates` and `POST /api/plan_templates/{name}/runs`: the templates of the
//! server's workspace are listed, and a run started from one gets the template's goals with the
//! placeholders filled (202); an unknown template is 404, a bad name or bad values 400.

use std::sync::Arc;

use crate::common::{get, post_json, read_only, state_with, wait_for_status};
use agent_api::ApiConfig;
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use axum::http::{StatusCode, header};
use serde_json::json;

const TEMPLATE: &str = "---\n\
description: Add a cache to a module\n\
mission: Add a cache to {{module}}\n\
params:\n  module: src/store.rs\n  owner:\n\
---\n\
Read {{module}}\n\
Write the cache\n  Keep it small\n\
Review it @reviewer\n\
Tell {{owner}}\n";

#[tokio::test]
async fn templates_are_listed_and_runs_start_from_them() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let state = state_with(
        store.clone(),
        Vec::new(),
        workspace.path(),
        ApiConfig::default(),
    );

    let answer = get(&state, "/api/plan_templates").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.json, json!({"templates": []}));

    let plans = workspace.path().join(".agent/plans");
    std::fs::create_dir_all(&plans).unwrap();
    std::fs::write(plans.join("cache.md"), TEMPLATE).unwrap();
    let answer = get(&state, "/api/plan_templates").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(
        answer.json,
        json!({"templates": [{
            "name": "cache",
            "description": "Add a cache to a module",
            "mission": "Add a cache to {{module}}",
            "params": [
                {"name": "module", "default": "src/store.rs"},
                {"name": "owner", "default": null}
            ]
        }]})
    );

    let answer = post_json(
        &state,
        "/api/plan_templates/cache/runs",
        json!({"vars": {"owner": "Ana", "module": "src/db.rs"}, "max_iterations": 5}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text);
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(
        answer.headers[header::LOCATION],
        format!("/api/traces/{trace_id}").as_str()
    );
    // The model only answers: the run ends with the template's goals left open.
    wait_for_status(&store, &trace_id, TraceStatus::Incomplete).await;
    let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
    assert_eq!(trace.task, "Add a cache to src/db.rs");
    let tree = store.get_goal_tree(&trace_id).await.unwrap().unwrap();
    let goals: Vec<(&str, Option<&str>)> = tree
        .goals()
        .iter()
        .map(|g| (g.description.as_str(), g.agent.as_deref()))
        .collect();
    assert_eq!(
        goals,
        [
            ("Read src/db.rs", None),
            ("Write the cache", None),
            ("Keep it small", None),
            ("Review it", Some("reviewer")),
            ("Tell Ana", None)
        ]
    );

    // A task of the request replaces the mission.
    let answer = post_json(
        &state,
        "/api/plan_templates/cache/runs",
        json!({"vars": {"owner": "Bo"}, "task": "Cache it"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text);
    let trace_id = answer.json["trace_id"].as_str().unwrap();
    wait_for_status(&store, trace_id, TraceStatus::Incomplete).await;
    let trace = store.get_trace(trace_id).await.unwrap().unwrap();
    assert_eq!(trace.task, "Cache it");
}

#[tokio::test]
async fn unknown_templates_bad_names_and_bad_values_are_refused() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let plans = workspace.path().join(".agent/plans");
    std::fs::create_dir_all(&plans).unwrap();
    std::fs::write(plans.join("cache.md"), TEMPLATE).unwrap();
    let state = state_with(
        store.clone(),
        Vec::new(),
        workspace.path(),
        ApiConfig::default(),
    );
    let cases = [
        (
            "nope",
            json!({}),
            StatusCode::NOT_FOUND,
            "not_found",
            "template \\\"nope",
        ),
        (
            "..%2Fcache",
            json!({"vars": {"owner": "a"}}),
            StatusCode::BAD_REQUEST,
            "invalid_template_name",
            "path separator",
        ),
        (
            "cache",
            json!({}),
            StatusCode::BAD_REQUEST,
            "invalid_vars",
            "value for \\\"owner",
        ),
        (
            "cache",
            json!({"vars": {"owner": "a", "colour": "red"}}),
            StatusCode::BAD_REQUEST,
            "invalid_vars",
            "no parameter \\\"colour",
        ),
        (
            "cache",
            json!({"vars": {"owner": "a"}, "colour": "red"}),
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "unknown field `colour`",
        ),
    ];
    for (name, body, status, code, names) in cases {
        let answer = post_json(&state, &format!("/api/plan_templates/{name}/runs"), body).await;
        assert_eq!(answer.status, status, "{name}: {}", answer.text);
        assert_eq!(answer.code(), code, "{name}: {}", answer.text);
        assert!(answer.text.contains(names), "{name}: {}", answer.text);
    }
    assert!(
        store
            .list_traces(&Default::default())
            .await
            .unwrap()
            .is_empty()
    );

    // A read-only server has no workspace to read templates from.
    let answer = get(&read_only(store), "/api/plan_templates").await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text);
}
