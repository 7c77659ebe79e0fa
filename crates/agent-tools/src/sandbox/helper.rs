//! The sandbox helper: a mode of a program (the `agent` binary's) that confines itself and then
//! becomes the command, so that a command may create entries anywhere in a writable root while
//! its protected paths stay read-only.
//!
//! Landlock cannot take a right away below a granted folder, so the helper protects the paths
//! another way the kernel enforces: it enters a new user and mount namespace (which needs a
//! single-threaded process, hence a fresh process started for it rather than a thread of the
//! agent), binds every protected path that exists read-only onto itself there, then applies
//! Landlock (which also forbids any later change to the mounts) and the seccomp filter, and
//! `exec`s the command. The mounts exist only in the namespace, which dies with the command;
//! nothing is created in the workspace.
//!
//! Its command line: `<program> __sandbox-helper [--network] [--read-only PATH]... [--write
//! PATH]... -- COMMAND ARGS...`, or `<program> __sandbox-helper --probe` to ask whether the
//! namespaces can be had here.

use std::convert::Infallible;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::unistd::{getgid, getuid};

use super::{Confinement, HELPER_ARG, SandboxMode};

/// The exit code of a helper that could not confine the command (nothing was run).
const SETUP_FAILED: i32 = 126;

/// What the helper was asked to do.
#[derive(Debug, Default, PartialEq, Eq)]
struct Request {
    probe: bool,
    network: bool,
    read_only: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    command: Vec<OsString>,
}

/// Runs the helper with the arguments after [`HELPER_ARG`] and exits; it never returns.
pub(super) fn main(args: Vec<OsString>) -> ! {
    let error = match parse(args).and_then(run) {
        Ok(never) => match never {},
        Err(error) => error,
    };
    let _ = writeln!(std::io::stderr(), "sandbox: {error}");
    std::process::exit(SETUP_FAILED)
}

/// The helper's arguments for `confinement` and the command after them.
pub(super) fn arguments(confinement: &Confinement) -> Vec<OsString> {
    let mut args = vec![OsString::from(HELPER_ARG)];
    if confinement.network {
        args.push("--network".into());
    }
    for (flag, paths) in [
        ("--read-only", &confinement.read_only),
        ("--write", &confinement.writable),
    ] {
        for path in paths {
            args.push(flag.into());
            args.push(path.clone().into_os_string());
        }
    }
    args.push("--".into());
    args
}

fn parse(args: Vec<OsString>) -> Result<Request, String> {
    let mut request = Request::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut path = |flag: &str| {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{flag} needs a path"))
        };
        match arg.to_str() {
            Some("--probe") => request.probe = true,
            Some("--network") => request.network = true,
            Some("--read-only") => request.read_only.push(path("--read-only")?),
            Some("--write") => request.writable.push(path("--write")?),
            Some("--") => {
                request.command = args.collect();
                break;
            }
            _ => return Err(format!("unknown helper argument {arg:?}")),
        }
    }
    if !request.probe && request.command.is_empty() {
        return Err("no command to run".to_owned());
    }
    Ok(request)
}

fn run(request: Request) -> Result<Infallible, String> {
    enter_namespaces()?;
    if request.probe {
        std::process::exit(0);
    }
    for path in &request.read_only {
        bind_read_only(path).map_err(|e| format!("cannot protect {}: {e}", path.display()))?;
    }
    let confinement = Confinement {
        mode: SandboxMode::WorkspaceWrite,
        network: request.network,
        writable: request.writable,
        read_only: Vec::new(),
        helper: None,
        watched: Vec::new(),
        temp_dir: None,
        env: Vec::new(),
    };
    super::linux::apply(&confinement).map_err(|e| e.to_string())?;
    let (program, args) = request
        .command
        .split_first()
        .ok_or_else(|| "no command to run".to_owned())?;
    let error = std::process::Command::new(program).args(args).exec();
    Err(format!(
        "cannot start {}: {error}",
        program.to_string_lossy()
    ))
}

/// Enters a new user namespace (mapping this user and group onto themselves, so files keep
/// their owners) and a new mount namespace whose mounts propagate nowhere.
fn enter_namespaces() -> Result<(), String> {
    let (uid, gid) = (getuid(), getgid());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("no user namespace: {e}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))
    };
    write("/proc/self/setgroups", "deny\n".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("cannot make the mounts private: {e}"))
}

/// Binds `path` read-only onto itself, keeping the flags of the mount it is on (a user
/// namespace may not clear them).
fn bind_read_only(path: &Path) -> nix::Result<()> {
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )?;
    let kept = statvfs(path)?.flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if kept.contains(fs) {
            flags |= ms;
        }
    }
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
}

/// Whether `helper` can enter the namespaces here, or why not.
pub(super) fn probe(helper: &Path) -> Result<(), String> {
    let output = std::process::Command::new(helper)
        .args([HELPER_ARG, "--probe"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", helper.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim().trim_start_matches("sandbox: ");
    Err(if said.is_empty() {
        format!(
            "{} {HELPER_ARG} failed: {}",
            helper.display(),
            output.status
        )
    } else {
        said.to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_read_back_as_they_were_written() {
        let confinement = Confinement {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            writable: vec![PathBuf::from("/w"), PathBuf::from("/t")],
            read_only: vec![PathBuf::from("/w/.git")],
            helper: None,
            watched: Vec::new(),
            temp_dir: None,
            env: Vec::new(),
        };
        let mut args = arguments(&confinement);
        assert_eq!(
            args.first().map(|a| a.as_os_str()),
            Some(HELPER_ARG.as_ref())
        );
        args.remove(0);
        args.extend(["bash".into(), "-c".into(), "--write".into()]);
        let request = parse(args).unwrap();
        assert_eq!(
            request,
            Request {
                probe: false,
                network: true,
                read_only: confinement.read_only.clone(),
                writable: confinement.writable.clone(),
                command: vec!["bash".into(), "-c".into(), "--write".into()],
            }
        );
        assert!(parse(vec!["--write".into()]).is_err());
        assert!(parse(vec!["--bogus".into()]).is_err());
        assert!(parse(Vec::new()).is_err());
    }
}
