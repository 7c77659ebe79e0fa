//! What an embedder configures: [`RunnerOptions`] (model, prompt, project instructions,
//! workspace, limits, compaction, approvals, profiles) and [`SubAgentOptions`].
//!
//! Two defaults fail closed: without [`RunnerOptions::approval`] set, risky tools are refused
//! (the model is told why), and `explore` / `delegate` are offered only when
//! [`SubAgentOptions::enabled`] is set.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_llm::{LlmClient, PriceTable, ProviderKind, ReasoningEffort};
use agent_tools::ToolLimits;

use crate::agents::AgentTypeConfig;
use crate::checkpoint_options::CheckpointOptions;
use crate::compaction::CompactionStrategy;
use crate::profiles::{UnknownProfile, builtin_profiles};
use agent_execution::run_limits::{LimitOverrides, RunLimits};
use agent_tools::Approval;
use agent_tools::ApprovalRules;

/// How sub-agents run: whether they are offered, the settings of each agent type and of
/// explorations.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentOptions {
    /// Whether the runner offers `explore` and `delegate` at all (off by default: sub-agents
    /// spend model calls of their own, so an embedder turns them on).
    pub enabled: bool,
    /// The agent types (profiles) by name: the built-ins of [`crate::profiles`] and the user's
    /// own. `explore` configures explore branches and `delegate` delegated tasks (removing the
    /// entry disables its tool); `explore` and `delegate` calls may name any other profile but
    /// `compaction`.
    pub agent_types: BTreeMap<String, AgentTypeConfig>,
    /// How many branches of one `explore` call run at the same time; the others wait.
    pub max_concurrency: usize,
    /// The most branches one `explore` call may have.
    pub max_branches: usize,
    /// The longest background, in bytes, a branch is given when it inherits the main line's
    /// context (the oldest part and the task are kept, the middle is cut).
    pub max_background_bytes: usize,
    /// How many levels of sub-traces may nest below a main trace, whatever their profiles allow.
    pub max_agent_depth: usize,
}

impl Default for SubAgentOptions {
    fn default() -> Self {
        Self {
            enabled: false,
            agent_types: builtin_profiles(),
            max_concurrency: 4,
            max_branches: 8,
            max_background_bytes: 24_000,
            max_agent_depth: 3,
        }
    }
}

/// A block of text appended to every agent's system prompt under its own heading: a project's
/// instructions (an `AGENTS.md`) or a description of the environment. The runner reads no
/// files; the embedder gathers these (the `agent` binary reads `AGENTS.md` files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The heading, e.g. `Instructions from /repo/AGENTS.md` or `Environment`.
    pub title: String,
    /// The text, as given.
    pub text: String,
}

impl Instruction {
    /// A block titled `title`.
    pub fn new(title: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            text: text.into(),
        }
    }
}

