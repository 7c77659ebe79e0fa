//! Telling the person that the session waits for them — a turn ended, or a question (an
//! approval, a server's form) appeared — while they look elsewhere: the bell or an OSC 9
//! notification, as agent.toml's `[tui] notify` says
//! ([`TerminalNotify`], and [`due`] for when). The terminal reports its focus while the screen
//! is up (`terminal.rs` asks for it); until it has said anything, a turn that went on for a few
//! seconds stands for the person having turned away.

use std::io::Write;
use std::time::{Duration, Instant};

use agent_runner::interaction::TerminalNotify;
use agent_runner::interaction::notify::due;

/// Where notifications go, how, and what the terminal said of its focus.
pub(crate) struct Notifier {
    how: TerminalNotify,
    /// What the terminal last reported; `None` until it reports.
    focused: Option<bool>,
    /// When the turn going on started.
    turn_started: Option<Instant>,
    out: Box<dyn Write + Send>,
}

impl Notifier {
    /// Notifies `how`, on `out`.
    pub(crate) fn new(how: TerminalNotify, out: Box<dyn Write + Send>) -> Self {
        Self {
            how,
            focused: None,
            turn_started: None,
            out,
        }
    }

    /// The terminal gained (`true`) or lost the focus.
    pub(crate) fn focus(&mut self, focused: bool) {
        self.focused = Some(focused);
    }

    /// A turn starts now.
    pub(crate) fn turn_started(&mut self, now: Instant) {
        self.turn_started = Some(now);
    }

    /// How long the turn going on (or the one that just ended) has been going at `now`.
    fn took(&self, now: Instant) -> Duration {
        self.turn_started.map_or(Duration::ZERO, |started| {
            now.saturating_duration_since(started)
        })
    }

    /// The turn ended at `now`: notifies with `message` when it is due.
    pub(crate) fn turn_ended(&mut self, now: Instant, message: &str) {
        let took = self.took(now);
        self.turn_started = None;
        self.notify(took, message);
    }

    /// A question waits for the person at `now`: notifies with `message` when it is due.
    pub(crate) fn question(&mut self, now: Instant, message: &str) {
        self.notify(self.took(now), message);
    }

    fn notify(&mut self, took: Duration, message: &str) {
        if !due(self.focused, took) {
            return;
        }
        let bytes = self.how.bytes(message);
        if !bytes.is_empty() {
            // A terminal that cannot be written to shows nothing either way.
            let _ = self.out.write_all(&bytes).and_then(|()| self.out.flush());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test reads.
    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<u8>>>);

    impl Write for Seen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seen {
        fn take(&self) -> Vec<u8> {
            std::mem::take(&mut self.0.lock().unwrap())
        }
    }

    fn notifier(how: TerminalNotify) -> (Notifier, Seen) {
        let seen = Seen::default();
        (Notifier::new(how, Box::new(seen.clone())), seen)
    }

    #[test]
    fn without_focus_reports_only_a_long_turn_notifies() {
        let (mut notifier, seen) = notifier(TerminalNotify::Bell);
        let start = Instant::now();
        notifier.turn_started(start);
        notifier.turn_ended(start + Duration::from_secs(1), "done");
        assert!(seen.take().is_empty(), "a short turn is watched");
        notifier.turn_started(start);
        notifier.question(start + Duration::from_secs(1), "asks");
        assert!(seen.take().is_empty());
        notifier.question(start + Duration::from_secs(6), "asks");
        assert_eq!(seen.take(), b"\x07");
        notifier.turn_ended(start + Duration::from_secs(30), "done");
        assert_eq!(seen.take(), b"\x07");
    }

    #[test]
    fn with_focus_reports_only_an_unfocused_terminal_is_notified() {
        let (mut notifier, seen) = notifier(TerminalNotify::Osc9);
        let start = Instant::now();
        notifier.focus(true);
        notifier.turn_started(start);
        notifier.turn_ended(start + Duration::from_secs(60), "agent: done");
        assert!(seen.take().is_empty(), "the person is looking");
        notifier.focus(false);
        notifier.turn_started(start);
        notifier.question(start, "agent: bash waits for your approval");
        assert_eq!(
            seen.take(),
            b"\x1b]9;agent: bash waits for your approval\x07"
        );
        notifier.turn_ended(start, "agent: done");
        assert_eq!(seen.take(), b"\x1b]9;agent: done\x07");
    }

    #[test]
    fn off_writes_nothing() {
        let (mut notifier, seen) = notifier(TerminalNotify::Off);
        notifier.focus(false);
        notifier.turn_started(Instant::now());
        notifier.turn_ended(Instant::now() + Duration::from_secs(60), "done");
        assert!(seen.take().is_empty());
    }
}
