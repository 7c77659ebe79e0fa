//! Provider faults: the runner, with the OpenAI-compatible client, against a hostile mock
//! server — 429 storms, a `Retry-After` of an hour, 5xx bursts, a stream closed midway, a server
//! that never answers, one that goes silent, one that trickles forever, and garbage. In every
//! case the run retries, waits or fails cleanly within its limits (a failed trace, never a hang
//! or a half-recorded turn), and a resume against the healthy server finishes it.
//!
//! The mock speaks raw HTTP/1.1 over TCP so it can misbehave at any byte. Each test prints one
//! `PROVIDER-FAULT {json}` line for the soak report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_execution::{Role, TraceStatus, TraceStore};
use agent_llm::{OpenAiClient, OpenAiConfig, RetryPolicy, Timeouts};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_store_fs::FileSystemTraceStore;
use agent_tools::ToolRegistry;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one request.
#[derive(Debug, Clone)]
enum Act {
    /// An error status with headers and a JSON body.
    Status(u16, Vec<(&'static str, String)>),
    /// A complete streamed answer: a goal call, then a final text on the next request.
    ToolCall,
    /// A complete streamed final answer.
    Answer(&'static str),
    /// Headers and these SSE chunks, then the connection is closed without finishing.
    CloseAfter(Vec<Value>),
    /// The request is read and never answered.
    Hang,
    /// Headers and one chunk, then silence with the connection open.
    Silent,
    /// A chunk every 100 ms, forever.
    Trickle,
    /// Headers, then bytes that are not server-sent JSON.
    Garbage,
}

/// A mock OpenAI-compatible server that plays a queue of acts, then answers healthily.
struct Mock {
    base_url: String,
    acts: Arc<Mutex<VecDeque<Act>>>,
    requests: Arc<Mutex<usize>>,
}

impl Mock {
    async fn start(acts: Vec<Act>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let acts = Arc::new(Mutex::new(VecDeque::from(acts)));
        let requests = Arc::new(Mutex::new(0));
        let (queue, count) = (acts.clone(), requests.clone());
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let (queue, count) = (queue.clone(), count.clone());
                tokio::spawn(async move { serve(socket, queue, count).await });
            }
        });
        Self {
            base_url,
            acts,
            requests,
        }
    }

    fn requests(&self) -> usize {
        *self.requests.lock().unwrap()
    }

    fn left(&self) -> usize {
        self.acts.lock().unwrap().len()
    }
}

/// Reads one request: headers, then the body by its length.
async fn read_request(socket: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    Some(buffer[head_end..].to_vec())
}

const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";

fn sse(chunk: &Value) -> String {
    format!("data: {chunk}\n\n")
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    })
}

