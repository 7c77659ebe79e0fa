//! The helper's first process, the supervisor: it stays outside the sandbox, prepares the
//! namespaces (or becomes a subreaper without them), starts the second process (`init.rs`) and
//! makes sure nothing the command started is left once it ends, once the agent asks it to stop
//! (`SIGTERM`, `SIGINT`, `SIGHUP`), or once the agent that started it is gone.

use std::convert::Infallible;
use std::os::fd::AsFd;
use std::process::Command;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, poll};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getgid, getpid, getppid, getuid};

use super::helper::Request;
use super::{HELPER_ARG, mounts};

/// How often (in milliseconds) the supervisor checks that the agent that started it is still
/// there.
const PARENT_POLL: u16 = 100;

/// Runs the supervisor; returns only an error (before the command started).
pub(super) fn run(request: &Request) -> Result<Infallible, String> {
    let parent = getppid();
    let mut init = Request {
        init: true,
        ..request.clone()
    };
    if request.namespaces {
        // The sockets of the services outside are listed in the network namespace they live in.
        let covered = if request.network {
            Vec::new()
        } else {
            mounts::outside_sockets(&request.writable, &request.sockets)
        };
        enter_namespaces(request)?;
        if mounts::prepare(request, &covered)? {
            init.writable.push(mounts::SHM.into());
        }
        pass_capabilities()?;
    } else {
        nix::sys::prctl::set_child_subreaper(true)
            .map_err(|e| format!("cannot become a subreaper: {e}"))?;
    }
    // One thread only (a process that left its PID namespace cannot start threads): the
    // signals it waits for arrive on a descriptor it polls, with the agent checked in between.
    let mut watched = stop_signals();
    watched.add(Signal::SIGCHLD);
    watched
        .thread_block()
        .map_err(|e| format!("cannot block signals: {e}"))?;
    let signals = SignalFd::with_flags(&watched, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| format!("cannot watch signals: {e}"))?;
    let child = Command::new("/proc/self/exe")
        .arg(HELPER_ARG)
        .args(init.to_args())
        .spawn()
        .map_err(|e| format!("cannot start the sandbox: {e}"))?;
    let pid = i32::try_from(child.id())
        .map(Pid::from_raw)
        .map_err(|e| e.to_string())?;
    let mut stopped = None;
    let status = loop {
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
            other => break other,
        }
        let mut ready = [PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut ready, PARENT_POLL);
        while let Ok(Some(info)) = signals.read_signal() {
            let signal = Signal::try_from(i32::try_from(info.ssi_signo).unwrap_or(0));
            if let Ok(signal) = signal
                && signal != Signal::SIGCHLD
            {
                stopped.get_or_insert(128 + signal as i32);
                let _ = kill(pid, Signal::SIGKILL);
            }
        }
        if stopped.is_none() && getppid() != parent {
            // The agent is gone, however it went.
            stopped = Some(128 + Signal::SIGKILL as i32);
            let _ = kill(pid, Signal::SIGKILL);
        }
    };
    if !request.namespaces {
        // Without a PID namespace the command's leftovers were handed to this subreaper.
        kill_descendants();
    }
    // Outside the namespace the whole of it is gone once its first process is reaped.
    match (stopped, status) {
        (None, Ok(WaitStatus::Exited(_, code))) => std::process::exit(code),
        (None, Ok(WaitStatus::Signaled(_, signal, _))) => die_of(signal),
        (None, _) => std::process::exit(super::helper::SETUP_FAILED),
        (Some(code), _) => std::process::exit(code),
    }
}

/// The signals that ask the supervisor to stop the command.
fn stop_signals() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(signal);
    }
    set
}

/// Enters a new user namespace (this user and group mapped onto themselves, so files keep their
/// owners), mount, PID and IPC namespace, and a network namespace when the network is off and no
/// abstract socket is let through.
fn enter_namespaces(request: &Request) -> Result<(), String> {
    let (uid, gid) = (getuid(), getgid());
    let mut flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC;
    if !request.network && !request.sockets.iter().any(|s| s.starts_with('@')) {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| format!("no user namespace: {e}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))
    };
    write("/proc/self/setgroups", "deny\n".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// Lets the second process keep what it needs across `exec` (a process of another user than
/// root loses its capabilities there): mounting its `/proc`, and dropping the rest for good.
fn pass_capabilities() -> Result<(), String> {
    use caps::{CapSet, Capability};
    for capability in [Capability::CAP_SYS_ADMIN, Capability::CAP_SETPCAP] {
        for set in [CapSet::Inheritable, CapSet::Ambient] {
            caps::raise(None, set, capability)
                .map_err(|e| format!("cannot keep {capability} for the sandbox: {e}"))?;
        }
    }
    Ok(())
}

/// Kills every process left below this one (a subreaper: orphans of the command come here) and
/// reaps them, until none is left.
fn kill_descendants() {
    let me = getpid();
    loop {
        for child in children_of(me) {
            let _ = kill(child, Signal::SIGKILL);
        }
        match waitpid(None::<Pid>, None) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}

/// The processes whose parent is `parent`, read from `/proc`.
fn children_of(parent: Pid) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parent_in_stat(&stat))
                == Some(parent.as_raw())
        })
        .map(Pid::from_raw)
        .collect()
}

/// The parent pid field of a `/proc/PID/stat` line (the name in parentheses may hold anything).
fn parent_in_stat(stat: &str) -> Option<i32> {
    let (_, after) = stat.rsplit_once(") ")?;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Ends this process the way the command ended: by the same signal where it kills, else with
/// the shell's code for it.
fn die_of(signal: Signal) -> ! {
    let _ = SigSet::all().thread_unblock();
    let _ = nix::sys::signal::raise(signal);
    std::process::exit(128 + signal as i32)
}

#[cfg(test)]
mod tests {
    use super::parent_in_stat;

    #[test]
    fn the_parent_is_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parent_in_stat("42 (a) b) S 7 42 42 0"), Some(7));
        assert_eq!(parent_in_stat("1 (init) S 0 1 1"), Some(0));
        assert_eq!(parent_in_stat("garbage"), None);
    }
}
