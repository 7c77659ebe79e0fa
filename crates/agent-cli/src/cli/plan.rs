//! The flags of `agent plan`: write a plan, edit it, save it as a template, list templates.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{ModelArgs, TraceDirArg};

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
        /// The plan's trace (an id or a unique prefix of one).
        trace_id: String,
        /// Where traces live.
        #[command(flatten)]
        trace_dir: TraceDirArg,
    },
    /// Save the plan as a template, `.agent/plans/NAME.md` in the workspace, to start runs
    /// from with `agent run --plan NAME`.
    Save {
        /// The plan's trace, by id or unique prefix (any trace: a finished one's plan can be
        /// saved too).
        trace_id: String,
        /// The template's name (letters, digits, `-`, `_`, `.`), or a file to write (a value
        /// with a path separator or ending in `.md` or `.txt`).
        name: String,
        /// What the template is for, shown by `agent plan list`.
        #[arg(long, value_name = "TEXT", default_value = "")]
        description: String,
        /// Replace a template of the same name.
        #[arg(long)]
        force: bool,
        /// The project whose `.agent/plans/` is written [default: the current folder].
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Where traces live.
        #[command(flatten)]
        trace_dir: TraceDirArg,
    },
    /// List the plan templates of the workspace (`.agent/plans/*.md`): name, description,
    /// parameters.
    List {
        /// The project whose `.agent/plans/` is read [default: the current folder].
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}
