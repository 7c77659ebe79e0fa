//! [`AgentSpec`]: the resolved settings of one agent — what a profile, at its place in the tree
//! of sub-traces, means for the loop — as plain data.

use std::path::PathBuf;

use agent_tools::ToolLimits;

use crate::agents::{DELEGATE, EXPLORE};
use crate::compaction::CompactionStrategy;
use agent_execution::run_limits::RunLimits;
use agent_tools::Approval;

/// Whether an agent offers one of the sub-agent tools (`explore`, `delegate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// The runner's own tool is offered.
    Own,
    /// The tool is not offered; a call gets this reason as its error.
    Refused(String),
    /// The embedder registered a tool of that name, which runs like any other tool.
    Foreign,
}

/// The settings one agent runs with, resolved from the runner's options and its profile.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The profile's name (`default` for a main run without one).
    pub name: String,
    /// The agent types from the main trace (its profile first, when it has one) down to this
    /// agent's traces; empty for a main run without a profile.
    pub lineage: Vec<String>,
    /// The model sent to the provider.
    pub model: String,
    /// The system prompt, its template variables filled in; the plan follows it on every call.
    pub system_prompt: String,
    /// The folder the tools work in.
    pub workspace: PathBuf,
    /// Limits that end a run.
    pub limits: RunLimits,
    /// Output caps and the per-tool timeout.
    pub tool_limits: ToolLimits,
    /// The model's context window; `None` asks the client.
    pub context_window: Option<usize>,
    /// Which compaction steps build the context.
    pub strategy: CompactionStrategy,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Completion token cap per call.
    pub max_tokens: Option<u32>,
    /// The reasoning effort asked of an OpenAI-compatible reasoning model.
    pub reasoning_effort: Option<agent_llm::ReasoningEffort>,
    /// The Anthropic extended-thinking budget in tokens.
    pub thinking_budget: Option<u32>,
    /// Who decides on risky tool calls.
    pub approval: Approval,
    /// The names of the tools offered to the model, sorted.
    pub tools: Vec<String>,
    /// Whether `explore` is offered.
    pub explore: Access,
    /// Whether `delegate` is offered.
    pub delegate: Access,
    /// Whether the `goal` tool is the runner's own (not one the embedder registered), whose
    /// `done` runs a goal's check first.
    pub own_goal_tool: bool,
    /// Whether a run whose plan is done ends with a closing report (the runner's options and
    /// the profile both ask for it; never for a sub-trace).
    pub closing_report: bool,
    /// Which models take pictures; the others get a note in each picture's place.
    pub vision: agent_llm::Vision,
}

impl AgentSpec {
    /// The access to the tool `name`, for a sub-agent tool; `None` for any other tool.
    pub fn access(&self, name: &str) -> Option<&Access> {
        match name {
            EXPLORE => Some(&self.explore),
            DELEGATE => Some(&self.delegate),
            _ => None,
        }
    }

    /// True when an unanswered call to `name` is finished on resume rather than answered
    /// "interrupted": the runner's own `explore` and `delegate`.
    pub fn resumes(&self, name: &str) -> bool {
        self.access(name) == Some(&Access::Own)
    }
}
