//! What a front end sets over the environment and `agent.toml`: a command line's flags, an
//! embedder's choices. Every field is optional, and typed (no command-line parser's types): a
//! front end fills what it was given and leaves the rest to the lower layers.

use std::path::PathBuf;

use agent_llm::{ProviderKind, ReasoningEffort};
use agent_tools::SandboxMode;

/// How to reach the model, as a front end sets it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProviderOverrides {
    /// The provider.
    pub kind: Option<ProviderKind>,
    /// The model name.
    pub model: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<String>,
    /// The script of the scripted provider (implies it when no provider is named).
    pub script: Option<PathBuf>,
    /// The model's context window in tokens.
    pub context_window: Option<usize>,
    /// Never ask for streamed answers.
    pub no_stream: bool,
}

/// Where traces are kept, as a front end names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreOverrides {
    /// A trace folder.
    pub trace_dir: Option<PathBuf>,
    /// A store location (a folder, `file://PATH` or `postgres://…`); wins over `trace_dir`.
    pub store: Option<String>,
}

/// Everything a front end may set about the runs it starts.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Overrides {
    /// The provider and model.
    pub provider: ProviderOverrides,
    /// The folder runs work in.
    pub workspace: Option<PathBuf>,
    /// The agent profile main traces run as.
    pub agent: Option<String>,
    /// Model calls per run.
    pub max_iterations: Option<u32>,
    /// The spending cap in US dollars.
    pub max_cost: Option<f64>,
    /// How hard an OpenAI-compatible reasoning model thinks.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Anthropic extended thinking, in tokens.
    pub thinking_budget: Option<u32>,
    /// `Some(false)` leaves the instruction files and the environment block out of the prompt.
    pub instructions: Option<bool>,
    /// `Some(false)`: runs end without a closing report.
    pub closing_report: Option<bool>,
    /// Whether reasoning is shown in full (for front ends that show it).
    pub show_reasoning: Option<bool>,
    /// MCP servers of `agent.toml` to use even when they are disabled.
    pub mcp: Vec<String>,
    /// The sandbox of the model's commands.
    pub sandbox: Option<SandboxMode>,
    /// Where traces are kept.
    pub store: StoreOverrides,
}
