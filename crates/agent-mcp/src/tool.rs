//! An MCP server's tool as an agent tool: named `mcp__<server>__<tool>`, described by the server
//! (its title, description and whether it reaches the open world), read-only when the
//! configuration lists it or the server annotates it so (risky otherwise), and bounded by the
//! server's timeout.

use std::sync::Arc;
use std::time::Duration;

use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutput};
use async_trait::async_trait;
use serde_json::Value;

use crate::content::result_text;
use crate::server::McpServer;

/// The prefix of every MCP tool name.
pub const TOOL_PREFIX: &str = "mcp__";
/// The longest tool name model APIs accept.
const MAX_TOOL_NAME_LEN: usize = 64;
/// How much longer than its own timeout the registry gives a call, so the call's own (clearer)
/// timeout error comes first.
const TIMEOUT_GRACE: Duration = Duration::from_secs(2);

/// How risky a tool is: read-only when the configuration lists it so, or when the server
/// annotates it `readOnlyHint: true` (and not `destructiveHint: true`); risky otherwise,
/// without annotations included, as the MCP specification advises.
fn risk_of(configured_read_only: bool, annotations: Option<&rmcp::model::ToolAnnotations>) -> Risk {
    let hinted = annotations
        .is_some_and(|a| a.read_only_hint == Some(true) && a.destructive_hint != Some(true));
    if configured_read_only || hinted {
        Risk::ReadOnly
    } else {
        Risk::Risky
    }
}

/// One tool of an MCP server, ready for a `ToolRegistry`.
#[derive(Debug, Clone)]
pub struct McpTool {
    server: Arc<McpServer>,
    /// The tool's name on the server.
    mcp_name: String,
    definition: ToolDefinition,
    risk: Risk,
}

impl McpTool {
    /// The agent tool for `info`, a tool `server` listed.
    pub fn new(server: Arc<McpServer>, info: &rmcp::model::Tool) -> Self {
        let mcp_name = info.name.to_string();
        let annotations = info.annotations.as_ref();
        let title = info
            .title
            .as_deref()
            .or(annotations.and_then(|a| a.title.as_deref()))
            .filter(|title| !title.trim().is_empty());
        let described = info
            .description
            .as_deref()
            .filter(|text| !text.trim().is_empty());
        let mut description = match (title, described) {
            (Some(title), Some(text)) if !text.starts_with(title) => format!("{title}: {text}"),
            (_, Some(text)) => text.to_owned(),
            (Some(title), None) => title.to_owned(),
            (None, None) => format!("The {mcp_name} tool of the MCP server {}.", server.name()),
        };
        if annotations.and_then(|a| a.open_world_hint) == Some(true) {
            description.push_str(" (Reaches outside this machine.)");
        }
        let mut parameters = Value::Object(info.input_schema.as_ref().clone());
        if let Some(object) = parameters.as_object_mut() {
            object
                .entry("type")
                .or_insert_with(|| Value::String("object".into()));
        }
        let risk = risk_of(server.config().is_read_only(&mcp_name), annotations);
        let definition = ToolDefinition {
            name: tool_name(server.name(), &mcp_name),
            description,
            parameters,
        };
        Self {
            server,
            mcp_name,
            definition,
            risk,
        }
    }

    /// The server the tool belongs to.
    pub fn server(&self) -> &Arc<McpServer> {
        &self.server
    }

    /// The tool's name on its server.
    pub fn mcp_name(&self) -> &str {
        &self.mcp_name
    }

    /// The name the model calls it by (`mcp__<server>__<tool>`).
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    fn call_timeout(&self, limits: &ToolLimits) -> Duration {
        self.server
            .config()
            .call_timeout()
            .unwrap_or(limits.default_timeout)
            .min(limits.max_timeout)
    }
}

#[async_trait]
impl Tool for McpTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        self.risk
    }

    fn timeout(&self, _args: &Value, limits: &ToolLimits) -> Duration {
        self.call_timeout(limits) + TIMEOUT_GRACE
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ToolError::InvalidArguments {
                    tool: self.definition.name.clone(),
                    message: format!("expected a JSON object, got {other}"),
                });
            }
        };
        let timeout = self.call_timeout(&ctx.limits);
        let _caller = self.server.calling_for(&ctx.trace_id);
        match self
            .server
            .call_tool(&self.mcp_name, arguments, timeout)
            .await
        {
            Ok(result) => {
                let (text, is_error) = result_text(&result);
                let mut output = ToolOutput::text(text);
                output.is_error = is_error;
                Ok(output)
            }
            Err(error) => {
                tracing::warn!(tool = %self.definition.name, "{error}");
                Err(ToolError::failed(error.to_string()))
            }
        }
    }
}

/// `mcp__<server>__<tool>`, with characters model APIs refuse replaced by `_`, shortened to 64
/// bytes (with a hash of the full name, so two long names stay apart).
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!("{TOOL_PREFIX}{}__{}", clean(server), clean(tool));
    if name.len() <= MAX_TOOL_NAME_LEN {
        return name;
    }
    let hash = fnv1a(format!("{server}\0{tool}").as_bytes());
    let suffix = format!("_{:08x}", hash as u32);
    let mut short = name;
    short.truncate(MAX_TOOL_NAME_LEN - suffix.len());
    short.push_str(&suffix);
    short
}

/// 64-bit FNV-1a: a stable hash (the standard library's may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_cleaned() {
        assert_eq!(
            tool_name("everything", "get-sum"),
            "mcp__everything__get-sum"
        );
        assert_eq!(tool_name("fs", "read.file/v2"), "mcp__fs__read_file_v2");
    }

    #[test]
    fn long_names_are_shortened_and_stay_distinct() {
        let a = tool_name("server", &format!("{}a", "x".repeat(80)));
        let b = tool_name("server", &format!("{}b", "x".repeat(80)));
        assert_eq!(a.len(), 64);
        assert_eq!(b.len(), 64);
        assert_ne!(a, b);
        assert!(a.starts_with("mcp__server__xxx"));
    }
}
