//! MCP servers that go wrong: one that fails to start, one killed mid-call (restarted on the
//! next call, a bounded number of times), one that never answers the handshake, one that never
//! answers a call, and a run that goes on through all of it. Child processes never outlive the
//! session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::{InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_mcp::{McpError, McpServer, McpServers, McpTool, ServerConfig};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::{ToolContext, ToolRegistry};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::support;

fn ctx() -> (tempfile::TempDir, ToolContext) {
    let workspace = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(workspace.path(), "trace").unwrap();
    (workspace, ctx)
}

fn sigkill(pid: u32) {
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).unwrap();
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_and_the_others_still_start() {
    let servers = [
        (
            "missing".to_owned(),
            ServerConfig::stdio("agent-mcp-no-such-program", Vec::<String>::new()),
        ),
        (
            "exits".to_owned(),
            ServerConfig::stdio("sh", ["-c", "echo 'cannot open the database' >&2; exit 3"]),
        ),
        ("everything".to_owned(), support::everything()),
    ];
    let session = McpServers::start(servers.into()).await;
    let failures: Vec<String> = session.failures().iter().map(ToString::to_string).collect();
    assert_eq!(failures.len(), 2, "{failures:#?}");
    let exits = failures.iter().find(|f| f.contains("exits")).unwrap();
    assert!(exits.contains("failed to start"), "{exits}");
    assert!(exits.contains("cannot open the database"), "{exits}");
    let missing = failures.iter().find(|f| f.contains("missing")).unwrap();
    assert!(missing.contains("agent-mcp-no-such-program"), "{missing}");

    let mut registry = ToolRegistry::new();
    session.register(&mut registry);
    // The started server's tools, and the resource tools (server-everything has resources).
    let resource_tools = [
        agent_mcp::LIST_RESOURCES_TOOL,
        agent_mcp::READ_RESOURCE_TOOL,
    ];
    assert!(
        registry
            .names()
            .iter()
            .all(|n| n.starts_with("mcp__everything__") || resource_tools.contains(&n.as_str())),
        "{:?}",
        registry.names()
    );
    assert!(registry.get("mcp__everything__echo").is_some());
    session.shutdown().await;
}

