//! The sandbox helper: a mode of a program (the `agent` binary's) that starts a command, or a
//! stdio MCP server, confined, and outlives none of it.
//!
//! It runs as two processes. The first, the supervisor (`supervise.rs`), stays outside the
//! sandbox: with namespaces it enters a new user, mount, PID and IPC namespace (and a network
//! namespace when the network is off), makes every mount read-only but the writable roots, binds
//! the protected paths read-only, covers the Unix sockets of services outside, and starts the
//! second process, which is the first of the new PID namespace. That one (`init.rs`) mounts a
//! `/proc` of its own, leaves the terminal's session (`setsid`), drops every capability, confines
//! itself (Landlock and seccomp, `linux.rs`) and starts the command; when the command ends it
//! ends, and the kernel kills everything else in the namespace with it. Without namespaces (where
//! the kernel refuses them) the supervisor is the subreaper of the command instead, and kills
//! whatever it left once it ends. Either way the supervisor kills everything when it is asked to
//! stop (`SIGTERM`) or when the agent that started it is gone.
//!
//! Its command line: `<program> __sandbox-helper [--namespaces] [--network] [--read-only
//! PATH]... [--write PATH]... [--socket PATH]... -- COMMAND ARGS...`; the supervisor starts the
//! second process with `--init` first and the same arguments. `<program> __sandbox-helper
//! --probe` says whether the namespaces can be had here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Confinement, HELPER_ARG};

/// The exit code of a helper that could not confine the command (nothing was run).
pub(super) const SETUP_FAILED: i32 = 126;

/// What the helper was asked to do.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Request {
    /// Only say whether the namespaces can be had.
    pub(super) probe: bool,
    /// This is the second process, inside the namespaces.
    pub(super) init: bool,
    /// Give the command namespaces of its own.
    pub(super) namespaces: bool,
    /// Leave the network open.
    pub(super) network: bool,
    /// Paths bound read-only onto themselves.
    pub(super) read_only: Vec<PathBuf>,
    /// Paths the command may write.
    pub(super) writable: Vec<PathBuf>,
    /// Unix sockets the command may reach with the network off (`@name` for an abstract one).
    pub(super) sockets: Vec<String>,
    /// The command and its arguments.
    pub(super) command: Vec<OsString>,
}

impl Request {
    /// The arguments that ask for this request (after [`HELPER_ARG`]).
    pub(super) fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        for (flag, on) in [
            ("--probe", self.probe),
            ("--init", self.init),
            ("--namespaces", self.namespaces),
            ("--network", self.network),
        ] {
            if on {
                args.push(flag.into());
            }
        }
        for (flag, paths) in [
            ("--read-only", &self.read_only),
            ("--write", &self.writable),
        ] {
            for path in paths {
                args.push(flag.into());
                args.push(path.clone().into_os_string());
            }
        }
        for socket in &self.sockets {
            args.push("--socket".into());
            args.push(socket.into());
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }

    /// The confinement the second process applies to itself.
    pub(super) fn confinement(&self) -> Confinement {
        Confinement {
            network: self.network,
            writable: self.writable.clone(),
            unix_sockets: self.sockets.clone(),
            ..Confinement::inert()
        }
    }
}

/// The helper's arguments for `confinement`, to be followed by the command.
pub(super) fn arguments(confinement: &Confinement) -> Vec<OsString> {
    let request = Request {
        namespaces: confinement.namespaces,
        network: confinement.network,
        read_only: confinement.read_only.clone(),
        writable: confinement.writable.clone(),
        sockets: confinement.unix_sockets.clone(),
        ..Request::default()
    };
    let mut args = vec![OsString::from(HELPER_ARG)];
    args.extend(request.to_args());
    args
}

pub(super) fn parse(args: Vec<OsString>) -> Result<Request, String> {
    let mut request = Request::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.to_str() {
            Some("--probe") => request.probe = true,
            Some("--init") => request.init = true,
            Some("--namespaces") => request.namespaces = true,
            Some("--network") => request.network = true,
            Some("--read-only") => request.read_only.push(value("--read-only")?.into()),
            Some("--write") => request.writable.push(value("--write")?.into()),
            Some("--socket") => request
                .sockets
                .push(value("--socket")?.to_string_lossy().into_owned()),
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

/// Whether `helper` can give commands namespaces of their own here, or why not.
pub(super) fn probe(helper: &Path) -> Result<(), String> {
    let output = std::process::Command::new(helper)
        .args([HELPER_ARG, "--probe", "--namespaces", "--"])
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
            namespaces: true,
            network: true,
            writable: vec![PathBuf::from("/w"), PathBuf::from("/t")],
            read_only: vec![PathBuf::from("/w/.git")],
            unix_sockets: vec!["/run/x.sock".to_owned(), "@bus".to_owned()],
            ..Confinement::inert()
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
                namespaces: true,
                network: true,
                read_only: confinement.read_only.clone(),
                writable: confinement.writable.clone(),
                sockets: confinement.unix_sockets.clone(),
                command: vec!["bash".into(), "-c".into(), "--write".into()],
                ..Request::default()
            }
        );
        let init = Request {
            init: true,
            ..request.clone()
        };
        assert_eq!(parse(init.to_args()).unwrap(), init);
        assert!(parse(vec!["--write".into()]).is_err());
        assert!(parse(vec!["--bogus".into()]).is_err());
        assert!(parse(Vec::new()).is_err());
    }
}
