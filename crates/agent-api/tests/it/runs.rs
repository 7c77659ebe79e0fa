//! Run control over HTTP with a scripted model: start, cancel, resume, approvals, runs the
//! embedding process tracks itself, and graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{
    get, post_empty, post_json, short_script, state_and_ends, state_with, wait_for_pending,
    wait_for_status,
};
use agent_api::{ApiConfig, ApprovalMode, Server};
use agent_execution::{InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::ToolRegistry;
use axum::http::{StatusCode, header};
use serde_json::json;

fn store() -> Arc<dyn TraceStore> {
    Arc::new(InMemoryTraceStore::new())
}

#[tokio::test]
async fn a_started_run_goes_on_in_the_background_and_completes() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let (state, ended) = state_and_ends(
        store.clone(),
        short_script(),
        workspace.path(),
        ApiConfig::default(),
    );
    let answer = post_json(
        &state,
        "/api/traces",
        json!({"task": "Fix the bug", "max_iterations": 10}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(
        answer.headers[header::LOCATION],
        format!("/api/traces/{trace_id}")
    );
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let detail = get(&state, &format!("/api/traces/{trace_id}")).await;
    assert_eq!(detail.json["trace"]["status"], "completed");
    assert_eq!(detail.json["trace"]["model"], "scripted");
    assert_eq!(detail.json["trace"]["summary"], "All done.");
    assert_eq!(detail.json["goal_tree"]["goals"][0]["status"], "completed");
    // Once it has ended, the run is no longer this server's to cancel, and the factory heard
    // of its end (`agent serve` sends the trace's spans then).
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!state.runs().is_running(&trace_id));
    assert_eq!(*ended.lock().unwrap(), std::slice::from_ref(&trace_id));
    let cancel = post_empty(&state, &format!("/api/traces/{trace_id}/cancel")).await;
    assert_eq!(cancel.status, StatusCode::CONFLICT);
    assert_eq!(cancel.code(), "not_running");
    let resume = post_empty(&state, &format!("/api/traces/{trace_id}/resume")).await;
    assert_eq!(resume.status, StatusCode::CONFLICT);
    assert_eq!(resume.code(), "already_completed");
}

#[tokio::test]
async fn request_fields_override_the_factory_defaults() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join("sub")).unwrap();
    let turns = vec![ScriptedTurn::tool_call(
        "write_file",
        json!({"path": "out.txt", "content": "hi"}),
    )];
    let auto = ApiConfig {
        approval: ApprovalMode::Auto,
        ..ApiConfig::default()
    };
    let state = state_with(store.clone(), turns, workspace.path(), auto);
    let body = json!({"task": "Write", "model": "other-model", "max_iterations": 1, "workspace": "sub", "approval": false});
    let answer = post_json(&state, "/api/traces", body).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Failed).await;
    let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
    assert_eq!(trace.model.as_deref(), Some("other-model"));
    assert!(trace.error.unwrap().starts_with("max_iterations"));
    // The relative workspace was taken from the default one.
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("sub/out.txt")).unwrap(),
        "hi"
    );
}

#[tokio::test]
async fn cancel_stops_a_run_and_resume_continues_it_under_the_same_id() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::tool_call("goal", json!({"add": "Wait", "focus": "1"})),
        ScriptedTurn::text("never").with_delay(Duration::from_secs(30)),
        ScriptedTurn::tool_call("goal", json!({"done": "waited"})),
        ScriptedTurn::text("Resumed and done."),
    ];
    let state = state_with(store.clone(), turns, workspace.path(), ApiConfig::default());
    let answer = post_json(&state, "/api/traces", json!({"task": "Slow"})).await;
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    // Wait until the model call that hangs has begun.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while store
        .get_goal_tree(&trace_id)
        .await
        .unwrap()
        .unwrap()
        .goals()
        .is_empty()
    {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(state.runs().is_running(&trace_id));
    let busy = post_empty(&state, &format!("/api/traces/{trace_id}/resume")).await;
    assert_eq!(busy.status, StatusCode::CONFLICT);
    assert_eq!(busy.code(), "run_in_progress");

    let cancel = post_empty(&state, &format!("/api/traces/{trace_id}/cancel")).await;
    assert_eq!(cancel.status, StatusCode::ACCEPTED, "{}", cancel.text);
    assert_eq!(cancel.json["trace_id"], trace_id.as_str());
    wait_for_status(&store, &trace_id, TraceStatus::Cancelled).await;

    let resume = post_json(
        &state,
        &format!("/api/traces/{trace_id}/resume"),
        json!({"max_iterations": 5}),
    )
    .await;
    assert_eq!(resume.status, StatusCode::ACCEPTED, "{}", resume.text);
    assert_eq!(resume.json["trace_id"], trace_id.as_str());
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
    assert_eq!(trace.summary.as_deref(), Some("Resumed and done."));
}

