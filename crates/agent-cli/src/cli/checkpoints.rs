//! The flags of `agent rewind` and `agent diff`, which read the checkpoints kept in a trace's
//! folder.

use clap::Args;

use super::TraceDirArg;

/// `agent rewind`.
#[derive(Debug, Args)]
pub(crate) struct RewindArgs {
    /// The trace (an id or a unique prefix of one).
    #[arg(value_name = "TRACE_ID")]
    pub(crate) trace_id: String,
    /// The goal (its display number, e.g. `2.1`) whose start the files go back to.
    #[arg(long, value_name = "N")]
    pub(crate) goal: String,
    /// Put the files back without forking the conversation.
    #[arg(long)]
    pub(crate) files_only: bool,
    /// Only list what would change (A added, M modified, D deleted).
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Overwrite files changed since the run's last checkpoint too.
    #[arg(long)]
    pub(crate) force: bool,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}

/// `agent diff`.
#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The trace (an id or a unique prefix of one).
    #[arg(value_name = "TRACE_ID")]
    pub(crate) trace_id: String,
    /// The goal (its display number) whose changes to show, from its start to its end (or to
    /// now when it has not ended); without it, the run's from its start to now.
    #[arg(long, value_name = "N")]
    pub(crate) goal: Option<String>,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
}
