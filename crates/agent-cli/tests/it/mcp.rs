//! `agent run --mcp` and `agent mcp list` against the reference MCP server installed by
//! `scripts/setup-mcp.sh` (server-everything over stdio), with the scripted model: tool calls
//! and results land in the trace, approval applies to risky MCP tools, a broken server does not
//! stop the run, and no server process outlives the command.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use agent_test_support::cli::{CliEnv, stderr};
use serde_json::{Value, json};

/// The entry point of server-everything; fails loudly when the test servers are not installed.
fn everything_entry() -> String {
    let entry = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.is_file(),
        "{} is missing: the MCP test servers are not installed. Run `cargo xtask setup` \
         (or scripts/setup-mcp.sh), which runs `npm ci` in tests/mcp.",
        entry.display()
    );
    entry.to_string_lossy().into_owned()
}

/// A temporary folder with this agent.toml, a workspace and a trace folder.
fn site(agent_toml: &str) -> CliEnv {
    let env = crate::agent_env();
    env.write("agent.toml", agent_toml);
    env
}

/// `agent run --script` with `turns`, then the tool messages of the trace it made.
async fn run_script(env: &CliEnv, turns: Value, extra: &[&str]) -> (Output, Vec<(String, String)>) {
    let script = env.path("script.json");
    std::fs::write(&script, turns.to_string()).unwrap();
    let work = env.path("work");
    let mut args = vec![
        "run",
        "--script",
        script.to_str().unwrap(),
        "--workspace",
        work.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push("Use the MCP tools");
    let output = env.run(&args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let tools = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["description"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (output, tools)
}

/// An agent.toml with server-everything (disabled unless named) and `extra` tables.
fn config(extra: &str) -> String {
    format!(
        "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n\
         enabled = false\nread_only = [\"echo\"]\n{extra}",
        everything_entry()
    )
}

fn echo_and_sum() -> Value {
    json!([
        {"tool_calls": [
            {"name": "mcp__everything__echo", "arguments": {"message": "hello"}},
        ]},
        {"tool_calls": [
            {"name": "mcp__everything__get-sum", "arguments": {"a": 2, "b": 3}},
        ]},
        {"text": "The sum is 5."}
    ])
}

#[tokio::test]
async fn a_scripted_run_calls_mcp_tools_and_records_the_results() {
    let env = site(&config(""));
    let (output, tools) = run_script(&env, echo_and_sum(), &["--mcp", "everything", "--yes"]).await;
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "completed");
    assert_eq!(result["response"], "The sum is 5.");
    assert_eq!(
        tools,
        [
            ("mcp__everything__echo".to_owned(), "Echo: hello".to_owned()),
            (
                "mcp__everything__get-sum".to_owned(),
                "The sum of 2 and 3 is 5.".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn risky_mcp_tools_need_approval_and_read_only_ones_do_not() {
    let env = site(&config(""));
    // No --yes and no terminal: echo (read-only by the configuration) and get-sum (read-only
    // by its readOnlyHint annotation) run; toggle-simulated-logging, annotated as not
    // read-only, is refused.
    let script = json!([
        {"tool_calls": [
            {"name": "mcp__everything__echo", "arguments": {"message": "hello"}},
        ]},
        {"tool_calls": [
            {"name": "mcp__everything__get-sum", "arguments": {"a": 2, "b": 3}},
        ]},
        {"tool_calls": [
            {"name": "mcp__everything__toggle-simulated-logging", "arguments": {}},
        ]},
        {"text": "Done."}
    ]);
    let (_, tools) = run_script(&env, script, &["--mcp", "everything"]).await;
    assert_eq!(tools[0].1, "Echo: hello");
    assert_eq!(tools[1].1, "The sum of 2 and 3 is 5.");
    assert!(tools[2].1.contains("--yes"), "{tools:?}");
}

#[tokio::test]
async fn a_disabled_server_is_off_unless_named() {
    let env = site(&config(""));
    let (_, tools) = run_script(&env, echo_and_sum(), &["--yes"]).await;
    assert!(tools[0].1.contains("unknown tool"), "{tools:?}");

    let output = env
        .run(&["run", "--mcp", "nope", "--script", "x.json", "task"])
        .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no MCP server named \"nope\""),
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_a_warning_and_the_run_goes_on() {
    let env = site(&config(
        "[mcp.servers.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no database >&2; exit 1\"]\n",
    ));
    let (output, tools) = run_script(&env, echo_and_sum(), &["--mcp", "everything", "--yes"]).await;
    let warning = stderr(&output);
    assert!(
        warning.contains("MCP server broken failed to start"),
        "{warning}"
    );
    assert!(warning.contains("no database"), "{warning}");
    assert_eq!(tools[1].1, "The sum of 2 and 3 is 5.");
}

#[tokio::test]
async fn no_server_process_outlives_the_run() {
    let env = site("");
    // In a folder of the workspace, where the sandboxed server may write.
    std::fs::create_dir(env.path("work/pids")).unwrap();
    // In its PID namespace the server's pid is not the host's: it is found by its name.
    let marker = format!("mcp-outlives-{}", std::process::id());
    let script = format!("exec -a {marker} node '{}' stdio", everything_entry());
    std::fs::write(
        env.path("agent.toml"),
        format!(
            "[mcp.servers.everything]\ncommand = \"bash\"\nargs = [\"-c\", {script:?}]\n\
             read_only = [\"echo\"]\n"
        ),
    )
    .unwrap();
    let (_, tools) = run_script(&env, echo_and_sum(), &["--yes"]).await;
    assert_eq!(tools[0].1, "Echo: hello");
    let mut gone = false;
    for _ in 0..100 {
        if crate::confinement::running(&marker).is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        gone,
        "the MCP server outlived `agent run`: {:?}",
        crate::confinement::running(&marker)
    );
}

#[tokio::test]
async fn mcp_list_shows_servers_their_tools_and_failures() {
    let env = site(&config(
        "[mcp.servers.broken]\ncommand = \"agent-test-no-such-program\"\n",
    ));
    let output = env.run(&["mcp", "list", "--json"]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let servers = listed["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2);
    let broken = servers.iter().find(|s| s["name"] == "broken").unwrap();
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("agent-test-no-such-program"),
        "{broken}"
    );
    let everything = servers.iter().find(|s| s["name"] == "everything").unwrap();
    assert_eq!(everything["enabled"], false);
    assert_eq!(everything["transport"], "stdio");
    let tools = everything["tools"].as_array().unwrap();
    let echo = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo["read_only"], true);
    assert_eq!(
        echo["description"],
        "Echo Tool: Echoes back the input string"
    );
    // Read-only by its annotation; risky by its annotation.
    assert!(
        tools
            .iter()
            .any(|t| t["mcp_name"] == "get-sum" && t["read_only"] == true)
    );
    assert!(
        tools
            .iter()
            .any(|t| t["mcp_name"] == "toggle-simulated-logging" && t["read_only"] == false)
    );

    // One server by name, as text.
    let output = env.run(&["mcp", "list", "everything"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("everything  stdio  node "), "{text}");
    assert!(text.contains("(disabled: only with --mcp)"), "{text}");
    assert!(text.contains("mcp__everything__get-sum"), "{text}");
    assert!(!text.contains("broken"), "{text}");
}

#[tokio::test]
async fn the_planner_reads_through_read_only_mcp_tools_and_is_refused_the_others() {
    let env = site(&config(""));
    let script = json!([
        {"tool_calls": [
            {"name": "mcp__everything__echo", "arguments": {"message": "what is there"}},
        ]},
        {"tool_calls": [
            {"name": "mcp__everything__toggle-simulated-logging", "arguments": {}},
        ]},
        {"tool_calls": [
            {"name": "goal", "arguments": {"add": "Read the notes, Write the answer"}},
        ]},
        {"text": "Two goals."}
    ]);
    std::fs::write(env.path("script.json"), script.to_string()).unwrap();
    let work = env.work();
    let output = env
        .run(&[
            "plan",
            "--script",
            "script.json",
            "--workspace",
            &work,
            "--mcp",
            "everything",
            "--json",
            "Plan the answer",
        ])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let planned: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(planned["status"], "planned");
    let trace_id = planned["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let results: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool" && m["description"] != "goal")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(results[0], "Echo: what is there");
    // The plan profile offers read-only tools only: the risky one is not among its tools.
    assert!(
        results[1].contains("unknown tool") || results[1].contains("not available"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_tool_a_server_adds_mid_session_is_there_for_the_next_chat_turn() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/list-changing.mjs");
    let env = site(&format!(
        "[mcp.servers.changing]\ncommand = \"node\"\nargs = [{:?}]\n",
        server.to_string_lossy()
    ));
    let script = json!([
        {"tool_calls": [{"name": "mcp__changing__unlock", "arguments": {}}]},
        {"text": "Unlocked."},
        {"tool_calls": [{"name": "mcp__changing__secret", "arguments": {}}]},
        {"text": "The secret is 42."}
    ]);
    std::fs::write(env.path("script.json"), script.to_string()).unwrap();
    let work = env.work();
    let mut child = env
        .agent(&["chat", "--script", "script.json", "--workspace", &work])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"Unlock it\nTell me the secret\n")
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the chat ended within a minute")
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed = env.run(&["traces", "--json"]).await;
    let traces: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let trace_id = traces[0]["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let results: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        [
            "Unlocked: the tool `secret` is there now.",
            "The secret is 42."
        ],
        "{}",
        stderr(&output)
    );
}
