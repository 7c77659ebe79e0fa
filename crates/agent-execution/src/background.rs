//! Sub-traces that run in the background of the trace that started them ([`Background`]): a
//! `delegate` call with `"background": true` answers at once, its sub-trace runs on, and the
//! parent's loop takes the ones that ended ([`Background::take_ended`]) before its next model
//! call, waits for them before it ends ([`Background::wait_ended`]), and stops the ones still
//! running when it ends another way ([`Background::stop`]).
//!
//! ```
//! use agent_execution::background::Background;
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let background = Background::default();
//! let run = tokio::spawn(async {});
//! background.start("main", "main@delegate-1", CancellationToken::new(), run);
//! assert!(background.wait_ended("main", &CancellationToken::new()).await);
//! assert_eq!(background.take_ended("main"), ["main@delegate-1"]);
//! assert!(background.running("main").is_empty());
//! # });
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::sub_trace_report::SubTraceReport;
use crate::{Message, Role};

/// How many background sub-traces one trace may have running at once.
pub const MAX_RUNNING: usize = 8;

/// The background sub-traces of the traces running in this process, by parent trace.
#[derive(Default)]
pub struct Background {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    parents: Mutex<HashMap<String, Vec<Entry>>>,
    /// Woken whenever a background sub-trace ends.
    ended: Notify,
}

struct Entry {
    trace_id: String,
    cancel: CancellationToken,
    ended: bool,
}

impl Inner {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Vec<Entry>>) -> T) -> T {
        f(&mut self.parents.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// What a background `delegate` call answers at once.
pub fn started(trace_id: &str) -> String {
    format!(
        "{STARTED}{trace_id}. Its final answer comes to you as a message when it ends; go on \
         meanwhile. Your own final answer waits for it."
    )
}

/// The message that tells the parent how the background sub-trace `trace_id` ended, around
/// `result` (what a delegate call would have answered).
pub fn ended(trace_id: &str, result: &str) -> String {
    format!("{ENDED}{trace_id} ended.\n\n{result}")
}

/// The message that tells the parent a background sub-trace it started is not running and never
/// reported its end: the process that ran both stopped (a crash, a kill) before it ended. The
/// resumed parent is told so once, with what the sub-trace did (`result`), rather than waiting
/// for an end that will not come.
pub fn interrupted(trace_id: &str, result: &str) -> String {
    format!(
        "The background delegate {trace_id} was interrupted: the agent stopped while it ran, and \
         it is not running now. Its sub-trace keeps what it did; delegate what is left again if \
         it is still needed.\n\n{result}"
    )
}

/// The background sub-traces `messages` (a trace's, in order) started whose end they do not
/// record, leaving out those `known` to be running or ended in this process: the ones a crash
/// orphaned. Only what the runner wrote counts: a `delegate` call's result naming a sub-trace of
/// the trace ([`started`]), and a user message of a `background` turn ([`ended`],
/// [`interrupted`]); the same words in a command's output or the model's text are not a start.
pub fn orphans<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
    known: &[String],
) -> Vec<String> {
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        let text = message.content.text();
        let delegated = message.role == Role::Tool
            && message.tool_name.as_deref() == Some("delegate")
            && !message.content.is_error();
        let background_turn = message.role == Role::User
            && message
                .metadata
                .get(crate::meta::TURN)
                .and_then(|v| v.as_str())
                == Some(crate::meta::Turn::Background.as_str());
        if delegated {
            let id = (text.strip_prefix(STARTED)).and_then(|rest| rest.split_once(". Its "));
            let ours = |id: &str| id.starts_with(&format!("{}@", message.trace_id));
            open.extend(
                id.map(|(id, _)| id)
                    .filter(|id| ours(id))
                    .map(str::to_owned),
            );
        } else if let Some(rest) = text.strip_prefix(ENDED).filter(|_| background_turn) {
            open.retain(|id| !rest.starts_with(&format!("{id} ")));
        }
    }
    open.retain(|id| !known.contains(id));
    open
}

/// How [`started`]'s text begins, before the sub-trace's id.
const STARTED: &str = "The delegate runs in the background as sub-trace ";
/// How [`ended`]'s and [`interrupted`]'s texts begin, before the sub-trace's id.
const ENDED: &str = "The background delegate ";

