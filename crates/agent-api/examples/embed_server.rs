//! The API server inside another program: a trace store, a [`RunnerFactory`] that builds the
//! runners of runs started over HTTP, and [`Server::bind`] on a free loopback port.
//!
//! The factory is where the embedding program chooses the model, the tools and the workspace;
//! the server never names them. Here every run gets a scripted model (offline, no API key) that
//! plans one goal, writes `hello.txt` in a temporary workspace and answers.
//!
//! Without arguments it serves until Ctrl-C: open the printed URL for the viewer, or start a run
//! with `curl -X POST <url>/api/traces -H 'content-type: application/json' -d '{"task":"Say
//! hello"}'`. With `--once` it starts one run by sending that request to itself, polls the
//! trace over HTTP until the run ends, and shuts down.
//!
//! Run it with `cargo run -p goaltree-api --example embed_server -- --once`.

use std::error::Error;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_api::{ApiConfig, AppState, ApprovalMode, FactoryError, RunnerFactory, Server};
use agent_execution::{InMemoryTraceStore, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// Builds the runner of each run started or resumed over HTTP.
struct ScriptedFactory {
    workspace: PathBuf,
}

impl RunnerFactory for ScriptedFactory {
    fn options(&self) -> RunnerOptions {
        // The defaults of a run; a request may change the model, limits and workspace (under
        // the server's workspace roots), and `build` decides whether to accept them. Approvals
        // are the server's (`ApiConfig::approval`), not the factory's.
        let mut options = RunnerOptions::new("scripted", &self.workspace);
        options.limits.max_iterations = 10;
        options
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        if options.model != "scripted" {
            return Err(FactoryError::Rejected(format!(
                "this server runs the model `scripted` only, not `{}`",
                options.model
            )));
        }
        // A real program would build an OpenAI or Anthropic client here (agent-llm's default
        // features); each run gets its own script so runs do not share turns.
        let model = ScriptedClient::new(vec![
            ScriptedTurn::tool_call("goal", json!({"add": "Write hello.txt", "focus": "1"})),
            ScriptedTurn::tool_call(
                "write_file",
                json!({"path": "hello.txt", "content": "Hello from an embedded server.\n"}),
            ),
            ScriptedTurn::tool_call("goal", json!({"done": "hello.txt holds the greeting"})),
            ScriptedTurn::text("I wrote hello.txt."),
        ])
        .with_fallback("Nothing left to do.");
        Ok(AgentRunner::new(
            store,
            Arc::new(model),
            ToolRegistry::with_builtins(),
            options,
        ))
    }
}

/// Sends one HTTP/1.1 request and returns the status code and the body parsed as JSON.
///
/// Any HTTP client does; this one is written out so the example needs no client library.
async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), Box<dyn Error>> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = TcpStream::connect(addr).await?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or("the response has no header end")?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or("the response has no status code")?;
    Ok((status, serde_json::from_str(body).unwrap_or(Value::Null)))
}

/// Starts one run over HTTP, waits for it to end and prints what it did.
async fn run_once(addr: SocketAddr) -> Result<(), Box<dyn Error>> {
    let task = json!({"task": "Write a greeting to hello.txt"});
    let (status, accepted) = request(addr, "POST", "/api/traces", Some(&task)).await?;
    let trace_id = accepted["trace_id"]
        .as_str()
        .ok_or(format!("the run was not started ({status}): {accepted}"))?
        .to_owned();
    println!("POST /api/traces -> {status}, trace {trace_id}");

    let path = format!("/api/traces/{trace_id}");
    let trace = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (_, detail) = request(addr, "GET", &path, None).await?;
            if detail["trace"]["status"] != "running" {
                return Ok::<Value, Box<dyn Error>>(detail["trace"].clone());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .map_err(|_| "the run did not end within 10 s")??;
    println!(
        "GET {path} -> status {}, {} messages",
        trace["status"], trace["total_messages"]
    );

    let (_, messages) = request(addr, "GET", &format!("{path}/messages"), None).await?;
    for message in messages["messages"].as_array().into_iter().flatten() {
        println!(
            "  {:>9}: {}",
            message["role"].as_str().unwrap_or("?"),
            message["description"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let once = std::env::args().skip(1).any(|arg| arg == "--once");
    let workspace = tempfile::tempdir()?;

    // Any `TraceStore` goes here: `FileSystemTraceStore` (agent-store-fs) keeps traces on disk.
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let factory = ScriptedFactory {
        workspace: workspace.path().to_path_buf(),
    };
    let config = ApiConfig {
        // Port 0 picks a free port; loopback needs no token.
        port: 0,
        shutdown_grace: Duration::from_secs(1),
        // Risky calls (the write of hello.txt) wait for `POST .../approvals/{id}` by default;
        // this offline example lets them run. A request may still ask for `"approval": "ask"`.
        approval: ApprovalMode::Auto,
        ..ApiConfig::default()
    };
    let state = AppState::builder(store)
        .runner_factory(Arc::new(factory))
        .config(config)
        .build()?;
    let server = Server::bind(state).await?;
    let addr = server.local_addr();
    println!("serving the API and the viewer on {}", server.url());

    let stop = CancellationToken::new();
    let serving = tokio::spawn(server.run(stop.clone().cancelled_owned()));
    if once {
        let result = run_once(addr).await;
        if result.is_ok() {
            let greeting = std::fs::read_to_string(workspace.path().join("hello.txt"))?;
            println!("hello.txt: {}", greeting.trim_end());
        }
        stop.cancel();
        serving.await??;
        result?;
    } else {
        println!("Ctrl-C to stop");
        tokio::signal::ctrl_c().await?;
        stop.cancel();
        serving.await??;
    }
    println!("server stopped");
    Ok(())
}
