//! The sandbox every `bash` command runs in: what it may write, whether it reaches the network,
//! and which environment variables it sees.
//!
//! [`SandboxConfig`] is plain settings; [`Confinement::prepare`] turns them, for one workspace and
//! one run, into the writable paths and the environment of a command; `linux.rs` applies them to
//! the thread that starts the command (Landlock for the file system, a seccomp filter that refuses
//! `AF_INET`/`AF_INET6` sockets), and the child inherits both across `fork` and `exec`. The
//! starting thread is a fresh one per command, so nothing else of the process is confined.
//!
//! Landlock cannot take write access away from a path below a tree it allows. With a helper
//! program ([`SandboxConfig::helper`], the `agent` binary's helper mode, see `helper.rs`), a
//! `workspace-write` command runs in its own user and mount namespace where every protected path
//! that exists (`.git`, `agent.toml`, `.agent` and the extra protected paths such as the trace
//! folder) is bound read-only onto itself, so the writable roots are granted whole and a command
//! can add entries at their top. A protected path that does not exist cannot carry a mount (a
//! mount needs an existing entry, and nothing is created in the workspace for one): it is
//! [`Confinement::watched`], and [`Confinement::remove_created`] moves it out of the workspace
//! as soon as the command is over. A protected name that is a symlink is never granted, nor the
//! folder it is in (the command could replace it), as below.
//!
//! Without a helper (an embedder's choice, or no user namespaces here), a writable root is granted
//! entry by entry: every entry that is not protected and has no protected path below it is
//! granted whole; a directory with a protected path below it is descended into. The directories on
//! the way to a protected path stay without create or delete rights, so a command cannot add a
//! new entry at the top of the workspace (`write_file` can) nor replace a protected file.

mod grants;
#[cfg(target_os = "linux")]
mod helper;
#[cfg(target_os = "linux")]
mod linux;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use grants::{grant_tree, protected_paths, split_protected};

/// Names inside every writable root that commands and the file tools may never write.
pub const PROTECTED_NAMES: [&str; 3] = [".git", "agent.toml", ".agent"];

/// Parts of a variable name that mark it as a secret kept out of commands.
const SECRET_MARKERS: [&str; 4] = ["KEY", "SECRET", "TOKEN", "PASSWORD"];

/// How much a command may do.
///
/// Ordered from the strictest to the loosest, so a server can refuse a request that asks for more
/// than its own mode (`requested > allowed`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Reads anywhere; writes only to the run's private temporary folder; no network.
    ReadOnly,
    /// Reads anywhere; writes inside the workspace (protected entries aside), the writable roots
    /// and the run's private temporary folder; no network.
    #[default]
    WorkspaceWrite,
    /// No confinement: full access to files, network and environment.
    Off,
}

impl SandboxMode {
    /// The mode as written on the command line and in `agent.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Off => "off",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandbox mode that is none of `workspace-write`, `read-only`, `off`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode {0:?} (expected workspace-write, read-only or off)")]
pub struct UnknownSandboxMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "off" => Ok(Self::Off),
            other => Err(UnknownSandboxMode(other.to_owned())),
        }
    }
}

/// The sandbox settings of a run's commands (`--sandbox`, `sandbox =` and `[sandbox]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    /// How much commands may do.
    pub mode: SandboxMode,
    /// Whether commands may open internet sockets despite the mode.
    pub network: bool,
    /// More folders commands may write in (protected names inside them stay read-only).
    pub writable_roots: Vec<PathBuf>,
    /// Paths that stay read-only wherever they are, such as the trace folder.
    pub protected: Vec<PathBuf>,
    /// Variables passed to commands even though their names look secret.
    pub env_keep: Vec<String>,
    /// Variables set for commands, over the inherited ones.
    pub env_set: BTreeMap<String, String>,
    /// More variables kept out of commands, such as a provider key with an unusual name.
    pub env_remove: Vec<String>,
    /// A program that calls [`run_helper_if_requested`] first thing in its `main` (the `agent`
    /// binary), checked with [`probe_helper`]. With it, `workspace-write` commands start through
    /// it in their own namespaces and may create entries at the top of a writable root; without
    /// it they are confined from a thread of this process and may not.
    pub helper: Option<PathBuf>,
}

impl SandboxConfig {
    /// Settings of the given mode and nothing else.
    pub fn new(mode: SandboxMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }
}

