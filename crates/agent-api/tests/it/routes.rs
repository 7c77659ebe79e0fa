//! Router tests through `tower::ServiceExt::oneshot`: every read route, every error case, the
//! body limit, and the security guards (token, host, origin, CORS).

use std::sync::Arc;

use crate::common;
use crate::common::{get, post_json, read_only, send};
use agent_api::{ApiConfig, AppState};
use agent_execution::GoalCommand;
use agent_execution::{InMemoryTraceStore, NewMessage, NewTrace, TraceOutcome, TraceStore};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};

/// A store with a main trace (two goals, three messages), a finished one and a sub-trace.
async fn sample() -> (Arc<dyn TraceStore>, String, String) {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let main = store
        .create_trace(NewTrace::agent("Fix the bug"))
        .await
        .unwrap();
    let id = main.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Fix the bug"))
        .await
        .unwrap();
    let plan = GoalCommand {
        add: Some("Read, Fix".into()),
        focus: Some("1".into()),
        ..GoalCommand::default()
    };
    store.apply_goal_command(&id, plan).await.unwrap();
    let call = agent_execution::AssistantContent::new(
        Some("Reading.".into()),
        vec![agent_execution::ToolCall::new("c1", "read_file", "{}")],
    );
    store
        .add_message(&id, NewMessage::assistant(call).goal("1").usage(100, 0.01))
        .await
        .unwrap();
    store
        .add_message(
            &id,
            NewMessage::tool("c1", "read_file", "fn main() {}").goal("1"),
        )
        .await
        .unwrap();
    let sub = store
        .create_trace(NewTrace::sub_trace(
            &id,
            Some("1".into()),
            "explore",
            "Try A",
        ))
        .await
        .unwrap();
    let done = store
        .create_trace(NewTrace::agent("Old task"))
        .await
        .unwrap();
    store
        .finish_trace(&done.trace_id, TraceOutcome::completed("ok"))
        .await
        .unwrap();
    (store, id, sub.trace_id)
}

/// Checks one request's status and error code (`""` for a success).
async fn check(state: &AppState, request: Request<Body>, status: StatusCode, code: &str) {
    let what = format!("{} {}", request.method(), request.uri());
    let answer = send(state, request).await;
    assert_eq!(answer.status, status, "{what}: {}", answer.text);
    assert_eq!(answer.code(), code, "{what}: {}", answer.text);
    if !code.is_empty() {
        let message = answer.json["error"]["message"].as_str().unwrap();
        assert!(!message.is_empty(), "{what}: empty message");
        let keys: Vec<_> = answer.json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["error"], "{what}: {}", answer.text);
    }
}

