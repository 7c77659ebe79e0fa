//! OpenTelemetry export against a real OTLP receiver (Arize Phoenix, installed by
//! `scripts/setup-otel.sh`): the demo run — a plan, an abandoned goal, an exploration of two
//! branches, goal compaction — arrives as the span tree of the GenAI conventions, with no
//! message contents by default; nothing is sent when no receiver is named; `agent export --otlp`
//! sends a stored trace again.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, stderr};
use serde_json::Value;

/// A Phoenix server on free ports, killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Receiver {
    /// Starts Phoenix and waits (up to two minutes) until it answers.
    fn start() -> Self {
        let phoenix =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/otel/.venv/bin/phoenix");
        assert!(
            phoenix.is_file(),
            "{} is missing: the OTLP receiver is not installed. Run `cargo xtask setup` (or \
             scripts/setup-otel.sh).",
            phoenix.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(phoenix)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let receiver = Self {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while receiver.get("/healthz").is_none() {
            assert!(
                Instant::now() < deadline,
                "Phoenix did not start within two minutes"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        receiver
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A GET of `path`, its body if it answered 200.
    fn get(&self, path: &str) -> Option<String> {
        let output = Command::new("curl")
            .args(["-sf", "--max-time", "5", &format!("{}{path}", self.url())])
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Every span stored so far.
    fn spans(&self) -> Vec<Value> {
        let body = self
            .get("/v1/projects/default/spans?limit=1000")
            .expect("the span list");
        let value: Value = serde_json::from_str(&body).unwrap();
        value["data"].as_array().unwrap().clone()
    }

    /// The spans once some arrived and their number held still for a second: the receiver
    /// stores a batch in parts.
    fn settled_spans(&self) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = 0;
        let mut still_since = Instant::now();
        loop {
            let spans = self.spans();
            if spans.len() != last {
                last = spans.len();
                still_since = Instant::now();
            } else if last > 0 && still_since.elapsed() >= Duration::from_secs(1) {
                return spans;
            }
            assert!(Instant::now() < deadline, "{last} spans and still arriving");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// `agent demo` without a viewer, with `env` set.
async fn demo(cli: &CliEnv, env: &[(&str, &str)]) -> String {
    let mut command = cli.command(&["demo", "--no-serve"]);
    command.envs(env.iter().copied());
    let output = tokio::process::Command::from(command)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed = cli.run(&["traces", "--json"]).await;
    let traces: Value = serde_json::from_slice(&listed.stdout).unwrap();
    traces
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["parent_trace_id"].is_null())
        .map(|t| t["trace_id"].as_str().unwrap().to_owned())
        .unwrap()
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

#[tokio::test]
async fn runs_arrive_as_genai_spans_at_a_real_receiver_and_only_when_asked() {
    let receiver = Receiver::start();

    // No receiver named: nothing is sent.
    let quiet = crate::agent_env();
    demo(&quiet, &[]).await;
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(receiver.spans().len(), 0);

    let cli = crate::agent_env();
    let url = receiver.url();
    let trace_id = demo(&cli, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &url)]).await;
    let spans = receiver.settled_spans();
    let by_id: HashMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["context"]["span_id"].as_str().unwrap(), s))
        .collect();
    let parent = |span: &Value| {
        span["parent_id"]
            .as_str()
            .and_then(|p| by_id.get(p).copied())
    };
    let named = |prefix: &str| -> Vec<&Value> {
        spans
            .iter()
            .filter(|s| s["name"].as_str().unwrap().starts_with(prefix))
            .collect()
    };

    // One trace, rooted at the main run's invoke_agent span.
    let roots: Vec<&Value> = spans.iter().filter(|s| parent(s).is_none()).collect();
    assert_eq!(roots.len(), 1, "{roots:#?}");
    let root = roots[0];
    assert_eq!(root["name"], "invoke_agent agent");
    assert_eq!(attr(root, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(root, "gen_ai.conversation.id"), trace_id.as_str());
    assert!(
        spans
            .iter()
            .all(|s| s["context"]["trace_id"] == root["context"]["trace_id"])
    );

    // The goals, nested as the tree is; finished ones compacted, the abandoned one with why.
    let goals = named("goal ");
    assert!(goals.len() >= 4, "{goals:#?}");
    assert!(goals.iter().all(|g| {
        parent(g).is_some_and(|p| {
            p["name"] == "invoke_agent agent" || p["name"].as_str().unwrap().starts_with("goal ")
        })
    }));
    let compacted = goals
        .iter()
        .find(|g| attr(g, "agent.goal.compacted") == true)
        .expect("a compacted goal");
    // Its compaction is an event with the tokens that left the view and what stayed.
    let event = compacted["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "goal compaction")
        .unwrap_or_else(|| panic!("{compacted:#}"));
    assert!(
        event["attributes"]["agent.compaction.tokens_before"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(event["attributes"]["agent.compaction.tokens_after"].is_u64());
    assert!(goals.iter().any(|g| {
        attr(g, "agent.goal.status") == "abandoned"
            && attr(g, "agent.goal.reason")
                .as_str()
                .is_some_and(|r| !r.is_empty())
    }));

    // Model calls with their usage, under the goal they served.
    let chats = named("chat ");
    assert!(chats.len() >= 10);
    for chat in &chats {
        assert_eq!(chat["name"], "chat scripted-demo");
        assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(chat, "gen_ai.provider.name"), "scripted");
        assert_eq!(attr(chat, "gen_ai.request.model"), "scripted-demo");
        assert!(attr(chat, "gen_ai.usage.input_tokens").as_u64().unwrap() > 0);
        assert!(attr(chat, "gen_ai.usage.output_tokens").is_u64());
        assert!(
            attr(chat, "gen_ai.input.messages").is_null(),
            "no contents unless asked"
        );
    }
    assert!(
        chats
            .iter()
            .any(|c| parent(c).is_some_and(|p| p["name"].as_str().unwrap().starts_with("goal ")))
    );

    // Tool calls; the exploration's branches are agents nested under the explore call.
    let tools = named("execute_tool ");
    assert!(
        tools
            .iter()
            .all(|t| attr(t, "gen_ai.tool.call.id").is_string())
    );
    let explore = tools
        .iter()
        .find(|t| attr(t, "gen_ai.tool.name") == "explore")
        .expect("the explore call");
    let branches: Vec<&Value> = named("invoke_agent explore")
        .into_iter()
        .filter(|b| {
            parent(b).is_some_and(|p| p["context"]["span_id"] == explore["context"]["span_id"])
        })
        .collect();
    assert_eq!(branches.len(), 2, "{:#?}", named("invoke_agent"));

    // The same trace sent again after the fact: every span again.
    let before = receiver.spans().len();
    let again = cli
        .run(&["export", "--otlp", &trace_id, "--otel", &url])
        .await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stderr(&again).contains(&format!("sent {before} spans")),
        "{}",
        stderr(&again)
    );

    // No receiver for export: a usage error.
    let none = cli.run(&["export", "--otlp", &trace_id]).await;
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
}
