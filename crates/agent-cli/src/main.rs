//! The `agent` command: the composition root that wires the filesystem store, a model provider,
//! the runner and the HTTP server together.
//!
//! `agent` alone on a terminal opens a chat in the full-screen UI; without a command, `-c`,
//! `-r [ID]`, `-m MODEL` and a first message open one too, and `-p` runs headless. Commands: `run`, `chat`,
//! `demo`, `serve`, `traces`, `show`, `resume`, `fork`, `rewind`, `diff`, `cancel`, `plan`,
//! `mcp`, `agents`, `export`, `acp`, `completions`, `man`, `config`, `init`. Exit codes: 0
//! completed, 1 failed, 2 usage or configuration error, 3 limit hit, 4 answer cut off at the model's
//! length limit, 130 cancelled.

#[cfg(feature = "acp")]
mod acp;
mod agents;
mod approve;
mod cancel;
mod chat;
mod cli;
mod demo;
mod elicit;
mod elicit_http;
mod elicit_tui;
mod exit;
mod extend;
mod failure;
mod fork;
mod hardening;
mod ids;
mod import;
mod inspect;
mod install;
mod logs;
mod markdown;
mod mcp;
mod mcp_catalog;
mod mcp_command;
mod mcp_mentions;
mod notices;
mod otel;
mod output;
mod pick;
mod plan;
mod progress;
mod reasoning;
mod rewind;
mod rollback;
mod run;
mod serve;
mod settings;
mod setup;
mod task;
mod tui;
mod tui_mcp;
mod worker;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::{ExitCode, UsageError};

fn main() -> std::process::ExitCode {
    // Started as the sandbox helper of a command: becomes the command, before any thread starts.
    agent_tools::sandbox::run_helper_if_requested();
    // No key on the command line, no other process of the user reading this one's memory.
    hardening::harden();
    // `agent` alone on a terminal is a chat in the full-screen UI; with text piped in, that text
    // is the task of a headless run (`-p`). Otherwise it is the help (on stderr, exit 2, as for
    // any usage error).
    let piped = piped_in();
    let cli = match (std::env::args_os().len() == 1, tui::wanted(false)) {
        (true, true) => Cli::parse_from(["agent", "chat"]),
        (true, false) if piped => Cli::parse_from(["agent", "-p"]),
        (true, false) => {
            let help = <Cli as clap::CommandFactory>::command().render_help();
            output::note(help.to_string().trim_end());
            return ExitCode::Usage.into();
        }
        (false, _) => Cli::parse(),
    };
    output::set_color(cli.color);
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            output::note(&format!("agent: cannot start the async runtime: {error}"));
            return ExitCode::Failed.into();
        }
    };
    // Without a command, the flags say a chat or a headless run.
    let alone = std::env::args_os().len() == 2;
    let command = match cli.command {
        Some(command) => Ok(command),
        None => cli
            .bare
            .into_command(alone, piped)
            .map_err(anyhow::Error::from),
    };
    let result = runtime.block_on(async { dispatch(command?, cli.sandbox).await });
    // Tools may leave blocking reads behind (e.g. a terminal prompt); do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(code) => code.into(),
        Err(error) => {
            output::note(&format!("agent: {error:#}"));
            let usage = error
                .downcast_ref::<agent_app::Error>()
                .is_some_and(agent_app::Error::is_usage);
            if usage || error.downcast_ref::<UsageError>().is_some() {
                ExitCode::Usage.into()
            } else {
                ExitCode::Failed.into()
            }
        }
    }
}

/// Whether text is piped or redirected into standard input (a pipe, a file, a socket), rather
/// than a terminal or nothing (`/dev/null`, a closed input).
fn piped_in() -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata("/dev/stdin").is_ok_and(|meta| {
        let kind = meta.file_type();
        kind.is_fifo() || kind.is_file() || kind.is_socket()
    })
}

/// Runs `command`; the commands that run the model's tools get the global `--sandbox`.
async fn dispatch(
    command: Command,
    sandbox: Option<agent_tools::SandboxMode>,
) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(args, sandbox).await,
        Command::Chat(args) => chat::chat(args, sandbox).await,
        Command::Resume(args) => run::resume(args, sandbox).await,
        Command::Demo(args) => demo::demo(args, sandbox).await,
        Command::Serve(args) => serve::serve(args, sandbox).await,
        Command::Worker(args) => worker::worker(args, sandbox).await,
        Command::Import(args) => import::import(args).await,
        Command::Traces(args) => inspect::traces(args).await,
        Command::Show(args) => inspect::show(args).await,
        Command::Cancel(args) => cancel::cancel(args).await,
        Command::Fork(args) => fork::command(args).await,
        Command::Rewind(args) => rewind::rewind(args).await,
        Command::Diff(args) => rewind::diff(args).await,
        Command::Plan(args) => plan::command(args, sandbox).await,
        Command::Mcp(args) => mcp_command::command(args).await,
        Command::Agents(args) => agents::command(args).await,
        Command::Skills(args) => extend::skills(args),
        Command::Commands(args) => extend::commands(args),
        Command::Trust(args) => extend::trust(&args),
        Command::Plugin(args) => extend::plugin(args),
        Command::Export(args) => otel::export(args).await,
        #[cfg(feature = "acp")]
        Command::Acp(args) => acp::acp(args, sandbox).await,
        Command::Completions(args) => install::completions(&args),
        Command::Man => install::man(),
        Command::Config(args) => install::config(&args),
        Command::Init(args) => install::init(&args),
    }
}

/// Logs go to stderr through `tracing` (to a log file while the full-screen UI is up, see
/// `logs`): warnings by default, more with `-v`, or as `RUST_LOG`
/// says. `NO_COLOR` turns colours off. Without `-v` or `RUST_LOG`, what the model clients say
/// while working around a server (a retry, streaming turned off) is one plain line each.
fn init_logging(verbose: u8) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let plain_notices = verbose == 0 && std::env::var_os("RUST_LOG").is_none();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        let notices = if plain_notices {
            ",agent_llm::notice=off"
        } else {
            ""
        };
        tracing_subscriber::EnvFilter::new(format!("{default}{notices}"))
    });
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(|| LogLine(Vec::new()))
        .with_ansi(output::color(true))
        .with_filter(filter);
    let notices = plain_notices.then(|| notices::Notices::layer(|line| drop(LogLine(line))));
    let _ = tracing_subscriber::registry()
        .with(logs)
        .with(notices)
        .try_init();
}

/// One log record, written to stderr whole when it is complete, above the run's spinner (so
/// log lines leave no spinner debris).
struct LogLine(Vec<u8>);

impl std::io::Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        // In the log file of the full-screen UI, without colours.
        if logs::redirected() {
            let line = console::strip_ansi_codes(&String::from_utf8_lossy(&self.0)).into_owned();
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            return;
        }
        output::suspended(|| {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), &self.0);
        });
    }
}