fn tool_call_chunks(id: &str) -> Vec<Value> {
    vec![
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": "goal", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"add\": \"Sur"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "vive\", \"focus\": \"1\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ]
}

fn answer_chunks(text: &str) -> Vec<Value> {
    vec![
        chunk(json!({"role": "assistant", "content": text}), None),
        chunk(json!({}), Some("stop")),
    ]
}

async fn serve(mut socket: TcpStream, queue: Arc<Mutex<VecDeque<Act>>>, count: Arc<Mutex<usize>>) {
    let Some(body) = read_request(&mut socket).await else {
        return;
    };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let turn = {
        let mut count = count.lock().unwrap();
        *count += 1;
        *count
    };
    let act = queue.lock().unwrap().pop_front();
    // Healthy by default: a final answer, or a goal call when the conversation is new.
    let act = act.unwrap_or_else(|| {
        let fresh = request["messages"]
            .as_array()
            .is_some_and(|m| !m.iter().any(|m| m["role"] == "tool"));
        if fresh {
            Act::ToolCall
        } else {
            Act::Answer("Finished.")
        }
    });
    let _ = play(&mut socket, act, turn).await;
}

async fn play(socket: &mut TcpStream, act: Act, turn: usize) -> std::io::Result<()> {
    match act {
        Act::Status(status, headers) => {
            let body =
                json!({"error": {"message": format!("mock status {status}"), "type": "mock"}})
                    .to_string();
            let mut head = format!(
                "HTTP/1.1 {status} Mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
        }
        Act::ToolCall | Act::Answer(_) => {
            let chunks = match act {
                Act::Answer(text) => answer_chunks(text),
                _ => tool_call_chunks(&format!("call_mock_{turn}")),
            };
            socket.write_all(SSE_HEAD.as_bytes()).await?;
            for c in chunks {
                socket.write_all(sse(&c).as_bytes()).await?;
            }
            socket.write_all(b"data: [DONE]\n\n").await?;
        }
        Act::CloseAfter(chunks) => {
            socket.write_all(SSE_HEAD.as_bytes()).await?;
            for c in chunks {
                socket.write_all(sse(&c).as_bytes()).await?;
                socket.flush().await?;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // Dropped here: the connection closes without a finish or [DONE].
        }
        Act::Hang => {
            let mut sink = [0u8; 1024];
            while socket.read(&mut sink).await? > 0 {}
        }
        Act::Silent => {
            socket.write_all(SSE_HEAD.as_bytes()).await?;
            socket
                .write_all(sse(&answer_chunks("Thinking")[0]).as_bytes())
                .await?;
            let mut sink = [0u8; 1024];
            while socket.read(&mut sink).await? > 0 {}
        }
        Act::Trickle => {
            socket.write_all(SSE_HEAD.as_bytes()).await?;
            loop {
                let c = chunk(json!({"content": "."}), None);
                socket.write_all(sse(&c).as_bytes()).await?;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        Act::Garbage => {
            socket.write_all(SSE_HEAD.as_bytes()).await?;
            socket
                .write_all(b"data: {\"choices\": [ this is not json\n\n")
                .await?;
        }
    }
    socket.shutdown().await
}

/// The client: four attempts with short backoff, short deadlines so faults show quickly.
fn client(mock: &Mock, attempts: u32) -> Arc<OpenAiClient> {
    let config = OpenAiConfig::new(mock.base_url.clone(), Some("sk-mock".into()))
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

/// Plays `acts`, checks the first run against `expect`, then resumes (when it failed) against
/// the healthy server and checks that the trace completes whole.
async fn fault(name: &str, acts: Vec<Act>, attempts: u32, expect: Expect) {
    let mock = Mock::start(acts.clone()).await;
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
    let requests = mock.requests();
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

    // Resume against the healthy server (every act played) and finish.
    let mut resumed = false;
    if !expect.completes {
        assert_eq!(mock.left(), 0, "{name}: acts left over after the first run");
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

fn status(code: u16) -> Act {
    Act::Status(code, Vec::new())
}

fn rate_limited(retry_after_ms: u64) -> Act {
    Act::Status(429, vec![("retry-after-ms", retry_after_ms.to_string())])
}

#[tokio::test]
async fn a_short_429_storm_is_retried_away() {
    let acts = vec![rate_limited(20), rate_limited(20), rate_limited(20)];
    let expect = Expect {
        completes: true,
        error: "",
        max_requests: 5,
        within: Duration::from_secs(60),
    };
    fault("429 storm within the retries", acts, 4, expect).await;
}

#[tokio::test]
async fn a_429_storm_longer_than_the_retries_fails_cleanly_and_resumes() {
    let acts = vec![rate_limited(10); 4];
    let expect = Expect {
        completes: false,
        error: "rate limit",
        max_requests: 4,
        within: Duration::from_secs(60),
    };
    fault("429 storm beyond the retries", acts, 4, expect).await;
}

#[tokio::test]
async fn a_retry_after_of_an_hour_is_not_waited_for() {
    let acts = vec![Act::Status(429, vec![("retry-after", "3600".into())])];
    let expect = Expect {
        completes: false,
        error: "rate limit",
        max_requests: 1,
        within: Duration::from_secs(30),
    };
    fault("429 with Retry-After: 3600", acts, 4, expect).await;
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
    let mut partial = tool_call_chunks("call_cut");
    partial.truncate(2);
    let expect = Expect {
        completes: false,
        error: "stream ended before the response was complete",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault(
        "stream closed mid tool call",
        vec![Act::CloseAfter(partial)],
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
        vec![Act::CloseAfter(text)],
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
    fault("no response headers", vec![Act::Hang, Act::Hang], 2, expect).await;
}

#[tokio::test]
async fn a_server_that_goes_silent_hits_the_idle_timeout() {
    let expect = Expect {
        completes: false,
        error: "idle stream timeout",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault("silent mid-stream", vec![Act::Silent], 4, expect).await;
}

#[tokio::test]
async fn a_stream_that_trickles_forever_is_cut_by_the_deadline() {
    let expect = Expect {
        completes: false,
        error: "request timeout after 8s",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault("endless trickle", vec![Act::Trickle], 4, expect).await;
}

#[tokio::test]
async fn garbage_in_the_stream_fails_cleanly() {
    let expect = Expect {
        completes: false,
        error: "malformed",
        max_requests: 1,
        within: Duration::from_secs(60),
    };
    fault("garbage chunk", vec![Act::Garbage], 4, expect).await;
}