#[tokio::test]
async fn a_server_killed_mid_call_is_an_error_then_restarts_on_the_next_call() {
    let server = McpServer::start("everything", support::everything())
        .await
        .unwrap();
    let mut registry = ToolRegistry::new();
    register_all(&server, &mut registry);
    let (_workspace, ctx) = ctx();
    let first_pid = server.process_id().await.unwrap();

    // A ten-second operation; the server is killed a moment after it started.
    let call = {
        let registry = registry.clone();
        let ctx = ctx.clone();
        tokio::spawn(async move {
            registry
                .execute(
                    "mcp__everything__trigger-long-running-operation",
                    r#"{"duration": 10, "steps": 5}"#,
                    &ctx,
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    sigkill(first_pid);
    let started = Instant::now();
    let result = call.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the call waited for the dead server"
    );
    assert!(result.is_error, "{result:?}");
    assert!(
        result.content.contains("MCP server everything stopped"),
        "{result:?}"
    );
    assert!(
        result.content.contains("restarted on the next call"),
        "{result:?}"
    );

    // The next call starts it again.
    let result = registry
        .execute("mcp__everything__echo", r#"{"message": "back"}"#, &ctx)
        .await;
    assert_eq!(result.content, "Echo: back", "{result:?}");
    assert_eq!(server.restarts().await, 1);
    let second_pid = server.process_id().await.unwrap();
    assert_ne!(first_pid, second_pid);
    assert!(support::gone(first_pid).await);

    server.shutdown().await;
    assert!(
        support::gone(second_pid).await,
        "the server outlived the session"
    );
}

#[tokio::test]
async fn restarts_are_bounded() {
    let mut config = support::everything();
    config.max_restarts = Some(1);
    let server = McpServer::start("everything", config).await.unwrap();
    let echo = |server: Arc<McpServer>| async move {
        let args = json!({"message": "x"}).as_object().cloned();
        server
            .call_tool("echo", args, Duration::from_secs(20))
            .await
    };

    // Killed between calls: once the client noticed, the next call restarts it transparently
    // (restart 1 of 1).
    sigkill(server.process_id().await.unwrap());
    wait_until_stopped(&server).await;
    echo(server.clone()).await.unwrap();
    assert_eq!(server.restarts().await, 1);

    // Killed again: no restart is left.
    sigkill(server.process_id().await.unwrap());
    wait_until_stopped(&server).await;
    let error = echo(server.clone()).await.unwrap_err();
    assert!(
        matches!(error, McpError::GaveUp { restarts: 1, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("not started again"), "{error}");
}

async fn wait_until_stopped(server: &McpServer) {
    for _ in 0..100 {
        if !server.is_running().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the client did not notice that the server stopped");
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_times_out_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 600", pid_file.display());
    let mut config = ServerConfig::stdio("sh", ["-c", script.as_str()]);
    config.startup_timeout_secs = Some(1);
    let started = Instant::now();
    let error = McpServer::start("mute", config).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(error, McpError::StartTimeout { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("did not answer the handshake within 1 s"),
        "{error}"
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        support::gone(pid).await,
        "the silent server was left running"
    );
}

#[tokio::test]
async fn a_call_that_is_never_answered_times_out_and_the_server_stays_usable() {
    let mut config = support::silent_tools();
    config.timeout_secs = Some(1);
    let session = McpServers::start([("silent".to_owned(), config)].into()).await;
    assert!(session.failures().is_empty(), "{:?}", session.failures());
    let mut registry = ToolRegistry::new();
    session.register(&mut registry);
    let (_workspace, ctx) = ctx();
    for _ in 0..2 {
        let started = Instant::now();
        let result = registry.execute("mcp__silent__wait", "{}", &ctx).await;
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert!(result.is_error);
        assert_eq!(
            result.content,
            "error: MCP server silent did not answer the call to wait within 1 s; the call was cancelled"
        );
    }
    assert_eq!(session.servers()[0].restarts().await, 0);
    session.shutdown().await;
}

#[tokio::test]
async fn a_run_goes_on_through_a_hung_call_and_records_mcp_results() {
    let mut silent = support::silent_tools();
    silent.timeout_secs = Some(1);
    let session = McpServers::start(
        [
            ("silent".to_owned(), silent),
            ("everything".to_owned(), support::everything()),
        ]
        .into(),
    )
    .await;
    let mut registry = ToolRegistry::with_builtins();
    session.register(&mut registry);
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(vec![
        ScriptedTurn::tool_call("mcp__silent__wait", json!({})),
        ScriptedTurn::tool_call("mcp__everything__get-sum", json!({"a": 1, "b": 2})),
        ScriptedTurn::text("1 + 2 = 3"),
    ]));
    let runner = AgentRunner::new(
        store.clone(),
        llm,
        registry,
        RunnerOptions::new("scripted", workspace.path())
            .with_approval(agent_runner::Approval::Allow)
            .with_sub_agents(),
    );
    let outcome = runner.run("Add 1 and 2").await.unwrap();
    assert_eq!(
        outcome.status,
        TraceStatus::Completed,
        "{:?}",
        outcome.error
    );
    assert_eq!(outcome.response.as_deref(), Some("1 + 2 = 3"));
    let tools: Vec<(String, String)> = store
        .get_trace_messages(&outcome.trace_id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.description.clone(), m.content.text().to_owned()))
        .collect();
    assert_eq!(tools.len(), 2, "{tools:#?}");
    assert_eq!(tools[0].0, "mcp__silent__wait");
    assert!(
        tools[0].1.contains("did not answer the call to wait"),
        "{tools:#?}"
    );
    assert_eq!(tools[1].0, "mcp__everything__get-sum");
    assert_eq!(tools[1].1, "The sum of 1 and 2 is 3.");
    session.shutdown().await;
}

#[tokio::test]
async fn dropping_the_session_kills_the_whole_process_group() {
    // The server runs under a shell that stays its parent, so the server is a grandchild.
    let script = format!(
        "node '{}' stdio; true",
        support::package_entry("server-everything")
    );
    let config = ServerConfig::stdio("sh", ["-c", script.as_str()]);
    let session = McpServers::start([("nested".to_owned(), config)].into()).await;
    assert!(session.failures().is_empty(), "{:?}", session.failures());
    let group = session.servers()[0].process_id().await.unwrap();
    assert!(support::group_alive(group));
    drop(session);
    assert!(
        support::group_gone(group).await,
        "processes of the server outlived the session"
    );
}

/// Registers every tool `server` listed.
fn register_all(server: &Arc<McpServer>, registry: &mut ToolRegistry) {
    for info in server.listed_tools() {
        registry
            .register(Arc::new(McpTool::new(server.clone(), &info)))
            .unwrap();
    }
}