#[tokio::test]
async fn risky_calls_wait_for_a_decision_over_http() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::tool_call("write_file", json!({"path": "a.txt", "content": "A"})),
        ScriptedTurn::tool_call("write_file", json!({"path": "b.txt", "content": "B"})),
        ScriptedTurn::text("Wrote what I was allowed to."),
    ];
    let state = state_with(store.clone(), turns, workspace.path(), ApiConfig::default());
    let answer = post_json(
        &state,
        "/api/traces",
        json!({"task": "Write files", "approval": true}),
    )
    .await;
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    let url = format!("/api/traces/{trace_id}");

    wait_for_status(&store, &trace_id, TraceStatus::Waiting).await;
    let detail = wait_for_pending(&state, &url).await;
    let pending = detail.json["pending_approvals"].as_array().unwrap().clone();
    assert_eq!(pending.len(), 1, "{}", detail.text);
    assert_eq!(pending[0]["tool_name"], "write_file");
    // The arguments as the model wrote them (JSON text; key order is the model's).
    let arguments: serde_json::Value =
        serde_json::from_str(pending[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "a.txt", "content": "A"}));
    assert!(pending[0]["requested_at"].as_str().unwrap().ends_with('Z'));
    let first = pending[0]["tool_call_id"].as_str().unwrap().to_owned();
    assert!(!workspace.path().join("a.txt").exists());

    let unknown = post_json(
        &state,
        &format!("{url}/approvals/nope"),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let approve = post_json(
        &state,
        &format!("{url}/approvals/{first}"),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(approve.status, StatusCode::OK, "{}", approve.text);
    assert_eq!(
        approve.json,
        json!({"trace_id": trace_id, "tool_call_id": first, "approved": true})
    );
    let again = post_json(
        &state,
        &format!("{url}/approvals/{first}"),
        json!({"approve": false}),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.code(), "already_decided");

    // The second call is refused with a reason the model gets to read.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let second = loop {
        let pending = get(&state, &url).await.json["pending_approvals"].clone();
        if let Some(call) = pending.as_array().unwrap().first()
            && call["tool_call_id"] != first.as_str()
        {
            break call["tool_call_id"].as_str().unwrap().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "no second approval");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let reject = post_json(
        &state,
        &format!("{url}/approvals/{second}"),
        json!({"approve": false, "reason": "not b"}),
    )
    .await;
    assert_eq!(reject.status, StatusCode::OK);
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(),
        "A"
    );
    assert!(!workspace.path().join("b.txt").exists());
    let messages = store.get_trace_messages(&trace_id).await.unwrap();
    let refused = messages
        .iter()
        .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(second.as_str()))
        .unwrap();
    assert!(
        refused.content.text().contains("not b") && refused.content.is_error(),
        "{:?}",
        refused.content
    );
    assert_eq!(get(&state, &url).await.json["pending_approvals"], json!([]));
}

#[tokio::test]
async fn cancelling_a_waiting_run_withdraws_its_approval() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![ScriptedTurn::tool_call("bash", json!({"command": "true"}))];
    let state = state_with(store.clone(), turns, workspace.path(), ApiConfig::default());
    let answer = post_json(
        &state,
        "/api/traces",
        json!({"task": "Run", "approval": true}),
    )
    .await;
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Waiting).await;
    let url = format!("/api/traces/{trace_id}");
    let call = wait_for_pending(&state, &url).await.json["pending_approvals"][0]["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    post_empty(&state, &format!("{url}/cancel")).await;
    wait_for_status(&store, &trace_id, TraceStatus::Cancelled).await;
    assert_eq!(get(&state, &url).await.json["pending_approvals"], json!([]));
    let late = post_json(
        &state,
        &format!("{url}/approvals/{call}"),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(late.status, StatusCode::NOT_FOUND, "{}", late.text);
}

#[tokio::test]
async fn a_run_started_by_the_embedding_process_can_be_tracked_and_cancelled() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let state = state_with(
        store.clone(),
        Vec::new(),
        workspace.path(),
        ApiConfig::default(),
    );
    let client = ScriptedClient::new(vec![
        ScriptedTurn::text("slow").with_delay(Duration::from_secs(30)),
    ]);
    let runner = AgentRunner::new(
        store.clone(),
        Arc::new(client),
        ToolRegistry::new(),
        RunnerOptions::new("scripted", workspace.path())
            .with_approval(agent_runner::Approval::Allow)
            .with_sub_agents(),
    );
    let handle = runner.start("From the command line").await.unwrap();
    let tracked = state.runs().track(handle);
    let trace_id = tracked.trace_id.clone();
    assert_eq!(state.runs().running(), std::slice::from_ref(&trace_id));
    let cancel = post_empty(&state, &format!("/api/traces/{trace_id}/cancel")).await;
    assert_eq!(cancel.status, StatusCode::ACCEPTED);
    let outcome = tracked.wait().await.unwrap().unwrap();
    assert_eq!(outcome.status, TraceStatus::Cancelled);
}

