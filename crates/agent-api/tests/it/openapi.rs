//! The OpenAPI document: the committed `openapi.json` matches the code, every route is in it,
//! and real responses match the documented schemas (no missing required field, no
//! undocumented field, the right JSON types).
//!
//! `UPDATE_OPENAPI=1 cargo test -p goaltree-api --test it -- openapi::` (or `cargo xtask openapi`)
//! rewrites the committed file.

use std::path::Path;
use std::sync::Arc;

use crate::common;
use crate::common::{get, post_json, read_only};
use agent_api::openapi_json;
use agent_execution::GoalCommand;
use agent_execution::{InMemoryTraceStore, NewMessage, NewTrace, TraceOutcome, TraceStore};
use agent_runner::{ApprovalHandler, ApprovalRequest};
use axum::http::StatusCode;
use serde_json::{Value, json};

fn document() -> Value {
    serde_json::from_str(&openapi_json()).unwrap()
}

#[test]
fn the_committed_document_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let current = openapi_json();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != current {
        let line = committed
            .lines()
            .zip(current.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "the length".to_owned(), |i| format!("line {}", i + 1));
        panic!(
            "crates/agent-api/openapi.json is stale (it differs at {line}): run `cargo xtask \
             openapi` (or `UPDATE_OPENAPI=1 cargo test -p goaltree-api --test it -- openapi::`) and \
             commit it"
        );
    }
}

#[tokio::test]
async fn the_document_is_served_and_lists_every_route() {
    let state = read_only(Arc::new(InMemoryTraceStore::new()));
    let served = get(&state, "/api/openapi.json").await;
    assert_eq!(served.status, StatusCode::OK);
    assert_eq!(served.headers["content-type"], "application/json");
    assert_eq!(served.text, openapi_json());
    let doc = document();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let mut paths: Vec<String> = doc["paths"].as_object().unwrap().keys().cloned().collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/api/openapi.json",
            "/api/plan_templates",
            "/api/plan_templates/{name}/runs",
            "/api/plans",
            "/api/traces",
            "/api/traces/{trace_id}",
            "/api/traces/{trace_id}/approvals/{tool_call_id}",
            "/api/traces/{trace_id}/cancel",
            "/api/traces/{trace_id}/elicitations",
            "/api/traces/{trace_id}/elicitations/{elicitation_id}",
            "/api/traces/{trace_id}/events",
            "/api/traces/{trace_id}/fork",
            "/api/traces/{trace_id}/goal",
            "/api/traces/{trace_id}/goal_tree",
            "/api/traces/{trace_id}/goals",
            "/api/traces/{trace_id}/goals/{goal_id}",
            "/api/traces/{trace_id}/goals/{goal_id}/abandon",
            "/api/traces/{trace_id}/goals/{goal_id}/diff",
            "/api/traces/{trace_id}/messages",
            "/api/traces/{trace_id}/pictures/{picture_id}",
            "/api/traces/{trace_id}/resume",
            "/api/traces/{trace_id}/rewind",
            "/api/traces/{trace_id}/run",
            "/api/traces/{trace_id}/watch",
        ]
    );
    let methods = |path: &str| -> Vec<String> {
        doc["paths"][path]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(methods("/api/traces"), ["get", "post"]);
    assert_eq!(methods("/api/traces/{trace_id}/cancel"), ["post"]);
    assert_eq!(
        methods("/api/traces/{trace_id}/goals/{goal_id}"),
        ["delete", "patch"]
    );
}

