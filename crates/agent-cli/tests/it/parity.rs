//! One agent behind every door. The same agent.toml and profile — a model, a reasoning effort or
//! a thinking budget, a profile prompt, the `read-only` sandbox — drive `agent run`, the chat's
//! line mode, the full-screen UI (on a pseudo-terminal), an editor over ACP (the official SDK
//! client), `agent serve` (a run started over HTTP) and `agent worker` (a run queued in
//! PostgreSQL and claimed by another process). The mock model server records what each door
//! asked: the first request of every door is the same (model, reasoning settings, tools, system
//! prompt with the instructions and the sandbox), and at every door the `read-only` sandbox
//! refuses `write_file` and `edit_file`, the file left as it was.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, code, stderr};
use agent_test_support::mock_model::{MockModelServer, RecordedRequest, Reply, Turn, WireFormat};
use agent_test_support::postgres::Cluster;
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

/// The file every door's model tries to change.
const NOTE: &str = "note.txt";
/// What it holds, before and after.
const ORIGINAL: &str = "left as it was\n";
/// The task of every door.
const TASK: &str = "Change the note";

/// The wire formats the parity is checked in: OpenAI's carries the reasoning effort, Anthropic's
/// the thinking budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    OpenAi,
    Anthropic,
}

/// The user's agent.toml (found by every door, whatever its current folder): the mock server,
/// the reasoning settings, the sandbox, and the `default` profile's own prompt.
fn agent_toml(server: &MockModelServer, format: Format) -> String {
    let provider = match format {
        Format::OpenAi => format!(
            "provider = \"openai\"\nbase_url = \"{}\"\nmodel = \"parity-model\"\n\
             reasoning_effort = \"high\"\n",
            server.openai_base()
        ),
        Format::Anthropic => format!(
            "provider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-parity\"\n\
             thinking_budget = 2048\n",
            server.anthropic_base()
        ),
    };
    format!(
        "{provider}api_key = \"sk-test\"\nsandbox = \"read-only\"\n\n[agents.default]\n\
         prompt = \"You are the parity agent, working in {{workspace}}. Your tools: {{tools}}.\"\n"
    )
}

/// How many tool results a request carries.
fn tool_results(request: &RecordedRequest) -> usize {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    messages
        .iter()
        .map(|message| match message["content"].as_array() {
            _ if message["role"] == "tool" => 1,
            Some(blocks) => blocks.iter().filter(|b| b["type"] == "tool_result").count(),
            None => 0,
        })
        .sum()
}

/// The model of every door: write the note, then edit it, then answer. With Anthropic's
/// extended thinking on, a turn of tool calls starts with its thinking, as the API requires.
fn model(request: &RecordedRequest) -> Reply {
    let thinking = |turn: Turn| match request.format() {
        Some(WireFormat::Anthropic) => turn.with_reasoning("The note, as asked."),
        _ => turn,
    };
    Reply::from(match tool_results(request) {
        0 => thinking(Turn::tool_call(
            "write_1",
            "write_file",
            json!({"path": NOTE, "content": "written over\n"}),
        )),
        1 => thinking(Turn::tool_call(
            "edit_1",
            "edit_file",
            json!({"path": NOTE, "old": "left", "new": "edited"}),
        )),
        _ => Turn::text("Done."),
    })
}

/// What a request asks of the model, for comparison across doors.
fn shape(request: &RecordedRequest, format: Format) -> Value {
    let body = &request.body;
    let tools: Vec<Value> = body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|tool| match format {
            Format::OpenAi => tool["function"]["name"].clone(),
            Format::Anthropic => tool["name"].clone(),
        })
        .collect();
    let system = match format {
        Format::OpenAi => body["messages"][0]["content"].clone(),
        Format::Anthropic => match &body["system"] {
            Value::Array(blocks) => Value::String(
                blocks
                    .iter()
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            other => other.clone(),
        },
    };
    json!({
        "model": body["model"],
        "reasoning_effort": body["reasoning_effort"],
        "thinking": body["thinking"],
        "tools": tools,
        "system": system,
    })
}

/// The tool results the door's last request carried, as text.
fn results_text(request: &RecordedRequest) -> String {
    request.body["messages"].to_string()
}