fn get_req(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

fn post_req(uri: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut builder = Request::post(uri);
    if let Some(content_type) = content_type {
        builder = builder.header(header::CONTENT_TYPE, content_type);
    }
    builder.body(body.into()).unwrap()
}

#[tokio::test]
async fn the_index_page_links_the_api() {
    let (store, _, _) = sample().await;
    let answer = get(&read_only(store), "/").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        answer.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(answer.text.contains("href=\"/api/traces\""));
    assert!(answer.text.contains("href=\"/api/openapi.json\""));
    assert!(answer.text.contains("src=\"/static/app.js\""));
}

#[tokio::test]
async fn the_list_filters_by_mode_status_parent_and_limit() {
    let (store, main, sub) = sample().await;
    let state = read_only(store);
    let ids = |answer: &common::Answer| -> Vec<String> {
        answer.json["traces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["trace_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = get(&state, "/api/traces").await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(ids(&all).len(), 3);
    assert_eq!(
        ids(&get(&state, &format!("/api/traces?parent_trace_id={main}")).await),
        [sub]
    );
    assert_eq!(
        ids(&get(&state, "/api/traces?status=completed").await).len(),
        1
    );
    assert_eq!(
        ids(&get(&state, "/api/traces?status=running&mode=agent").await).len(),
        2
    );
    assert_eq!(ids(&get(&state, "/api/traces?mode=call").await).len(), 0);
    assert_eq!(ids(&get(&state, "/api/traces?limit=1").await).len(), 1);
    for (uri, code) in [
        ("/api/traces?limit=0", "invalid_query"),
        ("/api/traces?limit=10001", "invalid_query"),
        ("/api/traces?limit=-1", "invalid_query"),
        ("/api/traces?status=bogus", "invalid_query"),
        ("/api/traces?mode=bogus", "invalid_query"),
        ("/api/traces?parent_trace_id=..%2Fetc", "invalid_trace_id"),
    ] {
        check(&state, get_req(uri), StatusCode::BAD_REQUEST, code).await;
    }
}

#[tokio::test]
async fn a_trace_comes_with_its_goal_tree_sub_traces_and_pending_approvals() {
    let (store, main, sub) = sample().await;
    let answer = agent_execution::AssistantContent::new(Some("A works.".into()), Vec::new());
    store
        .add_message(&sub, NewMessage::assistant(answer).usage(50, 0.02))
        .await
        .unwrap();
    let state = read_only(store);
    let answer = get(&state, &format!("/api/traces/{main}")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let mut keys: Vec<_> = answer.json.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "checkpoints",
            "goal_tree",
            "interrupted",
            "pending_approvals",
            "pending_elicitations",
            "sub_traces",
            "tokens_estimated",
            "total_stats_with_sub_traces",
            "trace"
        ]
    );
    // The in-memory store cannot tell whether a writer is alive: never interrupted.
    assert_eq!(answer.json["interrupted"], false);
    // The trace's own totals, and those with its sub-traces (what its budget counts).
    assert!((answer.json["trace"]["total_cost"].as_f64().unwrap() - 0.01).abs() < 1e-9);
    let total = &answer.json["total_stats_with_sub_traces"];
    assert_eq!(total["total_messages"], 4);
    assert_eq!(total["total_tokens"], 150);
    assert!(
        (total["total_cost"].as_f64().unwrap() - 0.03).abs() < 1e-9,
        "{total}"
    );
    assert_eq!(answer.json["trace"]["trace_id"], main.as_str());
    assert_eq!(answer.json["trace"]["total_messages"], 3);
    assert_eq!(answer.json["goal_tree"]["mission"], "Fix the bug");
    assert_eq!(
        answer.json["goal_tree"]["goals"].as_array().unwrap().len(),
        2
    );
    assert_eq!(answer.json["sub_traces"][0]["trace_id"], sub.as_str());
    assert_eq!(answer.json["pending_approvals"], json!([]));
    assert_eq!(answer.json["pending_elicitations"], json!([]));
    let listed = get(&state, &format!("/api/traces/{main}/elicitations")).await;
    assert_eq!(listed.json["elicitations"], json!([]), "{}", listed.text);
    let unknown = get(&state, "/api/traces/nosuchtrace/elicitations").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    // A sub-trace id contains `@`; it is a valid path segment.
    let answer = get(&state, &format!("/api/traces/{sub}")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json["trace"]["parent_trace_id"], main.as_str());
}

#[tokio::test]
async fn messages_come_all_or_by_goal() {
    let (store, main, _) = sample().await;
    let state = read_only(store);
    let all = get(&state, &format!("/api/traces/{main}/messages")).await;
    assert_eq!(all.status, StatusCode::OK);
    let sequences: Vec<_> = all.json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, [1, 2, 3]);
    let goal = get(&state, &format!("/api/traces/{main}/messages?goal_id=1")).await;
    let goals: Vec<_> = goal.json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["goal_id"].clone())
        .collect();
    assert_eq!(goals, [json!("1"), json!("1")]);
    let none = get(&state, &format!("/api/traces/{main}/messages?goal_id=2")).await;
    assert_eq!(none.json["messages"], json!([]));
}

