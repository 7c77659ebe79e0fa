//! A command in a pane of a real terminal multiplexer, `tmux`, on a server of its own (its own
//! socket, no configuration file): for what [`pty`](crate::pty) cannot show, the pane's
//! scrollback — what stays in the terminal above the screen once a full-screen program leaves
//! its alternate screen. The pane stays after the command exits, so what it left can be read.
//!
//! ```no_run
//! # fn main() {
//! use agent_test_support::tmux::Pane;
//! let pane = Pane::spawn(std::process::Command::new("seq").arg("500"), 80, 24);
//! pane.wait_until_exit();
//! assert!(pane.scrollback().contains("\n1\n"));
//! # }
//! ```

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long [`Pane::wait_for`] waits.
const PATIENCE: Duration = Duration::from_secs(60);

/// A command in a tmux pane; the tmux server is killed when dropped.
pub struct Pane {
    socket: String,
}

/// Runs `tmux -L <socket> <args>` and returns its output; panics when tmux cannot be started.
fn tmux(socket: &str, args: &[&str]) -> Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("cannot run tmux: install it (apt-get install tmux, or scripts/setup-tmux.sh)")
}

impl Pane {
    /// Starts `command` (its program, arguments, environment and folder; `TERM` is tmux's) in
    /// the one pane, `columns` × `rows`, of a new tmux server.
    pub fn spawn(command: &Command, columns: u16, rows: u16) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "agent-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let (columns, rows) = (columns.to_string(), rows.to_string());
        let mut args: Vec<String> = [
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &columns,
            "-y",
            &rows,
        ]
        .map(str::to_owned)
        .to_vec();
        if let Some(dir) = command.get_current_dir() {
            args.extend(["-c".to_owned(), dir.to_string_lossy().into_owned()]);
        }
        // `env` gives the command its environment: the variables it sets, without those it
        // removes (which the tmux server, started from this process, would otherwise pass on).
        args.extend(["--".to_owned(), "env".to_owned()]);
        let envs: Vec<_> = command.get_envs().collect();
        for (name, _) in envs.iter().filter(|(_, value)| value.is_none()) {
            args.extend(["-u".to_owned(), name.to_string_lossy().into_owned()]);
        }
        for (name, value) in &envs {
            if let Some(value) = value {
                let (name, value) = (name.to_string_lossy(), value.to_string_lossy());
                args.push(format!("{name}={value}"));
            }
        }
        args.push(command.get_program().to_string_lossy().into_owned());
        args.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
        // The pane stays when the command exits (its scrollback keeps tmux's 2,000 lines).
        args.extend([";", "set-option", "-g", "remain-on-exit", "on"].map(str::to_owned));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = tmux(&socket, &args);
        assert!(
            started.status.success(),
            "tmux could not start the command: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        Self { socket }
    }

    /// The visible screen, one line per row, trailing spaces and empty rows trimmed.
    pub fn screen(&self) -> String {
        self.capture(&[])
    }

    /// Everything the pane holds: the scrollback, then the visible screen.
    pub fn scrollback(&self) -> String {
        self.capture(&["-S", "-"])
    }

    fn capture(&self, range: &[&str]) -> String {
        let mut args = vec!["capture-pane", "-p", "-J"];
        args.extend_from_slice(range);
        let captured = tmux(&self.socket, &args);
        let text = String::from_utf8_lossy(&captured.stdout);
        let rows: Vec<&str> = text.lines().map(str::trim_end).collect();
        rows.join("\n").trim_end().to_owned()
    }

    /// Types `text` as it is (no key names).
    pub fn type_text(&self, text: &str) {
        tmux(&self.socket, &["send-keys", "-l", text]);
    }

    /// Presses the key `name` as tmux names it (`Enter`, `C-d`, `Escape`).
    pub fn press(&self, name: &str) {
        tmux(&self.socket, &["send-keys", name]);
    }

    /// Waits until the screen shows `text` and returns the screen; panics with the screen after
    /// a minute.
    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited a minute for {text:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (up to a minute) for the command to exit; returns its exit status as tmux saw it.
    pub fn wait_until_exit(&self) -> Option<i32> {
        /// How long a dead pane may show no status before the process is taken as killed.
        const REAPED: Duration = Duration::from_secs(10);
        let deadline = Instant::now() + PATIENCE;
        let mut dead_since = None;
        loop {
            let shown = tmux(
                &self.socket,
                &["display-message", "-p", "#{pane_dead} #{pane_dead_status}"],
            );
            let shown = String::from_utf8_lossy(&shown.stdout).trim().to_owned();
            // The pane is dead once its terminal is closed, and has a status once tmux has
            // reaped the process, which may still be finishing after it let go of the terminal:
            // the status is read again until it is there (a signal leaves it empty for good).
            if let Some(status) = shown.strip_prefix("1") {
                let status = status.trim();
                if !status.is_empty() || dead_since.is_some_and(|t: Instant| t.elapsed() > REAPED) {
                    return status.parse().ok();
                }
                dead_since.get_or_insert_with(Instant::now);
            }
            assert!(
                Instant::now() < deadline,
                "the command did not exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
