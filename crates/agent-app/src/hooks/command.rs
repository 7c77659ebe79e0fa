//! Running one hook command: `sh -c COMMAND` in the workspace, the event's JSON on stdin, its
//! output read up to a cap, killed with its whole process group at its timeout; and what its
//! exit code and output decide, by Claude Code's rules.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most of a hook's stdout and of its stderr kept.
const MAX_OUTPUT: u64 = 64 * 1024;

/// What one run of a hook command gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ran {
    /// The exit code; `None` when killed or not started.
    pub(crate) exit_code: Option<i32>,
    /// Its stdout, cut at [`MAX_OUTPUT`].
    pub(crate) stdout: String,
    /// Its stderr, cut at [`MAX_OUTPUT`] (or why it could not start).
    pub(crate) stderr: String,
    /// Whether it was killed at its timeout.
    pub(crate) timed_out: bool,
    /// How long it ran.
    pub(crate) duration: Duration,
}

/// What a hook's run decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Go on.
    Continue,
    /// Block, with the reason for the model.
    Block(String),
    /// It failed (another exit code, a timeout, no start): the user is warned, the run goes on.
    Warn(String),
}

impl Verdict {
    /// The outcome's word in the `hook_ran` event.
    pub(crate) fn word(&self, ran: &Ran) -> &'static str {
        match self {
            Self::Continue => "continued",
            Self::Block(_) => "blocked",
            Self::Warn(_) if ran.timed_out => "timed_out",
            Self::Warn(_) => "warned",
        }
    }
}

/// Runs `command` with `input` on stdin in `cwd` (with `CLAUDE_PLUGIN_ROOT` set to `plugin`,
/// the folder of the plugin it comes from, if any), for at most `timeout`.
pub(crate) async fn run(
    command: &str,
    input: &Value,
    (cwd, plugin): (&Path, Option<&Path>),
    timeout: Duration,
) -> Ran {
    let started = Instant::now();
    let failed = |why: String| Ran {
        exit_code: None,
        stdout: String::new(),
        stderr: why,
        timed_out: false,
        duration: started.elapsed(),
    };
    let mut process = tokio::process::Command::new("sh");
    if let Some(root) = plugin {
        process
            .env(crate::plugins::PLUGIN_ROOT, root)
            .env("AGENT_PLUGIN_ROOT", root);
    }
    let mut child = match process
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("AGENT_PROJECT_DIR", cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that a timeout kills what it started too.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(error) => return failed(format!("cannot start the hook: {error}")),
    };
    let group = child.id();
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return failed("the hook's pipes are missing".into());
    };
    let text = input.to_string();
    let work = async move {
        // A hook that does not read its input is no error.
        let _ = stdin.write_all(text.as_bytes()).await;
        drop(stdin);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (mut stdout, mut stderr) = (stdout.take(MAX_OUTPUT), stderr.take(MAX_OUTPUT));
        let (_, _, status) = tokio::join!(
            stdout.read_to_end(&mut out),
            stderr.read_to_end(&mut err),
            child.wait()
        );
        (status.ok().and_then(|s| s.code()), out, err)
    };
    match tokio::time::timeout(timeout, work).await {
        Ok((exit_code, out, err)) => Ran {
            exit_code,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
            timed_out: false,
            duration: started.elapsed(),
        },
        Err(_) => {
            if let Some(pid) = group.and_then(|pid| i32::try_from(pid).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            Ran {
                exit_code: None,
                stdout: String::new(),
                stderr: format!("killed after {} s", timeout.as_secs_f32()),
                timed_out: true,
                duration: started.elapsed(),
            }
        }
    }
}

/// What `ran` decides: exit 0 goes on unless stdout is JSON that blocks (`{"decision":
/// "block", "reason": ...}`, or `hookSpecificOutput.permissionDecision: "deny"`); exit 2
/// blocks with stderr as the reason; anything else warns.
pub(crate) fn verdict(ran: &Ran) -> Verdict {
    match ran.exit_code {
        Some(0) => json_block(ran.stdout.trim()).map_or(Verdict::Continue, Verdict::Block),
        Some(2) => {
            let reason = ran.stderr.trim();
            Verdict::Block(if reason.is_empty() {
                "blocked by a hook".to_owned()
            } else {
                reason.to_owned()
            })
        }
        Some(code) => Verdict::Warn(format!("exited with {code}: {}", ran.stderr.trim())),
        None => Verdict::Warn(ran.stderr.trim().to_owned()),
    }
}

/// The reason of a blocking JSON answer on stdout.
fn json_block(stdout: &str) -> Option<String> {
    if !stdout.starts_with('{') {
        return None;
    }
    let answer: Value = serde_json::from_str(stdout).ok()?;
    let specific = &answer["hookSpecificOutput"];
    let (blocked, reason) = if answer["decision"] == "block" {
        (true, &answer["reason"])
    } else if specific["permissionDecision"] == "deny" {
        (true, &specific["permissionDecisionReason"])
    } else {
        (false, &Value::Null)
    };
    blocked.then(|| {
        reason
            .as_str()
            .filter(|reason| !reason.trim().is_empty())
            .unwrap_or("blocked by a hook")
            .to_owned()
    })
}
