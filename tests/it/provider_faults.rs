//! Provider faults: the runner, with the OpenAI-compatible client, against a hostile mock
//! server — 429 storms, a `Retry-After` of an hour, 5xx bursts, a stream closed midway, a server
//! that never answers, one that goes silent, one that trickles forever, and garbage. In every
//! case the run retries, waits or fails cleanly within its limits (a failed trace, never a hang
//! or a half-recorded turn), and a resume against the healthy server finishes it.
//!
//! The mock is the workspace's mock model server, scripted to misbehave: error statuses with
//! their headers, bodies cut, stalled or trickling, no answer at all. Each test prints one
//! `PROVIDER-FAULT {json}` line for the soak report.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::{Role, TraceStatus, TraceStore};
use agent_llm::{OpenAiClient, OpenAiConfig, RetryPolicy, Timeouts};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_store_fs::FileSystemTraceStore;
use agent_test_support::mock_model::{MockModelServer, RecordedRequest, Reply, Turn, sse_data};
use agent_tools::ToolRegistry;
use serde_json::{Value, json};

/// A mock OpenAI-compatible server that plays a queue of faults, then answers healthily: a
/// goal call when the conversation is new, a final answer once a tool result came back.
async fn mock(faults: Vec<Reply>) -> MockModelServer {
    let server = MockModelServer::with_replies(faults).await;
    server.when_empty(healthy);
    server
}

fn healthy(request: &RecordedRequest) -> Reply {
    let fresh = request.body["messages"]
        .as_array()
        .is_some_and(|m| !m.iter().any(|m| m["role"] == "tool"));
    if fresh {
        goal_call(&format!("call_mock_{}", request.index + 1)).into()
    } else {
        Turn::text("Finished.").into()
    }
}

/// A tool call, its arguments streamed in fragments. It reads (no goal is left open, so the
/// text that follows ends the run).
fn goal_call(id: &str) -> Turn {
    Turn::tool_call(id, "glob_files", json!({"pattern": "Survive/**/*.txt"}))
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    })
}

/// Headers and these chunks, 20 ms apart, then the body ends without a finish or `[DONE]`.
fn close_after(chunks: &[Value]) -> Reply {
    Reply::sse(chunks.iter().map(sse_data)).with_pause(Duration::from_millis(20))
}

/// Headers and one chunk, then silence with the connection open.
fn silent() -> Reply {
    Reply::sse([sse_data(&chunk(
        json!({"role": "assistant", "content": "Thinking"}),
        None,
    ))])
    .then_hang()
}

/// A chunk every 100 ms, forever.
fn trickle() -> Reply {
    Reply::trickle(
        sse_data(&chunk(json!({"content": "."}), None)),
        Duration::from_millis(100),
    )
}

/// Headers, then bytes that are not server-sent JSON.
fn garbage() -> Reply {
    Reply::sse(["data: {\"choices\": [ this is not json\n\n"])
}

/// The client: four attempts with short backoff, short deadlines so faults show quickly.
fn client(mock: &MockModelServer, attempts: u32) -> Arc<OpenAiClient> {
    let config = OpenAiConfig::new(mock.openai_base(), Some("sk-mock".into()))
        .with_retry(
            RetryPolicy::default()
                .with_max_attempts(attempts)
                .with_delays(Duration::from_millis(5), Duration::from_millis(50)),
        )
        .with_timeouts(Timeouts {
            connect: Duration::from_secs(5),
            request: Duration::from_secs(3),
            idle: Duration::from_secs(1),
        });
    Arc::new(OpenAiClient::new(config).unwrap())
}

fn runner(
    dir: &std::path::Path,
    workspace: &std::path::Path,
    llm: Arc<OpenAiClient>,
) -> AgentRunner {
    let store = Arc::new(FileSystemTraceStore::open(dir).unwrap());
    let mut options = RunnerOptions::new("mock-model", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.llm_timeout = Duration::from_secs(8);
    AgentRunner::new(store, llm, ToolRegistry::with_builtins(), options)
}

/// What a fault scenario expects of the first run.
struct Expect {
    /// The first run completes despite the fault (it was retried away), or fails cleanly.
    completes: bool,
    /// Text the failure must contain.
    error: &'static str,
    /// How many requests the first run makes, at most.
    max_requests: usize,
    /// How long the first run may take, at most (generous: only a hang exceeds it).
    within: Duration,
}

/// Plays `faults`, checks the first run against `expect`, then resumes (when it failed) against
/// the healthy server and checks that the trace completes whole.
async fn fault(name: &str, faults: Vec<Reply>, attempts: u32, expect: Expect) {
    let mock = mock(faults).await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let llm = client(&mock, attempts);
    let first = runner(dir.path(), workspace.path(), llm.clone());
    let started = Instant::now();
    let outcome = tokio::time::timeout(expect.within, first.run("Survive the provider"))
        .await
        .unwrap_or_else(|_| panic!("{name}: the run did not end within {:?}", expect.within))
        .unwrap();
    let took = started.elapsed();
    let requests = mock.request_count();
    assert!(
        requests <= expect.max_requests,
        "{name}: {requests} requests, expected at most {}",
        expect.max_requests
    );
    let trace_id = outcome.trace_id.clone();
    let error = outcome.error.clone().unwrap_or_default();
    if expect.completes {
        assert_eq!(
            outcome.status,
            TraceStatus::Completed,
            "{name}: {outcome:?}"
        );
    } else {
        assert_eq!(outcome.status, TraceStatus::Failed, "{name}: {outcome:?}");
        assert!(
            error.starts_with("model error:") && error.contains(expect.error),
            "{name}: error {error:?}"
        );
    }
    drop(first);

    // What the failed run left: no assistant turn from a broken answer.
    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let before = store.get_trace_messages(&trace_id).await.unwrap();
    for message in before.iter().filter(|m| m.role == Role::Assistant) {
        let text = message.content.text();
        assert!(
            text.is_empty() || text == "Finished.",
            "{name}: a partial answer was recorded: {text:?}"
        );
    }
    drop(store);

    // Resume against the healthy server (every fault played) and finish.
    let mut resumed = false;
    if !expect.completes {
        assert_eq!(
            mock.replies_left(),
            0,
            "{name}: faults left over after the first run"
        );
        let again = runner(dir.path(), workspace.path(), llm);
        let outcome = tokio::time::timeout(Duration::from_secs(60), again.resume(&trace_id))
            .await
            .unwrap_or_else(|_| panic!("{name}: the resume hung"))
            .unwrap();
        assert_eq!(
            outcome.status,
            TraceStatus::Completed,
            "{name}: {outcome:?}"
        );
        assert_eq!(outcome.trace_id, trace_id);
        resumed = true;
    }
    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let messages = store.get_trace_messages(&trace_id).await.unwrap();
    let events = store.get_events(&trace_id, 0).await.unwrap();
    let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "{name}: event ids"
    );
    let mut results: HashMap<String, usize> = HashMap::new();
    for m in messages.iter().filter(|m| m.role == Role::Tool) {
        *results.entry(m.tool_call_id.clone().unwrap()).or_default() += 1;
    }
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        for call in m.content.tool_calls() {
            let id = call.id.as_str();
            assert_eq!(results.get(id), Some(&1), "{name}: call {id} results");
        }
    }
    let last = messages.last().unwrap();
    assert_eq!(
        last.content.text(),
        "Finished.",
        "{name}: {:?}",
        last.content
    );
    println!(
        "PROVIDER-FAULT {}",
        json!({
            "fault": name,
            "first_run": if expect.completes { "completed" } else { "failed cleanly" },
            "requests": requests,
            "error": error,
            "seconds": (took.as_secs_f64() * 10.0).round() / 10.0,
            "resumed": resumed,
        })
    );
}

