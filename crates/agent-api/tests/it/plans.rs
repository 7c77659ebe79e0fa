//! Plan mode over real HTTP on a loopback port, as a client meets it: plan a task with a
//! scripted model, change the plan through every route (a watcher sees each change), have an
//! edit of a started goal refused, run the plan and find the run carried out the edited plan;
//! then the 404, 400 and 409 answers.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_api::{ApiConfig, AppState, Server};
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{ScriptedFactory, wait_for_status};

/// A server on a free loopback port over `store`, its runs answered by `client`.
async fn serve(store: Arc<dyn TraceStore>, client: ScriptedClient, workspace: &Path) -> SocketAddr {
    let factory = ScriptedFactory {
        client,
        workspace: workspace.to_path_buf(),
        ended: Default::default(),
    };
    let config = ApiConfig {
        port: 0,
        ..ApiConfig::default()
    };
    let state = AppState::builder(store)
        .runner_factory(Arc::new(factory))
        .config(config)
        .build()
        .unwrap();
    let server = Server::bind(state).await.unwrap();
    let addr = server.local_addr();
    tokio::spawn(server.run(std::future::pending::<()>()));
    addr
}

/// One HTTP/1.1 request over a new connection: the status and the body as JSON.
async fn call(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(body) = body {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or(""));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

async fn send(addr: SocketAddr, method: &str, path: &str, body: Value) -> (u16, Value) {
    call(addr, method, path, Some(&body.to_string())).await
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or("")
}

/// The id of the goal described `description` in a goal tree's JSON.
fn id_of(tree: &Value, description: &str) -> String {
    tree["goals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|goal| goal["description"] == description)
        .unwrap_or_else(|| panic!("no goal {description:?} in {tree}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The goal `id` in a goal tree's JSON.
fn goal_of<'a>(tree: &'a Value, id: &str) -> &'a Value {
    tree["goals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|goal| goal["id"] == id)
        .unwrap_or_else(|| panic!("no goal {id} in {tree}"))
}

/// The descriptions of the goals that are not abandoned, in stored order, with their status.
fn visible(tree: &Value) -> Vec<(String, String)> {
    tree["goals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|goal| goal["status"] != "abandoned")
        .map(|goal| {
            let text = goal["description"].as_str().unwrap().to_owned();
            (text, goal["status"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn goal(args: Value) -> ScriptedTurn {
    ScriptedTurn::tool_call("goal", args)
}

/// Plans "Write the notes" (goals "Write notes" and "Check notes") and waits for the plan.
async fn planned(addr: SocketAddr, store: &Arc<dyn TraceStore>) -> (String, Value) {
    let (status, body) = send(
        addr,
        "POST",
        "/api/plans",
        json!({"task": "Write the notes"}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let trace_id = body["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(store, &trace_id, TraceStatus::Planned).await;
    let (status, trace) = call(addr, "GET", &format!("/api/traces/{trace_id}"), None).await;
    assert_eq!(status, 200);
    (trace_id, trace["goal_tree"].clone())
}

fn planning_turns() -> Vec<ScriptedTurn> {
    vec![
        goal(json!({"add": "Write notes, Check notes, Extra, Maybe later"})),
        ScriptedTurn::text("Four goals."),
    ]
}

#[tokio::test]
async fn a_plan_is_made_edited_through_every_route_and_run_as_edited() {
    let workspace = tempfile::tempdir().unwrap();
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let mut turns = planning_turns();
    // The run of the edited plan: 2.1, then 2 completes with it; then 3.
    turns.extend([
        goal(json!({"focus": "2.1"})),
        goal(json!({"done": "Outlined"})),
        goal(json!({"focus": "3"})),
        goal(json!({"done": "Checked"})),
        ScriptedTurn::text("The notes are written and checked."),
    ]);
    let client = ScriptedClient::new(turns).with_fallback("done");
    let addr = serve(store.clone(), client.clone(), workspace.path()).await;
    let (trace_id, tree) = planned(addr, &store).await;
    assert_eq!(tree["goals"][0]["status"], "completed", "the planning goal");
    let base = format!("/api/traces/{trace_id}");
    let write = id_of(&tree, "Write notes");
    let check = id_of(&tree, "Check notes");
    let extra = id_of(&tree, "Extra");
    let later = id_of(&tree, "Maybe later");

    // A watcher from now on sees every change.
    let since = store.get_events(&trace_id, 0).await.unwrap().len() as u64;
    let mut events = agent_execution::watch(store.clone(), &trace_id, since);

    let (status, body) = send(
        addr,
        "POST",
        &format!("{base}/goals"),
        json!({"description": "Draft an outline", "parent_id": write}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let outline = body["goal_id"].as_str().unwrap().to_owned();
    assert_eq!(id_of(&body["goal_tree"], "Draft an outline"), outline);

    let patch = |goal_id: &str, body: Value| {
        let path = format!("{base}/goals/{goal_id}");
        async move { send(addr, "PATCH", &path, body).await }
    };
    let (status, body) = patch(&write, json!({"description": "Write the notes"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = patch(&check, json!({"agent": "reviewer"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(goal_of(&body["goal_tree"], &check)["agent"], "reviewer");
    let (status, _) = patch(&check, json!({"agent": ""})).await;
    assert_eq!(status, 200);
    // Moved first, then back after "Write the notes", by index among the top-level goals.
    let (status, body) = patch(&extra, json!({"index": 0})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["goal_tree"]["goals"][0]["description"], "Extra");
    let (status, body) = patch(&extra, json!({"parent_id": write, "index": 0})).await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = call(addr, "DELETE", &format!("{base}/goals/{extra}"), None).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        addr,
        "POST",
        &format!("{base}/goals/{later}/abandon"),
        json!({"reason": "out of scope"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        addr,
        "PUT",
        &format!("{base}/goal_tree"),
        json!({"edits": [{"op": "update", "goal_id": outline, "description": "Outline the notes"}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let edited = body["goal_tree"].clone();
    assert_eq!(
        visible(&edited),
        [
            ("Plan the task".to_owned(), "completed".to_owned()),
            ("Write the notes".to_owned(), "pending".to_owned()),
            ("Check notes".to_owned(), "pending".to_owned()),
            ("Outline the notes".to_owned(), "pending".to_owned()),
        ]
    );
    assert_eq!(goal_of(&edited, &outline)["parent_id"], write.as_str());
    assert!(goal_of(&edited, &check).get("agent").is_none(), "cleared");

    // The planning goal started (and finished): only abandoning is left, and not even that.
    let planning = edited["goals"][0]["id"].as_str().unwrap().to_owned();
    let (status, body) = patch(&planning, json!({"description": "Plan again"})).await;
    assert_eq!((status, code(&body)), (409, "edit_refused"), "{body}");
    let (status, body) = call(addr, "DELETE", &format!("{base}/goals/{planning}"), None).await;
    assert_eq!((status, code(&body)), (409, "edit_refused"), "{body}");

    // Each change reached the watcher as goal events, ending with the tree as it is now.
    let mut seen = Vec::new();
    let mut last_tree = Value::Null;
    while last_tree != edited {
        let event = tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let value = serde_json::to_value(&event).unwrap();
        if event.name() == "goal_tree_updated" {
            last_tree = value["goal_tree"].clone();
        }
        seen.push(event.name());
    }
    for name in [
        "goal_added",
        "goal_updated",
        "goal_removed",
        "goal_tree_updated",
    ] {
        assert!(seen.contains(&name), "{name} missing from {seen:?}");
    }
    assert_eq!(
        seen.iter().filter(|n| **n == "goal_tree_updated").count(),
        9
    );

    let (status, body) = call(addr, "POST", &format!("{base}/run"), None).await;
    assert_eq!(
        (status, body["trace_id"].as_str()),
        (202, Some(trace_id.as_str())),
        "{body}"
    );
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let (_, trace) = call(addr, "GET", &base, None).await;
    let statuses: Vec<String> = visible(&trace["goal_tree"])
        .into_iter()
        .map(|(_, status)| status)
        .collect();
    assert_eq!(statuses, ["completed"; 4], "{}", trace["goal_tree"]);
    // The run's first model call had the plan as people left it.
    let requests = client.requests();
    let first_run_call = serde_json::to_string(&requests[2].messages).unwrap();
    let plan = &first_run_call[first_run_call.find("## Current Plan").unwrap()..];
    let plan = &plan[..plan.find('"').unwrap()];
    for text in [
        "2. Write the notes",
        "2.1 Outline the notes",
        "3. Check notes",
    ] {
        assert!(plan.contains(text), "{text} not in {plan}");
    }
    assert!(
        !plan.contains("Maybe later"),
        "abandoned goals leave the plan: {plan}"
    );

    // A trace that ran is no plan any more; its finished goals cannot change.
    let (status, body) = call(addr, "POST", &format!("{base}/run"), None).await;
    assert_eq!((status, code(&body)), (409, "not_a_plan"), "{body}");
    let (status, body) = patch(&check, json!({"description": "Again"})).await;
    assert_eq!((status, code(&body)), (409, "edit_refused"), "{body}");
}

#[tokio::test]
async fn a_plan_text_replaces_the_plan_and_mistakes_get_4xx() {
    let workspace = tempfile::tempdir().unwrap();
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let client = ScriptedClient::new(planning_turns()).with_fallback("done");
    let addr = serve(store.clone(), client, workspace.path()).await;
    let (trace_id, tree) = planned(addr, &store).await;
    let base = format!("/api/traces/{trace_id}");
    let write = id_of(&tree, "Write notes");

    let (status, body) = send(
        addr,
        "PUT",
        &format!("{base}/goal_tree"),
        json!({"plan_text": "Read\n  Skim\nWrite @writer\n"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let goals: Vec<&str> = body["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["description"].as_str().unwrap())
        .collect();
    assert_eq!(goals, ["Plan the task", "Read", "Skim", "Write"]);

    // Unknown trace, unknown goal (in the path or as a parent).
    for (method, path, body) in [
        (
            "PATCH",
            "/api/traces/no-such-trace/goals/1".to_owned(),
            Some(r#"{"description":"x"}"#),
        ),
        ("DELETE", format!("{base}/goals/999"), None),
        ("PATCH", format!("{base}/goals/999"), Some(r#"{"index":0}"#)),
        (
            "POST",
            format!("{base}/goals"),
            Some(r#"{"description":"x","parent_id":"999"}"#),
        ),
        ("POST", "/api/traces/no-such-trace/run".to_owned(), None),
    ] {
        let (status, answer) = call(addr, method, &path, body).await;
        assert_eq!(
            (status, code(&answer)),
            (404, "not_found"),
            "{method} {path}: {answer}"
        );
    }
    // Malformed bodies.
    for (method, path, body) in [
        (
            "PUT",
            format!("{base}/goal_tree"),
            r#"{"edits":[],"plan_text":"A"}"#,
        ),
        ("PUT", format!("{base}/goal_tree"), r#"{}"#),
        (
            "PUT",
            format!("{base}/goal_tree"),
            r#"{"edits":[{"op":"fly"}]}"#,
        ),
        (
            "PUT",
            format!("{base}/goal_tree"),
            r#"{"plan_text":"A\n    B"}"#,
        ),
        ("POST", format!("{base}/goals"), r#"{"description":"  "}"#),
        (
            "POST",
            format!("{base}/goals"),
            r#"{"description":"x","agent":"no such/agent"}"#,
        ),
        ("POST", format!("{base}/goals"), r#"{"description":"#),
        ("PATCH", format!("{base}/goals/{write}"), r#"{}"#),
        ("POST", format!("{base}/goals/{write}/abandon"), r#"{}"#),
        ("POST", "/api/plans".to_owned(), r#"{"task":" "}"#),
        (
            "POST",
            "/api/plans".to_owned(),
            r#"{"task":"x","max_iterations":0}"#,
        ),
    ] {
        let (status, answer) = call(addr, method, &path, Some(body)).await;
        assert_eq!(status, 400, "{method} {path} {body}: {answer}");
    }
    // Over the limits of a plan: 400, nothing written.
    let many: Vec<Value> = (0..51)
        .map(|i| json!({"op": "add", "description": format!("Goal {i}")}))
        .collect();
    let long = "x".repeat(agent_runner::MAX_GOAL_TEXT_CHARS + 1);
    for body in [
        json!({"edits": many}),
        json!({"edits": [{"op": "add", "description": long}]}),
        json!({"plan_text": long}),
        json!({"plan_text": "A\n".repeat(agent_runner::MAX_PLAN_GOALS + 1)}),
    ] {
        let (status, answer) = send(addr, "PUT", &format!("{base}/goal_tree"), body).await;
        assert_eq!(status, 400, "{answer}");
    }

    // A list of edits is all or nothing, and the refusal names the edit.
    let before = store.get_goal_tree(&trace_id).await.unwrap();
    let edits = json!({"edits": [
        {"op": "add", "description": "Fine"},
        {"op": "update", "goal_id": "1", "description": "Plan again"},
    ]});
    let (status, body) = send(addr, "PUT", &format!("{base}/goal_tree"), edits).await;
    assert_eq!((status, code(&body)), (409, "edit_refused"), "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("edit 1: "),
        "{body}"
    );
    assert_eq!(store.get_goal_tree(&trace_id).await.unwrap(), before);

    // A trace that is not a plan takes no plan text and is not run as one.
    let (status, body) = send(addr, "POST", "/api/traces", json!({"task": "Other"})).await;
    assert_eq!(status, 201, "{body}");
    let other = body["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &other, TraceStatus::Completed).await;
    let (status, body) = send(
        addr,
        "PUT",
        &format!("/api/traces/{other}/goal_tree"),
        json!({"plan_text": "A"}),
    )
    .await;
    assert_eq!((status, code(&body)), (409, "not_a_plan"), "{body}");
    let (status, body) = call(addr, "POST", &format!("/api/traces/{other}/run"), None).await;
    assert_eq!((status, code(&body)), (409, "not_a_plan"), "{body}");
}

#[tokio::test]
async fn a_plan_being_made_cannot_be_edited_or_run() {
    let workspace = tempfile::tempdir().unwrap();
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let slow = vec![
        ScriptedTurn::tool_call("goal", json!({"add": "A, B"})).with_delay(Duration::from_secs(2)),
        ScriptedTurn::text("Two goals."),
    ];
    let addr = serve(store.clone(), ScriptedClient::new(slow), workspace.path()).await;
    let (status, body) = send(addr, "POST", "/api/plans", json!({"task": "Slow"})).await;
    assert_eq!(status, 202, "{body}");
    let base = format!("/api/traces/{}", body["trace_id"].as_str().unwrap());
    let (status, body) = send(
        addr,
        "POST",
        &format!("{base}/goals"),
        json!({"description": "C"}),
    )
    .await;
    assert_eq!((status, code(&body)), (409, "run_in_progress"), "{body}");
    let (status, body) = call(addr, "POST", &format!("{base}/run"), None).await;
    assert_eq!((status, code(&body)), (409, "run_in_progress"), "{body}");
}

#[tokio::test]
async fn a_read_only_server_plans_nothing() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let state = crate::common::read_only(store);
    let answer =
        crate::common::post_json(&state, "/api/plans", json!({"task": "Write the notes"})).await;
    assert_eq!(answer.status.as_u16(), 403);
    assert_eq!(answer.code(), "runs_unavailable");
}
