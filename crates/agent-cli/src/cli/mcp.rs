//! The `agent mcp` commands: servers, their sign-in, prompts and resources.

use clap::{Args, Subcommand};

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
    /// Sign in to an HTTP server that asks for OAuth: opens the browser (and prints the
    /// address) and keeps the token in the user's config folder.
    Login {
        /// The server, as named in agent.toml.
        name: String,
    },
    /// Forget the token of a server signed in to.
    Logout {
        /// The server, as named in agent.toml.
        name: String,
    },
    /// Connect to each server (disabled ones too) and list its prompts, as the `agent chat`
    /// commands they are: `/mcp__SERVER__PROMPT key=value ...`.
    Prompts {
        /// Only these servers [default: all configured].
        names: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Connect to each server (disabled ones too) and list its resources: URI, name, type.
    Resources {
        /// Only these servers [default: all configured].
        names: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print a resource of a server: its text (binary contents are described, not printed).
    Read {
        /// The server, as named in agent.toml.
        name: String,
        /// The resource's URI, as `agent mcp resources` lists it.
        uri: String,
        /// Print the server's answer as JSON (binary contents in base64).
        #[arg(long)]
        json: bool,
    },
}
