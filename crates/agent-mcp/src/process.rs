//! The child process of a stdio server: started as the leader of its own process group (so
//! killing the group reaches everything it started), with its stderr kept for error messages,
//! its environment without secrets, and in the session's sandbox when it has one: through the
//! sandbox helper like a command (out of the terminal's session, in namespaces of its own where
//! the kernel gives them, so it may create files at the top of the workspace and nothing it
//! starts outlives it), or, without a helper, confined from the thread that starts it.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use rmcp::transport::TokioChildProcess;
use tokio::io::{AsyncBufReadExt, BufReader};

use agent_tools::sandbox::{Confinement, SandboxConfig, SandboxError, SandboxMode, scrubbed_env};

use crate::config::{ServerConfig, expand_env};
use crate::error::McpError;

/// How many lines of a server's stderr are kept for error messages.
const STDERR_LINES: usize = 20;
/// The longest stderr line kept, in bytes.
const STDERR_LINE_BYTES: usize = 500;

/// Starts a stdio server's process in a process group of its own, with stderr captured, in
/// `sandbox` when the session has one (see [`crate::ClientOptions::sandbox`]).
pub(crate) fn spawn(
    name: &str,
    config: &ServerConfig,
    stderr: &StderrTail,
    sandbox: Option<(&SandboxConfig, &Path)>,
) -> Result<(TokioChildProcess, Option<ProcessGroup>), McpError> {
    let program = config.command.clone().unwrap_or_default();
    let start_error = |message: String| McpError::Start {
        server: name.to_owned(),
        message,
        stderr: String::new(),
    };
    let confinement = sandbox
        .map(|(sandbox, workspace)| confinement(name, config, sandbox, workspace))
        .transpose()
        .map_err(|error| start_error(error.to_string()))?;
    let helper = confinement
        .as_ref()
        .filter(|confinement| confinement.mode != SandboxMode::Off)
        .and_then(Confinement::helper_command);
    let mut command = match &helper {
        Some((helper, args)) => {
            let mut command = tokio::process::Command::new(helper);
            command.args(args).arg(&program);
            command
        }
        None => tokio::process::Command::new(&program),
    };
    command
        .args(&config.args)
        .process_group(0)
        .kill_on_drop(helper.is_none());
    // Without a secret of the agent's, in every mode: a server gets what its `env` names.
    let env = match &confinement {
        Some(confinement) => confinement.env.clone(),
        None => scrubbed_env(&SandboxConfig::default(), std::env::vars_os()),
    };
    command
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)));
    for (key, value) in &config.env {
        command.env(key, expand_env(name, value)?);
    }
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    let start = || {
        TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
    };
    let started = match &confinement {
        Some(confinement) if confinement.mode != SandboxMode::Off && helper.is_none() => {
            let runtime = tokio::runtime::Handle::current();
            confinement
                .start_confined(move || {
                    let _runtime = runtime.enter();
                    start()
                })
                .map_err(|error| start_error(error.to_string()))?
        }
        _ => start(),
    };
    let (transport, pipe) =
        started.map_err(|error| start_error(format!("cannot run {program:?}: {error}")))?;
    let group = transport.id().map(|pid| ProcessGroup {
        pid,
        helper: helper.is_some(),
        run: confinement.as_ref().map(|_| temp_name(name)),
        confinement: confinement.filter(|_| helper.is_some()),
    });
    if let Some(pipe) = pipe {
        stderr.follow(name, pipe);
    }
    Ok((transport, group))
}

/// The confinement of the server `name`: its own mode or the session's, the network unless it
/// says `network = false`, through the session's helper when it has one. A protected name
/// missing from the workspace that the server creates is taken away when it stops.
fn confinement(
    name: &str,
    config: &ServerConfig,
    sandbox: &SandboxConfig,
    workspace: &Path,
) -> Result<Confinement, SandboxError> {
    let settings = SandboxConfig {
        mode: config.sandbox.unwrap_or(sandbox.mode),
        network: config.network.unwrap_or(true),
        ..sandbox.clone()
    };
    let workspace = workspace
        .canonicalize()
        .map_err(|e| SandboxError::Setup(format!("{}: {e}", workspace.display())))?;
    let mut confinement = Confinement::prepare(&settings, &workspace, &temp_name(name))?;
    if confinement.mode == SandboxMode::Off {
        // Unconfined, still without the agent's secrets.
        confinement.env = scrubbed_env(&settings, std::env::vars_os());
    }
    Ok(confinement)
}

/// The name of the private temporary folder of the server `name` in this process.
fn temp_name(name: &str) -> String {
    format!("mcp-{name}-{}", std::process::id())
}

/// The process group of a child started as its leader; killed when dropped. A server started
/// through the sandbox helper is stopped by asking the helper (`SIGTERM`), which kills
/// everything the server started, and the protected names it created are taken away.
pub(crate) struct ProcessGroup {
    pub(crate) pid: u32,
    helper: bool,
    confinement: Option<Confinement>,
    /// The name of the server's private temporary folder, removed with it.
    run: Option<String>,
}

impl ProcessGroup {
    pub(crate) fn kill(&self) {
        let Ok(pid) = i32::try_from(self.pid).map(Pid::from_raw) else {
            return;
        };
        // The group is gone already when the server exited by itself: nothing to do.
        if self.helper {
            let _ = kill(pid, Signal::SIGTERM);
        } else {
            let _ = killpg(pid, Signal::SIGKILL);
        }
    }
}

impl ProcessGroup {
    /// Takes away the protected names the server created in the workspace (missing when it
    /// started, or below the top of the workspace).
    pub(crate) fn take_created(&self) {
        if let Some(confinement) = &self.confinement {
            for path in confinement.remove_created() {
                tracing::warn!(
                    "an MCP server created {}, which is protected: taken away",
                    path.display()
                );
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
        self.take_created();
        if let Some(run) = &self.run {
            agent_tools::sandbox::remove_run_temp_dir(run);
        }
    }
}

/// The last lines a child wrote to stderr; every line is also logged at debug level.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    pub(crate) fn follow(&self, server: &str, pipe: tokio::process::ChildStderr) {
        let tail = self.clone();
        let server = server.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(mut line)) = lines.next_line().await {
                tracing::debug!(server = %server, "stderr: {line}");
                if line.len() > STDERR_LINE_BYTES {
                    let mut end = STDERR_LINE_BYTES;
                    while !line.is_char_boundary(end) {
                        end -= 1;
                    }
                    line.truncate(end);
                    line.push('…');
                }
                let mut kept = tail.0.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
    }

    pub(crate) fn text(&self) -> String {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter().map(|line| format!("{line}\n")).collect()
    }
}
