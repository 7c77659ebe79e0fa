//! Background shells: `bash {"command", "background": true}` starts a command that keeps
//! running while the model works, `shell_output` reads what it printed since the last read and
//! whether it ended, `shell_kill` stops it.
//!
//! A background shell is started like any other command (`process.rs`: the same sandbox, the
//! same helper, its own session and PID namespace), so stopping it kills everything it started.
//! Shells belong to the run of the trace that started them: they are kept in a table of this
//! process by trace id (as the run's temporary folder is), listed by [`list`] for the terminal
//! UI and the server, and ended with the run: the runner holds a [`RunShells`] for the length of
//! a run, which stops them when the run ends (a cancel, Ctrl-C included) and hands back what each
//! printed, for the trace ([`RunShells::finish`]); dropped without that (a panicked or abandoned
//! run), it still stops them. They also die with the agent however it exits: the helper, or the
//! group's watcher without it, notices that the agent is gone.

mod shell;
mod tools;

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub(crate) use shell::Shell;
pub use tools::{ShellKillArgs, ShellKillTool, ShellOutputArgs, ShellOutputTool};

/// Starts `command` as a background shell of `ctx`'s run (the `bash` tool's `background`
/// calls) and returns the answer the model gets at once.
pub(crate) async fn start(
    command: &str,
    root: &std::path::Path,
    confinement: crate::sandbox::Confinement,
    ctx: &crate::ToolContext,
) -> Result<crate::ToolOutput, crate::ToolError> {
    let id = new_id(&ctx.trace_id);
    let shell = Shell::start(id, &ctx.trace_id, command, root, confinement).await?;
    add(shell.clone());
    let status = shell.status();
    let text = format!(
        "Started background shell {id} running `{command}`. It keeps running while you work and \
         ends with the run. Read what it prints with shell_output {{\"id\": \"{id}\"}} \
         (\"wait_secs\" waits for news); stop it with shell_kill {{\"id\": \"{id}\"}}.",
        id = status.id,
    );
    Ok(tools::annotated(crate::ToolOutput::text(text), &[&status]))
}

/// The metadata key of a tool message that started, read or stopped background shells: a list
/// of [`ShellStatus`] (`agent_execution::meta::SHELLS` is the same key).
pub const SHELLS_META: &str = "shells";

/// How long [`RunShells::finish`] waits for its shells to end after stopping them.
const FINISH_WAIT: Duration = Duration::from_secs(5);

/// The shells of this process, by the trace that started them.
static TABLE: LazyLock<Mutex<BTreeMap<String, Vec<Arc<Shell>>>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

fn with_table<T>(f: impl FnOnce(&mut BTreeMap<String, Vec<Arc<Shell>>>) -> T) -> T {
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    f(&mut table)
}

/// Whether a background shell is running, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ShellState {
    /// Still running.
    Running,
    /// It ended by itself with this exit code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// It ended by a signal (its own, or `shell_kill`, or the end of the run).
    Killed {
        /// The signal, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    /// It could not be waited for.
    Failed {
        /// Why.
        error: String,
    },
}

impl ShellState {
    /// Whether the shell has ended.
    pub fn ended(&self) -> bool {
        !matches!(self, Self::Running)
    }
}

impl std::fmt::Display for ShellState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Running => f.write_str("running"),
            Self::Exited { code } => write!(f, "exited with code {code}"),
            Self::Killed {
                signal: Some(signal),
            } => write!(f, "killed by signal {signal}"),
            Self::Killed { signal: None } => f.write_str("killed"),
            Self::Failed { error } => write!(f, "lost ({error})"),
        }
    }
}

/// What is known of a background shell: the form stored on tool messages
/// ([`SHELLS_META`]) and listed by [`list`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellStatus {
    /// Its id, unique within its trace (`sh-3f2a`).
    pub id: String,
    /// The trace whose run started it.
    pub trace_id: String,
    /// The command.
    pub command: String,
    /// Running, or how it ended.
    #[serde(flatten)]
    pub state: ShellState,
    /// How many bytes it printed so far, stdout and stderr together.
    pub output_bytes: u64,
    /// When it started (RFC 3339).
    pub started_at: String,
}

