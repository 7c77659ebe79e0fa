//! How a terminal front end tells the person that a turn ended or a question waits for them
//! while they look elsewhere ([`TerminalNotify`], agent.toml's `[tui] notify`): the bell, an
//! OSC 9 desktop notification (`ESC ] 9 ; message BEL`, which iTerm2, WezTerm, kitty, Ghostty
//! and Windows Terminal show), or nothing. [`due`] says when: where the terminal reports its
//! focus, only while it is not focused; elsewhere, once a turn has gone on long enough that the
//! person has probably turned away ([`LONG_TURN`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A turn at least this long notifies when the terminal cannot say whether it is focused.
pub const LONG_TURN: Duration = Duration::from_secs(5);

/// The most characters of a notification's message.
const MAX_MESSAGE: usize = 200;

/// How a terminal front end notifies (agent.toml's `[tui] notify`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TerminalNotify {
    /// The terminal's bell (`BEL`): a sound, or a mark on the tab, as the terminal is set.
    #[default]
    Bell,
    /// An OSC 9 notification with the message (a terminal without them ignores it).
    Osc9,
    /// Nothing.
    Off,
}

impl TerminalNotify {
    /// The bytes that notify with `message` (none when off). The message is one line of
    /// printable text: control characters, which could end the sequence early or drive the
    /// terminal, become spaces, and it is cut at 200 characters.
    pub fn bytes(self, message: &str) -> Vec<u8> {
        match self {
            Self::Off => Vec::new(),
            Self::Bell => b"\x07".to_vec(),
            Self::Osc9 => {
                let clean: String = message
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .take(MAX_MESSAGE)
                    .collect();
                format!("\x1b]9;{}\x07", clean.trim()).into_bytes()
            }
        }
    }
}

/// Whether a moment that waits for the person (a turn's end, a question) notifies: `focused`
/// is what the terminal last reported (`None`: it never said), `took` how long the turn has
/// been going.
pub fn due(focused: Option<bool>, took: Duration) -> bool {
    match focused {
        Some(focused) => !focused,
        None => took >= LONG_TURN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_writes_its_bytes_and_a_message_cannot_break_out() {
        assert_eq!(TerminalNotify::Bell.bytes("done"), b"\x07");
        assert!(TerminalNotify::Off.bytes("done").is_empty());
        assert_eq!(
            TerminalNotify::Osc9.bytes("agent: the turn ended"),
            b"\x1b]9;agent: the turn ended\x07"
        );
        let hostile = "x\x07\x1b]0;owned\x07\n".to_owned() + &"y".repeat(500);
        let bytes = TerminalNotify::Osc9.bytes(&hostile);
        let inner = &bytes[4..bytes.len() - 1];
        assert!(!inner.iter().any(|b| b.is_ascii_control()), "{bytes:?}");
        assert_eq!(String::from_utf8_lossy(inner).chars().count(), MAX_MESSAGE);
    }

    #[test]
    fn focus_decides_where_it_is_known_and_the_turns_length_elsewhere() {
        let (short, long) = (Duration::from_secs(1), LONG_TURN);
        assert!(due(Some(false), short));
        assert!(!due(Some(true), long));
        assert!(!due(None, short));
        assert!(due(None, long));
    }

    #[test]
    fn the_setting_reads_as_agent_toml_writes_it() {
        for (text, notify) in [
            ("\"bell\"", TerminalNotify::Bell),
            ("\"osc9\"", TerminalNotify::Osc9),
            ("\"off\"", TerminalNotify::Off),
        ] {
            assert_eq!(
                serde_json::from_str::<TerminalNotify>(text).unwrap(),
                notify
            );
        }
        assert!(serde_json::from_str::<TerminalNotify>("\"loud\"").is_err());
    }
}