/// Checks `value` against `schema`, resolving `$ref`s in `doc`; returns what does not match.
fn validate(doc: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/components/schemas/");
        let target = &doc["components"]["schemas"][name];
        assert!(!target.is_null(), "unresolved {reference}");
        return validate(doc, target, value, at);
    }
    if let Some(branches) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        let fits = branches
            .iter()
            .any(|branch| validate(doc, branch, value, at).is_empty());
        return if fits {
            Vec::new()
        } else {
            vec![format!("{at}: {value} fits no branch of {schema}")]
        };
    }
    let mut errors = Vec::new();
    if let Some(all) = schema["allOf"].as_array() {
        for part in all {
            errors.extend(validate(doc, part, value, at));
        }
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let fits = types.iter().any(|t| match *t {
            "null" => value.is_null(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => false,
        });
        if !fits {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return errors;
        }
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        errors.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(object) = value.as_object()
        && (schema.get("properties").is_some() || schema.get("required").is_some())
    {
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap();
            if !object.contains_key(name) {
                errors.push(format!("{at}: required field {name} is missing"));
            }
        }
        let open = schema["additionalProperties"] == json!(true);
        for (key, field) in object {
            match schema["properties"].get(key) {
                Some(property) => {
                    errors.extend(validate(doc, property, field, &format!("{at}.{key}")))
                }
                None if open => {}
                None => errors.push(format!("{at}: field {key} is not documented")),
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            errors.extend(validate(doc, items, item, &format!("{at}[{i}]")));
        }
    }
    errors
}

/// The documented schema of a response.
fn response_schema(doc: &Value, path: &str, method: &str, status: u16) -> Value {
    let schema = &doc["paths"][path][method]["responses"][status.to_string()]["content"]["application/json"]
        ["schema"];
    assert!(
        !schema.is_null(),
        "{method} {path} documents no {status} body"
    );
    schema.clone()
}

fn assert_fits(doc: &Value, schema: &Value, value: &Value, what: &str) {
    let errors = validate(doc, schema, value, what);
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}",
        errors.join("\n")
    );
}

#[tokio::test]
async fn real_responses_match_the_documented_schemas() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let main = store
        .create_trace(NewTrace::agent("Document me").with_model("m"))
        .await
        .unwrap();
    let id = main.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Document me"))
        .await
        .unwrap();
    let plan = GoalCommand {
        add: Some("A, B".into()),
        focus: Some("1".into()),
        ..GoalCommand::default()
    };
    store.apply_goal_command(&id, plan).await.unwrap();
    let call = agent_execution::AssistantContent::new(
        None,
        vec![agent_execution::ToolCall::new("c1", "read_file", "{}")],
    );
    store
        .add_message(
            &id,
            NewMessage::assistant(call)
                .goal("1")
                .usage(10, 0.5)
                .duration_ms(3),
        )
        .await
        .unwrap();
    store
        .add_message(&id, NewMessage::tool("c1", "read_file", "text").goal("1"))
        .await
        .unwrap();
    let done = GoalCommand {
        done: Some("Did A".into()),
        ..GoalCommand::default()
    };
    store.apply_goal_command(&id, done).await.unwrap();
    let sub = store
        .create_trace(NewTrace::sub_trace(&id, Some("2".into()), "explore", "Try"))
        .await
        .unwrap();
    store
        .finish_trace(&sub.trace_id, TraceOutcome::completed("Tried"))
        .await
        .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let state = common::state_with(
        store.clone(),
        Vec::new(),
        workspace.path(),
        Default::default(),
    );
    // One call waits for approval, so `pending_approvals` is not empty.
    let approvals = state.approvals();
    let request = ApprovalRequest {
        trace_id: id.clone(),
        tool_call_id: "c2".into(),
        tool_name: "bash".into(),
        arguments: "{\"command\":\"ls\"}".into(),
        note: None,
    };
    let waiting = tokio::spawn(async move { approvals.decide(request).await });
    while state.approvals().pending(&id).is_empty() {
        tokio::task::yield_now().await;
    }

    let doc = document();
    let reads = [
        ("/api/traces", "/api/traces".to_owned()),
        ("/api/traces/{trace_id}", format!("/api/traces/{id}")),
        (
            "/api/traces/{trace_id}/messages",
            format!("/api/traces/{id}/messages"),
        ),
        (
            "/api/traces/{trace_id}/events",
            format!("/api/traces/{id}/events"),
        ),
        (
            "/api/traces/{trace_id}/events",
            format!("/api/traces/{}/events", sub.trace_id),
        ),
    ];
    for (path, uri) in reads {
        let answer = get(&state, &uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}");
        assert_fits(
            &doc,
            &response_schema(&doc, path, "get", 200),
            &answer.json,
            &uri,
        );
    }
    let detail = get(&state, &format!("/api/traces/{id}")).await;
    assert_eq!(
        detail.json["pending_approvals"].as_array().unwrap().len(),
        1
    );
    let events = get(&state, &format!("/api/traces/{id}/events")).await;
    let names: Vec<_> = events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].clone())
        .collect();
    for name in [
        "trace_created",
        "goal_added",
        "goal_updated",
        "message_added",
        "sub_trace_started",
        "sub_trace_completed",
    ] {
        assert!(names.contains(&json!(name)), "no {name} event to check");
    }

    let decided = post_json(
        &state,
        &format!("/api/traces/{id}/approvals/c2"),
        json!({"approve": true}),
    )
    .await;
    let path = "/api/traces/{trace_id}/approvals/{tool_call_id}";
    assert_fits(
        &doc,
        &response_schema(&doc, path, "post", 200),
        &decided.json,
        "approval",
    );
    waiting.await.unwrap();
    let error = get(&state, "/api/traces/..%2Fx").await;
    assert_fits(
        &doc,
        &response_schema(&doc, "/api/traces/{trace_id}", "get", 400),
        &error.json,
        "error",
    );

    let connected = agent_api::Connected {
        event_id: 0,
        event: "connected",
        trace_id: id.clone(),
        current_event_id: 9,
        goal_tree: store.get_goal_tree(&id).await.unwrap().unwrap(),
        sub_traces: store.get_sub_traces(&id).await.unwrap(),
    };
    let schema = response_schema(&doc, "/api/traces/{trace_id}/watch", "get", 101);
    assert_fits(
        &doc,
        &schema,
        &serde_json::to_value(connected).unwrap(),
        "connected",
    );
}