/// What a background shell printed, kept with its trace when its run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLog {
    /// The shell as it ended.
    pub status: ShellStatus,
    /// Everything it printed (the middle cut past a megabyte, with a note).
    pub output: String,
}

/// A log as the trace keeps it (`agent_execution::shell_logs::keep`): the status as JSON, and
/// the output.
impl From<ShellLog> for (serde_json::Value, String) {
    fn from(log: ShellLog) -> Self {
        (serde_json::json!(log.status), log.output)
    }
}

/// The background shells of `trace_id`'s run and of the runs below it (sub-traces, whose ids
/// begin with `<trace_id>@`), in the order they started.
pub fn list(trace_id: &str) -> Vec<ShellStatus> {
    let shells: Vec<Arc<Shell>> = with_table(|table| {
        table
            .iter()
            .filter(|(owner, _)| is_within(owner, trace_id))
            .flat_map(|(_, shells)| shells.iter().cloned())
            .collect()
    });
    let mut statuses: Vec<ShellStatus> = shells.iter().map(|shell| shell.status()).collect();
    statuses.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    statuses
}

/// Stops the background shell `id` of `trace_id`'s run (or of a run below it) and everything
/// it started, without waiting for it to end; its status as it was, or `None` when the run has
/// no shell of that id (a person's `/shells kill ID`).
pub fn kill(trace_id: &str, id: &str) -> Option<ShellStatus> {
    let shell = with_table(|table| {
        let within = table.iter().filter(|(owner, _)| is_within(owner, trace_id));
        let mut shells = within.flat_map(|(_, shells)| shells.iter());
        shells.find(|shell| shell.id == id.trim()).cloned()
    })?;
    let status = shell.status();
    shell.kill();
    Some(status)
}

/// Whether `owner` is `trace_id` or a trace below it.
fn is_within(owner: &str, trace_id: &str) -> bool {
    owner
        .strip_prefix(trace_id)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('@'))
}

/// The shells of one trace, in the order they started.
pub(crate) fn of_trace(trace_id: &str) -> Vec<Arc<Shell>> {
    with_table(|table| table.get(trace_id).cloned().unwrap_or_default())
}

/// An id for a new shell of `trace_id`'s run: `sh-` and four hex digits, none of the run's
/// shells' (random, so a resumed run in another process does not reuse the ids its trace
/// recorded).
pub(crate) fn new_id(trace_id: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let taken: Vec<String> = of_trace(trace_id).iter().map(|s| s.id.clone()).collect();
    let random = std::collections::hash_map::RandomState::new();
    let mut salt = 0u64;
    loop {
        let mut hasher = random.build_hasher();
        hasher.write_u64(salt);
        let id = format!("sh-{:04x}", hasher.finish() & 0xffff);
        if !taken.contains(&id) {
            return id;
        }
        salt += 1;
    }
}

/// Adds a shell started by its trace's run.
pub(crate) fn add(shell: Arc<Shell>) {
    with_table(|table| {
        table.entry(shell.trace_id.clone()).or_default().push(shell);
    });
}

/// The background shells of one run, stopped when it ends.
#[derive(Debug)]
pub struct RunShells {
    trace_id: String,
}

impl RunShells {
    /// Holds the shells `trace_id`'s run will start.
    pub fn for_run(trace_id: &str) -> Self {
        Self {
            trace_id: trace_id.to_owned(),
        }
    }

    /// Stops every shell of the run still going, waits (a few seconds at most) for them to end,
    /// and returns what each printed, in the order they started; the run's shells are then
    /// forgotten.
    pub async fn finish(self) -> Vec<ShellLog> {
        let shells = of_trace(&self.trace_id);
        for shell in &shells {
            shell.kill();
        }
        let mut logs = Vec::with_capacity(shells.len());
        for shell in &shells {
            let _ = tokio::time::timeout(FINISH_WAIT, shell.ended()).await;
            logs.push(shell.log());
        }
        // Dropping `self` forgets them.
        logs
    }
}

impl Drop for RunShells {
    fn drop(&mut self) {
        let shells = with_table(|table| table.remove(&self.trace_id).unwrap_or_default());
        for shell in shells {
            shell.kill();
        }
    }
}
