//! Configuration of sub-agents: which agent types exist (`explore`, `delegate`, ...), the tools
//! each gets, its limits, how deep it may nest, and how many explore branches run at once.

use std::collections::{BTreeMap, BTreeSet};

use super::RunLimits;
use crate::tools::Risk;

/// The agent type of explore branches.
pub const EXPLORE: &str = "explore";
/// The agent type of delegated tasks.
pub const DELEGATE: &str = "delegate";

/// How sub-agents run: the settings of each agent type and of explorations.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentOptions {
    /// The agent types by name. `explore` configures explore branches and `delegate` delegated
    /// tasks; removing an entry disables its tool.
    pub agent_types: BTreeMap<String, AgentTypeConfig>,
    /// How many branches of one `explore` call run at the same time; the others wait.
    pub max_concurrency: usize,
    /// The most branches one `explore` call may have.
    pub max_branches: usize,
    /// The longest background, in bytes, a branch is given when it inherits the main line's
    /// context (the oldest part and the task are kept, the middle is cut).
    pub max_background_bytes: usize,
}

impl Default for SubAgentOptions {
    fn default() -> Self {
        let agent_types = [
            (EXPLORE.to_owned(), AgentTypeConfig::explore()),
            (DELEGATE.to_owned(), AgentTypeConfig::delegate()),
        ]
        .into_iter()
        .collect();
        Self {
            agent_types,
            max_concurrency: 4,
            max_branches: 8,
            max_background_bytes: 24_000,
        }
    }
}

/// The settings of one agent type.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentTypeConfig {
    /// Which tools its sub-traces get. The runner's `goal` and `read_progress` are always there:
    /// they act on the sub-trace's own plan.
    pub tools: ToolFilter,
    /// The limits of each of its sub-traces (per run, like the main line's).
    pub limits: RunLimits,
    /// How many sub-traces of this type may be stacked on one line of descent: a trace whose
    /// ancestors (itself included) already count this many of this type cannot spawn another.
    /// With 1, only traces outside this type can spawn it (an explore branch cannot explore).
    pub max_depth: usize,
    /// The system prompt of its sub-traces; the runner's own when `None`.
    pub system_prompt: Option<String>,
}

impl AgentTypeConfig {
    /// Explore branches: read-only tools (branches run side by side in one workspace), 30 model
    /// calls each, no exploring inside a branch.
    pub fn explore() -> Self {
        Self {
            tools: ToolFilter::read_only(),
            limits: RunLimits {
                max_iterations: 30,
                ..RunLimits::default()
            },
            max_depth: 1,
            system_prompt: None,
        }
    }

    /// Delegated tasks: every tool, the default limits, and a delegate may delegate once more.
    pub fn delegate() -> Self {
        Self {
            tools: ToolFilter::all(),
            limits: RunLimits::default(),
            max_depth: 2,
            system_prompt: None,
        }
    }
}

/// Which risks a tool set admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RiskLimit {
    /// Any tool.
    #[default]
    Any,
    /// Only tools whose [`risk`](crate::tools::Tool::risk) is [`Risk::ReadOnly`].
    ReadOnly,
}

/// Selects tools from a registry: by risk, then an optional allow list, then a deny list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolFilter {
    /// The risks admitted.
    pub risk: RiskLimit,
    /// When set, only these names.
    pub allow: Option<BTreeSet<String>>,
    /// Never these names.
    pub deny: BTreeSet<String>,
}

impl ToolFilter {
    /// Every tool.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only read-only tools.
    pub fn read_only() -> Self {
        Self {
            risk: RiskLimit::ReadOnly,
            ..Self::default()
        }
    }

    /// The same filter admitting only `names` (among those its risk limit admits).
    pub fn allowing<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The same filter refusing `names` as well.
    pub fn denying<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// True when the tool `name` of this `risk` passes.
    pub fn admits(&self, name: &str, risk: Risk) -> bool {
        let risk_ok = match self.risk {
            RiskLimit::Any => true,
            RiskLimit::ReadOnly => risk == Risk::ReadOnly,
        };
        risk_ok
            && self.allow.as_ref().is_none_or(|allow| allow.contains(name))
            && !self.deny.contains(name)
    }

    /// True when every tool it admits is read-only.
    pub fn is_read_only(&self) -> bool {
        self.risk == RiskLimit::ReadOnly
    }
}
