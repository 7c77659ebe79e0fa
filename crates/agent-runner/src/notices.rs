//! The notices of the model calls a runner makes (a retry after a failed request, a rate limit,
//! streaming turned off), for the front ends that show them as they happen
//! ([`AgentRunner::notices`](crate::AgentRunner::notices)): every run and sub-trace watches its
//! calls' notices ([`agent_llm::notice::watching`]) and sends them, with its trace id, to the
//! runner's subscribers. Nobody subscribed costs nothing; a subscriber that falls behind loses
//! the oldest (they are of the moment, and the record does not keep them).

use std::sync::Arc;

use agent_llm::notice::{Notice, NoticeSink};
use tokio::sync::broadcast;

use crate::engine::Engine;
use crate::runner::AgentRunner;

/// How many notices a subscriber may fall behind before it loses the oldest.
pub(crate) const CAPACITY: usize = 64;

/// A notice of a model call made for a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelNotice {
    /// The trace whose call it was (a sub-trace's id for a sub-agent's call).
    pub trace_id: String,
    /// What the client did.
    pub notice: Notice,
}

/// The sink of the calls of `trace_id`'s run: the runner's subscribers.
pub(crate) fn sink(engine: &Engine, trace_id: &str) -> NoticeSink {
    let sender = engine.notices.clone();
    let trace_id = trace_id.to_owned();
    Arc::new(move |notice: &Notice| {
        if sender.receiver_count() > 0 {
            // Sending fails only when every subscriber is gone.
            let _ = sender.send(ModelNotice {
                trace_id: trace_id.clone(),
                notice: notice.clone(),
            });
        }
    })
}

impl AgentRunner {
    /// The notices of the model calls of this runner's runs from now on (a retry, a rate
    /// limit), each with the trace whose call it was.
    pub fn notices(&self) -> broadcast::Receiver<ModelNotice> {
        self.engine.notices.subscribe()
    }
}
