//! The sandbox every `bash` command and stdio MCP server runs in: what it may write, whether it
//! reaches the network and local services, what it can see of other processes, and which
//! environment variables it sees.
//!
//! [`SandboxConfig`] is plain settings; [`Confinement::prepare`] turns them, for one workspace and
//! one run, into the writable paths and the environment of a command; `linux.rs` applies them
//! (Landlock for writes, device `ioctl`s, signals and Unix sockets, a seccomp filter that refuses
//! `TIOCSTI`/`TIOCLINUX` and, with the network off, `AF_INET`/`AF_INET6` sockets), and the
//! command inherits both across `fork` and `exec`.
//!
//! With a helper program ([`SandboxConfig::helper`], the `agent` binary's helper mode, see
//! `helper.rs`), every confined command starts through it: out of the terminal's session, and,
//! where the kernel gives them ([`SandboxConfig::namespaces`]), in its own user, mount, PID and
//! IPC namespace (and network namespace with the network off), with a `/proc` of its own, every
//! mount read-only but its writable roots, the protected paths that exist (`.git`, `agent.toml`,
//! `.agent` at the top of a writable root or below it, and the extra protected paths such as the
//! trace folder) bound read-only onto themselves, and the Unix sockets of services outside
//! covered; everything it started dies with it. A protected path that does not exist cannot carry
//! a mount (a mount needs an existing entry, and nothing is created in the workspace for one): it
//! is [`Confinement::watched`], and [`Confinement::remove_created`] moves it out of the workspace
//! as soon as the command is over, as it does with a protected name created deeper down. A
//! protected name that is a symlink is never granted, nor the folder it is in (the command could
//! replace it), as below.
//!
//! Without namespaces (an embedder without the helper, or a kernel that refuses them), a writable
//! root is granted entry by entry: every entry that is not protected and has no protected path
//! below it is granted whole; a directory with a protected path below it is descended into. The
//! directories on the way to a protected path stay without create or delete rights, so a command
//! cannot add a new entry at the top of the workspace (`write_file` can) nor replace a protected
//! file.

mod env;
mod grants;
#[cfg(all(target_os = "linux", feature = "sandbox"))]
mod helper;
#[cfg(all(target_os = "linux", feature = "sandbox"))]
mod init;
#[cfg(all(target_os = "linux", feature = "sandbox"))]
mod linux;
#[cfg(all(target_os = "linux", feature = "sandbox"))]
mod mounts;
#[cfg(all(target_os = "linux", feature = "sandbox"))]
mod supervise;
mod temp;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use env::command_env;
pub use env::{is_secret_name, looks_secret, scrubbed_env};
use grants::{grant_tree, nested_protected, protected_paths, split_protected};
pub use temp::{RunTempDir, remove_run_temp_dir, remove_stale_temp_dirs};

