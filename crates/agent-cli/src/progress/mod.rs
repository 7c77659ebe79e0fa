//! A run as it goes: the model's text on stdout as it streams (rendered Markdown on a terminal,
//! plain text in a pipe, see `text.rs`), and on stderr the progress (`lines.rs`): the goals as
//! they start and end, one line per tool call with its result, each turn's reasoning (a dimmed
//! summary, or its whole text with `--show-reasoning`). On a terminal a spinner below the text
//! shows the unfinished line of the answer and the state (the goal, the command running,
//! tokens and cost); it is cleared before anything is written, so it never covers the text.
//! With `--output-format stream-json` every event and text delta goes to stdout instead, one
//! JSON object per line. With progress off (`--json`, `-p`), what the run tells a person (its
//! model's window, a server that hides the tools from the model, an empty answer, each
//! compaction) still reaches stderr, as `agent: …` lines.

use std::io::IsTerminal;
use std::time::Duration;

mod lines;
mod text;

use agent_execution::{DeltaKind, EventKind, LiveDelta, LiveEvent, LiveStream, Role};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};

use self::lines::State;
use self::text::TextOut;
use crate::output::print;

/// Where progress goes.
enum Sink {
    Spinner(ProgressBar),
    Lines,
    Quiet,
}

impl Sink {
    fn line(&self, text: &str) {
        match self {
            Sink::Spinner(bar) => bar.println(text),
            Sink::Lines => eprintln_safe(text),
            Sink::Quiet => {}
        }
    }
}

#[allow(clippy::print_stderr)]
fn eprintln_safe(text: &str) {
    eprintln!("{text}");
}

/// The terminal mode of standard input before the spinner turned off the echo of control keys,
/// to put back when the spinner ends (or the process exits on Ctrl-C).
static SAVED_MODE: std::sync::Mutex<Option<nix::sys::termios::Termios>> =
    std::sync::Mutex::new(None);

/// Stops the terminal from echoing `^C` while the spinner is drawn: the spinner keeps the
/// cursor at the end of a full line, so an echo would wrap under it and leave the spinner's
/// line behind when it is cleared. Ctrl-C still interrupts. Nothing happens off a terminal.
fn quiet_control_keys() {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return;
    }
    let Ok(mode) = nix::sys::termios::tcgetattr(&stdin) else {
        return;
    };
    let mut quiet = mode.clone();
    quiet
        .local_flags
        .remove(nix::sys::termios::LocalFlags::ECHOCTL);
    if nix::sys::termios::tcsetattr(&stdin, nix::sys::termios::SetArg::TCSANOW, &quiet).is_ok()
        && let Ok(mut saved) = SAVED_MODE.lock()
    {
        *saved = Some(mode);
    }
}

/// Puts back the terminal mode [`quiet_control_keys`] changed, if it did.
pub(crate) fn restore_terminal() {
    let saved = SAVED_MODE.lock().ok().and_then(|mut saved| saved.take());
    if let Some(mode) = saved {
        let _ = nix::sys::termios::tcsetattr(
            std::io::stdin(),
            nix::sys::termios::SetArg::TCSANOW,
            &mode,
        );
    }
}

/// Whether progress is shown, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    /// A spinner on a terminal, plain lines otherwise.
    Auto,
    /// Nothing.
    Off,
    /// Every event and text delta on stdout, one JSON object per line.
    StreamJson,
}

/// How a run is shown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shown {
    /// Where progress goes.
    pub(crate) mode: ProgressMode,
    /// Whether reasoning is printed in full rather than summarised (`--show-reasoning`).
    pub(crate) show_reasoning: bool,
    /// Whether the changes of file edits are shown as they are made (`--yes`: nobody was
    /// asked, so nobody saw them in an approval).
    pub(crate) show_edits: bool,
}