/// Why a command could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce what the mode asks.
    #[error(
        "the {mode} sandbox is not available here ({reason}); run with `--sandbox off` to run commands without confinement"
    )]
    Unsupported {
        /// The mode that was asked for.
        mode: SandboxMode,
        /// What is missing.
        reason: String,
    },
    /// Preparing the confinement failed.
    #[error("cannot prepare the sandbox: {0}")]
    Setup(String),
}

/// Whether this system can enforce `config`, checked once at the start of a run so a missing
/// kernel feature is said before the first command rather than at it.
///
/// # Errors
///
/// [`SandboxError::Unsupported`] when the kernel lacks what the mode needs.
pub fn check_support(config: &SandboxConfig) -> Result<(), SandboxError> {
    if config.mode == SandboxMode::Off {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        linux::check_support(config)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(SandboxError::Unsupported {
            mode: config.mode,
            reason: "commands are only confined on Linux".to_owned(),
        })
    }
}

/// Becomes the sandbox helper and never returns when this process was started as one (its first
/// argument is the helper's); returns at once otherwise. A program named as
/// [`SandboxConfig::helper`] calls it at the very start of `main`, before any thread is started
/// (a user namespace can only be entered by a single-threaded process).
pub fn run_helper_if_requested() {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_none_or(|first| first != HELPER_ARG) {
        return;
    }
    #[cfg(target_os = "linux")]
    helper::main(args.collect());
    #[cfg(not(target_os = "linux"))]
    std::process::exit(126);
}

/// The first argument that starts a program as the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox-helper";

/// Whether `helper` can give commands their own user and mount namespaces here.
///
/// # Errors
///
/// Why it cannot: user namespaces disabled (`kernel.unprivileged_userns_clone=0`, an AppArmor
/// restriction, a container's seccomp profile), or the program is no helper.
pub fn probe_helper(helper: &Path) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        helper::probe(helper)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = helper;
        Err("namespaces are only used on Linux".to_owned())
    }
}

/// What one command runs with: the paths it may write and its environment.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The mode it came from.
    pub mode: SandboxMode,
    /// Whether internet sockets are allowed.
    pub network: bool,
    /// Paths granted write access (files or whole trees).
    pub writable: Vec<PathBuf>,
    /// Paths bound read-only onto themselves in the command's mount namespace (with a helper).
    pub read_only: Vec<PathBuf>,
    /// The helper program the command starts through, if any.
    pub helper: Option<PathBuf>,
    /// Protected paths that did not exist when the command started (with a helper), which
    /// [`Confinement::remove_created`] takes away if the command created them.
    pub watched: Vec<PathBuf>,
    /// The run's private temporary folder (`TMPDIR`), when confined.
    pub temp_dir: Option<PathBuf>,
    /// The complete environment of the command.
    pub env: Vec<(OsString, OsString)>,
}

impl Confinement {
    /// The confinement of a command of run `trace_id` in the canonical `workspace`.
    ///
    /// # Errors
    ///
    /// Fails when the private temporary folder cannot be made safely.
    pub fn prepare(
        config: &SandboxConfig,
        workspace: &Path,
        trace_id: &str,
    ) -> Result<Self, SandboxError> {
        let mut env = command_env(config, std::env::vars_os());
        if config.mode == SandboxMode::Off {
            return Ok(Self {
                mode: config.mode,
                network: true,
                writable: Vec::new(),
                read_only: Vec::new(),
                helper: None,
                watched: Vec::new(),
                temp_dir: None,
                env,
            });
        }
        let temp_dir = private_temp_dir(trace_id)?;
        env.retain(|(name, _)| name != "TMPDIR");
        env.push(("TMPDIR".into(), temp_dir.clone().into_os_string()));
        let mut writable = vec![temp_dir.clone()];
        let (mut read_only, mut watched) = (Vec::new(), Vec::new());
        let helper = config
            .helper
            .clone()
            .filter(|_| config.mode == SandboxMode::WorkspaceWrite);
        if config.mode == SandboxMode::WorkspaceWrite {
            // With the helper, protected paths that exist are mounted read-only, missing ones
            // are watched, and only symlinks must stay out of the grants.
            let protected = if helper.is_some() {
                let split = split_protected(config, workspace);
                (read_only, watched) = (split.existing, split.missing);
                split.symlinks
            } else {
                protected_paths(config, workspace)
            };
            let roots = std::iter::once(workspace.to_path_buf()).chain(
                config
                    .writable_roots
                    .iter()
                    .filter_map(|root| root.canonicalize().ok()),
            );
            for root in roots {
                grant_tree(&root, &protected, &mut writable);
            }
        }
        writable.extend(
            ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"]
                .iter()
                .map(PathBuf::from)
                .filter(|device| device.exists()),
        );
        Ok(Self {
            mode: config.mode,
            network: config.network,
            writable,
            read_only,
            helper,
            watched,
            temp_dir: Some(temp_dir),
            env,
        })
    }

