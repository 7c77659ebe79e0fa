//! The `bash` tool: a shell command in the workspace, with a timeout, of which nothing outlives
//! the call.
//!
//! The command runs as `bash -c <command>` with stdin closed, inside the sandbox of
//! [`SandboxConfig`] (see [`crate::sandbox`]). A confined command starts through the sandbox
//! helper when there is one: in a session of its own without a terminal and, with namespaces, in
//! a PID namespace of its own, so when it finishes, times out or is cancelled everything it
//! started dies with it, however it detached (`setsid`, a double fork, `setpgid`). Without the
//! helper (and with the sandbox off) it runs in its own process group, which is killed with
//! `SIGKILL` then.
//!
//! A failed command that looks refused by the sandbox is asked about when the embedder gave a
//! [`RerunApprover`] ([`BashTool::with_rerun`]): on yes it runs once more without the sandbox
//! (its environment still without secrets), on no the model gets the refusal and the answer.
//!
//! The command also dies with the agent, even one killed with `SIGKILL`: the helper notices that
//! its parent is gone; without it, the group's first shell starts a watcher that reads a pipe
//! only the agent holds the other end of, and kills the group when the pipe closes, which the
//! kernel does when the agent exits however it exits.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

use super::approval::{RerunApprover, RerunRequest};
use super::output::CappedBuffer;
use super::path::canonical_workspace;
use super::process::spawn;
use super::sandbox::{Confinement, SandboxConfig, SandboxMode};
use super::shells;
use super::{
    CommandRunner, Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutcome,
    ToolOutput, TypedTool,
};

mod runner;

/// How much longer than the command's own timeout the registry waits before abandoning the call.
const REGISTRY_GRACE: Duration = Duration::from_secs(5);
/// How long to wait for the output pipes to close after the process group was killed.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a sandbox helper asked to stop a command may take before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the question whether to run a refused command without the sandbox waits for an
/// answer before it counts as no.
const QUESTION_WAIT: Duration = Duration::from_secs(600);

/// `bash(command, timeout_secs?)`: runs a shell command in the workspace, in a sandbox.
///
/// [`BashTool::default`] confines commands as [`SandboxMode::WorkspaceWrite`] does.
#[derive(Clone, Default)]
pub struct BashTool {
    sandbox: Arc<SandboxConfig>,
    rerun: Option<Arc<dyn RerunApprover>>,
}

impl std::fmt::Debug for BashTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BashTool")
            .field("sandbox", &self.sandbox)
            .field("asks_to_rerun", &self.rerun.is_some())
            .finish()
    }
}

impl BashTool {
    /// A `bash` tool whose commands run in `sandbox`.
    pub fn new(sandbox: SandboxConfig) -> Self {
        Self {
            sandbox: Arc::new(sandbox),
            rerun: None,
        }
    }

    /// The same tool asking `approver`, when a command fails in a way that looks like the
    /// sandbox's refusal (a permission or read-only error, a refused connection; the sandbox
    /// on), whether to run it once more without the sandbox. Without one (the default), the
    /// model gets the refusal with a note that it may have been the sandbox's.
    #[must_use]
    pub fn with_rerun(mut self, approver: Arc<dyn RerunApprover>) -> Self {
        self.rerun = Some(approver);
        self
    }

    /// The sandbox settings of its commands.
    pub fn sandbox(&self) -> &SandboxConfig {
        &self.sandbox
    }
}

/// Arguments of `bash`.
#[derive(Debug, Deserialize)]
pub struct BashArgs {
    /// The shell command.
    pub command: String,
    /// Seconds before the command is killed.
    pub timeout_secs: Option<u64>,
    /// Start it as a background shell and answer at once (see [`crate::shells`]).
    #[serde(default)]
    pub background: bool,
}

/// The timeout a call asked for, bounded by the limits.
fn command_timeout(requested: Option<u64>, limits: &ToolLimits) -> Duration {
    requested
        .map_or(limits.default_timeout, Duration::from_secs)
        .min(limits.max_timeout)
}

