//! The command line: commands, flags and their environment variables.
//!
//! The command names and flags are a Contract: scripts outside the project use them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// An LLM agent runtime with goal trees, precise compaction and durable traces.
#[derive(Debug, Parser)]
#[command(name = "agent", version, about, long_about = None, propagate_version = true)]
pub(crate) struct Cli {
    /// More log output (repeat for more); `RUST_LOG` takes precedence.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a task to the end and print the final answer.
    Run(RunArgs),
    /// Run a realistic task offline with a built-in scripted model, then serve the viewer.
    Demo(DemoArgs),
    /// Serve the HTTP API and the trace viewer.
    Serve(ServeArgs),
    /// List traces, newest first.
    Traces(TracesArgs),
    /// Show a trace as a tree: goals, their messages, sub-traces.
    Show(ShowArgs),
    /// Continue a stopped trace (crash, limit, cancel) under the same id.
    Resume(ResumeArgs),
    /// Fork a trace just before a goal started (or after a message) into a new trace that can
    /// be continued another way; the original is untouched.
    Fork(ForkArgs),
    /// Cancel a run going on in a server (`agent serve` or `agent run --serve`).
    Cancel(CancelArgs),
    /// Plan mode: the model writes the goal tree only; edit it, save it, run it.
    Plan(PlanArgs),
    /// MCP servers (`[mcp.servers.NAME]` in agent.toml): list them and their tools.
    Mcp(McpArgs),
    /// Agent profiles (built in, `[agents.NAME]` in agent.toml, `.agent/agents/NAME.md`): list
    /// them.
    Agents(AgentsArgs),
}

/// Where traces live; every command takes it.
#[derive(Debug, Clone, Args)]
pub(crate) struct TraceDirArg {
    /// The folder traces are stored in [default: .trace].
    #[arg(long, env = "AGENT_TRACE_DIR", value_name = "DIR")]
    pub(crate) trace_dir: Option<PathBuf>,
}

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

/// The model provider behind a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ProviderKind {
    /// Any OpenAI-compatible chat completions server (OpenAI, DeepSeek, Qwen, Ollama, vLLM, ...);
    /// on OpenAI's own API, models served only on the Responses API use that API.
    Openai,
    /// The OpenAI Responses API (the API of Codex CLI; `gpt-5-codex`, `o3-pro`, ...).
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// A deterministic script of answers (`--script FILE`), for tests and offline use.
    Scripted,
}

impl ProviderKind {
    /// The provider whose server, key and settings this one shares: OpenAI's two APIs share
    /// them.
    pub(crate) fn account(self) -> ProviderKind {
        match self {
            ProviderKind::OpenaiResponses => ProviderKind::Openai,
            other => other,
        }
    }
}

/// How hard an OpenAI-compatible reasoning model thinks (`reasoning_effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReasoningEffort {
    /// Little reasoning: faster and cheaper.
    Low,
    /// The usual amount.
    Medium,
    /// Much reasoning: slower, for hard tasks.
    High,
}

impl ReasoningEffort {
    /// The word sent to the server.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// How to reach the model: the provider and its settings.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProviderArgs {
    /// The model provider [default: from agent.toml, else inferred from API keys]. With
    /// `openai` on OpenAI's own API, the models served only on the Responses API use it.
    #[arg(long, value_enum)]
    pub(crate) provider: Option<ProviderKind>,
    /// The model name.
    #[arg(long, env = "AGENT_MODEL")]
    pub(crate) model: Option<String>,
    /// The provider's base URL (OpenAI and OpenAI-compatible: including /v1; Anthropic: without
    /// it).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// The API key [default: OPENAI_API_KEY or ANTHROPIC_API_KEY].
    #[arg(long, value_name = "KEY", hide_env_values = true)]
    pub(crate) api_key: Option<String>,
    /// The script of the scripted provider (JSON; see the agent-llm docs).
    #[arg(long, value_name = "FILE")]
    pub(crate) script: Option<PathBuf>,
    /// The model's context window in tokens [default: `[models."NAME"] context_window` or
    /// `context_window` of agent.toml, else what the provider reports].
    #[arg(long, value_name = "TOKENS", value_parser = parse_context_window)]
    pub(crate) context_window: Option<usize>,
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
    #[arg(long, value_name = "N")]
    pub(crate) max_iterations: Option<u32>,
    /// Spending limit in US dollars of the trace and its sub-traces (exit code 3 when reached)
    /// [default: the trace's own on resume, else the profile's].
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
    /// Reasoning effort of OpenAI-compatible reasoning models [default: agent.toml, else the
    /// server's].
    #[arg(
        long,
        value_enum,
        env = "AGENT_REASONING_EFFORT",
        value_name = "EFFORT"
    )]
    pub(crate) reasoning_effort: Option<ReasoningEffort>,
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
    /// Approve every risky tool call (shell, writes) without asking.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Also use this MCP server of agent.toml, even when it is disabled (repeatable).
    #[arg(long = "mcp", value_name = "NAME")]
    pub(crate) mcp: Vec<String>,
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

