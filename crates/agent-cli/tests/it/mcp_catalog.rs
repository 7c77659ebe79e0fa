//! What MCP servers offer besides tools, through the `agent` binary and a real server
//! (`tests/mcp/catalog.mjs`, on the official TypeScript SDK): `agent mcp prompts`, `agent mcp
//! resources` and `agent mcp read`, and a server's prompt sent as a chat message with
//! `/mcp__SERVER__PROMPT key=value`.

use std::path::Path;
use std::time::Duration;

use agent_test_support::cli::{CliEnv, stderr, stdout};
use serde_json::{Value, json};

/// A site whose agent.toml has the catalog server.
fn site() -> CliEnv {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/catalog.mjs");
    let env = crate::agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.catalog]\ncommand = \"node\"\nargs = [{:?}]\n",
            server.to_string_lossy()
        ),
    );
    env
}

#[tokio::test]
async fn prompts_and_resources_are_listed_and_a_resource_is_printed() {
    let env = site();
    let output = env.run(&["mcp", "prompts", "--json"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let greet = &listed["servers"][0]["prompts"][0];
    assert_eq!(greet["command"], "/mcp__catalog__greet");
    assert_eq!(
        greet["arguments"],
        json!([
            {"name": "name", "description": "Who to greet", "required": true},
            {"name": "language", "description": null, "required": false},
        ])
    );
    let output = env.run(&["mcp", "prompts"]).await;
    assert_eq!(
        stdout(&output),
        "catalog\n  /mcp__catalog__greet name=… [language=…]  Greet someone: Asks for a greeting \
         of a person.\n  /mcp__catalog__review  Asks for a code review.\n"
    );

    let output = env.run(&["mcp", "resources", "catalog"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "catalog\n  notes://readme  readme  text/plain  What the notes are.\n  notes://logo  logo  \
         image/png\n"
    );
    let output = env.run(&["mcp", "resources", "--json"]).await;
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        listed["servers"][0]["resources"][0]["uri"],
        "notes://readme"
    );

    let output = env.run(&["mcp", "read", "catalog", "notes://readme"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "The notes of the catalog server.\n");
    let output = env
        .run(&["mcp", "read", "catalog", "notes://logo", "--json"])
        .await;
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(read["contents"][0]["blob"], "bm90IGEgcG5n");

    // An unknown resource is the server's refusal (exit 1); an unknown server a usage error.
    let output = env.run(&["mcp", "read", "catalog", "notes://absent"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("MCP server catalog refused resources/read")
            && stderr(&output).contains("notes://absent not found"),
        "{}",
        stderr(&output)
    );
    let output = env.run(&["mcp", "prompts", "elsewhere"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("there is no MCP server named \"elsewhere\" (configured: catalog)"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn a_prompt_command_sends_the_servers_prompt_as_the_next_message() {
    let env = site();
    let script = json!([{"text": "Bonjour, Ada !"}]);
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
    let lines = "/help\n/mcp__catalog__greet\n/mcp__catalog__nope\n/mcp__catalog__greet name=Ada\n";
    tokio::io::AsyncWriteExt::write_all(&mut stdin, lines.as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the chat ended within a minute")
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    // /help lists the prompts; mistakes are explained and send nothing.
    assert!(
        said.contains("/mcp__catalog__greet  Asks for a greeting of a person."),
        "{said}"
    );
    assert!(
        said.contains("greet needs name; its arguments: name=… (Who to greet), language=…"),
        "{said}"
    );
    assert!(
        said.contains(
            "catalog has no prompt \"nope\" (its prompts: /mcp__catalog__greet, /mcp__catalog__review)"
        ),
        "{said}"
    );
    let listed = env.run(&["traces", "--json"]).await;
    let traces: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(traces.as_array().unwrap().len(), 1, "{traces}");
    let trace_id = traces[0]["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let users: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["Say hello to Ada in French."]);
    assert!(
        stdout(&output).contains("Bonjour, Ada !"),
        "{}",
        stdout(&output)
    );
}