#[test]
fn the_validator_reports_drift() {
    let doc = document();
    let trace = json!({"$ref": "#/components/schemas/Trace"});
    let mut value = json!({
        "trace_id": "t", "mode": "agent", "task": "x", "parent_trace_id": null,
        "parent_goal_id": null, "agent_type": null, "status": "running", "total_messages": 0,
        "total_tokens": 0, "total_cost": 0.0, "current_goal_id": null,
        "created_at": "2026-01-01T00:00:00.000000Z", "updated_at": "2026-01-01T00:00:00.000000Z",
        "model": null, "error": null
    });
    assert_eq!(
        validate(&doc, &trace, &value, "trace"),
        Vec::<String>::new()
    );
    value["surprise"] = json!(1);
    value["status"] = json!("sleeping");
    value["total_tokens"] = json!("many");
    value.as_object_mut().unwrap().remove("task");
    let errors = validate(&doc, &trace, &value, "trace");
    assert_eq!(errors.len(), 4, "{errors:#?}");
}

#[test]
fn message_metadata_names_every_key_the_runner_writes() {
    let doc = document();
    let properties = doc["components"]["schemas"]["MessageMetadata"]["properties"]
        .as_object()
        .unwrap();
    let documented: Vec<&str> = properties.keys().map(String::as_str).collect();
    let mut keys = agent_execution::meta::KEYS.to_vec();
    keys.sort_unstable();
    let mut documented = documented;
    documented.sort_unstable();
    assert_eq!(documented, keys);
    assert_eq!(
        doc["components"]["schemas"]["Message"]["properties"]["metadata"]["oneOf"][0]["$ref"],
        "#/components/schemas/MessageMetadata"
    );
}
