//! What the model client is doing about its server, from the runner's notices
//! ([`agent_runner::AgentRunner::notices`]): a request retried after a failure — a rate limit
//! said as such — is shown at the front of the status line with the time left before the next
//! attempt, until an answer arrives or the turn ends; a model the server will not stream is said
//! once in the conversation.

use std::time::Duration;

use agent_runner::Notice;

use crate::app::{App, Retrying};

/// How long a retry stays in the status line after its wait, when nothing else clears it.
const LINGER: Duration = Duration::from_secs(30);

impl App {
    /// Takes a notice of the model client of the session's trace.
    pub fn client_notice(&mut self, notice: &Notice) {
        match notice {
            Notice::Retrying {
                error,
                rate_limited,
                wait,
                attempt,
                attempts,
            } => {
                self.model_notice = Some(Retrying {
                    rate_limited: *rate_limited,
                    error: error.clone(),
                    attempt: (*attempt, *attempts),
                    at: self.now + *wait,
                });
            }
            other => self.notice(other.to_string()),
        }
    }
}

/// The retry going on, as the status line says it: `rate limited · retrying in 12s (attempt 2
/// of 4)`, or the failure's first words and the same.
pub(crate) fn status_text(app: &App) -> Option<String> {
    let shown = app.model_notice.as_ref()?;
    if app.now > shown.at + LINGER {
        return None;
    }
    let left = shown.at.saturating_duration_since(app.now);
    let when = match left.as_secs_f64().ceil() as u64 {
        0 => "retrying now".to_owned(),
        secs => format!("retrying in {secs}s"),
    };
    let why = match shown.rate_limited {
        true => "rate limited".to_owned(),
        false => {
            let first: String = shown.error.chars().take(40).collect();
            match first.len() < shown.error.len() {
                true => format!("{first}…"),
                false => first,
            }
        }
    };
    let (attempt, attempts) = shown.attempt;
    Some(format!("{why} · {when} (attempt {attempt} of {attempts})"))
}
