//! The flags of `agent serve`: where it listens, who may connect and how many at once, the
//! traces it serves and the model of the runs started over HTTP.

use clap::Args;

use super::{ServeModelArgs, TraceDirArg, WorkOptions};

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
    /// The most connections open at once, WebSockets included; at the cap the idlest one is
    /// closed for a new one [default: agent.toml's `[serve] max_connections`, else 512].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub(crate) max_connections: Option<u32>,
    /// Seconds a client has to send a request head; a connection with no request is closed
    /// after as long [default: agent.toml's `[serve] header_timeout`, else 10].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) header_timeout: Option<u64>,
    /// Where traces live.
    #[command(flatten)]
    pub(crate) trace_dir: TraceDirArg,
    /// The model used for runs started over HTTP (optional: without one the server is read-only).
    #[command(flatten)]
    pub(crate) model: ServeModelArgs,
    /// With a PostgreSQL store, also execute queued runs here, as `agent worker` does (runs
    /// started on any node are queued; without --worker this node only queues them).
    #[arg(long)]
    pub(crate) worker: bool,
    /// How the worker works (with --worker).
    #[command(flatten)]
    pub(crate) work: WorkOptions,
}
