//! `/goal` over HTTP and checks in people's plan edits, with a scripted model: a goal set on a
//! finished trace continues it until the goal's check passes; a run that leaves goals open is
//! `incomplete` in the API; bad bodies are 400s and a running trace a 409.

use std::sync::Arc;

use crate::common::{get, post_json, state_with, wait_for_status};
use agent_api::{ApiConfig, ApprovalMode};
use agent_execution::{InMemoryTraceStore, NewTrace, TraceStatus, TraceStore};
use agent_llm::ScriptedTurn;
use axum::http::StatusCode;
use serde_json::json;

fn goal(args: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::tool_call("goal", args)
}

#[tokio::test]
async fn a_goal_continues_a_trace_until_its_check_passes() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::text("Hello."),
        goal(json!({"focus": "1"})),
        goal(json!({"done": "written"})),
        ScriptedTurn::tool_call(
            "write_file",
            json!({"path": "done.txt", "content": "yes\n"}),
        ),
        goal(json!({"done": "written now", "evidence": "done.txt"})),
        ScriptedTurn::text("The file is there."),
    ];
    let config = ApiConfig {
        approval: ApprovalMode::Auto,
        ..ApiConfig::default()
    };
    let state = state_with(store.clone(), turns, workspace.path(), config);
    let started = post_json(&state, "/api/traces", json!({"task": "Say hello"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;

    let url = format!("/api/traces/{trace_id}/goal");
    let set = post_json(
        &state,
        &url,
        json!({"text": "Write done.txt", "check": "test -f done.txt", "budget": {"iterations": 20}}),
    )
    .await;
    assert_eq!(set.status, StatusCode::ACCEPTED, "{}", set.text);
    assert_eq!(set.json["number"], "1");
    let goal_id = set.json["goal_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let detail = get(&state, &format!("/api/traces/{trace_id}")).await;
    let goals = detail.json["goal_tree"]["goals"].as_array().unwrap();
    let set_goal = goals.iter().find(|g| g["id"] == goal_id.as_str()).unwrap();
    assert_eq!(set_goal["status"], "completed", "{set_goal}");
    assert_eq!(set_goal["check"]["command"], "test -f done.txt");
    assert_eq!(set_goal["check"]["set_by"], "person");
    assert_eq!(set_goal["check_result"]["passed"], true);
    assert_eq!(set_goal["budget"]["iterations"], 20);
    let events = get(&state, &format!("/api/traces/{trace_id}/events")).await;
    let checked: Vec<bool> = events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "goal_checked")
        .map(|e| e["result"]["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(checked, [false, true]);
}

#[tokio::test]
async fn goals_left_open_make_the_trace_incomplete_and_bad_goals_are_refused() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![goal(json!({"add": "One, Two"}))];
    let state = state_with(store.clone(), turns, workspace.path(), ApiConfig::default());
    let started = post_json(&state, "/api/traces", json!({"task": "Do two things"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Incomplete).await;
    let detail = get(&state, &format!("/api/traces/{trace_id}")).await;
    assert_eq!(detail.json["trace"]["status"], "incomplete");
    assert_eq!(
        detail.json["trace"]["error"],
        "incomplete: goals left open: 1. One; 2. Two"
    );
    let listed = get(&state, "/api/traces?status=incomplete").await;
    assert_eq!(
        listed.json["traces"].as_array().unwrap().len(),
        1,
        "{}",
        listed.text
    );

    let url = format!("/api/traces/{trace_id}/goal");
    for (body, part) in [
        (json!({"text": " "}), "is empty"),
        (json!({"text": "x", "check": "a", "judge": "b"}), "not both"),
        (json!({"text": "x", "check": ""}), "needs the command"),
        (json!({"text": "x", "budget": {}}), "sets nothing"),
        (json!({"text": "x", "budget": {"turns": 3}}), ""),
        (json!({"text": "x".repeat(5000)}), "longer than 4000"),
    ] {
        let refused = post_json(&state, &url, body.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            refused.text
        );
        assert!(refused.text.contains(part), "{body}: {}", refused.text);
    }
    let missing = post_json(&state, "/api/traces/nope/goal", json!({"text": "x"})).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let running = store.create_trace(NewTrace::agent("busy")).await.unwrap();
    let busy = post_json(
        &state,
        &format!("/api/traces/{}/goal", running.trace_id),
        json!({"text": "x"}),
    )
    .await;
    assert_eq!(busy.status, StatusCode::CONFLICT);
    assert_eq!(busy.code(), "run_in_progress");

    // People's edits carry checks too: a person's, which the model cannot delete.
    let added = post_json(
        &state,
        &format!("/api/traces/{trace_id}/goals"),
        json!({"description": "Three", "judge": "it reads well"}),
    )
    .await;
    assert_eq!(added.status, StatusCode::CREATED, "{}", added.text);
    let three = &added.json["goal_tree"]["goals"][2];
    assert_eq!(
        three["check"],
        json!({"judge": "it reads well", "set_by": "person"})
    );
    let both = post_json(
        &state,
        &format!("/api/traces/{trace_id}/goals"),
        json!({"description": "Four", "check": "true", "judge": "x"}),
    )
    .await;
    assert_eq!(both.status, StatusCode::BAD_REQUEST, "{}", both.text);
}