#[tokio::test]
async fn events_come_after_an_id() {
    let (store, main, _) = sample().await;
    let stored = store.get_events(&main, 0).await.unwrap();
    let state = read_only(store);
    let all = get(&state, &format!("/api/traces/{main}/events")).await;
    assert_eq!(all.status, StatusCode::OK);
    let ids = |answer: &common::Answer| -> Vec<u64> {
        answer.json["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["event_id"].as_u64().unwrap())
            .collect()
    };
    let expected: Vec<u64> = stored.iter().map(|e| e.event_id).collect();
    assert_eq!(ids(&all), expected);
    assert_eq!(all.json["events"][0]["event"], "trace_created");
    let tail = get(
        &state,
        &format!("/api/traces/{main}/events?since_event_id=3"),
    )
    .await;
    assert_eq!(ids(&tail), expected[3..].to_vec());
    let past = get(
        &state,
        &format!("/api/traces/{main}/events?since_event_id=100000"),
    )
    .await;
    assert_eq!(ids(&past), Vec::<u64>::new());
    for bad in ["-1", "abc", "1.5", "99999999999999999999999"] {
        let uri = format!("/api/traces/{main}/events?since_event_id={bad}");
        check(
            &state,
            get_req(&uri),
            StatusCode::BAD_REQUEST,
            "invalid_query",
        )
        .await;
    }
}

#[tokio::test]
async fn bad_and_unknown_trace_ids_get_400_and_404_on_every_route() {
    let (store, _, _) = sample().await;
    let state = read_only(store);
    let bad_ids = [
        "..%2Fetc",
        "..%2F..%2Fetc%2Fpasswd",
        "a%2Fb",
        "..",
        "%2E%2E",
        ".hidden",
        "a%00b",
        "a%5Cb",
        "%FF",
    ];
    for id in bad_ids {
        for suffix in ["", "/messages", "/events", "/watch"] {
            check(
                &state,
                get_req(&format!("/api/traces/{id}{suffix}")),
                StatusCode::BAD_REQUEST,
                "invalid_trace_id",
            )
            .await;
        }
        for suffix in ["/cancel", "/approvals/c1"] {
            check(
                &state,
                post_req(&format!("/api/traces/{id}{suffix}"), None, ""),
                StatusCode::BAD_REQUEST,
                "invalid_trace_id",
            )
            .await;
        }
    }
    let unknown = "7d1e2c58-0000-4000-8000-000000000000";
    for suffix in ["", "/messages", "/events", "/watch"] {
        check(
            &state,
            get_req(&format!("/api/traces/{unknown}{suffix}")),
            StatusCode::NOT_FOUND,
            "not_found",
        )
        .await;
    }
    check(
        &state,
        post_req(&format!("/api/traces/{unknown}/cancel"), None, ""),
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    check(
        &state,
        get_req("/api/nothing"),
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    check(
        &state,
        get_req("/api/traces/a/b/c"),
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let delete = Request::delete("/api/traces").body(Body::empty()).unwrap();
    check(
        &state,
        delete,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    )
    .await;
}

#[tokio::test]
async fn malformed_bodies_get_the_error_shape() {
    let (store, main, _) = sample().await;
    let workspace = tempfile::tempdir().unwrap();
    let config = ApiConfig {
        body_limit: 1024,
        ..ApiConfig::default()
    };
    let state = common::state_with(store, Vec::new(), workspace.path(), config);
    let json = Some("application/json");
    let cases: Vec<(Request<Body>, StatusCode, &str)> = vec![
        (
            post_req("/api/traces", json, "{\"task\": "),
            StatusCode::BAD_REQUEST,
            "invalid_json",
        ),
        (
            post_req("/api/traces", json, "not json"),
            StatusCode::BAD_REQUEST,
            "invalid_json",
        ),
        (
            post_req("/api/traces", json, "{}"),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req("/api/traces", json, "{\"task\": 5}"),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req(
                "/api/traces",
                json,
                "{\"task\": \"x\", \"max_iteration\": 5}",
            ),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req("/api/traces", json, "{\"task\": \"  \"}"),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req("/api/traces", json, "{\"task\": \"x\", \"max_cost\": -1}"),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req(
                "/api/traces",
                json,
                "{\"task\": \"x\", \"max_iterations\": 0}",
            ),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req(
                "/api/traces",
                json,
                "{\"task\": \"x\", \"model\": \"unknown-model\"}",
            ),
            StatusCode::BAD_REQUEST,
            "run_rejected",
        ),
        (
            post_req(
                "/api/traces",
                json,
                "{\"task\": \"x\", \"workspace\": \"no/such/folder\"}",
            ),
            StatusCode::BAD_REQUEST,
            "invalid_workspace",
        ),
        (
            post_req("/api/traces", None, "{\"task\": \"x\"}"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post_req("/api/traces", Some("text/plain"), "{\"task\": \"x\"}"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post_req(
                "/api/traces",
                json,
                format!("{{\"task\": \"{}\"}}", "x".repeat(2048)),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            post_req(
                &format!("/api/traces/{main}/approvals/c1"),
                json,
                "{\"approve\": \"yes\"}",
            ),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req(
                &format!("/api/traces/{main}/approvals/c1"),
                json,
                "{\"approve\": true}",
            ),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            post_req(
                &format!("/api/traces/{main}/resume"),
                json,
                "{\"max_cost\": ",
            ),
            StatusCode::BAD_REQUEST,
            "invalid_json",
        ),
        (
            post_req(
                &format!("/api/traces/{main}/resume"),
                json,
                "{\"task\": \"x\"}",
            ),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            post_req(
                &format!("/api/traces/{main}/resume"),
                Some("text/plain"),
                "{}",
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
    ];
    for (request, status, code) in cases {
        check(&state, request, status, code).await;
    }
}

#[tokio::test]
async fn a_read_only_server_refuses_every_run_route_with_a_4xx_that_says_why() {
    let (store, main, _) = sample().await;
    let state = read_only(store);
    let said_why = |answer: &common::Answer, why: &str| {
        let message = answer.json["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "the client is told why: {message}");
    };
    let start = post_json(&state, "/api/traces", json!({"task": "Do it"})).await;
    assert_eq!(start.status, StatusCode::FORBIDDEN);
    assert_eq!(start.code(), "runs_unavailable");
    said_why(&start, "read-only");
    for (uri, body) in [
        (format!("/api/traces/{main}/resume"), None),
        (
            format!("/api/traces/{main}/resume"),
            Some(json!({"max_iterations": 3})),
        ),
        (
            format!("/api/traces/{main}/messages"),
            Some(json!({"content": "Go on"})),
        ),
    ] {
        let answer = match body {
            Some(body) => post_json(&state, &uri, body).await,
            None => common::post_empty(&state, &uri).await,
        };
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{uri}: {}",
            answer.text
        );
        assert_eq!(answer.code(), "runs_unavailable");
        said_why(&answer, "read-only");
    }
    // Cancel and approvals need no factory: this server runs nothing, so the trace is not
    // running here and no call waits.
    let cancel = common::post_empty(&state, &format!("/api/traces/{main}/cancel")).await;
    assert_eq!(cancel.status, StatusCode::CONFLICT);
    assert_eq!(cancel.code(), "not_running");
    said_why(&cancel, "read-only");
    let approval = post_json(
        &state,
        &format!("/api/traces/{main}/approvals/call_1"),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(approval.status, StatusCode::NOT_FOUND);
    said_why(&approval, "read-only");
}

fn with_token() -> ApiConfig {
    ApiConfig {
        host: "0.0.0.0".parse().unwrap(),
        token: Some("s3cret".into()),
        ..ApiConfig::default()
    }
}

#[tokio::test]
async fn a_non_loopback_server_needs_a_token_and_checks_it_on_every_route() {
    let (store, main, _) = sample().await;
    let open = ApiConfig {
        host: "0.0.0.0".parse().unwrap(),
        ..ApiConfig::default()
    };
    let error = AppState::builder(store.clone())
        .config(open)
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("without a token"), "{error}");
    let empty = ApiConfig {
        token: Some(" ".into()),
        ..ApiConfig::default()
    };
    assert!(
        AppState::builder(store.clone())
            .config(empty)
            .build()
            .is_err()
    );
    assert!(!format!("{:?}", with_token()).contains("s3cret"));

    let state = AppState::builder(store)
        .config(with_token())
        .build()
        .unwrap();
    let routes = [
        "/".to_owned(),
        "/api/openapi.json".to_owned(),
        "/api/traces".to_owned(),
        format!("/api/traces/{main}"),
        format!("/api/traces/{main}/messages"),
        format!("/api/traces/{main}/events"),
        format!("/api/traces/{main}/watch"),
        "/api/nothing".to_owned(),
    ];
    for route in &routes {
        let missing = send(&state, get_req(route)).await;
        assert_eq!(missing.status, StatusCode::UNAUTHORIZED, "{route}");
        assert_eq!(missing.code(), "unauthorized");
        assert_eq!(missing.headers[header::WWW_AUTHENTICATE], "Bearer");
        let wrong = Request::get(route.as_str())
            .header(header::AUTHORIZATION, "Bearer s3cre")
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            send(&state, wrong).await.status,
            StatusCode::UNAUTHORIZED,
            "{route}"
        );
        let basic = Request::get(route.as_str())
            .header(header::AUTHORIZATION, "Basic s3cret")
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            send(&state, basic).await.status,
            StatusCode::UNAUTHORIZED,
            "{route}"
        );
        let right = Request::get(route.as_str())
            .header(header::AUTHORIZATION, "Bearer s3cret")
            .body(Body::empty())
            .unwrap();
        assert_ne!(
            send(&state, right).await.status,
            StatusCode::UNAUTHORIZED,
            "{route}"
        );
    }
    for route in [
        format!("/api/traces/{main}/cancel"),
        "/api/traces".to_owned(),
    ] {
        let post = post_req(&route, Some("application/json"), "{\"task\": \"x\"}");
        assert_eq!(
            send(&state, post).await.status,
            StatusCode::UNAUTHORIZED,
            "{route}"
        );
    }
    // Browsers cannot set headers on a page load or a WebSocket: `?token=` works there only.
    assert_eq!(
        send(&state, get_req("/?token=s3cret")).await.status,
        StatusCode::OK
    );
    let watch = send(
        &state,
        get_req(&format!("/api/traces/{main}/watch?token=s3cret")),
    )
    .await;
    assert_eq!(watch.code(), "websocket_required", "{}", watch.text);
    let watch = send(
        &state,
        get_req(&format!("/api/traces/{main}/watch?token=nope")),
    )
    .await;
    assert_eq!(watch.status, StatusCode::UNAUTHORIZED);
    let list = send(&state, get_req("/api/traces?token=s3cret")).await;
    assert_eq!(list.status, StatusCode::UNAUTHORIZED);
    // Nor can an `<img>`: a picture takes `?token=` too (this trace has none: 404, not 401).
    let picture = format!("/api/traces/{main}/pictures/{}", "a".repeat(64));
    let by_query = send(&state, get_req(&format!("{picture}?token=s3cret"))).await;
    assert_eq!(by_query.status, StatusCode::NOT_FOUND, "{}", by_query.text);
    let wrong = send(&state, get_req(&format!("{picture}?token=nope"))).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    let messages = send(
        &state,
        get_req(&format!("/api/traces/{main}/messages?token=s3cret")),
    )
    .await;
    assert_eq!(messages.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn without_a_token_only_loopback_host_names_and_same_origin_pages_are_served() {
    let (store, _, _) = sample().await;
    let state = read_only(store.clone());
    let with = |host: &str, origin: Option<&str>| {
        let mut builder = Request::get("/api/traces").header(header::HOST, host);
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(Body::empty()).unwrap()
    };
    for host in [
        "localhost:8000",
        "127.0.0.1:8000",
        "[::1]:8000",
        "localhost",
        "viewer.localhost:1",
    ] {
        assert_eq!(
            send(&state, with(host, None)).await.status,
            StatusCode::OK,
            "{host}"
        );
    }
    for host in ["evil.example", "evil.example:8000", "10.0.0.1:8000"] {
        let answer = send(&state, with(host, None)).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{host}");
        assert_eq!(answer.code(), "forbidden");
    }
    assert_eq!(
        send(
            &state,
            with("localhost:8000", Some("http://localhost:8000"))
        )
        .await
        .status,
        StatusCode::OK
    );
    let cross = send(&state, with("localhost:8000", Some("http://evil.example"))).await;
    assert_eq!(cross.status, StatusCode::FORBIDDEN);
    assert!(
        cross
            .headers
            .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
            .is_none()
    );
    let null = send(&state, with("localhost:8000", Some("null"))).await;
    assert_eq!(null.status, StatusCode::FORBIDDEN);

    // CORS is off by default and on for configured origins.
    let cors = ApiConfig {
        cors_origins: vec!["http://localhost:5173".into()],
        ..ApiConfig::default()
    };
    let state = AppState::builder(store).config(cors).build().unwrap();
    let allowed = send(
        &state,
        with("localhost:8000", Some("http://localhost:5173")),
    )
    .await;
    assert_eq!(allowed.status, StatusCode::OK);
    assert_eq!(
        allowed.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://localhost:5173"
    );
    let preflight = Request::options("/api/traces")
        .header(header::HOST, "localhost:8000")
        .header(header::ORIGIN, "http://localhost:5173")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .body(Body::empty())
        .unwrap();
    let preflight = send(&state, preflight).await;
    assert!(preflight.status.is_success(), "{}", preflight.status);
    assert_eq!(
        preflight.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://localhost:5173"
    );
    let other = send(&state, with("localhost:8000", Some("http://evil.example"))).await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_watch_route_refuses_bad_requests_before_the_upgrade() {
    let (store, main, _) = sample().await;
    let newest = store
        .get_events(&main, 0)
        .await
        .unwrap()
        .last()
        .unwrap()
        .event_id;
    let state = read_only(store);
    for bad in ["-1", "abc", "1e3", ""] {
        let uri = format!("/api/traces/{main}/watch?since_event_id={bad}");
        check(
            &state,
            get_req(&uri),
            StatusCode::BAD_REQUEST,
            "invalid_query",
        )
        .await;
    }
    let beyond = format!("/api/traces/{main}/watch?since_event_id={}", newest + 1);
    let answer = send(&state, get_req(&beyond)).await;
    assert_eq!(answer.code(), "invalid_query");
    assert!(
        answer.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("beyond"),
        "{}",
        answer.text
    );
    for since in [0, newest] {
        let uri = format!("/api/traces/{main}/watch?since_event_id={since}");
        check(
            &state,
            get_req(&uri),
            StatusCode::BAD_REQUEST,
            "websocket_required",
        )
        .await;
    }
}

#[tokio::test]
async fn server_errors_hide_their_detail() {
    let error = agent_api::ApiError::Internal("disk /secret/path failed".into());
    let response = axum::response::IntoResponse::into_response(error);
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["code"], "internal");
    assert!(!body.to_string().contains("/secret/path"), "{body}");
}
