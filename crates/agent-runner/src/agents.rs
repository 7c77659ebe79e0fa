//! Agent types (profiles) as data: the names of the built-in ones (`default`, `explore`,
//! `delegate`, `compaction`, `plan`), and the prompt, tools, model, limits, depth, approval
//! policy and sandbox of each ([`AgentTypeConfig`], [`ToolFilter`]). `profiles.rs` defines the built-ins;
//! reading profiles from files is the caller's business.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Deserialize;

use agent_llm::{ProviderKind, ReasoningEffort};
use agent_tools::{Risk, SandboxMode};

use agent_execution::run_limits::RunLimits;

/// The profile of a main run when none is named.
pub const DEFAULT: &str = "default";
/// The agent type of explore branches.
pub const EXPLORE: &str = "explore";
/// The agent type of delegated tasks.
pub const DELEGATE: &str = "delegate";
/// The summariser of full compactions.
pub const COMPACTION: &str = "compaction";
/// Plan mode: read-only tools and the goal tools.
pub const PLAN: &str = "plan";

/// The settings of one agent type: an agent profile.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentTypeConfig {
    /// What it is for, in one line: shown by `agent agents` and in the `explore` and `delegate`
    /// tool descriptions.
    pub description: String,
    /// Which tools its sub-traces get. The runner's `goal` and `read_progress` are always there:
    /// they act on the sub-trace's own plan.
    pub tools: ToolFilter,
    /// The limits of each of its sub-traces (per run, like the main line's).
    pub limits: RunLimits,
    /// How many sub-traces of this type may be stacked on one line of descent: a trace whose
    /// ancestors (itself included) already count this many of this type cannot spawn another.
    /// With 1, only traces outside this type can spawn it (an explore branch cannot explore).
    pub max_depth: usize,
    /// The system prompt of its traces; the runner's own when `None`. `{workspace}`, `{date}`,
    /// `{tools}`, `{agent}` and `{model}` are replaced when a runner is built (see
    /// [`crate::profiles::render_prompt`]). The `compaction` profile's prompt is the request
    /// that asks for the summary.
    pub system_prompt: Option<String>,
    /// The model of its traces; the runner's when `None`.
    pub model: Option<String>,
    /// The provider of that model, for the composition root that builds the clients
    /// ([`crate::RunnerOptions::clients`]); the runner's when `None`.
    pub provider: Option<ProviderKind>,
    /// How its risky tool calls are approved.
    pub approval: ApprovalPolicy,
    /// The sandbox of the commands its traces run, and of every sub-agent below them: the
    /// stricter of this and the run's own (a profile can tighten the run's sandbox, never
    /// loosen it); the run's when `None`.
    pub sandbox: Option<SandboxMode>,
    /// The reasoning effort of its OpenAI-compatible reasoning model; the runner's when `None`.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Its Anthropic extended-thinking budget in tokens; the runner's when `None`.
    pub thinking_budget: Option<u32>,
    /// Whether a main run of this profile ends with a closing report when its plan is done
    /// (and the runner's options ask for reports, [`crate::RunnerOptions::closing_report`]).
    pub closing_report: bool,
    /// Where it was defined.
    pub origin: ProfileOrigin,
}

/// How the risky tool calls of a profile's traces are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// As the runner is configured: its approval handler decides, if it has one.
    #[default]
    Inherit,
    /// Risky calls run without asking.
    Auto,
    /// Risky calls are refused without asking; the model is told so.
    Deny,
}

/// Where a profile was defined.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProfileOrigin {
    /// Built into the runner.
    #[default]
    BuiltIn,
    /// A `[agents.<name>]` table of this configuration file.
    Config(PathBuf),
    /// A profile file (`.agent/agents/<name>.md`).
    File(PathBuf),
}

