//! One background shell: its process, what it printed (a backlog not yet read, and the whole log
//! for the trace), and how it ended.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{ShellLog, ShellState, ShellStatus};
use crate::ToolError;
use crate::output::CappedBuffer;
use crate::process::spawn;
use crate::sandbox::Confinement;

/// The most unread output kept; older unread output is dropped (and counted) past it.
const BACKLOG_CAP: usize = 1024 * 1024;
/// The most of the whole output kept for the trace (its first and last halves).
const LOG_CAP: usize = 1024 * 1024;
/// How long a shell asked to stop may take before its helper is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the output pipes may stay open after the command ended.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// What a shell printed.
#[derive(Debug)]
struct Output {
    /// Printed since the last read.
    backlog: Vec<u8>,
    /// Unread bytes dropped because the backlog was full.
    dropped: u64,
    /// Everything, capped.
    log: CappedBuffer,
    /// Bytes printed in all.
    total: u64,
}

impl Output {
    fn new() -> Self {
        Self {
            backlog: Vec::new(),
            dropped: 0,
            log: CappedBuffer::new(LOG_CAP),
            total: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.log.push(bytes);
        self.backlog.extend_from_slice(bytes);
        if self.backlog.len() > BACKLOG_CAP {
            let excess = self.backlog.len() - BACKLOG_CAP;
            self.backlog.drain(..excess);
            self.dropped += excess as u64;
        }
    }
}

fn lock(output: &Mutex<Output>) -> MutexGuard<'_, Output> {
    output.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A background shell.
#[derive(Debug)]
pub(crate) struct Shell {
    pub(crate) id: String,
    pub(crate) trace_id: String,
    pub(crate) command: String,
    started_at: String,
    output: Arc<Mutex<Output>>,
    state: watch::Receiver<ShellState>,
    stop: CancellationToken,
}

/// What a read of a shell's output returns.
pub(crate) struct Read {
    /// The new output, as text.
    pub(crate) text: String,
    /// Unread bytes dropped since the last read.
    pub(crate) dropped: u64,
    /// The shell as it is now.
    pub(crate) status: ShellStatus,
}

impl Shell {
    /// Starts `command` in `root` as `confinement` says and returns at once; the shell then
    /// runs until it ends, is killed, or its run ends.
    pub(crate) async fn start(
        id: String,
        trace_id: &str,
        command: &str,
        root: &Path,
        confinement: Confinement,
    ) -> Result<Arc<Self>, ToolError> {
        let (mut child, group) = spawn(&confinement, command, root).await?;
        let output = Arc::new(Mutex::new(Output::new()));
        let pumps: Vec<JoinHandle<()>> = [
            child.stdout.take().map(|pipe| pump(pipe, output.clone())),
            child.stderr.take().map(|pipe| pump(pipe, output.clone())),
        ]
        .into_iter()
        .flatten()
        .collect();
        let (state_tx, state) = watch::channel(ShellState::Running);
        let stop = CancellationToken::new();
        let stopping = stop.clone();
        let written = output.clone();
        // Never written to: without the helper, the group's watcher sees it close when the agent
        // exits; it stays open as long as the shell may run.
        let lifeline = child.stdin.take();
        tokio::spawn(async move {
            let _lifeline = lifeline;
            let ended = tokio::select! {
                status = child.wait() => Some(status),
                () = stopping.cancelled() => None,
            };
            // Whatever it left running goes with it.
            group.kill();
            let state = match ended {
                Some(status) => state_of(status),
                None => {
                    if tokio::time::timeout(STOP_TIMEOUT, child.wait())
                        .await
                        .is_err()
                    {
                        group.kill_now();
                        let _ = tokio::time::timeout(DRAIN_TIMEOUT, child.wait()).await;
                    }
                    ShellState::Killed { signal: None }
                }
            };
            for pump in pumps {
                let abort = pump.abort_handle();
                if tokio::time::timeout(DRAIN_TIMEOUT, pump).await.is_err() {
                    abort.abort();
                }
            }
            for path in confinement.remove_created() {
                let note = format!(
                    "note: the sandbox took away {}, which commands may not create (it is \
                     protected)\n",
                    path.display()
                );
                lock(&written).push(note.as_bytes());
            }
            let _ = state_tx.send(state);
        });
        Ok(Arc::new(Self {
            id,
            trace_id: trace_id.to_owned(),
            command: command.to_owned(),
            started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            output,
            state,
            stop,
        }))
    }

    /// The shell as it is now.
    pub(crate) fn status(&self) -> ShellStatus {
        ShellStatus {
            id: self.id.clone(),
            trace_id: self.trace_id.clone(),
            command: self.command.clone(),
            state: self.state.borrow().clone(),
            output_bytes: lock(&self.output).total,
            started_at: self.started_at.clone(),
        }
    }

    /// Whether it printed something not read yet, or has ended.
    pub(crate) fn has_news(&self) -> bool {
        self.state.borrow().ended() || !lock(&self.output).backlog.is_empty()
    }

    /// Takes what it printed since the last read. The state is read first, so output printed
    /// before an end that the read reports is in the text.
    pub(crate) fn read(&self) -> Read {
        let state = self.state.borrow().clone();
        let mut output = lock(&self.output);
        let text = String::from_utf8_lossy(&std::mem::take(&mut output.backlog)).into_owned();
        let dropped = std::mem::take(&mut output.dropped);
        let total = output.total;
        drop(output);
        Read {
            text,
            dropped,
            status: ShellStatus {
                state,
                output_bytes: total,
                ..self.status()
            },
        }
    }

    /// Asks the shell to stop: its helper (or process group) is signalled and everything it
    /// started dies; [`ended`](Self::ended) says when.
    pub(crate) fn kill(&self) {
        self.stop.cancel();
    }

    /// Waits for the shell to end.
    pub(crate) async fn ended(&self) {
        let mut state = self.state.clone();
        let _ = state.wait_for(ShellState::ended).await;
    }

    /// Everything it printed, for the trace.
    pub(crate) fn log(&self) -> ShellLog {
        ShellLog {
            status: self.status(),
            output: lock(&self.output).log.render(),
        }
    }
}

fn state_of(status: std::io::Result<ExitStatus>) -> ShellState {
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => ShellState::Exited { code },
            (None, signal) => ShellState::Killed { signal },
        },
        Err(error) => ShellState::Failed {
            error: error.to_string(),
        },
    }
}

/// Copies a pipe into the shell's output until it closes.
fn pump(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    output: Arc<Mutex<Output>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
            lock(&output).push(&chunk[..n]);
        }
    })
}
