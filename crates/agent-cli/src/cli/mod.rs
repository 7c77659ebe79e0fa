//! The command line: commands, flags and their environment variables.
//!
//! The command names and flags are a Contract: scripts outside the project use them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod bare;
mod chat;
mod checkpoints;
mod configure;
mod mcp;
mod model;
mod plan;
mod plugin;
mod serve;

pub(crate) use bare::BareArgs;
pub(crate) use chat::ChatArgs;
pub(crate) use checkpoints::{DiffArgs, RewindArgs};
pub(crate) use configure::{CompletionsArgs, ConfigArgs, InitArgs};
pub(crate) use mcp::{McpAction, McpArgs};
pub(crate) use model::{ModelArgs, OutputFormat, ProviderArgs};
pub(crate) use plan::{PlanAction, PlanArgs};
pub(crate) use plugin::{PluginAction, PluginArgs};
pub(crate) use serve::ServeArgs;

/// An LLM agent runtime with goal trees, precise compaction and durable traces.
#[derive(Debug, Parser)]
#[command(
    name = "agent",
    version,
    about,
    long_about = None,
    propagate_version = true
)]
pub(crate) struct Cli {
    /// More log output (repeat for more); `RUST_LOG` takes precedence.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// Colours: `auto` (on a terminal, unless NO_COLOR is set), `always` or `never`.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub(crate) color: crate::output::ColorChoice,

    /// The sandbox of the model's commands: `workspace-write` (the default: writes only in the
    /// workspace and a private temporary folder, no network), `read-only`, or `off` (full
    /// access). Overrides agent.toml's `sandbox`.
    #[arg(long, global = true, value_name = "MODE", env = "AGENT_SANDBOX")]
    pub(crate) sandbox: Option<agent_tools::SandboxMode>,

    /// What to do [default: a chat, as the flags below say].
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    /// Without a command: a chat, or a headless run.
    #[command(flatten)]
    pub(crate) bare: BareArgs,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a task to the end and print the final answer.
    Run(RunArgs),
    /// An interactive session: each line is a user turn of one trace, shown as it runs.
    Chat(ChatArgs),
    /// Run a realistic task offline with a built-in scripted model, then serve the viewer.
    Demo(DemoArgs),
    /// Serve the HTTP API and the trace viewer.
    Serve(ServeArgs),
    /// Execute the runs queued in a PostgreSQL store, beside any number of servers and workers.
    Worker(WorkerArgs),
    /// Copy traces, events included, from one store to another (e.g. a folder into PostgreSQL).
    Import(ImportArgs),
    /// List traces, newest first.
    Traces(TracesArgs),
    /// Show a trace as a tree: goals, their messages, sub-traces.
    Show(ShowArgs),
    /// Continue a stopped trace (crash, limit, cancel) under the same id.
    Resume(ResumeArgs),
    /// Fork a trace just before a goal started (or after a message) into a new trace that can
    /// be continued another way; the original is untouched.
    Fork(ForkArgs),
    /// Put the workspace's files back as they were when a goal started, and fork the trace
    /// there.
    Rewind(RewindArgs),
    /// Show the file changes of a goal (or of the run) as a unified diff.
    Diff(DiffArgs),
    /// Cancel a run going on in a server (`agent serve` or `agent run --serve`).
    Cancel(CancelArgs),
    /// Plan mode: the model writes the goal tree only; edit it, save it, run it.
    Plan(PlanArgs),
    /// MCP servers (`[mcp.servers.NAME]` in agent.toml): list them and their tools.
    Mcp(McpArgs),
    /// Agent profiles (built in, `[agents.NAME]` in agent.toml, `.agent/agents/NAME.md`): list
    /// them.
    Agents(AgentsArgs),
    /// Agent Skills (`SKILL.md` folders in `.agent/skills/`, `.claude/skills/`,
    /// `.agents/skills/` and the user's `skills/`): list them and where each came from.
    Skills(AgentsArgs),
    /// Custom commands (`.agent/commands/NAME.md`, `.claude/commands/NAME.md` and the user's
    /// `commands/`), run as `/NAME args`: list them and where each came from.
    Commands(AgentsArgs),
    /// Accept this folder's agent.toml as it is now, so that its hooks run (a changed file
    /// must be accepted again).
    Trust(TrustArgs),
    /// Plugins (skills and commands bundled in a folder): add, list, enable, disable, remove.
    Plugin(PluginArgs),
    /// Send a stored trace elsewhere: its spans to an OpenTelemetry receiver (`--otlp`).
    Export(ExportArgs),
    /// Serve an editor over the Agent Client Protocol on stdin/stdout (Zed, JetBrains,
    /// Neovim): sessions are traces, the goal tree is the plan.
    #[cfg(feature = "acp")]
    Acp(AcpArgs),
    /// Print a shell's completion script for `agent` (e.g. `agent completions bash >
    /// ~/.local/share/bash-completion/completions/agent`).
    Completions(CompletionsArgs),
    /// Print the manual page of `agent` (roff; e.g. `agent man | man -l -`).
    Man,
    /// Print the settings a run here would use, and where each comes from.
    Config(ConfigArgs),
    /// Write a commented agent.toml in the current folder.
    Init(InitArgs),
}

