//! A pseudo-terminal for testing what a user sees: a command runs as the session leader of a
//! new pty (so Ctrl-C typed there is a SIGINT to it, as on a real terminal), its output is fed
//! to a terminal emulator (`vt100`), and the test reads the screen and types keys.
//!
//! ```no_run
//! # fn main() {
//! use agent_test_support::pty::Terminal;
//! let mut terminal = Terminal::spawn(std::process::Command::new("cat"));
//! terminal.send("hello\r");
//! terminal.wait_for("hello");
//! # }
//! ```

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Rows of the screen: tall enough that the tests' sessions never scroll.
const ROWS: u16 = 200;
/// Columns of the screen.
const COLUMNS: u16 = 120;
/// How long [`Terminal::wait_for`] waits.
const PATIENCE: Duration = Duration::from_secs(60);

/// A command running on a pseudo-terminal, killed when dropped.
pub struct Terminal {
    child: Child,
    input: File,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Every byte the command wrote, for what leaves no mark on the screen (a bell, an OSC
    /// notification, a mode switched on).
    written: Arc<Mutex<Vec<u8>>>,
}

impl Terminal {
    /// Starts `command` with its standard input, output and error on a new pty that is its
    /// controlling terminal, with `TERM=xterm-256color`.
    pub fn spawn(command: Command) -> Self {
        let pty = nix::pty::openpty(
            Some(&nix::pty::Winsize {
                ws_row: ROWS,
                ws_col: COLUMNS,
                ws_xpixel: 0,
                ws_ypixel: 0,
            }),
            None,
        )
        .expect("cannot open a pseudo-terminal");
        let slave: OwnedFd = pty.slave;
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("cannot duplicate the pty"));
        // util-linux's `setsid --ctty` makes the command a session leader whose controlling
        // terminal is its standard input, the pty, as a login shell's is.
        let mut command = under_setsid(&command);
        command
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave))
            .env("TERM", "xterm-256color");
        let child = command.spawn().expect("cannot start the command");
        drop(slave);
        let master = File::from(pty.master);
        let mut output = master.try_clone().expect("cannot duplicate the pty");
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            ROWS.try_into().expect("rows"),
            COLUMNS.try_into().expect("columns"),
            0,
        )));
        let fed = screen.clone();
        let written = Arc::new(Mutex::new(Vec::new()));
        let kept = written.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            // Reading fails with EIO once the command and its children closed the pty.
            while let Ok(read) = output.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                fed.lock().unwrap().process(&buffer[..read]);
                kept.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        Self {
            child,
            input: master,
            screen,
            written,
        }
    }

    /// The text on the screen now, one line per row (a long line the terminal wrapped is on
    /// several), trailing spaces and empty rows at the bottom trimmed.
    pub fn screen(&self) -> String {
        let parser = self.screen.lock().unwrap();
        let rows: Vec<String> = parser
            .screen()
            .rows(0, COLUMNS)
            .map(|row| row.trim_end().to_owned())
            .collect();
        rows.join("\n").trim_end().to_owned()
    }

    /// The row the cursor is on, as text: where the command is waiting for input.
    pub fn cursor_row(&self) -> String {
        let parser = self.screen.lock().unwrap();
        let screen = parser.screen();
        let (row, _) = screen.cursor_position();
        screen
            .rows(0, COLUMNS)
            .nth(row as usize)
            .unwrap_or_default()
    }

    /// Whether the command asked the terminal to report mouse buttons (the wheel among them).
    pub fn reports_mouse(&self) -> bool {
        let parser = self.screen.lock().unwrap();
        parser.screen().mouse_protocol_mode() != vt100::MouseProtocolMode::None
    }

    /// How many times the command wrote `bytes` so far.
    pub fn count_written(&self, bytes: &[u8]) -> usize {
        let written = self.written.lock().unwrap();
        written.windows(bytes.len()).filter(|w| *w == bytes).count()
    }

    /// Whether the first row showing `text` draws every one of its characters bold (the text
    /// and what comes before it on the row are taken as one column per character).
    pub fn is_bold(&self, text: &str) -> bool {
        let parser = self.screen.lock().unwrap();
        let screen = parser.screen();
        let rows: Vec<String> = screen.rows(0, COLUMNS).collect();
        let Some((row, at)) = rows
            .iter()
            .enumerate()
            .find_map(|(index, row)| row.find(text).map(|at| (index, at)))
        else {
            return false;
        };
        let column = rows[row][..at].chars().count();
        (0..text.chars().count()).all(|offset| {
            screen
                .cell(row as u16, (column + offset) as u16)
                .is_some_and(vt100::Cell::bold)
        })
    }

    /// Waits until the screen shows `text` and returns the screen; panics with the screen
    /// after a minute.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?} on the screen"), |screen| {
            screen.contains(text)
        })
    }

    /// Waits until `ready` holds for the screen and returns the screen; panics with `what` and
    /// the screen after a minute.
    pub fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited a minute for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys` (`\r` is Enter, `\u{3}` Ctrl-C, `\u{4}` Ctrl-D).
    pub fn send(&mut self, keys: &str) {
        self.input
            .write_all(keys.as_bytes())
            .and_then(|()| self.input.flush())
            .expect("cannot type on the pty");
    }

    /// Waits (up to a minute) for the command to exit and returns its exit code (`None` when a
    /// signal ended it).
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("cannot wait for the command") {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "the command did not exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id of the command.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// `setsid --ctty <command>`, with the command's arguments, environment and folder.
fn under_setsid(command: &Command) -> Command {
    let mut wrapped = Command::new("setsid");
    wrapped
        .arg("--ctty")
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
