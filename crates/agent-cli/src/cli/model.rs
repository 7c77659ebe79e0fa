//! The flags of the commands that run a model: the provider and its settings, the workspace,
//! the limits, and what stdout carries.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::TraceDirArg;

/// What `agent run` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// The answer as text.
    Text,
    /// One JSON object when the run ends.
    Json,
    /// One JSON object per line: every event and text delta as it comes, then the result.
    StreamJson,
}

impl ModelArgs {
    /// The output format the flags ask for (`--json` is `json`).
    pub(crate) fn output(&self) -> OutputFormat {
        match self.output_format {
            Some(format) => format,
            None if self.json => OutputFormat::Json,
            None => OutputFormat::Text,
        }
    }
}

/// `--provider`: the model provider behind a run (agent-llm's [`agent_llm::ProviderKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProviderArg {
    /// Any OpenAI-compatible chat completions server (OpenAI, DeepSeek, Qwen, Ollama, vLLM, ...);
    /// on OpenAI's own API, models served only on the Responses API use that API.
    Openai,
    /// The OpenAI Responses API (the API of Codex CLI; `gpt-5-codex`, `o3-pro`, ...).
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// A deterministic script of answers (`--script FILE`), for tests and offline use.
    Scripted,
}

impl From<ProviderArg> for agent_llm::ProviderKind {
    fn from(arg: ProviderArg) -> Self {
        match arg {
            ProviderArg::Openai => Self::Openai,
            ProviderArg::OpenaiResponses => Self::OpenaiResponses,
            ProviderArg::Anthropic => Self::Anthropic,
            ProviderArg::Scripted => Self::Scripted,
        }
    }
}

/// `--reasoning-effort`: how hard an OpenAI-compatible reasoning model thinks (agent-llm's
/// [`agent_llm::ReasoningEffort`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EffortArg {
    /// Little reasoning: faster and cheaper.
    Low,
    /// The usual amount.
    Medium,
    /// Much reasoning: slower, for hard tasks.
    High,
}

impl From<EffortArg> for agent_llm::ReasoningEffort {
    fn from(arg: EffortArg) -> Self {
        match arg {
            EffortArg::Low => Self::Low,
            EffortArg::Medium => Self::Medium,
            EffortArg::High => Self::High,
        }
    }
}

/// How to reach the model: the provider and its settings.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProviderArgs {
    /// The model provider [default: from agent.toml, else inferred from API keys]. With
    /// `openai` on OpenAI's own API, the models served only on the Responses API use it.
    #[arg(long, value_enum)]
    pub(crate) provider: Option<ProviderArg>,
    /// The model name [default: on resume the trace's own, else agent.toml's, else the one a
    /// local server serves, else the provider's usual one].
    #[arg(short = 'm', long, env = "AGENT_MODEL")]
    pub(crate) model: Option<String>,
    /// The provider's base URL (OpenAI and OpenAI-compatible: including /v1; Anthropic: without
    /// it).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// The API key [default: OPENAI_API_KEY or ANTHROPIC_API_KEY]. Given as a flag, it is moved
    /// to AGENT_API_KEY at start, out of the process's command line.
    #[arg(
        long,
        value_name = "KEY",
        env = "AGENT_API_KEY",
        hide_env_values = true
    )]
    pub(crate) api_key: Option<String>,
    /// The script of the scripted provider (JSON; see the agent-llm docs).
    #[arg(long, value_name = "FILE")]
    pub(crate) script: Option<PathBuf>,
    /// The model's context window in tokens [default: `[models."NAME"] context_window` or
    /// `context_window` of agent.toml, else what the provider reports].
    #[arg(long, value_name = "TOKENS", value_parser = parse_context_window)]
    pub(crate) context_window: Option<usize>,
    /// Never ask the model for streamed answers [default: streamed, unless `[models."NAME"]
    /// stream = false`; a server that cannot stream is asked for whole answers by itself].
    #[arg(long)]
    pub(crate) no_stream: bool,
}

/// A context window: a whole number of tokens, at least 1.
fn parse_context_window(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("the context window must be at least 1 token".into()),
        Ok(tokens) => Ok(tokens),
        Err(_) => Err(format!("{text:?} is not a number of tokens")),
    }
}

/// Options shared by `run` and `resume`: the model, the workspace and the limits.
#[derive(Debug, Clone, Args)]
pub(crate) struct ModelArgs {
    /// The provider and its settings.
    #[command(flatten)]
    pub(crate) llm: ProviderArgs,
    /// The folder the agent works in [default: the current folder].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Run as this agent profile (`agent agents` lists them) [default: default].
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// Model calls before the run stops (exit code 3) [default: the trace's own on resume, else
    /// the profile's].
    #[arg(long, value_name = "N", value_parser = agent_runner::parse_max_iterations)]
    pub(crate) max_iterations: Option<u32>,
    /// Spending limit in US dollars of the trace and its sub-traces (exit code 3 when reached)
    /// [default: the trace's own on resume, else the profile's].
    #[arg(long, value_name = "USD", value_parser = agent_runner::parse_max_cost)]
    pub(crate) max_cost: Option<f64>,
    /// Reasoning effort of OpenAI-compatible reasoning models [default: agent.toml, else the
    /// server's].
    #[arg(
        long,
        value_enum,
        env = "AGENT_REASONING_EFFORT",
        value_name = "EFFORT"
    )]
    pub(crate) reasoning_effort: Option<EffortArg>,
    /// Anthropic extended thinking with this token budget (at least 1024) [default: agent.toml,
    /// else off].
    #[arg(long = "thinking", env = "AGENT_THINKING_BUDGET", value_name = "BUDGET_TOKENS",
          value_parser = clap::value_parser!(u32).range(1024..))]
    pub(crate) thinking_budget: Option<u32>,
    /// Print the model's reasoning in full (dimmed) instead of a one-line summary.
    #[arg(long)]
    pub(crate) show_reasoning: bool,
    /// Leave the instruction files (AGENTS.md, CLAUDE.md, ~/.config/agent/AGENTS.md) and the
    /// environment block out of the system prompt.
    #[arg(long)]
    pub(crate) no_instructions: bool,
    /// End without a closing report: by default a run whose plan of two goals or more is done
    /// ends with one more model call that sums up every goal's outcome as the final answer.
    #[arg(long)]
    pub(crate) no_report: bool,
    /// Approve every risky tool call (shell, writes) without asking.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Also use this MCP server of agent.toml, even when it is disabled (repeatable).
    #[arg(long = "mcp", value_name = "NAME")]
    pub(crate) mcp: Vec<String>,
    /// Send the run's spans (OpenTelemetry, GenAI conventions) to this OTLP/HTTP receiver when
    /// the run ends, e.g. http://localhost:4318 [default: OTEL_EXPORTER_OTLP_ENDPOINT, else
    /// none].
    #[arg(long, value_name = "URL")]
    pub(crate) otel: Option<String>,
    /// Print one JSON object on stdout: trace_id, status, response, totals (the same as
    /// `--output-format json`).
    #[arg(long, conflicts_with = "output_format")]
    pub(crate) json: bool,
    /// What stdout carries: `text` (the answer), `json` (one object at the end) or
    /// `stream-json` (one JSON object per line for every event and text delta, then the result).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) output_format: Option<OutputFormat>,
    /// Also serve the API and viewer while running [default port: 8420].
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "8420")]
    pub(crate) serve: Option<u16>,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}