/// `agent export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The trace (an id or a unique prefix of one).
    #[arg(value_name = "TRACE_ID")]
    pub(crate) trace_id: String,
    /// As OpenTelemetry spans (GenAI conventions) over OTLP/HTTP.
    #[arg(long)]
    pub(crate) otlp: bool,
    /// The OTLP/HTTP receiver, e.g. http://localhost:4318 [default: OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long, value_name = "URL")]
    pub(crate) otel: Option<String>,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent acp`.
#[cfg(feature = "acp")]
#[derive(Debug, Args)]
pub(crate) struct AcpArgs {
    /// Model, limits and MCP servers for every session; each session works in the folder the
    /// editor names.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// Where traces live; every command takes it.
#[derive(Debug, Clone, Args)]
pub(crate) struct TraceDirArg {
    /// The folder traces are stored in [default: agent.toml's trace_dir, else the project's
    /// .trace folder when it has one, else the project's folder in
    /// $XDG_DATA_HOME/agent/traces].
    #[arg(long, env = "AGENT_TRACE_DIR", value_name = "DIR")]
    pub(crate) trace_dir: Option<PathBuf>,
    /// Where traces are stored: a folder (a path or file://PATH) or a PostgreSQL database
    /// (postgres://USER@HOST:PORT/DB); wins over --trace-dir.
    #[arg(long, env = "AGENT_STORE", value_name = "LOCATION")]
    pub(crate) store: Option<String>,
}

/// `agent run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The task; `-` reads it from standard input. Not needed with --trace or --task-file, nor
    /// with --plan when the template has a mission. With --continue: the next user message.
    #[arg(required_unless_present_any = ["trace", "task_file", "plan", "continue_trace", "last"])]
    pub(crate) task: Option<String>,
    /// Read the task (with --continue: the next message) from this file (`-`: standard input).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["task", "trace"])]
    pub(crate) task_file: Option<PathBuf>,
    /// Attach this picture (PNG, JPEG, GIF or WebP) to the task (repeatable); `@path.png` in
    /// the task attaches one from the workspace too. The model must take images.
    #[arg(
        long = "image",
        value_name = "FILE",
        conflicts_with_all = ["trace", "plan", "continue_trace", "last"]
    )]
    pub(crate) images: Vec<PathBuf>,
    /// Continue this ended trace (completed, failed or cancelled; an id or a unique prefix of
    /// one) with TASK as its next user message, under the same id. Without an id, or with one
    /// value and no TASK (`agent run -c "next message"`), the newest trace of this project.
    #[arg(
        short = 'c',
        long = "continue",
        value_name = "TRACE_ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["trace", "plan"]
    )]
    pub(crate) continue_trace: Option<String>,
    /// Continue the newest trace of this project (the same as --continue without an id).
    #[arg(long, conflicts_with_all = ["trace", "plan"])]
    pub(crate) last: bool,
    /// Headless: print only the final answer on stdout, no progress and no closing line (errors
    /// still go to stderr).
    #[arg(short = 'p', long, conflicts_with_all = ["json", "output_format"])]
    pub(crate) print: bool,
    /// Execute the plan stored in this trace (made by `agent plan`, possibly edited).
    #[arg(long, value_name = "TRACE_ID", conflicts_with_all = ["task", "plan"])]
    pub(crate) trace: Option<String>,
    /// Start from a plan template instead of an empty goal tree: the name of one in
    /// `.agent/plans/` of the workspace (`agent plan save`, `agent plan list`), or a file (a
    /// value with a path separator or ending in `.md` or `.txt`). Its mission is the task
    /// unless TASK is given.
    #[arg(long, value_name = "NAME|FILE")]
    pub(crate) plan: Option<String>,
    /// A value for a parameter of the --plan template, filling `{{KEY}}` in its mission and
    /// goals (repeatable; overrides the template's default).
    #[arg(long = "var", value_name = "KEY=VALUE", requires = "plan")]
    pub(crate) vars: Vec<String>,
    /// Model, workspace, limits and output.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// `agent resume`.