#[async_trait]
impl TypedTool for BashTool {
    type Args = BashArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "bash".to_owned(),
            description: "Run a command with `bash -c` in the workspace root and return its exit \
                          code, stdout and stderr (long output is cut in the middle). stdin is \
                          closed. The command and everything it started are killed when it \
                          finishes or when the timeout expires, so background processes do not \
                          survive the call. For a server, a watcher or a long build, set \
                          \"background\": true: the command starts as a background shell and the \
                          call answers at once with its id; read its output with shell_output, \
                          stop it with shell_kill. Background shells end with the run."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": { "type": "string", "description": "The shell command to run." },
                    "timeout_secs": { "type": "integer", "minimum": 1, "description": "Seconds before the command is killed (default 120, at most 600); not for background shells." },
                    "background": { "type": "boolean", "description": "Start the command as a background shell and return at once (default false)." }
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::Risky
    }

    fn timeout(&self, args: &BashArgs, limits: &ToolLimits) -> Duration {
        if args.background {
            // Only the start is waited for.
            return REGISTRY_GRACE * 6;
        }
        let command = command_timeout(args.timeout_secs, limits);
        match self.rerun {
            // The command, the question and the command again.
            Some(_) => command * 2 + QUESTION_WAIT + REGISTRY_GRACE,
            None => command + REGISTRY_GRACE,
        }
    }

    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        let mut sandbox = (*self.sandbox).clone();
        // The stricter of the two (modes are ordered from the strictest); only `workspace-write`
        // commands start through the helper, which `Confinement::prepare` sees to.
        sandbox.mode = sandbox.mode.min(mode);
        Some(
            Self {
                sandbox: Arc::new(sandbox),
                rerun: self.rerun.clone(),
            }
            .into_tool(),
        )
    }

    fn command_runner(&self) -> Option<Arc<dyn CommandRunner>> {
        Some(Arc::new(self.clone()))
    }

    async fn run(&self, args: BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let root = canonical_workspace(&ctx.workspace)?;
        let timeout = command_timeout(args.timeout_secs, &ctx.limits);
        let confinement = Confinement::prepare(&self.sandbox, &root, &ctx.trace_id)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        if args.background {
            return shells::start(&args.command, &root, confinement, ctx).await;
        }
        let ran = execute(&confinement, &args.command, &root, timeout, ctx).await?;
        let refused = matches!(&ran.outcome, Outcome::Exited(Ok(status)) if !status.success())
            && refused_by_sandbox(&confinement, &ran.streams);
        let Some(rerun) = self.rerun.as_ref().filter(|_| refused) else {
            return Ok(ran.output(&confinement));
        };
        let request = RerunRequest {
            trace_id: ctx.trace_id.clone(),
            tool_call_id: ctx.call_id.clone(),
            command: args.command.clone(),
            output: ran.output(&confinement).content,
            rule: sandbox_rule(&confinement),
        };
        let asked = tokio::time::timeout(QUESTION_WAIT, rerun.rerun_unsandboxed(request)).await;
        if asked != Ok(true) {
            let mut output = ran.output(&confinement);
            output.content.push_str(
                "note: the user was asked to run it again without the sandbox and said no.\n",
            );
            return Ok(output);
        }
        // Once, with files and network open; the environment stays without secrets.
        let open = SandboxConfig::new(SandboxMode::Off);
        let mut unconfined = Confinement::prepare(&open, &root, &ctx.trace_id)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        unconfined.env = confinement.env.clone();
        let again = execute(&unconfined, &args.command, &root, timeout, ctx).await?;
        let mut output = again.output(&unconfined);
        output.content = format!(
            "note: the sandbox refused this command; the user had it run again without the \
             sandbox:\n{}",
            output.content
        );
        Ok(output)
    }
}

/// What a command did.
struct Ran {
    outcome: Outcome,
    streams: String,
    timeout: Duration,
}

impl Ran {
    /// The tool's output: the exit status and the streams, with a note when the command failed
    /// in a way the sandbox may have caused.
    fn output(&self, confinement: &Confinement) -> ToolOutput {
        let streams = &self.streams;
        match &self.outcome {
            Outcome::Exited(Ok(status)) if status.success() => {
                ToolOutput::text(format!("{}\n{streams}", describe_status(*status)))
                    .with_outcome(ToolOutcome::Exited { code: 0 })
            }
            Outcome::Exited(Ok(status)) => {
                let output = ToolOutput::text(format!(
                    "{}\n{streams}{}",
                    describe_status(*status),
                    sandbox_note(confinement, streams)
                ));
                let ended = match (status.code(), status.signal()) {
                    _ if refused_by_sandbox(confinement, streams) => Some(ToolOutcome::Refused),
                    (Some(code), _) => Some(ToolOutcome::Exited { code }),
                    (None, signal) => signal.map(|signal| ToolOutcome::Killed { signal }),
                };
                ToolOutput { outcome: ended, ..output }
            }
            Outcome::Exited(Err(e)) => ToolOutput::error(format!(
                "error: waiting for the command failed: {e}\n{streams}"
            )),
            Outcome::TimedOut => ToolOutput::error(format!(
                "error: the command timed out after {} s and was killed with its process group; output so far:\n{streams}",
                self.timeout.as_secs()
            ))
            .with_outcome(ToolOutcome::TimedOut),
            Outcome::Cancelled => ToolOutput::error(format!(
                "error: the command was cancelled and killed with its process group; output so far:\n{streams}"
            ))
            .with_outcome(ToolOutcome::Cancelled),
        }
    }
}