/// What the parent is told of the background sub-trace `trace_id` from its `report` (`None`
/// when it cannot be read): [`interrupted`]'s text when it was `lost` and never finished,
/// otherwise [`ended`]'s (a lost one that finished before the crash ended all the same).
pub fn end_text(trace_id: &str, report: Option<&SubTraceReport>, lost: bool) -> String {
    let Some(report) = report else {
        return ended(
            trace_id,
            "Its sub-trace cannot be read; what it did is unknown.",
        );
    };
    let (result, _) = report.delegate_result();
    if lost && !report.status.is_finished() {
        interrupted(trace_id, &result)
    } else {
        ended(trace_id, &result)
    }
}

/// A run's error with the background sub-traces stopped at its end named after it.
pub fn name_stopped(error: Option<String>, stopped: &[String]) -> Option<String> {
    if stopped.is_empty() {
        return error;
    }
    let named = format!("background delegates stopped: {}", stopped.join(", "));
    Some(error.map_or(named.clone(), |error| format!("{error}; {named}")))
}

impl Background {
    /// The background sub-traces of `parent` whose end is to be told to it now, each with
    /// whether it was lost: those that ended since the last look ([`take_ended`](Self::take_ended)),
    /// then those its messages (in order) started and never saw end that this process
    /// does not know of ([`orphans`]: a crash stopped them).
    pub fn take_ends<'a>(
        &self,
        parent: &str,
        messages: impl IntoIterator<Item = &'a Message>,
    ) -> Vec<(String, bool)> {
        let ended = self.take_ended(parent);
        let known = [self.running(parent), ended.clone()].concat();
        let lost = orphans(messages, &known).into_iter().map(|id| (id, true));
        ended
            .into_iter()
            .map(|id| (id, false))
            .chain(lost)
            .collect()
    }

    /// Why `parent` may not start one more background sub-trace; `None` when it may.
    pub fn refusal(&self, parent: &str) -> Option<String> {
        let running = self.running(parent).len();
        (running >= MAX_RUNNING).then(|| {
            format!(
                "{running} background delegates are running already, the most one agent may \
                 have; wait for their results before starting another"
            )
        })
    }

    /// Notes that `trace_id`, a sub-trace of `parent` whose run is `run`, runs in the
    /// background; `cancel` stops it. When `run` ends, the sub-trace waits in
    /// [`Self::take_ended`].
    pub fn start(
        &self,
        parent: &str,
        trace_id: &str,
        cancel: CancellationToken,
        run: JoinHandle<()>,
    ) {
        self.inner.with(|parents| {
            parents.entry(parent.to_owned()).or_default().push(Entry {
                trace_id: trace_id.to_owned(),
                cancel,
                ended: false,
            });
        });
        let (inner, parent, trace_id) =
            (self.inner.clone(), parent.to_owned(), trace_id.to_owned());
        tokio::spawn(async move {
            // A panicked run left its trace as it was; it ended all the same.
            let _ = run.await;
            inner.with(|parents| {
                let entries = parents.get_mut(&parent).into_iter().flatten();
                for entry in entries.filter(|e| e.trace_id == trace_id) {
                    entry.ended = true;
                }
            });
            inner.ended.notify_waiters();
        });
    }

    /// The background sub-traces of `parent` still running, oldest first.
    pub fn running(&self, parent: &str) -> Vec<String> {
        self.ids(parent, false)
    }

    fn ids(&self, parent: &str, ended: bool) -> Vec<String> {
        self.inner.with(|parents| {
            let entries = parents.get(parent).into_iter().flatten();
            entries
                .filter(|e| e.ended == ended)
                .map(|e| e.trace_id.clone())
                .collect()
        })
    }

    /// Takes the background sub-traces of `parent` that ended since the last take, oldest first.
    pub fn take_ended(&self, parent: &str) -> Vec<String> {
        self.inner.with(|parents| {
            let Some(entries) = parents.get_mut(parent) else {
                return Vec::new();
            };
            let (ended, running): (Vec<Entry>, Vec<Entry>) =
                std::mem::take(entries).into_iter().partition(|e| e.ended);
            *entries = running;
            if entries.is_empty() {
                parents.remove(parent);
            }
            ended.into_iter().map(|e| e.trace_id).collect()
        })
    }

    /// Waits until a background sub-trace of `parent` has ended and not been taken; false at
    /// once when none is running or waiting, or when `cancel` fires first.
    pub async fn wait_ended(&self, parent: &str, cancel: &CancellationToken) -> bool {
        loop {
            let notified = self.inner.ended.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.ids(parent, true).is_empty() {
                return true;
            }
            if self.running(parent).is_empty() || cancel.is_cancelled() {
                return false;
            }
            tokio::select! {
                () = notified => {}
                () = cancel.cancelled() => return false,
            }
        }
    }

    /// Stops the background sub-traces of `parent` still running and waits until each has
    /// recorded how it ended; returns the ones it stopped. What ended waits in
    /// [`Self::take_ended`].
    pub async fn stop(&self, parent: &str) -> Vec<String> {
        let stopped = self.inner.with(|parents| {
            let entries = parents.get(parent).into_iter().flatten();
            let running: Vec<&Entry> = entries.filter(|e| !e.ended).collect();
            for entry in &running {
                entry.cancel.cancel();
            }
            running
                .iter()
                .map(|e| e.trace_id.clone())
                .collect::<Vec<_>>()
        });
        while !self.running(parent).is_empty() {
            let notified = self.inner.ended.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.running(parent).is_empty() {
                break;
            }
            notified.await;
        }
        stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn an_ended_run_is_taken_once_and_a_stopped_one_is_named() {
        let background = Background::default();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        background.start(
            "p",
            "p@a",
            CancellationToken::new(),
            tokio::spawn(async {
                let _ = rx.await;
            }),
        );
        let cancel = CancellationToken::new();
        let long = cancel.clone();
        background.start(
            "p",
            "p@b",
            cancel,
            tokio::spawn(async move {
                long.cancelled().await;
            }),
        );
        assert_eq!(background.running("p"), ["p@a", "p@b"]);
        assert!(background.take_ended("p").is_empty());
        tx.send(()).unwrap();
        let never = CancellationToken::new();
        let waited =
            tokio::time::timeout(Duration::from_secs(5), background.wait_ended("p", &never));
        assert!(waited.await.unwrap());
        assert_eq!(background.take_ended("p"), ["p@a"]);
        assert!(background.take_ended("p").is_empty());
        // Stopping cancels the one left and waits for its end.
        assert_eq!(background.stop("p").await, ["p@b"]);
        assert!(background.running("p").is_empty());
        assert_eq!(background.take_ended("p"), ["p@b"]);
        // Nothing running: nothing to wait for.
        assert!(!background.wait_ended("p", &CancellationToken::new()).await);
    }

    #[tokio::test]
    async fn waiting_gives_up_when_the_run_is_cancelled() {
        let background = Background::default();
        let never = CancellationToken::new();
        let held = never.clone();
        background.start(
            "p",
            "p@a",
            never,
            tokio::spawn(async move { held.cancelled().await }),
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(!background.wait_ended("p", &cancel).await);
        background.stop("p").await;
    }

    #[test]
    fn only_what_the_runner_wrote_starts_or_ends_a_background_delegate() {
        let message = |role: &str, tool: Option<&str>, text: &str, turn: Option<&str>| {
            let mut value = serde_json::json!({
                "message_id": "t-1", "trace_id": "t", "role": role, "sequence": 1,
                "content": text, "description": "", "created_at": "2026-01-01T00:00:00Z",
            });
            if let Some(tool) = tool {
                value["tool_name"] = tool.into();
                value["tool_call_id"] = "c".into();
            }
            if let Some(turn) = turn {
                value["metadata"] = serde_json::json!({ "turn": turn });
            }
            serde_json::from_value::<Message>(value).unwrap()
        };
        let start = |id: &str| message("tool", Some("delegate"), &started(id), None);
        let messages = [
            start("t@delegate-1"),
            start("t@delegate-2"),
            // A command's output and the model's words that look the same start nothing.
            message("tool", Some("bash"), &started("t@delegate-3"), None),
            message("assistant", None, &started("t@delegate-4"), None),
            // Nor does a delegate result naming another trace's sub-trace.
            start("other@delegate-5"),
            // An end counts only as the runner's background turn.
            message("user", None, &ended("t@delegate-2", "x"), None),
            message(
                "user",
                None,
                &ended("t@delegate-1", "x"),
                Some("background"),
            ),
        ];
        assert_eq!(orphans(&messages, &[]), ["t@delegate-2"]);
        assert!(orphans(&messages, &["t@delegate-2".to_owned()]).is_empty());
    }
}
