//! The flags of the commands that install and configure `agent`: `completions`, `config` and
//! `init` (`man` has none).

use clap::Args;

use super::ModelArgs;

/// `agent completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// `agent config`.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// The flags a run would be given; each setting they name is shown as coming from them.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// `agent init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Replace an agent.toml that is already there.
    #[arg(long)]
    pub(crate) force: bool,
}
