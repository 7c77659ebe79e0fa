//! The flags of `agent chat`: a first message, the trace to continue, the line mode, and the
//! model's flags.

use clap::Args;

use super::ModelArgs;

/// `agent chat`.
#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    /// The first message, sent as the session opens.
    #[arg(value_name = "MESSAGE")]
    pub(crate) message: Option<String>,
    /// Continue this trace (an id or a unique prefix of one) instead of starting a new one;
    /// without an id, the newest trace of this project.
    #[arg(
        short = 'c',
        long = "continue",
        value_name = "TRACE_ID",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub(crate) continue_trace: Option<String>,
    /// Continue the newest trace of this project (the same as --continue without an id).
    #[arg(long)]
    pub(crate) last: bool,
    /// Continue a trace chosen from a list of this project's traces (on a terminal), or this
    /// one (an id or a unique prefix of one).
    #[arg(
        short = 'r',
        long = "resume",
        value_name = "TRACE_ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["continue_trace", "last"]
    )]
    pub(crate) resume: Option<String>,
    /// Line mode on a terminal too, instead of the full-screen UI (also `AGENT_TUI=0`).
    #[arg(long)]
    pub(crate) no_tui: bool,
    /// Model, workspace, limits.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}
