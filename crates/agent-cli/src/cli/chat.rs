//! The flags of `agent chat`: the trace to continue, the line mode, and the model's flags.

use clap::Args;

use super::ModelArgs;

/// `agent chat`.
#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    /// Continue this trace (an id or a unique prefix of one) instead of starting a new one;
    /// with --last and no id, the newest trace of the folder.
    #[arg(
        long = "continue",
        value_name = "TRACE_ID",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub(crate) continue_trace: Option<String>,
    /// With --continue: continue the newest main trace of the trace folder.
    #[arg(long, requires = "continue_trace")]
    pub(crate) last: bool,
    /// Line mode on a terminal too, instead of the full-screen UI (also `AGENT_TUI=0`).
    #[arg(long)]
    pub(crate) no_tui: bool,
    /// Model, workspace, limits.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}
