//! The sandbox of the model's commands: `--sandbox`, agent.toml's `sandbox = "MODE"` or
//! `[sandbox]` table, resolved once per process before a run starts. An agent profile's
//! `sandbox` is applied by the runner (the stricter of it and this one); one looser than this
//! is said on stderr here. A run asking its approvals on the terminal also asks there whether a
//! command the sandbox refused runs again without it ([`ask_reruns`]).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_tools::sandbox::{SandboxConfig, SandboxMode, check_support, probe_helper};
use agent_tools::{BashTool, RerunApprover, Tool, TypedTool};
use anyhow::Result;

use crate::cli::Command;
use crate::config::{FileConfig, SandboxFile, SandboxTable};
use crate::exit::UsageError;

/// The settings every tool registry of this process builds `bash` with.
static RESOLVED: OnceLock<SandboxConfig> = OnceLock::new();

/// Resolves the sandbox of this process's runs (the flag over the file, `workspace-write` by
/// default), refuses a mode the kernel cannot enforce, and says on stderr when it is off.
///
/// # Errors
///
/// A usage error when the kernel cannot enforce the mode.
pub(crate) fn init(flag: Option<SandboxMode>, file: &FileConfig) -> Result<()> {
    let table = match &file.sandbox {
        Some(SandboxFile::Table(table)) => table.clone(),
        Some(SandboxFile::Mode(mode)) => SandboxTable {
            mode: Some(*mode),
            ..SandboxTable::default()
        },
        None => SandboxTable::default(),
    };
    let mut config = SandboxConfig::new(flag.or(table.mode).unwrap_or_default());
    config.network = table.network.unwrap_or(false);
    config.writable_roots = table.writable_roots;
    config.env_keep = table.env_keep;
    config.env_set = table.env_set;
    config.unix_sockets = table.unix_sockets;
    // The trace folder the environment or agent.toml names, else the project's default one.
    let named = crate::cli::TraceDirArg {
        trace_dir: std::env::var_os("AGENT_TRACE_DIR").map(PathBuf::from),
        store: std::env::var("AGENT_STORE").ok(),
    };
    let location = crate::store::Location::resolve(&named, file);
    if let Some(trace_dir) = location.folder() {
        config.protected = vec![std::path::absolute(trace_dir).unwrap_or(trace_dir.clone())];
    }
    check_support(&config).map_err(|error| UsageError(error.to_string()))?;
    if config.mode != SandboxMode::Off {
        (config.helper, config.namespaces) = sandbox_helper();
    }
    if config.mode == SandboxMode::Off {
        crate::output::note(
            "agent: the sandbox is off: the model's commands read and write anything you can, \
             reach the network and see your environment",
        );
    }
    // A second resolution in the same process (none is expected) keeps the first.
    let _ = RESOLVED.set(config);
    Ok(())
}

/// This binary as the sandbox helper of confined commands, and whether it can give them
/// namespaces of their own here; says once why not when it cannot.
fn sandbox_helper() -> (Option<PathBuf>, bool) {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => {
            crate::output::note(&format!(
                "agent: cannot find this program ({error}): commands are confined from this \
                 process and stay in its terminal's session"
            ));
            return (None, false);
        }
    };
    match probe_helper(&exe) {
        Ok(()) => (Some(exe), true),
        Err(reason) => {
            crate::output::note(&format!(
                "agent: the sandbox cannot use user namespaces here ({reason}): .git, agent.toml, \
                 .agent/ and the trace folder stay read-only, but commands cannot create new \
                 entries at the top of the workspace, see other processes' /proc, or be kept \
                 from local services by their Unix sockets"
            ));
            (Some(exe), false)
        }
    }
}

/// The sandbox settings of this process's runs (`workspace-write` until [`init`] ran).
pub(crate) fn current() -> SandboxConfig {
    RESOLVED.get().cloned().unwrap_or_default()
}

/// Who is asked whether a command the sandbox refused runs again without it: the terminal of
/// a run that asks its approvals there, once it set itself up.
static RERUN: OnceLock<Arc<dyn RerunApprover>> = OnceLock::new();

/// Has every `bash` tool built from now on ask `approver` before it runs a command the sandbox
/// refused again without the sandbox.
pub(crate) fn ask_reruns(approver: Arc<dyn RerunApprover>) {
    // One terminal per process: a second one (none is expected) keeps the first.
    let _ = RERUN.set(approver);
}

/// `bash` in this process's sandbox asking about reruns, once [`ask_reruns`] named who asks.
pub(crate) fn asking_bash() -> Option<Arc<dyn Tool>> {
    let approver = RERUN.get()?.clone();
    Some(BashTool::new(current()).with_rerun(approver).into_tool())
}

/// The sandbox settings of this process's runs, once [`init`] resolved them (commands that run
/// no tools, such as `agent mcp list`, never do).
pub(crate) fn resolved() -> Option<SandboxConfig> {
    RESOLVED.get().cloned()
}

/// Says on stderr which profiles ask for a looser sandbox than this process's runs have: a
/// profile can only tighten the run's sandbox, so their commands run under the run's.
pub(crate) fn check_profiles<'a>(
    profiles: impl IntoIterator<Item = (&'a String, &'a agent_runner::AgentTypeConfig)>,
) {
    let Some(own) = RESOLVED.get().map(|config| config.mode) else {
        return;
    };
    for (name, profile) in profiles {
        if let Some(asked) = profile.sandbox.filter(|asked| *asked > own) {
            crate::output::note(&format!(
                "agent: the agent profile {name} asks for the `{asked}` sandbox, looser than \
                 this run's `{own}`: its commands run under `{own}` (a profile can only tighten \
                 the run's sandbox; pass --sandbox {asked} to allow it)"
            ));
        }
    }
}

/// Whether the command may run the model's tools (and so needs the sandbox resolved).
pub(crate) fn runs_tools(command: &Command) -> bool {
    match command {
        Command::Run(_)
        | Command::Chat(_)
        | Command::Resume(_)
        | Command::Demo(_)
        | Command::Serve(_)
        | Command::Worker(_)
        | Command::Plan(_) => true,
        #[cfg(feature = "acp")]
        Command::Acp(_) => true,
        Command::Import(_)
        | Command::Traces(_)
        | Command::Show(_)
        | Command::Fork(_)
        | Command::Rewind(_)
        | Command::Diff(_)
        | Command::Cancel(_)
        | Command::Mcp(_)
        | Command::Agents(_)
        | Command::Export(_)
        | Command::Completions(_)
        | Command::Man
        | Command::Config(_)
        | Command::Init(_) => false,
    }
}