/// Waits until `server` has `count` requests.
async fn requests_reach(server: &MockModelServer, count: usize, door: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while server.request_count() < count {
        assert!(
            Instant::now() < deadline,
            "{door}: the model was not asked again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The ACP test client; fails loudly when the SDK is not installed.
fn acp_client() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp");
    assert!(
        root.join("node_modules/@agentclientprotocol/sdk/package.json")
            .is_file(),
        "the ACP client SDK is not installed in {}: run `cargo xtask setup`",
        root.display()
    );
    root.join("prompt.mjs")
}

/// Waits until the trace `id` served at `server` has completed.
fn completed(server: &agent_test_support::cli::Served, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, detail) = server.request("GET", &format!("/api/traces/{id}"), None);
        if detail["trace"]["status"] == "completed" {
            return;
        }
        assert!(Instant::now() < deadline, "{detail}\n{}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the task through every door; returns each door's requests.
async fn every_door(
    env: &CliEnv,
    server: &MockModelServer,
) -> Vec<(&'static str, Vec<RecordedRequest>)> {
    let work = env.work();
    let mut doors = Vec::new();
    let mut seen = 0;
    let mut take = |name: &'static str, doors: &mut Vec<(&'static str, Vec<RecordedRequest>)>| {
        let all = server.requests();
        doors.push((name, all[seen..].to_vec()));
        seen = all.len();
    };

    let ran = env.run(&["run", "--yes", "--workspace", &work, TASK]).await;
    assert_eq!(code(&ran), 0, "run: {}", stderr(&ran));
    take("run", &mut doors);

    let chat = env
        .run(&["chat", "--no-tui", "--yes", "--workspace", &work, TASK])
        .await;
    assert_eq!(code(&chat), 0, "chat: {}", stderr(&chat));
    take("chat", &mut doors);

    let before = server.request_count();
    let mut terminal = Terminal::spawn(env.command(&["chat", "--yes", "--workspace", &work, TASK]));
    requests_reach(server, before + 3, "the full-screen UI").await;
    terminal.wait_for("Done.");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    take("tui", &mut doors);

    let client = acp_client();
    let acp = env
        .program(
            "node",
            &[
                client.to_str().unwrap(),
                &work,
                env!("CARGO_BIN_EXE_agent"),
                TASK,
                "--yes",
            ],
        )
        .output()
        .unwrap();
    assert!(acp.status.success(), "acp: {}", stderr(&acp));
    take("acp", &mut doors);

    let served = env.serve(&["--workspace", &work, "--approval", "auto"]);
    let (status, started) = served.request("POST", "/api/traces", Some(&json!({"task": TASK})));
    assert_eq!(status, 201, "serve: {started}\n{}", served.log());
    completed(&served, started["trace_id"].as_str().unwrap());
    drop(served);
    take("serve", &mut doors);

    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let node = env.serve(&["--store", &url, "--workspace", &work, "--approval", "auto"]);
    let mut worker = env
        .command(&["worker", "--store", &url, "--workspace", &work])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (status, queued) = node.request("POST", "/api/traces", Some(&json!({"task": TASK})));
    assert_eq!(status, 201, "worker: {queued}\n{}", node.log());
    completed(&node, queued["trace_id"].as_str().unwrap());
    let _ = worker.kill();
    let _ = worker.wait();
    take("worker", &mut doors);
    doors
}

/// Every door asks the same of the model, and none writes the note.
async fn check_parity(format: Format) {
    let env = agent_env();
    env.write(&format!("work/{NOTE}"), ORIGINAL);
    let server = MockModelServer::start().await;
    server.when_empty(model);
    env.write("home/agent/agent.toml", &agent_toml(&server, format));
    let doors = every_door(&env, &server).await;
    let (_, first) = &doors[0];
    let expected = shape(&first[0], format);
    assert!(
        expected["system"]
            .as_str()
            .unwrap()
            .contains("You are the parity agent"),
        "the profile's prompt: {expected}"
    );
    assert!(
        expected["system"]
            .as_str()
            .unwrap()
            .contains("- Sandbox: read-only"),
        "the sandbox is said: {expected}"
    );
    let tools = expected["tools"].as_array().unwrap();
    // The web tools and background shells too: every door has them.
    for tool in [
        "bash",
        "write_file",
        "edit_file",
        "read_file",
        "goal",
        "web_fetch",
        "shell_output",
        "shell_kill",
    ] {
        assert!(tools.contains(&json!(tool)), "{tool} offered: {expected}");
    }
    match format {
        Format::OpenAi => assert_eq!(expected["reasoning_effort"], "high"),
        Format::Anthropic => assert_eq!(expected["thinking"]["budget_tokens"], 2048),
    }
    for (door, requests) in &doors {
        assert!(requests.len() >= 3, "{door}: {} requests", requests.len());
        assert_eq!(
            shape(&requests[0], format),
            expected,
            "{door} asked another way"
        );
        let last = results_text(requests.last().unwrap());
        assert!(
            last.matches("the sandbox is read-only").count() >= 2,
            "{door}: write_file and edit_file were not refused: {last}"
        );
        assert_eq!(
            std::fs::read_to_string(env.path("work").join(NOTE)).unwrap(),
            ORIGINAL,
            "{door} changed the note"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_door_asks_the_same_with_the_reasoning_effort_of_agent_toml() {
    check_parity(Format::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_door_asks_the_same_with_the_thinking_budget_of_agent_toml() {
    check_parity(Format::Anthropic).await;
}
