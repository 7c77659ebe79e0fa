//! The `agent plugin` commands: install, list, enable, disable and remove plugins.

use clap::{Args, Subcommand};

/// `agent plugin`.
#[derive(Debug, Args)]
pub(crate) struct PluginArgs {
    /// What to do.
    #[command(subcommand)]
    pub(crate) action: PluginAction,
}

/// The `agent plugin` commands.
#[derive(Debug, Subcommand)]
pub(crate) enum PluginAction {
    /// Install a plugin from a folder or a git URL (Claude Code's layout:
    /// `.claude-plugin/plugin.json`, `skills/`, `commands/`).
    Add {
        /// The plugin's folder, or a git URL.
        source: String,
    },
    /// The installed plugins.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Use a disabled plugin again.
    Enable {
        /// The plugin's name.
        name: String,
    },
    /// Stop using a plugin without removing it.
    Disable {
        /// The plugin's name.
        name: String,
    },
    /// Remove a plugin.
    Remove {
        /// The plugin's name.
        name: String,
    },
}
