//! Where log output goes while the full-screen UI owns the terminal: standard error is sent to
//! a log file under the user's state folder (`$XDG_STATE_HOME/agent/agent.log`, else
//! `~/.local/state/agent/agent.log`), so that no log line, notice or stray write of the process
//! or of the commands it starts draws over the screen. `-v` and `RUST_LOG` keep working: what
//! they ask for is written there. Standard error is put back when the UI leaves, and by a panic
//! before the panic is printed.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether standard error goes to the log file now.
static REDIRECTED: AtomicBool = AtomicBool::new(false);

/// Whether standard error goes to the log file now (log lines are then written without
/// colours).
pub(crate) fn redirected() -> bool {
    REDIRECTED.load(Ordering::Relaxed)
}

/// The log file: `agent.log` in `$XDG_STATE_HOME/agent`, else in `~/.local/state/agent`.
pub(crate) fn log_file() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local").join("state")))
        .map(|dir| dir.join("agent").join("agent.log"))
}

/// Standard error sent to the log file until this is dropped.
pub(crate) struct Redirect {
    /// The log file.
    pub(crate) path: PathBuf,
    /// Standard error as it was.
    saved: Arc<OwnedFd>,
    /// The log file's length when the redirection began.
    start: u64,
}

impl Redirect {
    /// Sends standard error to the log file, after a line that says which session follows;
    /// `None` (and standard error left alone) when the file cannot be opened.
    pub(crate) fn begin(what: &str) -> Option<Self> {
        let path = log_file()?;
        std::fs::create_dir_all(path.parent()?).ok()?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .ok()?;
        let start = file.metadata().ok()?.len();
        let _ = writeln!(
            file,
            "--- {what} · {} · pid {}",
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            std::process::id()
        );
        let _ = std::io::stderr().flush();
        let saved = Arc::new(nix::unistd::dup(std::io::stderr().as_fd()).ok()?);
        nix::unistd::dup2_stderr(file.as_fd()).ok()?;
        REDIRECTED.store(true, Ordering::Relaxed);
        // A panic is printed where people see it: standard error is put back first.
        let previous = std::panic::take_hook();
        let during = saved.clone();
        std::panic::set_hook(Box::new(move |info| {
            put_back(&during);
            previous(info);
        }));
        Some(Self { path, saved, start })
    }

    /// Whether anything was written to the log file since the redirection began, besides its
    /// first line.
    pub(crate) fn wrote(&self) -> bool {
        let header = 1;
        std::fs::read(&self.path).is_ok_and(|bytes| {
            bytes
                .get(self.start as usize..)
                .is_some_and(|new| new.iter().filter(|b| **b == b'\n').count() > header)
        })
    }
}

/// Puts standard error back.
fn put_back(saved: &OwnedFd) {
    REDIRECTED.store(false, Ordering::Relaxed);
    let _ = nix::unistd::dup2_stderr(saved.as_fd());
}

impl Drop for Redirect {
    fn drop(&mut self) {
        put_back(&self.saved);
    }
}
