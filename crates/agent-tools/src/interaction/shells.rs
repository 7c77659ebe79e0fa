//! `/shells`: the background shells of a conversation's run as a person sees them — one line
//! each with its id, state (running, or how it ended), age and command — and stopping one
//! (`/shells kill ID`). The line mode prints the lines; the full-screen UI lists them in a view
//! where a key stops the chosen one. The shells themselves are [`crate::shells`]'.

use chrono::{DateTime, Utc};

pub use crate::shells::{ShellState, ShellStatus};

/// What `/shells` says when the run has no background shell.
pub const NONE_RUNNING: &str = "no background shells: the model starts them with bash {\"background\": true}, and they end \
     with the turn that started them";

/// The background shells of `trace_id`'s run and the runs below it, oldest first.
pub fn of_run(trace_id: &str) -> Vec<ShellStatus> {
    crate::shells::list(trace_id)
}

/// How long ago `started_at` (RFC 3339) was at `now`: `42s`, `3m 05s`, `2h 10m`; `?` when it
/// does not parse.
pub fn age(started_at: &str, now: DateTime<Utc>) -> String {
    let Ok(started) = DateTime::parse_from_rfc3339(started_at) else {
        return "?".to_owned();
    };
    let secs = (now - started.with_timezone(&Utc)).num_seconds().max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// One shell as `/shells` lists it: id, state, age and command (on one line, its control
/// characters shown as `?`: the model wrote it).
pub fn line(status: &ShellStatus, now: DateTime<Utc>) -> String {
    let command: String = status
        .command
        .chars()
        .map(|c| match c {
            '\n' | '\t' => ' ',
            c if c.is_control() => '?',
            c => c,
        })
        .collect();
    format!(
        "{}  {:<20}  {:>7}  {command}",
        status.id,
        status.state.to_string(),
        age(&status.started_at, now)
    )
}

/// Stops the shell `id` of `trace_id`'s run: what to tell the person either way.
pub fn kill(trace_id: &str, id: &str) -> Result<String, String> {
    match crate::shells::kill(trace_id, id) {
        Some(status) if status.state.ended() => Ok(format!(
            "shell {} had already ended ({})",
            status.id, status.state
        )),
        Some(status) => Ok(format!(
            "stopping shell {} (`{}`)",
            status.id, status.command
        )),
        None => {
            let ids: Vec<String> = of_run(trace_id).into_iter().map(|s| s.id).collect();
            Err(match ids.is_empty() {
                true => format!("there is no background shell {id:?}: none is running"),
                false => format!(
                    "there is no background shell {id:?}; the run has {}",
                    ids.join(", ")
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(command: &str, state: ShellState) -> ShellStatus {
        ShellStatus {
            id: "sh-3f2a".into(),
            trace_id: "t".into(),
            command: command.into(),
            state,
            output_bytes: 0,
            started_at: "2026-01-02T03:04:05Z".into(),
        }
    }

    #[test]
    fn a_line_says_id_state_age_and_command() {
        let now = DateTime::parse_from_rfc3339("2026-01-02T03:06:10Z")
            .unwrap()
            .to_utc();
        let running = status("npm run dev", ShellState::Running);
        assert_eq!(
            line(&running, now),
            "sh-3f2a  running                2m 05s  npm run dev"
        );
        let exited = status("make\twatch\x1b[2J", ShellState::Exited { code: 2 });
        assert_eq!(
            line(&exited, now),
            "sh-3f2a  exited with code 2     2m 05s  make watch?[2J"
        );
        assert_eq!(age("2026-01-02T03:06:01Z", now), "9s");
        assert_eq!(age("2026-01-02T00:00:05Z", now), "3h 06m");
        assert_eq!(age("yesterday", now), "?");
    }

    #[test]
    fn killing_an_unknown_shell_says_so() {
        let error = kill("no-such-run", "sh-0000").unwrap_err();
        assert!(error.contains("none is running"), "{error}");
    }
}