#[tokio::test]
async fn shutdown_cancels_the_runs_so_they_can_be_resumed() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::text("slow").with_delay(Duration::from_secs(30)),
        ScriptedTurn::text("Finished after the restart."),
    ];
    let config = ApiConfig {
        port: 0,
        shutdown_grace: Duration::from_secs(5),
        ..ApiConfig::default()
    };
    let state = state_with(store.clone(), turns, workspace.path(), config);
    let server = Server::bind(state.clone()).await.unwrap();
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    let answer = post_json(&state, "/api/traces", json!({"task": "Long"})).await;
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Cancelled);
    // A stopped server takes no new runs.
    let refused = post_json(&state, "/api/traces", json!({"task": "More"})).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);

    // Another server over the same store resumes the trace.
    let again = state_with(
        store.clone(),
        vec![ScriptedTurn::text("Finished after the restart.")],
        workspace.path(),
        ApiConfig::default(),
    );
    let resume = post_empty(&again, &format!("/api/traces/{trace_id}/resume")).await;
    assert_eq!(resume.status, StatusCode::ACCEPTED, "{}", resume.text);
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
}

#[tokio::test]
async fn a_server_refuses_to_bind_a_public_address_without_a_token() {
    let open = ApiConfig {
        host: "0.0.0.0".parse().unwrap(),
        port: 0,
        ..ApiConfig::default()
    };
    let error = agent_api::AppState::builder(store())
        .config(open.clone())
        .build()
        .unwrap_err();
    assert!(
        error.to_string().contains("refusing to listen on 0.0.0.0"),
        "{error}"
    );
    let tokened = ApiConfig {
        token: Some("t".into()),
        ..open
    };
    assert!(
        agent_api::AppState::builder(store())
            .config(tokened)
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn limits_that_are_not_positive_numbers_are_refused_naming_the_field() {
    let store = store();
    let workspace = tempfile::tempdir().unwrap();
    let state = state_with(
        store.clone(),
        short_script(),
        workspace.path(),
        ApiConfig::default(),
    );
    let bad = [
        ("max_iterations", json!(0)),
        ("max_iterations", json!(-1)),
        ("max_iterations", json!(1.5)),
        ("max_iterations", json!("3")),
        ("max_iterations", json!(4_294_967_296_u64)),
        ("max_iterations", json!(true)),
        ("max_cost", json!(0)),
        ("max_cost", json!(0.0)),
        ("max_cost", json!(-0.5)),
        ("max_cost", json!("1")),
        ("max_cost", json!([1])),
    ];
    let finished = post_json(&state, "/api/traces", json!({"task": "Read"})).await;
    let finished = finished.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &finished, TraceStatus::Completed).await;
    let stopped = agent_execution::TraceUpdate {
        status: Some(TraceStatus::Cancelled),
        ..agent_execution::TraceUpdate::default()
    };
    store.update_trace(&finished, stopped).await.unwrap();
    for (field, value) in bad {
        let start = post_json(
            &state,
            "/api/traces",
            json!({"task": "Read", field: value.clone()}),
        )
        .await;
        let resume = post_json(
            &state,
            &format!("/api/traces/{finished}/resume"),
            json!({field: value.clone()}),
        )
        .await;
        for (route, answer) in [("start", start), ("resume", resume)] {
            assert_eq!(
                answer.status,
                StatusCode::BAD_REQUEST,
                "{route} {field}={value}: {}",
                answer.text
            );
            let message = answer.json["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(field),
                "{route} {field}={value}: {message}"
            );
        }
    }
    // Numbers JSON cannot hold are malformed bodies.
    let huge = common_raw_post(&state, r#"{"task": "Read", "max_cost": 1e400}"#).await;
    assert_eq!(huge.status, StatusCode::BAD_REQUEST, "{}", huge.text);
    // Good values start.
    let good = post_json(
        &state,
        "/api/traces",
        json!({"task": "Read", "max_iterations": 1, "max_cost": 0.0001}),
    )
    .await;
    assert_eq!(good.status, StatusCode::CREATED, "{}", good.text);
}

async fn common_raw_post(state: &agent_api::AppState, body: &str) -> crate::common::Answer {
    let request = axum::http::Request::post("/api/traces")
        .header(header::CONTENT_TYPE, "application/json")
        .body(axum::body::Body::from(body.to_owned()))
        .unwrap();
    crate::common::send(state, request).await
}
