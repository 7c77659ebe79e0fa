//! The reference MCP servers, installed from npm by `scripts/setup-mcp.sh`, as agent tools:
//! server-everything over stdio and over streamable HTTP, server-filesystem over stdio.

use std::collections::BTreeMap;

use agent_mcp::{McpServers, ServerConfig, TransportKind};
use agent_tools::{Risk, ToolContext, ToolRegistry, ToolResult};
use serde_json::json;

use crate::support;

async fn start(servers: Vec<(&str, ServerConfig)>) -> (McpServers, ToolRegistry) {
    let servers: BTreeMap<_, _> = servers
        .into_iter()
        .map(|(name, config)| (name.to_owned(), config))
        .collect();
    let session = McpServers::start(servers).await;
    assert!(
        session.failures().is_empty(),
        "servers failed to start: {:?}",
        session.failures()
    );
    let mut registry = ToolRegistry::new();
    session.register(&mut registry);
    (session, registry)
}

async fn call(registry: &ToolRegistry, name: &str, args: serde_json::Value) -> ToolResult {
    let workspace = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(workspace.path(), "trace").unwrap();
    registry.execute(name, &args.to_string(), &ctx).await
}

/// Lists the tools of server-everything and calls `echo` and `get-sum`.
async fn check_everything(config: ServerConfig) {
    let mut config = config;
    config.read_only = vec!["echo".into()];
    let (session, registry) = start(vec![("everything", config)]).await;
    let names = registry.names();
    for expected in ["mcp__everything__echo", "mcp__everything__get-sum"] {
        assert!(names.contains(&expected.to_owned()), "{names:?}");
    }
    let echo = registry.get("mcp__everything__echo").unwrap().definition();
    // The tool's title leads its description.
    assert_eq!(echo.description, "Echo Tool: Echoes back the input string");
    assert_eq!(echo.parameters["type"], "object");
    assert_eq!(echo.parameters["properties"]["message"]["type"], "string");
    // `echo` is read-only by the configuration and by its annotations; `get-sum` by its
    // annotations (readOnlyHint) alone; `gzip-file-as-resource` says it writes and reaches out.
    assert_eq!(registry.risk("mcp__everything__echo"), Some(Risk::ReadOnly));
    assert_eq!(
        registry.risk("mcp__everything__get-sum"),
        Some(Risk::ReadOnly)
    );
    if let Some(gzip) = registry.get("mcp__everything__gzip-file-as-resource") {
        assert_eq!(
            registry.risk("mcp__everything__gzip-file-as-resource"),
            Some(Risk::Risky)
        );
        assert!(
            gzip.definition()
                .description
                .ends_with("(Reaches outside this machine.)"),
            "{}",
            gzip.definition().description
        );
    }
    // The server's handshake instructions are kept for the system prompt.
    let server = session.server("everything").unwrap();
    assert!(
        server.instructions().is_some_and(|text| text.len() > 20),
        "{:?}",
        server.instructions()
    );

    let result = call(
        &registry,
        "mcp__everything__echo",
        json!({"message": "hello"}),
    )
    .await;
    assert_eq!(result.content, "Echo: hello");
    assert!(!result.is_error);
    let result = call(
        &registry,
        "mcp__everything__get-sum",
        json!({"a": 2, "b": 40}),
    )
    .await;
    assert_eq!(result.content, "The sum of 2 and 40 is 42.");
    assert!(!result.is_error);

    // Arguments the server's schema refuses come back as an error result.
    let result = call(&registry, "mcp__everything__get-sum", json!({"a": "two"})).await;
    assert!(result.is_error, "{result:?}");

    // Structured output reaches the model as JSON, once (the server repeats it as text).
    let result = call(
        &registry,
        "mcp__everything__get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    let start = result.content.find('{').expect("a JSON object");
    let value: serde_json::Value =
        serde_json::from_str(result.content[start..].trim()).expect("the structured content");
    assert!(value["temperature"].is_number(), "{}", result.content);
    assert_eq!(
        result.content.matches("temperature").count(),
        1,
        "{}",
        result.content
    );
    session.shutdown().await;
}

#[tokio::test]
async fn server_everything_over_stdio() {
    check_everything(support::everything()).await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let server = support::HttpEverything::start().await;
    let config = ServerConfig::http(&server.url);
    assert_eq!(config.transport("everything").unwrap(), TransportKind::Http);
    check_everything(config).await;
}

#[tokio::test]
async fn http_header_values_expand_environment_variables() {
    let server = support::HttpEverything::start().await;
    let mut config = ServerConfig::http(&server.url);
    config.headers.insert(
        "X-Test-Token".into(),
        "Bearer ${AGENT_MCP_TEST_UNSET}".into(),
    );
    let error = McpServers::start([("everything".to_owned(), config.clone())].into()).await;
    let message = error.failures()[0].to_string();
    assert!(message.contains("AGENT_MCP_TEST_UNSET"), "{message}");

    config.headers.clear();
    config.headers.insert("X-Test".into(), "${PATH}".into());
    let (session, registry) = start(vec![("everything", config)]).await;
    let result = call(&registry, "mcp__everything__echo", json!({"message": "h"})).await;
    assert_eq!(result.content, "Echo: h");
    session.shutdown().await;
}

#[tokio::test]
async fn allow_and_deny_lists_choose_the_offered_tools() {
    let mut config = support::everything();
    config.allow = vec!["echo".into(), "get-sum".into(), "get-env".into()];
    config.deny = vec!["get-env".into()];
    let (session, registry) = start(vec![("e", config)]).await;
    let tools: Vec<String> = registry
        .names()
        .into_iter()
        .filter(|name| name.starts_with("mcp__"))
        .collect();
    assert_eq!(tools, ["mcp__e__echo", "mcp__e__get-sum"]);
    // The lists choose among tools; the server's resources are read through the resource tools.
    assert!(registry.get(agent_mcp::READ_RESOURCE_TOOL).is_some());
    assert!(session.servers()[0].listed_tools().len() > 2);
    session.shutdown().await;
}

#[tokio::test]
async fn server_filesystem_reads_inside_its_folder_and_refuses_outside() {
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        allowed.path().join("notes.txt"),
        "inside the allowed folder\n",
    )
    .unwrap();
    std::fs::write(outside.path().join("secret.txt"), "top secret\n").unwrap();
    let (session, registry) = start(vec![("fs", support::filesystem(allowed.path()))]).await;
    assert!(
        registry.get("mcp__fs__read_text_file").is_some(),
        "{:?}",
        registry.names()
    );

    let inside = allowed.path().join("notes.txt");
    let result = call(
        &registry,
        "mcp__fs__read_text_file",
        json!({"path": inside.to_string_lossy()}),
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    assert!(
        result.content.contains("inside the allowed folder"),
        "{result:?}"
    );

    let secret = outside.path().join("secret.txt");
    let result = call(
        &registry,
        "mcp__fs__read_text_file",
        json!({"path": secret.to_string_lossy()}),
    )
    .await;
    assert!(result.is_error, "{result:?}");
    assert!(result.content.contains("Access denied"), "{result:?}");
    assert!(!result.content.contains("top secret"), "{result:?}");
    session.shutdown().await;
}
