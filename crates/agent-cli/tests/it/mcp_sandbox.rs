//! Stdio MCP servers started for a run, under the real kernel sandbox: a server (the test
//! suite's `sandbox-probe.mjs`) cannot write outside the workspace, sees none of the user's
//! secrets but the variables of its own `env` (in every mode), cannot read the agent's through
//! `/proc`, may create files at the top of the workspace, and reaches the network unless
//! `network = false`; `sandbox = "off"` in its table runs it unconfined, and says so.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_test_support::cli::{CliEnv, stderr};
use serde_json::{Value, json};

/// The probe server's script.
fn probe() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/sandbox-probe.mjs")
        .to_string_lossy()
        .into_owned()
}

/// An agent.toml with the probe server and `extra` lines in its table.
fn config(extra: &str) -> String {
    format!(
        "[mcp.servers.probe]\ncommand = \"node\"\nargs = [{:?}]\n\
         env = {{ GIVEN = \"configured\", PASSED_TOKEN = \"${{PROBE_TOKEN}}\" }}\n{extra}",
        probe()
    )
}

/// Runs `agent run --yes` with a model making `calls` (name, arguments) one per turn, with
/// secrets in the environment; returns stderr and the tool results in order.
async fn run(env: &CliEnv, calls: &[(&str, Value)], extra: &[&str]) -> (String, Vec<String>) {
    let mut turns: Vec<Value> = calls
        .iter()
        .map(|(name, arguments)| {
            json!({"tool_calls": [{"name": format!("mcp__probe__{name}"), "arguments": arguments}]})
        })
        .collect();
    turns.push(json!({"text": "Done."}));
    let script = env.write("script.json", &Value::Array(turns).to_string());
    let work = env.work();
    let mut args = vec![
        "run",
        "--script",
        &script,
        "--workspace",
        &work,
        "--yes",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push("Probe");
    let output = env
        .agent(&args)
        .env("OPENAI_API_KEY", "sk-secret-openai")
        .env("PROBE_TOKEN", "token-for-the-server")
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let shown = env
        .run(&["show", result["trace_id"].as_str().unwrap(), "--json"])
        .await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let results = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    (stderr(&output), results)
}

#[tokio::test]
async fn a_server_is_confined_unless_its_table_turns_the_sandbox_off() {
    for off in [false, true] {
        let env = crate::agent_env();
        env.write(
            "agent.toml",
            &config(if off { "sandbox = \"off\"\n" } else { "" }),
        );
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped");
        // Without namespaces of their own, servers write in the workspace's existing folders.
        std::fs::create_dir(env.path("work/sub")).unwrap();
        let inside = env.path("work/sub/inside.txt");
        let calls = [
            (
                "write",
                json!({"path": escaped.to_string_lossy(), "content": "x"}),
            ),
            (
                "write",
                json!({"path": inside.to_string_lossy(), "content": "x"}),
            ),
            (
                "write",
                json!({"path": env.path("work/agent.toml").to_string_lossy(), "content": "x"}),
            ),
            (
                "env",
                json!({"names": ["OPENAI_API_KEY", "GIVEN", "PASSED_TOKEN"]}),
            ),
        ];
        let (said, results) = run(&env, &calls, &[]).await;
        assert_eq!(results.len(), 4, "{results:?}");
        assert_eq!(escaped.exists(), off, "{results:?}");
        assert_eq!(refused(&results[0]), !off, "{results:?}");
        assert!(inside.exists(), "{results:?}");
        assert_eq!(env.path("work/agent.toml").exists(), off, "{results:?}");
        let seen = &results[3];
        // The environment is scrubbed in every mode, `off` included.
        assert!(!seen.contains("sk-secret-openai"), "{seen}");
        assert!(seen.contains("GIVEN=configured"), "{seen}");
        assert!(seen.contains("PASSED_TOKEN=token-for-the-server"), "{seen}");
        assert_eq!(said.contains("runs without the sandbox"), off, "{said}");
    }
}

/// Whether the probe's write was refused: by Landlock (`EACCES`) or, in the server's mount
/// namespace, by a read-only mount (`EROFS`).
fn refused(result: &str) -> bool {
    result.contains("refused: EACCES") || result.contains("refused: EROFS")
}

/// A loopback listener counting the connections it accepts.
fn listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stream.is_ok() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    (port, count)
}

#[tokio::test]
async fn a_server_reaches_the_network_unless_its_table_says_no_and_follows_the_run_mode() {
    for network in [true, false] {
        let env = crate::agent_env();
        env.write(
            "agent.toml",
            &config(if network { "" } else { "network = false\n" }),
        );
        let (port, count) = listener();
        // Without namespaces of their own, servers write in the workspace's existing folders.
        std::fs::create_dir(env.path("work/sub")).unwrap();
        let inside = env.path("work/sub/inside.txt");
        let calls = [
            ("connect", json!({ "port": port })),
            (
                "write",
                json!({"path": inside.to_string_lossy(), "content": "x"}),
            ),
        ];
        // A read-only run keeps the server from writing in the workspace too.
        let (_, results) = run(&env, &calls, &["--sandbox", "read-only"]).await;
        assert_eq!(results[0].contains("connected"), network, "{results:?}");
        assert_eq!(count.load(Ordering::SeqCst) > 0, network, "{results:?}");
        assert!(refused(&results[1]), "{results:?}");
        assert!(!inside.exists());
    }
}

#[tokio::test]
async fn a_server_reads_no_secret_of_the_agent_in_proc_and_can_create_files_at_the_top() {
    for off in [false, true] {
        let env = crate::agent_env();
        env.write(
            "agent.toml",
            &config(if off { "sandbox = \"off\"\n" } else { "" }),
        );
        let top = env.path("work/memory.json");
        let calls = [
            ("proc", json!({"marker": "sk-secret-openai"})),
            (
                "write",
                json!({"path": top.to_string_lossy(), "content": "{}"}),
            ),
        ];
        let (_, results) = run(&env, &calls, &[]).await;
        assert_eq!(results[0].contains("seen in"), off, "{results:?}");
        // Like `@modelcontextprotocol/server-memory` with its file in the workspace.
        assert!(results[1].starts_with("wrote"), "{results:?}");
        assert!(top.exists(), "{results:?}");
    }
}
