//! The helper's second process: the first of the command's PID namespace when there is one. It
//! mounts the namespace's own `/proc` (so no process outside, the agent included, can be seen or
//! read), leaves the terminal's session, drops every capability, confines itself and starts the
//! command; it reaps what is orphaned inside and ends with the command, which ends everything
//! else in the namespace. Without namespaces it becomes the command instead.

use std::convert::Infallible;
use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{Pid, setsid};

use super::helper::Request;

/// Runs the second process; returns only an error (before the command started).
pub(super) fn run(request: &Request) -> Result<Infallible, String> {
    // The supervisor blocked the signals it waits for; the command gets them as usual.
    SigSet::all()
        .thread_unblock()
        .map_err(|e| format!("cannot unblock signals: {e}"))?;
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|e| format!("cannot follow the supervisor: {e}"))?;
    if request.namespaces {
        mount(
            Some("proc"),
            "/proc",
            Some("proc"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            None::<&str>,
        )
        .map_err(|e| format!("cannot mount a /proc of its own: {e}"))?;
    }
    if request.probe {
        std::process::exit(0);
    }
    // No controlling terminal from here on: nothing can type into the user's.
    setsid().map_err(|e| format!("cannot leave the terminal's session: {e}"))?;
    drop_capabilities();
    super::linux::apply(&request.confinement()).map_err(|e| e.to_string())?;
    let (program, args) = request
        .command
        .split_first()
        .ok_or_else(|| "no command to run".to_owned())?;
    let mut command = Command::new(program);
    command.args(args);
    if !request.namespaces {
        let error = command.exec();
        return Err(format!(
            "cannot start {}: {error}",
            program.to_string_lossy()
        ));
    }
    let child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.to_string_lossy()))?;
    let main = i32::try_from(child.id())
        .map(Pid::from_raw)
        .map_err(|e| e.to_string())?;
    // The first process of the namespace reaps every orphan, and ends with the command.
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == main => std::process::exit(code),
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == main => {
                std::process::exit(128 + signal as i32)
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(format!("cannot wait for the command: {e}")),
        }
    }
}

/// Drops every capability, for this process and whatever it starts: the command has none, in
/// the namespace or out of it. What cannot be dropped (a user without the right to) was not held.
fn drop_capabilities() {
    use caps::CapSet;
    for capability in caps::all() {
        let _ = caps::drop(None, CapSet::Bounding, capability);
    }
    for set in [
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        let _ = caps::clear(None, set);
    }
}
