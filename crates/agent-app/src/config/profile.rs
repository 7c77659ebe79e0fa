//! A profile as written in `agent.toml`'s `[agents.NAME]` tables and in profile files
//! ([`ProfileSpec`]): every field optional, changing only what it names. What the fields do is
//! [`crate::profiles`]'.

use std::path::PathBuf;

use serde::Deserialize;

/// A profile as written in `agent.toml` or a profile file; every field is optional and changes
/// only what it names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProfileSpec {
    /// The profile's name (files only; a table's name is its key).
    pub name: Option<String>,
    /// What it is for, in one line.
    pub description: Option<String>,
    /// The profile a new one starts from [default: `default`].
    pub base: Option<String>,
    /// The system prompt, inline.
    pub prompt: Option<String>,
    /// The system prompt from a file, relative to the file that names it.
    pub prompt_file: Option<PathBuf>,
    /// Only these tools (`*` or `all`: every tool); a name may end in `*`.
    pub tools: Option<NameList>,
    /// Never these tools.
    pub deny_tools: Option<NameList>,
    /// Only read-only tools.
    pub read_only: Option<bool>,
    /// Only the tools of these MCP servers.
    pub mcp_servers: Option<NameList>,
    /// The model (`inherit`: the runner's).
    pub model: Option<String>,
    /// The provider of the model.
    pub provider: Option<String>,
    /// The reasoning effort of an OpenAI-compatible reasoning model.
    pub reasoning_effort: Option<agent_llm::ReasoningEffort>,
    /// The Anthropic extended-thinking budget in tokens (at least 1024).
    pub thinking_budget: Option<u32>,
    /// Model calls per run.
    pub max_iterations: Option<u32>,
    /// Spending limit per trace, in US dollars.
    pub max_cost: Option<f64>,
    /// How long one model call may take, in seconds.
    pub llm_timeout_secs: Option<u64>,
    /// Tool calls run per model turn.
    pub max_tool_calls_per_turn: Option<usize>,
    /// How many times in a row a model that stops with goals open is sent back to them.
    pub goal_reminders: Option<u32>,
    /// How many of its sub-traces may be stacked on one line of descent.
    pub max_depth: Option<usize>,
    /// `inherit`, `auto` or `deny`.
    pub approval: Option<agent_runner::ApprovalPolicy>,
    /// `read-only`, `workspace-write` or `off`: the sandbox of its commands, never looser than
    /// the run's.
    pub sandbox: Option<agent_tools::SandboxMode>,
    /// What an abandoned goal does to the files (`ask`, `always`, `never`); agent.toml's
    /// top-level value when not given.
    pub abandon_rollback: Option<agent_checkpoint::AbandonRollback>,
    /// Loop-guard thresholds; the ones not given keep their value.
    pub loop_guard: Option<LoopGuardSpec>,
    /// Whether a run of this profile that carries out a plan ends with a closing report (the
    /// run's `--no-report` or `report = false` still turn reports off).
    pub closing_report: Option<bool>,
    /// Claude Code's display colour; read and ignored.
    pub color: Option<String>,
    /// The skills a run as this profile offers, by name (Claude Code's `skills`); every skill
    /// when left out, none for an empty list or `none`.
    pub skills: Option<NameList>,
}

/// Loop-guard thresholds of a [`ProfileSpec`] (see [`LoopGuard`](agent_runner::LoopGuard)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopGuardSpec {
    /// [`LoopGuard::repeated_call`](agent_runner::LoopGuard::repeated_call).
    pub repeated_call: Option<usize>,
    /// [`LoopGuard::repeated_error`](agent_runner::LoopGuard::repeated_error).
    pub repeated_error: Option<usize>,
    /// [`LoopGuard::alternation`](agent_runner::LoopGuard::alternation).
    pub alternation: Option<usize>,
    /// [`LoopGuard::stop_after`](agent_runner::LoopGuard::stop_after).
    pub stop_after: Option<usize>,
    /// [`LoopGuard::max_warnings`](agent_runner::LoopGuard::max_warnings).
    pub max_warnings: Option<usize>,
}

/// A list of names: `"a, b"` or `["a", "b"]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum NameList {
    /// Comma-separated.
    Text(String),
    /// One name per item.
    List(Vec<String>),
}

impl NameList {
    /// The names, trimmed, without empty ones.
    pub fn names(&self) -> Vec<String> {
        let items: Vec<&str> = match self {
            Self::Text(text) => text.split(',').collect(),
            Self::List(items) => items.iter().map(String::as_str).collect(),
        };
        items
            .into_iter()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect()
    }
}
