//! What extends a chat in the full-screen UI: the MCP servers' prompts as slash commands
//! (`/mcp__SERVER__PROMPT key=value …`, filled in by `mcp_catalog.rs` as in line mode), their
//! resources as `@server:uri` mentions (`mcp_mentions.rs`, shared with line mode), and the
//! custom commands (`/NAME args`, expanded by `agent_app::commands` as at every door).

use std::sync::Arc;

use agent_mcp::{McpServers, TOOL_PREFIX};
use async_trait::async_trait;

/// The UI's [`agent_tui::Extensions`] over a chat's servers and custom commands.
pub(crate) struct McpExtensions {
    servers: Arc<McpServers>,
    commands: Vec<(String, String)>,
    custom: agent_app::commands::Found,
}

impl McpExtensions {
    /// Lists the servers' prompts and the `custom` commands once, for completion and `/help`.
    pub(crate) async fn new(servers: Arc<McpServers>, custom: agent_app::commands::Found) -> Self {
        let mut commands = custom.listed();
        for server in servers.servers() {
            for prompt in server.prompts().await.unwrap_or_default() {
                let command = crate::mcp_catalog::command_name(server.name(), &prompt.name);
                let about = prompt.description.or(prompt.title).unwrap_or_default();
                commands.push((command, crate::output::one_line(&about)));
            }
        }
        Self {
            servers,
            commands,
            custom,
        }
    }
}

#[async_trait]
impl agent_tui::Extensions for McpExtensions {
    fn commands(&self) -> Vec<(String, String)> {
        self.commands.clone()
    }

    fn mentions(&self) -> Vec<String> {
        crate::mcp_mentions::candidates(&self.servers)
            .into_iter()
            .map(|mention| mention.trim_start_matches('@').to_owned())
            .collect()
    }

    async fn command(&self, name: &str, args: &str) -> Option<Result<String, String>> {
        if !name.starts_with(TOOL_PREFIX) {
            let expanded = self.custom.expand(&format!("/{name} {args}"))?;
            return Some(expanded.map(|expanded| expanded.task));
        }
        Some(crate::mcp_catalog::prompt_message(&self.servers, name, args).await)
    }

    async fn message(&self, text: &str) -> Result<String, String> {
        crate::mcp_mentions::attach(&self.servers, text).await
    }
}