#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The trace to continue (an id or a unique prefix of one) [default: chosen from a list of
    /// this project's traces, on a terminal].
    pub(crate) trace_id: Option<String>,
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

/// `agent import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The store to copy from: a trace folder (a path or file://PATH) or a postgres:// URL.
    #[arg(long, value_name = "LOCATION")]
    pub(crate) from: String,
    /// The store to copy into.
    #[arg(long, value_name = "LOCATION")]
    pub(crate) to: String,
    /// Copy only these traces (ids or unique prefixes) and their sub-traces [default: all].
    #[arg(value_name = "TRACE_ID")]
    pub(crate) traces: Vec<String>,
}

/// `agent worker`.
#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// The store whose queued runs to execute: a postgres:// URL.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
    /// The model and workspace runs execute with (credentials stay with the worker).
    #[command(flatten)]
    pub(crate) model: ServeModelArgs,
    /// How the worker works.
    #[command(flatten)]
    pub(crate) work: WorkOptions,
}

/// How a worker claims and keeps runs.
#[derive(Debug, Clone, Args)]
pub(crate) struct WorkOptions {
    /// How many runs to execute at once.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub(crate) concurrency: u32,
    /// Seconds a claimed run stays this worker's without a heartbeat (heartbeats come every
    /// third of it); a run whose worker died is taken over once it runs out.
    #[arg(long, env = "AGENT_WORKER_LEASE", value_name = "SECONDS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) lease: u64,
}

/// The model options of `agent serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeModelArgs {
    /// The provider and its settings.
    #[command(flatten)]
    pub(crate) llm: ProviderArgs,
    /// The folder runs work in when a request names none; with --workspace-root it must lie
    /// under one of them [default: the current folder].
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// A folder runs started over HTTP may work in, with every folder under it (repeatable);
    /// a request's `workspace` outside all of them is refused [default: --workspace, that is
    /// the current folder unless it is given].
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub(crate) workspace_roots: Vec<PathBuf>,
    /// How runs started over HTTP treat risky tool calls (shell, writes, MCP tools not marked
    /// read-only). A request may ask for a stricter mode, not a looser one.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ServeApproval::Ask)]
    pub(crate) approval: ServeApproval,
    /// Leave the instruction files (AGENTS.md, CLAUDE.md, ~/.config/agent/AGENTS.md) and the
    /// environment block out of the system prompt of runs started over HTTP.
    #[arg(long)]
    pub(crate) no_instructions: bool,
    /// Runs started over HTTP end without a closing report.
    #[arg(long)]
    pub(crate) no_report: bool,
    /// Send each run's spans (OpenTelemetry) to this OTLP/HTTP receiver when it ends
    /// [default: OTEL_EXPORTER_OTLP_ENDPOINT, else none].
    #[arg(long, value_name = "URL")]
    pub(crate) otel: Option<String>,
}

/// `agent serve --approval`: how runs started over HTTP treat risky tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ServeApproval {
    /// Each risky call waits for `POST /api/traces/{id}/approvals/{tool_call_id}` (the viewer
    /// shows them).
    Ask,
    /// Risky calls run without asking.
    Auto,
    /// Risky calls are refused; the model is told why.
    Never,
}

impl From<ServeApproval> for agent_api::ApprovalMode {
    fn from(mode: ServeApproval) -> Self {
        match mode {
            ServeApproval::Ask => Self::Ask,
            ServeApproval::Auto => Self::Auto,
            ServeApproval::Never => Self::Never,
        }
    }
}

/// `agent trust`.
#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// Accept without asking.
    #[arg(long)]
    pub(crate) yes: bool,
}

/// `agent agents` and `agent skills`.
#[derive(Debug, Args)]
pub(crate) struct AgentsArgs {
    /// The project whose `.agent/` folder is read [default: the current folder].
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
    /// Also the traces that failed before the model answered anything (a wrong key or model
    /// name), hidden by default.
    #[arg(long)]
    pub(crate) all: bool,
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
    /// The trace whose run to cancel (an id or a unique prefix of one, looked up on the server).
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