/// The instructions as they follow the system prompt: each under a `## ` heading, separated by
/// blank lines; empty when there are none.
pub(crate) fn render_instructions(instructions: &[Instruction]) -> String {
    instructions
        .iter()
        .map(|i| format!("## {}\n\n{}", i.title.trim(), i.text.trim()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// How a runner behaves: model, prompt, workspace, limits, compaction and approvals.
///
/// Build it with [`RunnerOptions::new`] and the `with_*` methods, or set its public fields after
/// `new`: it is `#[non_exhaustive]`, so options added later break no caller.
#[derive(Clone)]
#[non_exhaustive]
pub struct RunnerOptions {
    /// The model name sent to the provider.
    pub model: String,
    /// The provider behind the client: recorded by its name with each new main trace (see
    /// [`agent_execution::Trace::model_settings`]) so that a later run of it can reach the same
    /// model. The runner does not use it otherwise.
    pub provider: Option<ProviderKind>,
    /// The provider's base URL, recorded with each new main trace like [`Self::provider`].
    pub base_url: Option<String>,
    /// The system prompt; the plan is appended to it on every call.
    pub system_prompt: String,
    /// Blocks appended to the system prompt of every agent but the compaction summariser (main
    /// traces, plan mode, `explore` and `delegate` sub-traces, which work in the same
    /// workspace), after its template variables are filled in (the blocks' own braces are
    /// left as they are). They belong to the static first system message, so they must not
    /// change during a run: render anything dated once. None by default.
    pub instructions: Vec<Instruction>,
    /// The folder the tools work in.
    pub workspace: PathBuf,
    /// Limits that end a run: the defaults (from a profile or a configuration file).
    pub limits: RunLimits,
    /// The limits the caller chose explicitly. They win over `limits` on a new trace, which
    /// stores the result, and over the limits a trace stored when it is run again (resume);
    /// without them a resumed trace keeps the limits it was started with.
    pub overrides: LimitOverrides,
    /// Output caps and the per-tool timeout.
    pub tool_limits: ToolLimits,
    /// The model's context window; `None` asks the client ([`LlmClient::model_info`]).
    pub context_window: Option<usize>,
    /// Which compaction steps build the context.
    pub strategy: CompactionStrategy,
    /// Prices used to cost each model call.
    pub prices: Arc<PriceTable>,
    /// Who approves risky tool calls; by default they are refused.
    pub approval: Approval,
    /// Calls allowed or denied before `approval` is asked (`[approvals]` of `agent.toml`): a
    /// deny rule refuses any call it matches, an allow rule runs a risky call without asking.
    pub approval_rules: ApprovalRules,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Completion token cap per call.
    pub max_tokens: Option<u32>,
    /// The reasoning effort asked of OpenAI-compatible reasoning models (sent as
    /// `reasoning_effort`); the server's default when `None`.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The Anthropic extended-thinking budget in tokens (at least 1,024); no thinking when
    /// `None`.
    pub thinking_budget: Option<u32>,
    /// Whether and how `explore` and `delegate` run their sub-traces, and every agent profile.
    pub sub_agents: SubAgentOptions,
    /// The profile main traces run as (see [`RunnerOptions::with_agent`]); `None` runs these
    /// options as they are.
    pub agent: Option<String>,
    /// Model clients by profile name, for profiles whose provider is not the runner's; the
    /// others use the runner's client.
    pub clients: BTreeMap<String, Arc<dyn LlmClient>>,
    /// Whether a main run whose plan is done ends with a closing report: one more model call
    /// that sums up the mission, every goal's summary and what was abandoned, recorded as the
    /// final answer. Off by default; a profile can leave it off for its own runs
    /// ([`AgentTypeConfig::closing_report`](crate::AgentTypeConfig)).
    pub closing_report: bool,
    /// Snapshots of the workspace's files at every goal boundary and turn of a main trace, and
    /// what an abandon does to them; off (`None`) by default.
    pub checkpoints: Option<CheckpointOptions>,
    /// Lifecycle hooks told of the run's events (`agent_tools::hooks`); none by default.
    pub hooks: Option<Arc<dyn agent_tools::hooks::Hooks>>,
    /// Which models take pictures ([`agent_llm::Vision`]): a task's pictures for one that does
    /// not are refused ([`RunError::NoVision`](crate::RunError)); a tool's are left out with a
    /// note.
    pub vision: agent_llm::Vision,
}

impl RunnerOptions {
    /// Options with defaults for `model`, working in `workspace`: risky tools refused, no
    /// sub-agents.
    pub fn new(model: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            provider: None,
            base_url: None,
            system_prompt: agent_goal::DEFAULT_SYSTEM_PROMPT.to_owned(),
            instructions: Vec::new(),
            workspace: workspace.into(),
            limits: RunLimits::default(),
            overrides: LimitOverrides::default(),
            tool_limits: ToolLimits::default(),
            context_window: None,
            strategy: CompactionStrategy::default(),
            prices: Arc::new(PriceTable::default()),
            approval: Approval::default(),
            approval_rules: ApprovalRules::default(),
            temperature: None,
            max_tokens: None,
            reasoning_effort: None,
            thinking_budget: None,
            sub_agents: SubAgentOptions::default(),
            agent: None,
            clients: BTreeMap::new(),
            closing_report: false,
            checkpoints: None,
            hooks: None,
            vision: agent_llm::Vision::default(),
        }
    }

    /// Options that end a main run whose plan is done with a closing report (see
    /// [`RunnerOptions::closing_report`]).
    #[must_use]
    pub fn with_closing_report(mut self, on: bool) -> Self {
        self.closing_report = on;
        self
    }

    /// These options with checkpoints of the workspace taken as `checkpoints` says.
    #[must_use]
    pub fn with_checkpoints(mut self, checkpoints: CheckpointOptions) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// These options with `approval` deciding on risky tool calls.
    #[must_use]
    pub fn with_approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// These options with the caller's `max_cost` (US dollars, sub-traces included), which also
    /// wins over the one a resumed trace stored.
    #[must_use]
    pub fn with_max_cost(mut self, max_cost: f64) -> Self {
        self.overrides.max_cost = Some(max_cost);
        self
    }

    /// These options with the caller's `max_iterations` for each run, which also wins over the
    /// one a resumed trace stored.
    #[must_use]
    pub fn with_max_iterations(mut self, max_iterations: u32) -> Self {
        self.overrides.max_iterations = Some(max_iterations);
        self
    }

    /// These options with `explore` and `delegate` offered (as their profiles allow).
    #[must_use]
    pub fn with_sub_agents(mut self) -> Self {
        self.sub_agents.enabled = true;
        self
    }

    /// These options running main traces as the profile `name` of `sub_agents.agent_types`:
    /// its limits and model become the options' (change them after this call to override
    /// them); its prompt, tools and approval policy apply when the runner is built, and each
    /// trace records the profile so that a resume runs it the same way.
    pub fn with_agent(mut self, name: &str) -> Result<Self, UnknownProfile> {
        let profile = self
            .sub_agents
            .agent_types
            .get(name)
            .ok_or_else(|| UnknownProfile {
                name: name.to_owned(),
                known: self.sub_agents.agent_types.keys().cloned().collect(),
            })?;
        self.limits = profile.limits.clone();
        if let Some(model) = &profile.model {
            self.model.clone_from(model);
        }
        self.agent = Some(name.to_owned());
        Ok(self)
    }
}
