//! Linux enforcement: Landlock for writes, a seccomp filter for internet sockets.
//!
//! Both are applied to the calling thread only (no `TSYNC`), which the caller dedicates to
//! starting one command; the command inherits them and cannot lift them.

use landlock::{
    ABI, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{Confinement, SandboxConfig, SandboxError};

/// The Landlock ABI whose write rights are handled: create, delete, write, truncate and
/// cross-directory link or rename. Reads and `ioctl`s on devices stay unrestricted.
const LANDLOCK_ABI: ABI = ABI::V3;

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
    if !config.network {
        network_filter().map_err(|e| unsupported(format!("no seccomp filter: {e}")))?;
    }
    Ok(())
}

/// Confines the calling thread.
pub(super) fn apply(confinement: &Confinement) -> Result<(), SandboxError> {
    let unsupported = |reason: String| SandboxError::Unsupported {
        mode: confinement.mode,
        reason,
    };
    let write = AccessFs::from_write(LANDLOCK_ABI);
    let mut ruleset = Ruleset::default()
        .handle_access(write)
        .and_then(|ruleset| ruleset.create())
        .map_err(|e| unsupported(format!("Landlock: {e}")))?;
    for path in &confinement.writable {
        // A path that vanished since it was listed is simply not granted.
        let Ok(fd) = PathFd::new(path) else {
            continue;
        };
        let access = if path.is_dir() {
            write
        } else {
            write & AccessFs::from_file(LANDLOCK_ABI)
        };
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
    if !confinement.network {
        let filter = network_filter().map_err(|e| unsupported(format!("seccomp: {e}")))?;
        seccompiler::apply_filter(&filter).map_err(|e| unsupported(format!("seccomp: {e}")))?;
    }
    Ok(())
}

/// A filter that fails `socket(AF_INET | AF_INET6, ...)` and `io_uring_setup` (which could open
/// sockets behind it) with `EACCES`; everything else, `AF_UNIX` sockets included, is allowed.
fn network_filter() -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let domain = |family: i32| {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            u64::from(family.unsigned_abs()),
        )
        .and_then(|condition| SeccompRule::new(vec![condition]))
        .map_err(|e| e.to_string())
    };
    let rules = [
        (
            libc::SYS_socket,
            vec![domain(libc::AF_INET)?, domain(libc::AF_INET6)?],
        ),
        (libc::SYS_io_uring_setup, Vec::new()),
    ];
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
