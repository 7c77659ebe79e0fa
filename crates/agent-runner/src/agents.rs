//! Agent types (profiles) as data: the names of the built-in ones (`default`, `explore`,
//! `delegate`, `compaction`, `plan`), and the prompt, tools, model, limits, depth, approval
//! policy and sandbox of each ([`AgentTypeConfig`], [`ToolFilter`]). `profiles.rs` defines the built-ins;
//! reading profiles from files is the caller's business.

use std::path::PathBuf;

use serde::Deserialize;

use agent_llm::{ProviderKind, ReasoningEffort};
/// Which tools a profile gets, which lives with the tools it selects.
pub use agent_tools::filter::{RiskLimit, ToolFilter};
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