fn status(code: u16) -> Reply {
    Reply::error(
        code,
        json!({"error": {"message": format!("mock status {code}"), "type": "mock"}}),
    )
}

fn rate_limited(retry_after_ms: u64) -> Reply {
    status(429).with_header("retry-after-ms", retry_after_ms.to_string())
}

#[tokio::test]
async fn a_short_429_storm_is_retried_away() {
    let faults = vec![rate_limited(20), rate_limited(20), rate_limited(20)];
    let expect = Expect {
        completes: true,
        error: "",
        max_requests: 5,
        within: Duration::from_secs(60),
    };
    fault("429 storm within the retries", faults, 4, expect).await;
}

#[tokio::test]
async fn a_429_storm_longer_than_the_retries_fails_cleanly_and_resumes() {
    let faults = vec![rate_limited(10); 4];
    let expect = Expect {
        completes: false,
        error: "rate limit",
        max_requests: 4,
        within: Duration::from_secs(60),
    };
    fault("429 storm beyond the retries", faults, 4, expect).await;
}

#[tokio::test]
async fn a_retry_after_of_an_hour_is_not_waited_for() {
    let faults = vec![status(429).with_header("retry-after", "3600")];
    let expect = Expect {
        completes: false,
        error: "rate limit",
        max_requests: 1,
        within: Duration::from_secs(30),
    };
    fault("429 with Retry-After: 3600", faults, 4, expect).await;
}

#[tokio::test]
async fn server_errors_are_retried_then_fail_cleanly() {
    let expect = Expect {
        completes: true,
        error: "",
        max_requests: 4,
        within: Duration::from_secs(60),
    };
    fault(
        "502, 503 then success",
        vec![status(502), status(503)],
        4,
        expect,
    )
    .await;
    let expect = Expect {
        completes: false,
        error: "500",
        max_requests: 4,
        within: Duration::from_secs(60),
    };
    fault("500 storm", vec![status(500); 4], 4, expect).await;
}

#[tokio::test]
async fn a_stream_closed_midway_is_not_replayed_and_resumes() {
    // The connection drops in the middle of a tool call's arguments.
    let partial = &goal_call("call_cut").openai_chunks()[..3];
    let expect = Expect {
        completes: false,
        error: "stream ended before the response was complete",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault(
        "stream closed mid tool call",
        vec![close_after(partial)],
        4,
        expect,
    )
    .await;
    // It drops after text, before the finish.
    let text = vec![chunk(
        json!({"role": "assistant", "content": "Thinking about"}),
        None,
    )];
    let expect = Expect {
        completes: false,
        error: "stream ended before the response was complete",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault(
        "stream closed mid text",
        vec![close_after(&text)],
        4,
        expect,
    )
    .await;
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_request_timeout() {
    let expect = Expect {
        completes: false,
        error: "request timeout",
        max_requests: 2,
        within: Duration::from_secs(60),
    };
    fault(
        "no response headers",
        vec![Reply::hang(), Reply::hang()],
        2,
        expect,
    )
    .await;
}

#[tokio::test]
async fn a_server_that_goes_silent_hits_the_idle_timeout() {
    let expect = Expect {
        completes: false,
        error: "idle stream timeout",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault("silent mid-stream", vec![silent()], 4, expect).await;
}

#[tokio::test]
async fn a_stream_that_trickles_forever_is_cut_by_the_deadline() {
    let expect = Expect {
        completes: false,
        error: "request timeout after 8s",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault("endless trickle", vec![trickle()], 4, expect).await;
}

#[tokio::test]
async fn garbage_in_the_stream_fails_cleanly() {
    let expect = Expect {
        completes: false,
        error: "malformed",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault("garbage chunk", vec![garbage()], 4, expect).await;
}