/// Runs `command_text` in `root` as `confinement` says, to its end, its timeout or the run's
/// cancellation, and kills its process group after.
async fn execute(
    confinement: &Confinement,
    command_text: &str,
    root: &Path,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Ran, ToolError> {
    let (mut child, group) = spawn(confinement, command_text, root).await?;
    // Never written to: the watcher of the group sees it close when the agent exits.
    let _lifeline = child.stdin.take();

    let cap = (ctx.limits.max_output_bytes / 2).max(1);
    let stdout = Arc::new(Mutex::new(CappedBuffer::new(cap)));
    let stderr = Arc::new(Mutex::new(CappedBuffer::new(cap)));
    let pumps = [
        child
            .stdout
            .take()
            .map(|pipe| pump(pipe, Arc::clone(&stdout))),
        child
            .stderr
            .take()
            .map(|pipe| pump(pipe, Arc::clone(&stderr))),
    ];

    let outcome = tokio::select! {
        status = child.wait() => Outcome::Exited(status),
        () = tokio::time::sleep(timeout) => Outcome::TimedOut,
        () = ctx.cancel.cancelled() => Outcome::Cancelled,
    };
    group.kill();
    if !matches!(outcome, Outcome::Exited(_)) {
        if tokio::time::timeout(STOP_TIMEOUT, child.wait())
            .await
            .is_err()
        {
            // A helper that did not stop when asked is killed (its namespace with it).
            group.kill_now();
        }
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, child.wait()).await;
    }
    for pump in pumps.into_iter().flatten() {
        // The pipes close once every process of the group is dead; a process that left the
        // group could keep them open, so the wait is bounded.
        let abort = pump.abort_handle();
        if tokio::time::timeout(DRAIN_TIMEOUT, pump).await.is_err() {
            abort.abort();
        }
    }

    let mut streams = render_streams(&stdout, &stderr);
    // Every process of the command is dead: protected paths it created go now, before the
    // agent or the model can act on them.
    for path in confinement.remove_created() {
        streams.push_str(&format!(
            "note: the sandbox took away {}, which commands may not create (it is protected)\n",
            path.display()
        ));
    }
    Ok(Ran {
        outcome,
        streams,
        timeout,
    })
}

/// Whether the output of a failed command looks like the sandbox refused it: the sandbox was on
/// and the output names a refused permission, a read-only file system, a protected mount point
/// or a network that could not be reached.
fn refused_by_sandbox(confinement: &Confinement, streams: &str) -> bool {
    const REFUSALS: [&str; 7] = [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
        "Device or resource busy",
        "Could not resolve host",
        "Network is unreachable",
        "Couldn't connect",
    ];
    confinement.mode != SandboxMode::Off && REFUSALS.iter().any(|r| streams.contains(r))
}

/// A note for the model when a failed command may have been refused by the sandbox.
fn sandbox_note(confinement: &Confinement, streams: &str) -> String {
    if !refused_by_sandbox(confinement, streams) {
        return String::new();
    }
    format!(
        "note: this command ran in the {} sandbox, which may have refused it: {}.\n",
        confinement.mode,
        sandbox_allows(confinement)
    )
}

/// The sandbox's rule, as the person asked to rerun a refused command is told it.
fn sandbox_rule(confinement: &Confinement) -> String {
    format!(
        "the {} sandbox: {}",
        confinement.mode,
        sandbox_allows(confinement)
    )
}

/// What the sandbox of `confinement` lets a command do.
fn sandbox_allows(confinement: &Confinement) -> String {
    let writes = match confinement.mode {
        SandboxMode::ReadOnly => "writes go only to $TMPDIR",
        _ if confinement.namespaces => {
            "writes go only inside the workspace (not to .git, agent.toml, .agent/ or the trace \
             folder, which are read-only) and to $TMPDIR"
        }
        _ => {
            "writes go only inside the workspace (not to .git, agent.toml or .agent/, and no new \
             entry at its top: create those with write_file) and to $TMPDIR"
        }
    };
    let network = if confinement.network {
        ""
    } else {
        "; there is no network"
    };
    format!("{writes}{network}")
}

/// How the wait for the command ended.
enum Outcome {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// Copies a pipe into a capped buffer until it closes.
fn pump(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    buffer: Arc<Mutex<CappedBuffer>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
            buffer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(&chunk[..n]);
        }
    })
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "exit status unknown".to_owned(),
    }
}

fn render_streams(stdout: &Mutex<CappedBuffer>, stderr: &Mutex<CappedBuffer>) -> String {
    let mut out = String::new();
    for (name, buffer) in [("stdout", stdout), ("stderr", stderr)] {
        let buffer = buffer.lock().unwrap_or_else(PoisonError::into_inner);
        if buffer.total() > 0 {
            let text = buffer.render();
            out.push_str(&format!("--- {name} ---\n{text}"));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    if out.is_empty() {
        out.push_str("(no output)\n");
    }
    out
}