/// `agent run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The task; `-` reads it from standard input. Not needed with --trace or --task-file. With
    /// --continue: the next user message.
    #[arg(required_unless_present_any = ["trace", "task_file"])]
    pub(crate) task: Option<String>,
    /// Read the task (with --continue: the next message) from this file (`-`: standard input).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["task", "trace"])]
    pub(crate) task_file: Option<PathBuf>,
    /// Continue this ended trace (completed, failed or cancelled; an id or a unique prefix of
    /// one) with TASK as its next user message, under the same id; with --last and no id, the
    /// newest trace of the folder.
    #[arg(
        long = "continue",
        value_name = "TRACE_ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["trace", "plan"]
    )]
    pub(crate) continue_trace: Option<String>,
    /// With --continue: continue the newest main trace of the trace folder.
    #[arg(long, requires = "continue_trace")]
    pub(crate) last: bool,
    /// Execute the plan stored in this trace (made by `agent plan`, possibly edited).
    #[arg(long, value_name = "TRACE_ID", conflicts_with_all = ["task", "plan"])]
    pub(crate) trace: Option<String>,
    /// Start from a saved plan (`agent plan save`) instead of an empty goal tree.
    #[arg(long, value_name = "FILE")]
    pub(crate) plan: Option<PathBuf>,
    /// Model, workspace, limits and output.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// `agent resume`.
#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The trace to continue.
    pub(crate) trace_id: String,
    /// Model, workspace, limits and output.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// `agent demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Do not serve the viewer after the run.
    #[arg(long)]
    pub(crate) no_serve: bool,
    /// The port to serve on.
    #[arg(long, default_value_t = 8420)]
    pub(crate) port: u16,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to bind; anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) host: String,
    /// The port.
    #[arg(long, default_value_t = 8420)]
    pub(crate) port: u16,
    /// The bearer token clients must send.
    #[arg(long, env = "AGENT_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
    /// The model used for runs started over HTTP (optional: without one the server is read-only).
    #[command(flatten)]
    pub(crate) model: ServeModelArgs,
}

/// The model options of `agent serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeModelArgs {
    /// The provider and its settings.
    #[command(flatten)]
    pub(crate) llm: ProviderArgs,
    /// The folder runs work in [default: the current folder].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Leave the instruction files (AGENTS.md, CLAUDE.md, ~/.config/agent/AGENTS.md) and the
    /// environment block out of the system prompt of runs started over HTTP.
    #[arg(long)]
    pub(crate) no_instructions: bool,
}

/// `agent agents`.
#[derive(Debug, Args)]
pub(crate) struct AgentsArgs {
    /// The project whose `.agent/agents/` is read [default: the current folder].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `agent traces`.
#[derive(Debug, Args)]
pub(crate) struct TracesArgs {
    /// Only traces with this status.
    #[arg(long)]
    pub(crate) status: Option<String>,
    /// At most this many.
    #[arg(long, default_value_t = 50)]
    pub(crate) limit: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The trace.
    pub(crate) trace_id: String,
    /// Print JSON: trace, goal tree, messages and sub-traces.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the model's reasoning in full instead of a one-line summary.
    #[arg(long)]
    pub(crate) show_reasoning: bool,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent fork`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("point").required(true).args(["goal", "message"])))]
pub(crate) struct ForkArgs {
    /// The trace to fork.
    pub(crate) trace_id: String,
    /// Fork just before this goal (its display number, e.g. `2.1`) started: the goal is pending
    /// again and everything after it is left out.
    #[arg(long, value_name = "N")]
    pub(crate) goal: Option<String>,
    /// Fork after this message (its sequence number) and the tool results of its turn.
    #[arg(long, value_name = "SEQ")]
    pub(crate) message: Option<u64>,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent cancel`.
#[derive(Debug, Args)]
pub(crate) struct CancelArgs {
    /// The trace whose run to cancel.
    pub(crate) trace_id: String,
    /// The server running it.
    #[arg(long, default_value = "http://127.0.0.1:8420")]
    pub(crate) server: String,
    /// The server's bearer token.
    #[arg(long, env = "AGENT_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// Where traces live (unused; accepted like every command).
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent plan`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct PlanArgs {
    /// Edit or save an existing plan.
    #[command(subcommand)]
    pub(crate) action: Option<PlanAction>,
    /// The task to plan.
    #[arg(required = true)]
    pub(crate) task: Option<String>,
    /// Model and output options.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// What to do with an existing plan.
#[derive(Debug, Subcommand)]
pub(crate) enum PlanAction {
    /// Open the plan in $EDITOR as text (one goal a line, two spaces of indent per level).
    Edit {
        /// The plan's trace.
        trace_id: String,
        /// Where traces live.
        #[command(flatten)]
        trace_dir: TraceDirArg,
    },
    /// Write the plan to a file, to reuse it with `agent run --plan FILE <TASK>`.
    Save {
        /// The plan's trace.
        trace_id: String,
        /// The file to write.
        file: PathBuf,
        /// Where traces live.
        #[command(flatten)]
        trace_dir: TraceDirArg,
    },
}

/// `agent mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub(crate) action: McpAction,
}

/// The `agent mcp` commands.
#[derive(Debug, Subcommand)]
pub(crate) enum McpAction {
    /// Connect to each server (disabled ones too), list its tools, report those that fail
    /// (exit code 1).
    List {
        /// Only these servers [default: all configured].
        names: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
