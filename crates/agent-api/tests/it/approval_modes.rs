//! The server's approval mode for runs started over HTTP: `ask` (the default) parks risky calls
//! until a client decides, `auto` runs them, `never` refuses them with a reason the model reads;
//! a request may ask for a stricter mode, never a looser one; the factory's approval rules
//! decide first (a deny in every mode, an allow but in `never`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::{ScriptedFactory, get, post_json, wait_for_status};
use agent_api::{ApiConfig, AppState, ApprovalMode, FactoryError, RunnerFactory};
use agent_execution::{InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, ApprovalRules, RunnerOptions};
use axum::http::StatusCode;
use serde_json::{Value, json};

/// A run that writes `a.txt`, runs `echo hi`, then answers.
fn risky_script() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::tool_call("write_file", json!({"path": "a.txt", "content": "A"})),
        ScriptedTurn::tool_call("bash", json!({"command": "echo hi"})),
        ScriptedTurn::text("Done what I could."),
    ]
}

struct Server {
    state: AppState,
    store: Arc<dyn TraceStore>,
    workspace: tempfile::TempDir,
    started: AtomicUsize,
}

/// How many runs a server's script has routes for: each run's task is `[run N]`, answered by the
/// risky script of its own.
const RUNS: usize = 8;

/// A scripted factory whose runs carry approval rules, as `agent serve` gives agent.toml's.
struct RuledFactory {
    inner: ScriptedFactory,
    rules: ApprovalRules,
}

impl RunnerFactory for RuledFactory {
    fn options(&self) -> RunnerOptions {
        let mut options = self.inner.options();
        options.approval_rules = self.rules.clone();
        options
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        self.inner.build(store, options)
    }
}

fn server(mode: ApprovalMode, rules: Option<ApprovalRules>) -> Server {
    let workspace = tempfile::tempdir().unwrap();
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let mut client = ScriptedClient::new(Vec::new()).with_fallback("done");
    for run in 0..RUNS {
        client = client.with_route(format!("[run {run}]"), risky_script());
    }
    let factory = ScriptedFactory {
        client,
        workspace: workspace.path().to_path_buf(),
        ended: Default::default(),
    };
    let config = ApiConfig {
        approval: mode,
        ..ApiConfig::default()
    };
    let factory: Arc<dyn RunnerFactory> = match rules {
        Some(rules) => Arc::new(RuledFactory {
            inner: factory,
            rules,
        }),
        None => Arc::new(factory),
    };
    let state = AppState::builder(store.clone())
        .runner_factory(factory)
        .config(config)
        .build()
        .unwrap();
    Server {
        state,
        store,
        workspace,
        started: AtomicUsize::new(0),
    }
}

impl Server {
    /// Starts a run of its own script with the fields of `body` (its task is replaced).
    async fn start(&self, mut body: Value) -> String {
        let run = self.started.fetch_add(1, Ordering::SeqCst);
        assert!(run < RUNS, "the script has routes for {RUNS} runs");
        body["task"] = json!(format!("Write [run {run}]"));
        let answer = post_json(&self.state, "/api/traces", body).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
        answer.json["trace_id"].as_str().unwrap().to_owned()
    }

    /// The tool results of a trace, by tool call order: (text, is_error).
    async fn tool_results(&self, trace_id: &str) -> Vec<(String, bool)> {
        let messages = self.store.get_trace_messages(trace_id).await.unwrap();
        messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| (m.content.text().to_owned(), m.content.is_error()))
            .collect()
    }

    fn wrote(&self) -> bool {
        self.workspace.path().join("a.txt").exists()
    }
}

