//! What a client says while it works around a server — a retry after a failed request (a rate
//! limit among them), streaming turned off for a model — as a typed [`Notice`]. Every notice is
//! a `tracing` event of target `NOTICE_TARGET` whose message is its sentence; a caller that
//! wants the notices themselves (to show a retry in a status line) makes its calls inside
//! [`watching`], and the notices of those calls are given to its sink too; a [`NoticeHub`] hands
//! the notices of many tasks to its subscribers, each labelled with its source.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use agent_llm::notice::{Notice, NoticeSink, watching};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let kept = seen.clone();
//! let sink: NoticeSink = Arc::new(move |notice: &Notice| kept.lock().unwrap().push(notice.clone()));
//! // A client's call made here gives its notices to the sink; nothing else does.
//! watching(sink, async {}).await;
//! assert!(seen.lock().unwrap().is_empty());
//! # });
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Something a client did to get an answer despite the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notice {
    /// A request failed in a way a retry can fix; it is sent again after `wait`.
    Retrying {
        /// Why it failed, on one line.
        error: String,
        /// Whether the server said it was rate limited (429).
        rate_limited: bool,
        /// How long the client waits before sending it again.
        wait: Duration,
        /// The number of the attempt that follows (2 for the first retry).
        attempt: u32,
        /// How many attempts are made at most.
        attempts: u32,
    },
    /// The server does not stream answers of `model`: whole answers are asked for from now on.
    WholeAnswers {
        /// The model.
        model: String,
        /// What the server did.
        why: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Retrying {
                error,
                wait,
                attempt,
                attempts,
                ..
            } => write!(
                f,
                "the model request failed ({error}); retrying in {:.1}s (attempt {attempt} of \
                 {attempts})",
                wait.as_secs_f64()
            ),
            Notice::WholeAnswers { model, why } => write!(
                f,
                "the server does not stream answers of {model} ({why}); asking for whole \
                 answers from now on (set stream = false for this model to skip the attempt)"
            ),
        }
    }
}

/// Where the notices of watched calls go.
pub type NoticeSink = Arc<dyn Fn(&Notice) + Send + Sync>;

tokio::task_local! {
    static SINK: NoticeSink;
}

/// Runs `future`, giving the notices of the model calls it makes to `sink` (as well as to
/// `tracing`). Calls made by tasks it spawns are not watched: each task watches its own.
pub async fn watching<F: Future>(sink: NoticeSink, future: F) -> F::Output {
    SINK.scope(sink, future).await
}

/// Gives `notice` to the sink of the calls being watched, if any.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn give(notice: &Notice) {
    let _ = SINK.try_with(|sink| sink(notice));
}

/// A notice and where it came from (for a runner, the trace whose call it was).
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedNotice {
    /// Where it came from, as the hub's user named it.
    pub source: String,
    /// What the client did.
    pub notice: Notice,
}

/// Hands the notices of calls made in many tasks to whoever subscribed, each labelled with where
/// it came from: each task watches its calls with the [`sink`](Self::sink) of its source. Nobody
/// subscribed costs nothing; a subscriber that falls behind loses the oldest notices (they are
/// of the moment).
#[derive(Debug, Clone)]
pub struct NoticeHub {
    sender: tokio::sync::broadcast::Sender<SourcedNotice>,
}

impl Default for NoticeHub {
    fn default() -> Self {
        Self {
            sender: tokio::sync::broadcast::channel(64).0,
        }
    }
}

impl NoticeHub {
    /// The notices given from now on.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<SourcedNotice> {
        self.sender.subscribe()
    }

    /// The sink of the calls of `source`, for [`watching`].
    pub fn sink(&self, source: &str) -> NoticeSink {
        let (sender, source) = (self.sender.clone(), source.to_owned());
        Arc::new(move |notice: &Notice| {
            if sender.receiver_count() > 0 {
                // Sending fails only when every subscriber is gone.
                let _ = sender.send(SourcedNotice {
                    source: source.clone(),
                    notice: notice.clone(),
                });
            }
        })
    }
}
