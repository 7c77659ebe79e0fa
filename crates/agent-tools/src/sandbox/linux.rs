//! Linux enforcement: Landlock for writes, device `ioctl`s, signals and Unix sockets, a seccomp
//! filter for terminal injection and internet sockets.
//!
//! Both are applied to the calling thread only (no `TSYNC`), which the caller dedicates to
//! starting one command (or to the helper's process that becomes it); the command inherits
//! them and cannot lift them.

use std::path::PathBuf;

use landlock::{
    ABI, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{Confinement, SandboxConfig, SandboxError};

/// The Landlock ABI whose write rights are handled: create, delete, write, truncate,
/// cross-directory link or rename, and `ioctl`s on devices. Reads stay unrestricted. A kernel
/// with an older ABI enforces what it has.
const LANDLOCK_ABI: ABI = ABI::V5;
/// The ABI that knows connecting to pathname Unix sockets as a right of its own.
const LANDLOCK_ABI_UNIX: ABI = ABI::V9;

/// Whether the kernel can enforce `config`.
pub(super) fn check_support(config: &SandboxConfig) -> Result<(), SandboxError> {
    let unsupported = |reason: String| SandboxError::Unsupported {
        mode: config.mode,
        reason,
    };
    // Creating (not applying) a ruleset that requires Landlock asks the kernel whether it has it.
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(ABI::V1))
        .and_then(|ruleset| ruleset.create())
        .map_err(|e| unsupported(format!("the kernel does not enable Landlock: {e}")))?;
    filter(config.network).map_err(|e| unsupported(format!("no seccomp filter: {e}")))?;
    Ok(())
}

/// Confines the calling thread: Landlock for writes (and, where the kernel has them, device
/// `ioctl`s, signals to processes outside the sandbox and, with the network off, abstract Unix
/// sockets created outside it and pathname ones outside the writable roots), and a seccomp
/// filter.
pub(super) fn apply(confinement: &Confinement) -> Result<(), SandboxError> {
    let unsupported = |reason: String| SandboxError::Unsupported {
        mode: confinement.mode,
        reason,
    };
    let closed = !confinement.network;
    let mut handled = AccessFs::from_write(LANDLOCK_ABI);
    if closed {
        // Only kernels with Landlock ABI 9 know this right; older ones leave it out.
        handled |= AccessFs::ResolveUnix;
    }
    // Device ioctls are refused everywhere (the terminal's among them); nothing is granted them.
    let granted = handled & !AccessFs::IoctlDev;
    let mut scopes = BitFlags::from(Scope::Signal);
    if closed && !confinement.unix_sockets.iter().any(|s| s.starts_with('@')) {
        scopes |= Scope::AbstractUnixSocket;
    }
    let mut ruleset = Ruleset::default()
        .handle_access(handled)
        .and_then(|ruleset| ruleset.scope(scopes))
        .and_then(|ruleset| ruleset.create())
        .map_err(|e| unsupported(format!("Landlock: {e}")))?;
    let sockets = confinement
        .unix_sockets
        .iter()
        .filter(|s| s.starts_with('/'))
        .map(|s| (PathBuf::from(s), AccessFs::ResolveUnix.into()));
    let paths = confinement
        .writable
        .iter()
        .map(|path| (path.clone(), granted))
        .chain(sockets.filter(|_| closed));
    for (path, access) in paths {
        // A path that vanished since it was listed is simply not granted.
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        let access: BitFlags<AccessFs> = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(LANDLOCK_ABI_UNIX)
        };
        if access.is_empty() {
            continue;
        }
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| SandboxError::Setup(format!("{}: {e}", path.display())))?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(|e| unsupported(format!("Landlock: {e}")))?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(unsupported(
            "the kernel does not enforce Landlock".to_owned(),
        ));
    }
    let filter = filter(confinement.network).map_err(|e| unsupported(format!("seccomp: {e}")))?;
    seccompiler::apply_filter(&filter).map_err(|e| unsupported(format!("seccomp: {e}")))?;
    Ok(())
}

/// A filter that fails with `EACCES` the `ioctl`s that type into a terminal or reach the
/// console (`TIOCSTI`, `TIOCLINUX`), and, with the network closed, `socket(AF_INET | AF_INET6,
/// ...)` and `io_uring_setup` (which could open sockets behind it); everything else, `AF_UNIX`
/// sockets included, is allowed.
fn filter(network: bool) -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let equals = |arg: u8, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(|e| e.to_string())
    };
    // `Ioctl` is `c_ulong` with glibc and `c_int` with musl.
    #[allow(clippy::useless_conversion)]
    let request = |ioctl: libc::Ioctl| u64::try_from(ioctl).map_err(|e| e.to_string());
    let mut rules = vec![(
        libc::SYS_ioctl,
        vec![
            equals(1, request(libc::TIOCSTI)?)?,
            equals(1, request(libc::TIOCLINUX)?)?,
        ],
    )];
    if !network {
        let family = |family: i32| u64::from(family.unsigned_abs());
        rules.push((
            libc::SYS_socket,
            vec![
                equals(0, family(libc::AF_INET))?,
                equals(0, family(libc::AF_INET6))?,
            ],
        ));
        rules.push((libc::SYS_io_uring_setup, Vec::new()));
    }
    let filter = SeccompFilter::new(
        rules.into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}
