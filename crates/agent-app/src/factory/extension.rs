//! [`Extension`]: what an embedder adds to every runner a factory builds, in one place — tools,
//! and parts of the system prompt. The MCP servers of a front end are one ([`McpExtension`]),
//! the skills another ([`SkillsExtension`](crate::skills::SkillsExtension)).

use std::path::Path;
use std::sync::Arc;

use agent_mcp::McpServers;
use agent_runner::Instruction;
use agent_tools::{ToolRegistry, TypedTool};

use crate::skills::{SkillTool, SkillsExtension};

/// Something added to every runner an [`AppFactory`](super::AppFactory) builds.
///
/// ```
/// use std::path::Path;
/// use agent_app::factory::Extension;
/// use agent_runner::Instruction;
///
/// /// A house rule every run's prompt carries.
/// struct HouseRules;
///
/// impl Extension for HouseRules {
///     fn instructions(&self, _workspace: &Path) -> Vec<Instruction> {
///         vec![Instruction::new("House rules", "Answer in French.")]
///     }
/// }
/// ```
pub trait Extension: Send + Sync {
    /// Adds tools to the registry of a runner working in `workspace` (after the built-in tools,
    /// before a door's own). Adds nothing by default.
    fn register(&self, registry: &mut ToolRegistry, workspace: &Path) {
        let _ = (registry, workspace);
    }

    /// Blocks for the static part of the system prompt of a runner working in `workspace`.
    /// None by default.
    fn instructions(&self, workspace: &Path) -> Vec<Instruction> {
        let _ = workspace;
        Vec::new()
    }
}

/// The MCP servers of a front end: their tools in every registry, and their instructions.
#[derive(Debug, Clone)]
pub struct McpExtension {
    servers: Arc<McpServers>,
}

impl McpExtension {
    /// The extension of `servers`.
    pub fn new(servers: Arc<McpServers>) -> Self {
        Self { servers }
    }
}

impl Extension for McpExtension {
    fn register(&self, registry: &mut ToolRegistry, _workspace: &Path) {
        self.servers.register(registry);
    }

    fn instructions(&self, _workspace: &Path) -> Vec<Instruction> {
        crate::mcp::instructions(&self.servers)
    }
}

impl Extension for SkillsExtension {
    /// The `skill` tool, when the workspace or the user has skills.
    fn register(&self, registry: &mut ToolRegistry, workspace: &Path) {
        let found = self.found(workspace);
        if found.skills.is_empty() {
            return;
        }
        if let Err(error) = registry.register(SkillTool::new(found).into_tool()) {
            tracing::warn!("the skill tool is not used: {error}");
        }
    }

    /// The list of skills (names and descriptions); what could not be read is logged.
    fn instructions(&self, workspace: &Path) -> Vec<Instruction> {
        let found = self.found(workspace);
        for warning in &found.warnings {
            tracing::warn!("{warning}");
        }
        crate::skills::instruction(&found.skills)
            .into_iter()
            .collect()
    }
}
