//! The `[[hooks.EVENT]]` tables of `agent.toml`, as written; [`crate::hooks`] checks and runs
//! them.

use serde::Deserialize;

/// One `[[hooks.EVENT]]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// A regex on the tool's name (tool events only); every tool when left out, empty or `*`.
    pub matcher: Option<String>,
    /// The command, run with `sh -c`.
    pub command: Option<String>,
    /// Seconds before it is killed.
    pub timeout: Option<u64>,
    /// Claude Code's shape: the commands of this matcher.
    #[serde(default)]
    pub hooks: Vec<HookCommand>,
}

/// A command in Claude Code's shape of a hook table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookCommand {
    /// `command` (the only type).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The command.
    pub command: String,
    /// Seconds before it is killed.
    pub timeout: Option<u64>,
}
