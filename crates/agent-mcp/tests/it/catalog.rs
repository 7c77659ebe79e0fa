//! Prompts and resources of a real server (`tests/mcp/catalog.mjs`, on the official TypeScript
//! SDK): prompts listed and filled in, resources listed and read by the client and by the model's
//! tools, and a resource the server adds mid-session listed again after its
//! `notifications/resources/list_changed`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_mcp::{
    LIST_RESOURCES_TOOL, McpError, McpServers, READ_RESOURCE_TOOL, ServerConfig, prompt_text,
    resource_text,
};
use agent_tools::{Risk, ToolContext, ToolRegistry, ToolResult};
use serde_json::json;

use crate::support;

fn catalog() -> ServerConfig {
    let script = support::mcp_dir().join("catalog.mjs");
    assert!(
        support::mcp_dir().join("node_modules/zod").is_dir(),
        "the MCP test servers are not installed: run `cargo xtask setup` (or scripts/setup-mcp.sh)"
    );
    ServerConfig::stdio("node", [script.to_string_lossy().into_owned()])
}

async fn start() -> (McpServers, ToolRegistry) {
    let session = McpServers::start(BTreeMap::from([("catalog".to_owned(), catalog())])).await;
    assert!(session.failures().is_empty(), "{:?}", session.failures());
    let mut registry = ToolRegistry::new();
    session.register(&mut registry);
    (session, registry)
}

async fn call(registry: &ToolRegistry, name: &str, args: serde_json::Value) -> ToolResult {
    let workspace = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(workspace.path(), "trace").unwrap();
    registry.execute(name, &args.to_string(), &ctx).await
}

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn prompts_are_listed_and_filled_in() {
    let (session, _) = start().await;
    let server = session.server("catalog").unwrap();
    assert!(server.offers_prompts());
    let prompts = server.prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["greet", "review"]);
    let arguments = prompts[0].arguments.clone().unwrap_or_default();
    let required: Vec<(&str, Option<bool>)> = arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(required, [("name", Some(true)), ("language", Some(false))]);

    let filled = server
        .get_prompt(
            "greet",
            BTreeMap::from([("name".to_owned(), "Ada".to_owned())]),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(prompt_text(&filled), "Say hello to Ada in French.");
    // Several roles: each message under its role.
    let review = server.get_prompt("review", BTreeMap::new(), WAIT).await;
    assert_eq!(
        prompt_text(&review.unwrap()),
        "user: Review my last change.\n\nassistant: Which file?\n\nuser: src/main.rs"
    );
    // A missing argument and an unknown prompt are the server's refusals, named.
    let missing = server.get_prompt("greet", BTreeMap::new(), WAIT).await;
    let message = missing.unwrap_err().to_string();
    assert!(
        message.starts_with("MCP server catalog refused prompts/get:") && message.contains("name"),
        "{message}"
    );
    let unknown = server.get_prompt("nope", BTreeMap::new(), WAIT).await;
    assert!(
        matches!(unknown, Err(McpError::Refused { .. })),
        "{unknown:?}"
    );
    session.shutdown().await;
}

#[tokio::test]
async fn the_model_lists_and_reads_resources_through_two_read_only_tools() {
    let (session, registry) = start().await;
    for name in [LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL] {
        let tool = registry.get(name).unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(tool.risk(), Risk::ReadOnly);
        assert!(tool.definition().description.contains("catalog"));
    }
    let listed = call(&registry, LIST_RESOURCES_TOOL, json!({})).await;
    assert!(!listed.is_error, "{}", listed.content);
    assert_eq!(
        listed.content,
        "catalog notes://readme — readme (text/plain): What the notes are.\n\
         catalog notes://logo — logo (image/png)"
    );
    let read = call(
        &registry,
        READ_RESOURCE_TOOL,
        json!({"server": "catalog", "uri": "notes://readme"}),
    )
    .await;
    assert_eq!(read.content, "The notes of the catalog server.");
    let logo = call(
        &registry,
        READ_RESOURCE_TOOL,
        json!({"server": "catalog", "uri": "notes://logo"}),
    )
    .await;
    assert_eq!(
        logo.content,
        "[notes://logo: image/png, 9 bytes — not shown]"
    );
    // Mistakes the model makes are explained.
    let unknown = call(
        &registry,
        READ_RESOURCE_TOOL,
        json!({"server": "elsewhere", "uri": "notes://readme"}),
    )
    .await;
    assert!(unknown.is_error);
    assert!(
        unknown.content.contains(
            "no MCP server named \"elsewhere\" offers resources (those that do: catalog)"
        ),
        "{}",
        unknown.content
    );
    let missing = call(&registry, READ_RESOURCE_TOOL, json!({"server": "catalog"})).await;
    assert!(
        missing.content.contains("`uri` (a string) is required"),
        "{}",
        missing.content
    );
    let absent = call(
        &registry,
        READ_RESOURCE_TOOL,
        json!({"server": "catalog", "uri": "notes://absent"}),
    )
    .await;
    assert!(
        absent.is_error && absent.content.contains("not found"),
        "{}",
        absent.content
    );
    session.shutdown().await;
}

#[tokio::test]
async fn a_resource_added_mid_session_is_listed_after_the_servers_notice() {
    let (session, registry) = start().await;
    let session = Arc::new(session);
    let server = session.server("catalog").unwrap().clone();
    assert_eq!(server.listed_resources().len(), 2);
    let refreshed = Arc::new(AtomicUsize::new(0));
    let follow = {
        let (session, refreshed) = (session.clone(), refreshed.clone());
        tokio::spawn(async move {
            session
                .follow_tool_changes(|_| {
                    refreshed.fetch_add(1, Ordering::SeqCst);
                })
                .await;
        })
    };
    let added = call(
        &registry,
        "mcp__catalog__add_note",
        json!({"title": "todo", "text": "Buy milk."}),
    )
    .await;
    assert_eq!(added.content, "Added notes://todo.");
    let deadline = tokio::time::Instant::now() + WAIT;
    while server.listed_resources().len() < 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new resource was not listed: {:?}",
            server.listed_resources()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refreshed.load(Ordering::SeqCst) >= 1);
    let listed = call(&registry, LIST_RESOURCES_TOOL, json!({"server": "catalog"})).await;
    assert!(
        listed
            .content
            .ends_with("catalog notes://todo — todo (text/plain)"),
        "{}",
        listed.content
    );
    let read = server.read_resource("notes://todo", WAIT).await.unwrap();
    assert_eq!(resource_text(&read), "Buy milk.");
    follow.abort();
    session.shutdown().await;
}

#[tokio::test]
async fn a_server_without_prompts_or_resources_is_not_asked_for_them() {
    let session = McpServers::start(BTreeMap::from([(
        "silent".to_owned(),
        support::silent_tools(),
    )]))
    .await;
    let server = session.server("silent").unwrap();
    assert!(!server.offers_prompts() && !server.offers_resources());
    assert!(server.prompts().await.unwrap().is_empty());
    assert!(server.listed_resources().is_empty());
    let mut registry = ToolRegistry::new();
    session.register(&mut registry);
    assert!(registry.get(LIST_RESOURCES_TOOL).is_none());
    session.shutdown().await;
}
