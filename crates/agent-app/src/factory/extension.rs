//! [`Extension`]: what an embedder adds to every runner a factory builds, in one place — tools,
//! and parts of the system prompt. The MCP servers of a front end are one ([`McpExtension`]),
//! the skills another ([`SkillsExtension`](crate::skills::SkillsExtension)).

use std::path::Path;
use std::sync::Arc;

use agent_llm::LlmClient;
use agent_mcp::McpServers;
use agent_runner::Instruction;
use agent_tools::{ToolRegistry, TypedTool};

use crate::skills::{SkillTool, SkillsExtension};

/// The runner an [`Extension`] adds to: the folder it works in, what its profile limits and
/// the model of its main traces.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Scope<'a> {
    /// The folder the runner works in.
    pub workspace: &'a Path,
    /// The skills its profile offers, by name (the profile's `skills`); every skill when
    /// `None`.
    pub skills: Option<&'a [String]>,
    /// The runner's main model and the client reaching it, when they are known (a tool that
    /// asks the provider, such as its own web search, uses them).
    pub model: Option<MainModel<'a>>,
}

/// The main model of the runner of a [`Scope`].
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct MainModel<'a> {
    /// The client reaching it.
    pub client: &'a Arc<dyn LlmClient>,
    /// Its name, as requests name it.
    pub name: &'a str,
    /// What its tokens cost, when known: a tool that asks the provider counts its cost.
    pub prices: Option<&'a agent_llm::PriceTable>,
    /// Whether the provider is reached at a base URL that was configured (a proxy, a
    /// compatible server) rather than its own: what the provider offers (its web search) may
    /// not be there.
    pub custom_endpoint: bool,
}

impl std::fmt::Debug for MainModel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MainModel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<'a> Scope<'a> {
    /// A runner working in `workspace`, its profile limiting nothing, its model unknown.
    pub fn new(workspace: &'a Path) -> Self {
        Self {
            workspace,
            skills: None,
            model: None,
        }
    }

    /// The same runner, its main model `name` reached through `client`.
    #[must_use]
    pub fn with_model(mut self, client: &'a Arc<dyn LlmClient>, name: &'a str) -> Self {
        self.model = Some(MainModel {
            client,
            name,
            prices: None,
            custom_endpoint: false,
        });
        self
    }

    /// The same runner, its main model reached at a configured base URL when `custom` (after
    /// [`with_model`](Self::with_model)).
    #[must_use]
    pub fn with_custom_endpoint(mut self, custom: bool) -> Self {
        if let Some(model) = &mut self.model {
            model.custom_endpoint = custom;
        }
        self
    }

    /// The same runner, its main model's tokens priced by `prices` (after
    /// [`with_model`](Self::with_model)).
    #[must_use]
    pub fn with_prices(mut self, prices: &'a agent_llm::PriceTable) -> Self {
        if let Some(model) = &mut self.model {
            model.prices = Some(prices);
        }
        self
    }

    /// The same runner, its profile offering only the skills `skills` (all when `None`).
    #[must_use]
    pub fn with_skills(mut self, skills: Option<&'a [String]>) -> Self {
        self.skills = skills;
        self
    }
}

/// Something added to every runner an [`AppFactory`](super::AppFactory) builds.
///
/// ```
/// use agent_app::factory::{Extension, Scope};
/// use agent_runner::Instruction;
///
/// /// A house rule every run's prompt carries.
/// struct HouseRules;
///
/// impl Extension for HouseRules {
///     fn instructions(&self, _scope: &Scope<'_>) -> Vec<Instruction> {
///         vec![Instruction::new("House rules", "Answer in French.")]
///     }
/// }
/// ```
pub trait Extension: Send + Sync {
    /// Adds tools to the registry of the runner of `scope` (after the built-in tools, before a
    /// door's own). Adds nothing by default.
    fn register(&self, registry: &mut ToolRegistry, scope: &Scope<'_>) {
        let _ = (registry, scope);
    }

    /// Blocks for the static part of the system prompt of the runner of `scope`. None by
    /// default.
    fn instructions(&self, scope: &Scope<'_>) -> Vec<Instruction> {
        let _ = scope;
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
    fn register(&self, registry: &mut ToolRegistry, _scope: &Scope<'_>) {
        self.servers.register(registry);
    }

    fn instructions(&self, _scope: &Scope<'_>) -> Vec<Instruction> {
        crate::mcp::instructions(&self.servers)
    }
}

impl Extension for SkillsExtension {
    /// The `skill` tool, when the workspace or the user has skills the profile offers.
    fn register(&self, registry: &mut ToolRegistry, scope: &Scope<'_>) {
        let found = self.found(scope.workspace).limited(scope.skills);
        if found.skills.is_empty() {
            return;
        }
        if let Err(error) = registry.register(SkillTool::new(found).into_tool()) {
            tracing::warn!("the skill tool is not used: {error}");
        }
    }

    /// The list of the skills the profile offers (names and descriptions); what could not be
    /// read is logged.
    fn instructions(&self, scope: &Scope<'_>) -> Vec<Instruction> {
        let found = self.found(scope.workspace).limited(scope.skills);
        for warning in &found.warnings {
            tracing::warn!("{warning}");
        }
        crate::skills::instruction(&found.skills)
            .into_iter()
            .collect()
    }
}
