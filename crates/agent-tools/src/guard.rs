//! What ends a `bash` command: its process group, or the sandbox helper it started through.

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// Ends a command when asked and again when dropped, so an abandoned call leaves nothing
/// running: its process group is killed with `SIGKILL`, or its sandbox helper is asked to stop
/// (`SIGTERM`), which kills everything the command started, however it left the group.
pub(crate) enum GroupGuard {
    /// The process group of a command started without the helper.
    Group(Pid),
    /// The sandbox helper a command was started through.
    Helper(Pid),
}

impl GroupGuard {
    pub(crate) fn kill(&self) {
        // The process may already be gone; there is nothing to do about any error.
        match self {
            Self::Group(pid) => {
                let _ = killpg(*pid, Signal::SIGKILL);
            }
            Self::Helper(pid) => {
                let _ = kill(*pid, Signal::SIGTERM);
            }
        }
    }

    /// Kills the command's first process at once.
    pub(crate) fn kill_now(&self) {
        let (Self::Group(pid) | Self::Helper(pid)) = self;
        let _ = killpg(*pid, Signal::SIGKILL);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}
