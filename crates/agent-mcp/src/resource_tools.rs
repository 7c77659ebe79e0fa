//! The model's way to the servers' resources: `list_mcp_resources` (what each server offers, as
//! last listed, so it follows the servers' list changes) and `read_mcp_resource` (one resource by
//! server and URI). Both are read-only: reading a resource changes nothing on the server.

use std::sync::Arc;

use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::content::resource_text;
use crate::server::McpServer;

/// The name of the tool that lists the servers' resources.
pub const LIST_RESOURCES_TOOL: &str = "list_mcp_resources";
/// The name of the tool that reads one resource.
pub const READ_RESOURCE_TOOL: &str = "read_mcp_resource";

/// Both resource tools over the servers that offer resources; none when no server does.
pub(crate) fn resource_tools(servers: &[Arc<McpServer>]) -> Vec<Arc<dyn Tool>> {
    let servers: Vec<Arc<McpServer>> = servers
        .iter()
        .filter(|server| server.offers_resources())
        .cloned()
        .collect();
    if servers.is_empty() {
        return Vec::new();
    }
    vec![
        Arc::new(ListResources {
            servers: servers.clone(),
        }),
        Arc::new(ReadResource { servers }),
    ]
}

/// The names of `servers`, for descriptions and errors.
fn names(servers: &[Arc<McpServer>]) -> String {
    servers
        .iter()
        .map(|server| server.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `list_mcp_resources`.
struct ListResources {
    servers: Vec<Arc<McpServer>>,
}

#[async_trait]
impl Tool for ListResources {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: LIST_RESOURCES_TOOL.into(),
            description: format!(
                "Lists the resources (files, records, pages) that MCP servers offer to be read \
                 with {READ_RESOURCE_TOOL}: one line each, server, URI, name and description. \
                 Servers with resources: {}.",
                names(&self.servers)
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {
                        "type": "string",
                        "description": "Only this server's resources (default: every server's)."
                    }
                },
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let only = args.get("server").and_then(Value::as_str);
        if let Some(name) = only
            && !self.servers.iter().any(|server| server.name() == name)
        {
            return Err(unknown_server(LIST_RESOURCES_TOOL, name, &self.servers));
        }
        let mut lines = Vec::new();
        for server in &self.servers {
            if only.is_some_and(|name| name != server.name()) {
                continue;
            }
            for resource in server.listed_resources() {
                let mut line = format!("{} {} — {}", server.name(), resource.uri, resource.name);
                if let Some(mime) = &resource.mime_type {
                    line.push_str(&format!(" ({mime})"));
                }
                if let Some(description) = &resource.description {
                    line.push_str(&format!(": {description}"));
                }
                lines.push(line);
            }
        }
        if lines.is_empty() {
            lines.push("(no resources)".into());
        }
        Ok(ToolOutput::text(lines.join("\n")))
    }
}

/// `read_mcp_resource`.
struct ReadResource {
    servers: Vec<Arc<McpServer>>,
}

#[async_trait]
impl Tool for ReadResource {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: READ_RESOURCE_TOOL.into(),
            description: format!(
                "Reads a resource of an MCP server by its URI ({LIST_RESOURCES_TOOL} lists \
                 them). Servers with resources: {}.",
                names(&self.servers)
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The server's name."},
                    "uri": {"type": "string", "description": "The resource's URI."}
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let field = |name: &str| {
            args.get(name)
                .and_then(Value::as_str)
                .filter(|value| !value.is_empty())
                .ok_or_else(|| ToolError::InvalidArguments {
                    tool: READ_RESOURCE_TOOL.into(),
                    message: format!("`{name}` (a string) is required"),
                })
        };
        let (name, uri) = (field("server")?, field("uri")?);
        let Some(server) = self.servers.iter().find(|server| server.name() == name) else {
            return Err(unknown_server(READ_RESOURCE_TOOL, name, &self.servers));
        };
        // Within the registry's own bound on the call, so the clearer timeout comes first.
        let bound = ctx.limits.default_timeout;
        let timeout = server
            .config()
            .call_timeout()
            .map_or(bound, |own| own.min(bound));
        match server.read_resource(uri, timeout).await {
            Ok(result) => Ok(ToolOutput::text(resource_text(&result))),
            Err(error) => {
                tracing::warn!(tool = READ_RESOURCE_TOOL, "{error}");
                Err(ToolError::failed(error.to_string()))
            }
        }
    }
}

fn unknown_server(tool: &str, name: &str, servers: &[Arc<McpServer>]) -> ToolError {
    ToolError::InvalidArguments {
        tool: tool.into(),
        message: format!(
            "no MCP server named {name:?} offers resources (those that do: {})",
            names(servers)
        ),
    }
}
