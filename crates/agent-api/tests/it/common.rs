//! Shared helpers of the agent-api tests: a runner factory over a scripted model, states,
//! one-shot requests, and waiting for a trace's status.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_api::{ApiConfig, AppState, FactoryError, RunnerFactory, router};
use agent_execution::{TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::ToolRegistry;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;

/// A factory whose runners answer from one shared scripted client and use the built-in tools
/// in a temporary workspace.
pub struct ScriptedFactory {
    pub client: ScriptedClient,
    pub workspace: PathBuf,
    /// The trace ids of the runs that ended, in order.
    pub ended: Arc<std::sync::Mutex<Vec<String>>>,
}

impl RunnerFactory for ScriptedFactory {
    fn options(&self) -> RunnerOptions {
        RunnerOptions::new("scripted", &self.workspace)
            .with_approval(agent_runner::Approval::Allow)
            .with_sub_agents()
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        if options.model == "unknown-model" {
            return Err(FactoryError::Rejected("unknown model unknown-model".into()));
        }
        Ok(AgentRunner::new(
            store,
            Arc::new(self.client.clone()),
            ToolRegistry::with_builtins(),
            options,
        ))
    }

    fn run_ended(&self, trace_id: &str) {
        self.ended.lock().unwrap().push(trace_id.to_owned());
    }
}

/// A state over `store` with a scripted factory and `config`.
pub fn state_with(
    store: Arc<dyn TraceStore>,
    turns: Vec<ScriptedTurn>,
    workspace: &std::path::Path,
    config: ApiConfig,
) -> AppState {
    state_and_ends(store, turns, workspace, config).0
}

/// Like [`state_with`], with the list of the runs that ended.
pub fn state_and_ends(
    store: Arc<dyn TraceStore>,
    turns: Vec<ScriptedTurn>,
    workspace: &std::path::Path,
    config: ApiConfig,
) -> (AppState, Arc<std::sync::Mutex<Vec<String>>>) {
    let ended = Arc::new(std::sync::Mutex::new(Vec::new()));
    let factory = ScriptedFactory {
        client: ScriptedClient::new(turns).with_fallback("done"),
        workspace: workspace.to_path_buf(),
        ended: ended.clone(),
    };
    let state = AppState::builder(store)
        .runner_factory(Arc::new(factory))
        .config(config)
        .build()
        .unwrap();
    (state, ended)
}

/// A read-only state (no factory) over `store`.
pub fn read_only(store: Arc<dyn TraceStore>) -> AppState {
    AppState::builder(store).build().unwrap()
}

/// A response: status, headers and the body parsed as JSON (`Value::Null` if it is not JSON).
pub struct Answer {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub text: String,
    pub json: Value,
    /// The body as sent.
    pub bytes: axum::body::Bytes,
}

impl Answer {
    /// The `error.code` of an error response.
    pub fn code(&self) -> &str {
        self.json["error"]["code"].as_str().unwrap_or("")
    }
}

/// Sends one request through the router.
pub async fn send(state: &AppState, request: Request<Body>) -> Answer {
    let response = router(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        text,
        json,
        bytes,
    }
}

/// `GET uri`.
pub async fn get(state: &AppState, uri: &str) -> Answer {
    send(state, Request::get(uri).body(Body::empty()).unwrap()).await
}

/// `POST uri` with a JSON body.
pub async fn post_json(state: &AppState, uri: &str, body: Value) -> Answer {
    let request = Request::post(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    send(state, request).await
}

/// `POST uri` without a body.
pub async fn post_empty(state: &AppState, uri: &str) -> Answer {
    send(state, Request::post(uri).body(Body::empty()).unwrap()).await
}

/// Waits until the trace has `status`, for at most ten seconds.
pub async fn wait_for_status(store: &Arc<dyn TraceStore>, trace_id: &str, status: TraceStatus) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = store.get_trace(trace_id).await.unwrap().map(|t| t.status);
        if now == Some(status) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "trace {trace_id} is {now:?}, expected {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (up to 10 s) until the trace at `url` lists a pending approval, and returns its
/// detail. The trace turns `waiting` just before the call is registered, so a test that only
/// waits for the status can read the detail in between.
pub async fn wait_for_pending(state: &AppState, url: &str) -> Answer {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let detail = get(state, url).await;
        if detail.json["pending_approvals"]
            .as_array()
            .is_some_and(|pending| !pending.is_empty())
        {
            return detail;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no pending approval: {}",
            detail.text
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A script that plans one goal, focuses it, and finishes it, then answers.
pub fn short_script() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::tool_call(
            "goal",
            serde_json::json!({"add": "Read the code", "focus": "1"}),
        ),
        ScriptedTurn::tool_call("goal", serde_json::json!({"done": "Read it"})),
        ScriptedTurn::text("All done."),
    ]
}