    /// The helper and its arguments (to be followed by the command) when the command starts
    /// through it, else `None` and [`Confinement::apply_to_current_thread`] confines it.
    pub fn helper_command(&self) -> Option<(PathBuf, Vec<OsString>)> {
        #[cfg(target_os = "linux")]
        {
            let helper = self.helper.clone()?;
            Some((helper, helper::arguments(self)))
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// Takes out of the workspace every [watched](Confinement::watched) protected path that now
    /// exists: moved into the run's temporary folder, or removed where it cannot be moved.
    /// Call it once the command and its process group are dead. Returns what was taken.
    pub fn remove_created(&self) -> Vec<PathBuf> {
        let mut taken = Vec::new();
        for (index, path) in self.watched.iter().enumerate() {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let moved = self.temp_dir.as_ref().is_some_and(|temp| {
                std::fs::rename(path, temp.join(format!("refused-{index}-{name}"))).is_ok()
            });
            let gone = moved
                || if meta.is_dir() {
                    std::fs::remove_dir_all(path).is_ok()
                } else {
                    std::fs::remove_file(path).is_ok()
                };
            if gone {
                taken.push(path.clone());
            }
        }
        taken
    }

    /// Runs `start` (which starts a process) on a fresh thread confined as this says, so the
    /// process inherits the sandbox and no other thread of this one is confined; the caller
    /// blocks until `start` returns. For a long-lived child such as an MCP server; a caller that
    /// cannot block starts its own thread and calls [`Confinement::apply_to_current_thread`].
    ///
    /// # Errors
    ///
    /// Fails when the kernel cannot enforce the confinement (`start` is not called then).
    pub fn start_confined<T: Send>(
        &self,
        start: impl FnOnce() -> T + Send,
    ) -> Result<T, SandboxError> {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("sandboxed-start".to_owned())
                .spawn_scoped(scope, || {
                    self.apply_to_current_thread()?;
                    Ok(start())
                })
                .map_err(|e| SandboxError::Setup(format!("cannot start a thread: {e}")))?
                .join()
                .unwrap_or_else(|_| Err(SandboxError::Setup("the starting thread panicked".into())))
        })
    }

    /// Applies the confinement to the calling thread; every process it starts afterwards
    /// inherits it. Call it on a thread that does nothing else.
    ///
    /// # Errors
    ///
    /// Fails when the kernel cannot enforce it.
    pub fn apply_to_current_thread(&self) -> Result<(), SandboxError> {
        if self.mode == SandboxMode::Off {
            return Ok(());
        }
        #[cfg(target_os = "linux")]
        {
            linux::apply(self)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(SandboxError::Unsupported {
                mode: self.mode,
                reason: "commands are only confined on Linux".to_owned(),
            })
        }
    }
}

/// Whether a variable name looks like it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
}

/// The environment of a command: the given variables without secrets (unless kept), then the
/// configured ones.
fn command_env(
    config: &SandboxConfig,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vars
        .filter(|(name, _)| {
            if config.mode == SandboxMode::Off {
                return true;
            }
            let name = name.to_string_lossy();
            let kept = config.env_keep.iter().any(|keep| *keep == name);
            let removed = is_secret_name(&name) || config.env_remove.iter().any(|r| *r == name);
            kept || !removed
        })
        .collect();
    for (name, value) in &config.env_set {
        env.retain(|(existing, _)| existing.to_string_lossy() != name.as_str());
        env.push((name.into(), value.into()));
    }
    env
}

/// The run's private temporary folder (`$TMPDIR/agent-run-<trace id>`, mode 0700, ours).
fn private_temp_dir(trace_id: &str) -> Result<PathBuf, SandboxError> {
    let name: String = trace_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = std::env::temp_dir().join(format!("agent-run-{name}"));
    let setup = |e: std::io::Error| SandboxError::Setup(format!("{}: {e}", path.display()));
    match std::fs::DirBuilder::new().mode(0o700).create(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(&path).map_err(setup)?;
            let ours = meta.uid() == nix::unistd::geteuid().as_raw();
            if !meta.is_dir() || !ours || meta.permissions().mode() & 0o077 != 0 {
                return Err(SandboxError::Setup(format!(
                    "{} exists and is not a private folder of this user",
                    path.display()
                )));
            }
        }
        Err(e) => return Err(setup(e)),
    }
    path.canonicalize().map_err(setup)
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