#[tokio::test]
async fn by_default_risky_calls_wait_for_a_decision_over_http() {
    let server = server(ApiConfig::default().approval, None);
    assert_eq!(ApiConfig::default().approval, ApprovalMode::Ask);
    // The request asks for nothing: the server's mode holds.
    let trace_id = server.start(json!({"task": "Write"})).await;
    wait_for_status(&server.store, &trace_id, TraceStatus::Waiting).await;
    let url = format!("/api/traces/{trace_id}");
    let pending = crate::common::wait_for_pending(&server.state, &url)
        .await
        .json["pending_approvals"]
        .clone();
    assert_eq!(pending[0]["tool_name"], "write_file", "{pending}");
    assert!(!server.wrote());
    let call = pending[0]["tool_call_id"].as_str().unwrap();
    let approve = post_json(
        &server.state,
        &format!("{url}/approvals/{call}"),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(approve.status, StatusCode::OK, "{}", approve.text);
    // The bash call waits in turn; refuse it.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let second = loop {
        let pending = get(&server.state, &url).await.json["pending_approvals"].clone();
        if pending[0]["tool_name"] == "bash" {
            break pending[0]["tool_call_id"].as_str().unwrap().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "bash never waited");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    post_json(
        &server.state,
        &format!("{url}/approvals/{second}"),
        json!({"approve": false, "reason": "no shell"}),
    )
    .await;
    wait_for_status(&server.store, &trace_id, TraceStatus::Completed).await;
    assert!(server.wrote());
    let results = server.tool_results(&trace_id).await;
    assert!(!results[0].1, "{results:?}");
    assert!(
        results[1].1 && results[1].0.contains("no shell"),
        "{results:?}"
    );
}

#[tokio::test]
async fn auto_runs_risky_calls_and_never_refuses_them_with_a_reason_the_model_reads() {
    let auto = server(ApprovalMode::Auto, None);
    let trace_id = auto.start(json!({"task": "Write"})).await;
    wait_for_status(&auto.store, &trace_id, TraceStatus::Completed).await;
    assert!(auto.wrote());
    let results = auto.tool_results(&trace_id).await;
    assert!(results.iter().all(|(_, error)| !error), "{results:?}");

    let never = server(ApprovalMode::Never, None);
    let trace_id = never.start(json!({"task": "Write"})).await;
    wait_for_status(&never.store, &trace_id, TraceStatus::Completed).await;
    assert!(!never.wrote());
    let results = never.tool_results(&trace_id).await;
    assert_eq!(results.len(), 2);
    for (text, error) in &results {
        assert!(*error, "{text}");
        assert!(
            text.contains(agent_api::approvals::NEVER_REASON),
            "the model is told why: {text}"
        );
    }
    let detail = get(&never.state, &format!("/api/traces/{trace_id}")).await;
    assert_eq!(detail.json["pending_approvals"], json!([]));
}

#[tokio::test]
async fn a_request_may_ask_for_a_stricter_mode_but_not_a_looser_one() {
    // Stricter than `auto`: `never` refuses, `true` (the older form of `ask`) waits.
    let auto = server(ApprovalMode::Auto, None);
    let trace_id = auto
        .start(json!({"task": "Write", "approval": "never"}))
        .await;
    wait_for_status(&auto.store, &trace_id, TraceStatus::Completed).await;
    assert!(!auto.wrote());
    let waiting = auto.start(json!({"task": "Write", "approval": true})).await;
    wait_for_status(&auto.store, &waiting, TraceStatus::Waiting).await;
    let same = auto
        .start(json!({"task": "Write", "approval": "auto"}))
        .await;
    wait_for_status(&auto.store, &same, TraceStatus::Completed).await;

    // Looser than the server's mode: refused, and nothing is started.
    for (mode, approval) in [
        (ApprovalMode::Ask, json!(false)),
        (ApprovalMode::Ask, json!("auto")),
        (ApprovalMode::Never, json!(true)),
        (ApprovalMode::Never, json!("ask")),
        (ApprovalMode::Never, json!(false)),
    ] {
        let server = server(mode, None);
        let body = json!({"task": "Write", "approval": approval});
        let answer = post_json(&server.state, "/api/traces", body).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{mode:?} {approval}");
        assert_eq!(answer.code(), "approval_not_allowed");
        let message = answer.json["error"]["message"].as_str().unwrap();
        assert!(message.contains(mode.as_str()), "{message}");
        let traces = get(&server.state, "/api/traces").await;
        assert_eq!(traces.json["traces"], json!([]), "{mode:?} {approval}");
    }

    // A resume is held to the same rule.
    let ask = server(ApprovalMode::Ask, None);
    let never_run = ask
        .start(json!({"task": "Write", "approval": "never"}))
        .await;
    wait_for_status(&ask.store, &never_run, TraceStatus::Completed).await;
    assert!(!ask.wrote());
    let store = ask.store.clone();
    let update = agent_execution::TraceUpdate {
        status: Some(TraceStatus::Cancelled),
        ..agent_execution::TraceUpdate::default()
    };
    store.update_trace(&never_run, update).await.unwrap();
    let looser = post_json(
        &ask.state,
        &format!("/api/traces/{never_run}/resume"),
        json!({"approval": "auto"}),
    )
    .await;
    assert_eq!(looser.status, StatusCode::FORBIDDEN, "{}", looser.text);
    assert_eq!(looser.code(), "approval_not_allowed");

    // Values that are no mode at all.
    for approval in [json!("sometimes"), json!(1), json!(null), json!(["ask"])] {
        let body = json!({"task": "Write", "approval": approval});
        let answer = post_json(&ask.state, "/api/traces", body).await;
        if approval.is_null() {
            // `null` is the field left out.
            assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
        } else {
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{approval}");
            assert!(answer.text.contains("approval"), "{}", answer.text);
        }
    }
}

/// Refuses `bash`, approves `write_file`, leaves the rest to the mode.
fn rules() -> Option<ApprovalRules> {
    Some(ApprovalRules::parse(&["write_file"], &["bash"]).unwrap())
}

#[tokio::test]
async fn approval_rules_decide_before_the_mode() {
    // `ask`: the allowed write runs without asking, the denied shell is refused.
    let ask = server(ApprovalMode::Ask, rules());
    let trace_id = ask.start(json!({"task": "Write"})).await;
    wait_for_status(&ask.store, &trace_id, TraceStatus::Completed).await;
    assert!(ask.wrote());
    let results = ask.tool_results(&trace_id).await;
    assert!(!results[0].1, "{results:?}");
    assert!(
        results[1].1 && results[1].0.contains("`bash` denies it"),
        "{results:?}"
    );

    // `auto`: a deny still holds.
    let auto = server(ApprovalMode::Auto, rules());
    let trace_id = auto.start(json!({"task": "Write"})).await;
    wait_for_status(&auto.store, &trace_id, TraceStatus::Completed).await;
    let results = auto.tool_results(&trace_id).await;
    assert!(results[1].1, "{results:?}");

    // `never`: nothing risky runs, whatever the rules allow.
    let never = server(ApprovalMode::Never, rules());
    let trace_id = never.start(json!({"task": "Write"})).await;
    wait_for_status(&never.store, &trace_id, TraceStatus::Completed).await;
    assert!(!never.wrote());
    let results = never.tool_results(&trace_id).await;
    assert!(
        results[0].0.contains(agent_api::approvals::NEVER_REASON),
        "the allow rule does not run it: {results:?}"
    );
    assert!(results[1].0.contains("`bash` denies it"), "{results:?}");
}