/// Names inside every writable root, at any depth, that commands and the file tools may never
/// write.
pub const PROTECTED_NAMES: [&str; 3] = [".git", "agent.toml", ".agent"];

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
    /// Variables passed to commands even though their names or values look secret.
    pub env_keep: Vec<String>,
    /// Variables set for commands, over the inherited ones.
    pub env_set: BTreeMap<String, String>,
    /// More variables kept out of commands, such as a provider key with an unusual name.
    pub env_remove: Vec<String>,
    /// Unix sockets outside the writable roots that commands may still connect to with the
    /// network off (`/run/user/1000/bus`; `@name` for an abstract one, which keeps the command
    /// in the network namespace of the agent).
    pub unix_sockets: Vec<String>,
    /// A program that calls [`run_helper_if_requested`] first thing in its `main` (the `agent`
    /// binary). With it, confined commands start through it, out of the terminal's session, and
    /// nothing they start outlives them; without it they are confined from a thread of this
    /// process and stay in its session.
    pub helper: Option<PathBuf>,
    /// Whether the helper gives commands namespaces of their own (checked with
    /// [`probe_helper`]): a PID namespace and `/proc` of their own, every mount read-only but
    /// their writable roots, the protected paths mounted read-only so that they may create
    /// entries at the top of a writable root, the Unix sockets of services outside covered.
    pub namespaces: bool,
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
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    {
        linux::check_support(config)
    }
    #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
    {
        Err(SandboxError::Unsupported {
            mode: config.mode,
            reason: "commands are only confined on Linux, in a build with the `sandbox` feature"
                .to_owned(),
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
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    helper_main(args.collect());
    #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
    std::process::exit(126);
}

/// Runs the helper with the arguments after [`HELPER_ARG`] and exits; it never returns: the
/// first process of a PID namespace (`init`), or the process outside that sets it up and
/// supervises the command (`supervise`).
#[cfg(all(target_os = "linux", feature = "sandbox"))]
fn helper_main(args: Vec<OsString>) -> ! {
    use std::io::Write;
    let run = |request: helper::Request| {
        if request.init {
            init::run(&request)
        } else {
            supervise::run(&request)
        }
    };
    let error = match helper::parse(args).and_then(run) {
        Ok(never) => match never {},
        Err(error) => error,
    };
    let _ = writeln!(std::io::stderr(), "sandbox: {error}");
    std::process::exit(helper::SETUP_FAILED)
}

/// The first argument that starts a program as the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox-helper";

/// Whether `helper` can give commands namespaces of their own here (user, mount, PID, IPC and
/// network, with a `/proc` of their own).
///
/// # Errors
///
/// Why it cannot: user namespaces disabled (`kernel.unprivileged_userns_clone=0`, an AppArmor
/// restriction, a container's seccomp profile), or the program is no helper.
pub fn probe_helper(helper: &Path) -> Result<(), String> {
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    {
        helper::probe(helper)
    }
    #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
    {
        let _ = helper;
        Err("namespaces are only used on Linux, in a build with the `sandbox` feature".to_owned())
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
    /// Whether the helper gives the command namespaces of its own.
    pub namespaces: bool,
    /// Unix sockets outside the writable roots the command may reach with the network off.
    pub unix_sockets: Vec<String>,
    /// Protected paths that did not exist when the command started (with a helper), which
    /// [`Confinement::remove_created`] takes away if the command created them.
    pub watched: Vec<PathBuf>,
    /// The writable roots, searched again for protected names the command created below their
    /// top, and the protected paths found there when it started.
    pub nested: (Vec<PathBuf>, Vec<PathBuf>),
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
                env,
                ..Self::inert()
            });
        }
        let temp_dir = temp::private_temp_dir(trace_id)?;
        env.retain(|(name, _)| name != "TMPDIR");
        env.push(("TMPDIR".into(), temp_dir.clone().into_os_string()));
        let mut writable = vec![temp_dir.clone()];
        let (mut read_only, mut watched, mut nested) = (Vec::new(), Vec::new(), Vec::new());
        let namespaces = config.helper.is_some() && config.namespaces;
        let roots: Vec<PathBuf> = std::iter::once(workspace.to_path_buf())
            .chain(
                config
                    .writable_roots
                    .iter()
                    .filter_map(|root| root.canonicalize().ok()),
            )
            .collect();
        if config.mode == SandboxMode::WorkspaceWrite {
            nested = nested_protected(&roots);
            // With namespaces, protected paths that exist are mounted read-only, missing ones
            // are watched, and only symlinks must stay out of the grants.
            let protected = if namespaces {
                let split = split_protected(config, workspace);
                (read_only, watched) = (split.existing, split.missing);
                read_only.extend(nested.iter().cloned());
                split.symlinks
            } else {
                let mut protected = protected_paths(config, workspace);
                protected.extend(nested.iter().cloned());
                protected
            };
            for root in &roots {
                grant_tree(root, &protected, &mut writable);
            }
        }
        writable.extend(
            ["/dev/null", "/dev/zero", "/dev/full"]
                .iter()
                .map(PathBuf::from)
                .filter(|device| device.exists()),
        );
        let searched = if config.mode == SandboxMode::WorkspaceWrite {
            roots
        } else {
            Vec::new()
        };
        Ok(Self {
            mode: config.mode,
            network: config.network,
            writable,
            read_only,
            helper: config.helper.clone(),
            namespaces,
            unix_sockets: config.unix_sockets.clone(),
            watched,
            nested: (searched, nested),
            temp_dir: Some(temp_dir),
            env,
        })
    }

    /// A confinement that grants nothing and names no helper, for building one field by field.
    pub(crate) fn inert() -> Self {
        Self {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            writable: Vec::new(),
            read_only: Vec::new(),
            helper: None,
            namespaces: false,
            unix_sockets: Vec::new(),
            watched: Vec::new(),
            nested: (Vec::new(), Vec::new()),
            temp_dir: None,
            env: Vec::new(),
        }
    }

    /// The helper and its arguments (to be followed by the command) when the command starts
    /// through it, else `None` and [`Confinement::apply_to_current_thread`] confines it.
    pub fn helper_command(&self) -> Option<(PathBuf, Vec<OsString>)> {
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        {
            let helper = self.helper.clone()?;
            Some((helper, helper::arguments(self)))
        }
        #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
        {
            None
        }
    }

    /// Takes out of the workspace every [watched](Confinement::watched) protected path that now
    /// exists, and every protected name created below the top of a writable root since the
    /// command started: moved into the run's temporary folder, or removed where it cannot be
    /// moved, without following a symlink out of the root it is in. Call it once the command
    /// and everything it started are dead. Returns what was taken.
    pub fn remove_created(&self) -> Vec<PathBuf> {
        let (roots, before) = &self.nested;
        let watched = self
            .watched
            .iter()
            .filter_map(|path| Some((path.parent()?.to_path_buf(), path.clone())));
        let created = nested_protected(roots)
            .into_iter()
            .filter(|path| !before.contains(path))
            .filter_map(|path| {
                Some((
                    roots.iter().find(|root| path.starts_with(root))?.clone(),
                    path,
                ))
            });
        let mut taken = Vec::new();
        for (index, (root, path)) in watched.chain(created).enumerate() {
            let Ok(relative) = path.strip_prefix(&root) else {
                continue;
            };
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let parking = self
                .temp_dir
                .as_ref()
                .map(|temp| temp.join(format!("refused-{index}-{name}")));
            if crate::beneath::take_away(&root, relative, parking.as_deref()) {
                taken.push(path);
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
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        {
            linux::apply(self)
        }
        #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
        {
            Err(SandboxError::Unsupported {
                mode: self.mode,
                reason:
                    "commands are only confined on Linux, in a build with the `sandbox` feature"
                        .to_owned(),
            })
        }
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