/// Follows a run's events until its `trace_completed` and shows them: the model's text on
/// stdout as it streams (`text.rs`), progress on stderr. Returns the text it wrote on stdout, as
/// the model sent it.
pub(crate) async fn follow(mut events: LiveStream, shown: Shown) -> String {
    let sink = match shown.mode {
        ProgressMode::Off => Sink::Quiet,
        ProgressMode::StreamJson => {
            stream_json(events).await;
            return String::new();
        }
        ProgressMode::Auto if std::io::stderr().is_terminal() => {
            let bar = ProgressBar::new_spinner();
            let style = ProgressStyle::with_template("{prefix}{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            crate::output::show_spinner(Some(bar.clone()));
            quiet_control_keys();
            Sink::Spinner(bar)
        }
        ProgressMode::Auto => Sink::Lines,
    };
    let mut text = match shown.mode {
        ProgressMode::Auto => TextOut::stdout(),
        _ => TextOut::off(),
    };
    let mut state = State::new(shown.show_reasoning, shown.show_edits);
    while let Some(item) = events.next().await {
        let Ok(item) = item else { break };
        // Drawing waits while an approval question holds the terminal: it blocks this thread,
        // not the runtime's other tasks (the run that a Ctrl-C must reach).
        let done = tokio::task::block_in_place(|| show(item, &sink, &mut state, &mut text));
        if done {
            break;
        }
    }
    text.end();
    if let Sink::Spinner(bar) = &sink {
        crate::output::show_spinner(None);
        bar.finish_and_clear();
        restore_terminal();
    }
    text.into_streamed()
}

/// Shows one item of the feed; true when it ends the run.
fn show(item: LiveEvent, sink: &Sink, state: &mut State, text: &mut TextOut) -> bool {
    let event = match item {
        LiveEvent::Delta(delta) => {
            match delta.kind {
                DeltaKind::Text => text.push(&delta.delta),
                DeltaKind::Report => text.push_report(&delta.delta),
                DeltaKind::Reasoning => {}
            }
            refresh(sink, state, text);
            return false;
        }
        LiveEvent::Stored(event) => event,
    };
    let done = matches!(event.kind, EventKind::TraceCompleted { .. });
    let answered = matches!(&event.kind,
        EventKind::MessageAdded { message, .. } if message.role == Role::Assistant);
    if done || answered {
        text.finish();
    }
    if let EventKind::MessageAdded { message, .. } = &event.kind
        && message.role == Role::User
        && message
            .metadata
            .contains_key(agent_execution::continuation::CONTINUATION_KEY)
    {
        text.continue_next();
    }
    // What the run tells a person (its notices, its compactions) reaches stderr even when
    // progress is off (`--json`, `-p`).
    let told = matches!(
        &event.kind,
        EventKind::Notice { .. } | EventKind::CompactionFailed { .. }
    ) || matches!(&event.kind, EventKind::MessageAdded { message, .. }
            if agent_execution::meta::MessageMeta::of(message).compaction);
    for line in state.apply(&event.kind) {
        match sink {
            Sink::Quiet if told => eprintln_safe(&format!("agent: {}", line.trim_start())),
            _ => sink.line(&line),
        }
    }
    refresh(sink, state, text);
    done
}

/// Redraws the spinner: the unfinished line of the answer above the status, never over the
/// text.
fn refresh(sink: &Sink, state: &State, text: &TextOut) {
    if let Sink::Spinner(bar) = sink {
        let preview = text
            .preview()
            .map(|rows| format!("{rows}\n"))
            .unwrap_or_default();
        bar.set_prefix(preview);
        bar.set_message(state.status_line());
    }
}

/// Prints every event and delta of the run on stdout, one JSON object per line, until its
/// `trace_completed`. A delta is `{"event": "text_delta" | "reasoning_delta", "trace_id",
/// "goal_id", "delta"}`, as the API's watch sends it.
async fn stream_json(mut events: LiveStream) {
    while let Some(item) = events.next().await {
        let Ok(item) = item else { break };
        let (value, done) = match &item {
            LiveEvent::Delta(delta) => (delta_json(delta), false),
            LiveEvent::Stored(event) => (
                serde_json::to_value(event).unwrap_or_default(),
                matches!(event.kind, EventKind::TraceCompleted { .. }),
            ),
        };
        print(&value.to_string());
        if done {
            break;
        }
    }
}

/// A delta as one JSON object.
fn delta_json(delta: &LiveDelta) -> serde_json::Value {
    let event = match delta.kind {
        // The closing report is text of the run, as the API's watch sends it.
        DeltaKind::Text | DeltaKind::Report => "text_delta",
        DeltaKind::Reasoning => "reasoning_delta",
    };
    serde_json::json!({
        "event": event,
        "trace_id": delta.trace_id,
        "goal_id": delta.goal_id,
        "delta": delta.delta,
    })
}

/// A status as its JSON word (`completed`, `failed`, ...).
pub(crate) fn status_word(status: agent_execution::TraceStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{status:?}").to_lowercase())
}