impl std::fmt::Display for ProfileOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BuiltIn => f.write_str("built-in"),
            Self::Config(path) | Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl AgentTypeConfig {
    /// The general agent: every tool, the default limits, the runner's prompt. As a sub-agent
    /// (`delegate(task, agent: "default")`) it nests once.
    pub fn general() -> Self {
        Self {
            description: "The general agent: every tool, the runner's system prompt.".into(),
            tools: ToolFilter::all(),
            limits: RunLimits::default(),
            max_depth: 1,
            system_prompt: None,
            model: None,
            provider: None,
            approval: ApprovalPolicy::Inherit,
            sandbox: None,
            reasoning_effort: None,
            thinking_budget: None,
            closing_report: true,
            origin: ProfileOrigin::BuiltIn,
        }
    }

    /// Explore branches: read-only tools (branches run side by side in one workspace), 30 model
    /// calls each, no exploring inside a branch.
    pub fn explore() -> Self {
        Self {
            description: "Explore branches: read-only tools, 30 model calls, no nested \
                exploration."
                .into(),
            tools: ToolFilter::read_only(),
            limits: RunLimits {
                max_iterations: 30,
                ..RunLimits::default()
            },
            closing_report: false,
            ..Self::general()
        }
    }

    /// Delegated tasks: every tool, the default limits, and a delegate may delegate once more.
    pub fn delegate() -> Self {
        Self {
            description: "Delegated tasks: every tool; a delegate may delegate once more.".into(),
            max_depth: 2,
            closing_report: false,
            ..Self::general()
        }
    }

    /// The risk of a sub-agent tool running this profile: read-only when every tool its
    /// sub-traces get is read-only.
    pub fn risk(&self) -> Risk {
        if self.tools.is_read_only() {
            Risk::ReadOnly
        } else {
            Risk::Risky
        }
    }

    /// True when it may run behind `explore` or `delegate` (every profile but `compaction`).
    pub fn is_sub_agent(name: &str) -> bool {
        name != COMPACTION
    }
}

/// Which risks a tool set admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RiskLimit {
    /// Any tool.
    #[default]
    Any,
    /// Only tools whose [`risk`](agent_tools::Tool::risk) is [`Risk::ReadOnly`].
    ReadOnly,
}

/// Selects tools from a registry: by risk, then an optional allow list, then a deny list, then
/// the MCP servers. A name ending in `*` matches every tool name starting with the rest
/// (`mcp__github__*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolFilter {
    /// The risks admitted.
    pub risk: RiskLimit,
    /// When set, only these names.
    pub allow: Option<BTreeSet<String>>,
    /// Never these names.
    pub deny: BTreeSet<String>,
    /// When set, the tools of MCP servers (`mcp__<server>__<tool>`) only of these servers.
    pub mcp_servers: Option<BTreeSet<String>>,
}

/// The prefix of the tools MCP servers add to a registry: `mcp__<server>__<tool>`.
const MCP_PREFIX: &str = "mcp__";

/// True when `name` is matched by `pattern` (exactly, or by its start before a final `*`).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(start) => name.starts_with(start),
        None => pattern == name,
    }
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
        let server_ok = match (name.strip_prefix(MCP_PREFIX), &self.mcp_servers) {
            (Some(rest), Some(servers)) => rest
                .split_once("__")
                .is_some_and(|(server, _)| servers.contains(server)),
            _ => true,
        };
        risk_ok
            && server_ok
            && self
                .allow
                .as_ref()
                .is_none_or(|allow| allow.iter().any(|p| matches(p, name)))
            && !self.deny.iter().any(|p| matches(p, name))
    }

    /// The filter in a few words, e.g. `read-only`, `all`, `read_file, grep`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match &self.allow {
            Some(allow) if allow.is_empty() => parts.push("goal tools only".to_owned()),
            Some(allow) => parts.push(allow.iter().cloned().collect::<Vec<_>>().join(", ")),
            None if self.is_read_only() => parts.push("read-only".to_owned()),
            None => parts.push("all".to_owned()),
        }
        if self.allow.is_some() && self.is_read_only() {
            parts.push("read-only".to_owned());
        }
        if !self.deny.is_empty() {
            let deny: Vec<_> = self.deny.iter().cloned().collect();
            parts.push(format!("not {}", deny.join(", ")));
        }
        if let Some(servers) = &self.mcp_servers {
            let servers: Vec<_> = servers.iter().cloned().collect();
            parts.push(format!("MCP: {}", servers.join(", ")));
        }
        parts.join("; ")
    }

    /// True when every tool it admits is read-only.
    pub fn is_read_only(&self) -> bool {
        self.risk == RiskLimit::ReadOnly
    }
}
