//! Where the pieces of an answer go while a model call streams: the trace's live feed, as
//! live-only deltas ([`LiveDelta`]) tied to the goal the answer will be recorded under.

use agent_llm::ChatEvent;

use crate::{DeltaKind, EventBus, LiveDelta};

/// Where the pieces of an answer go while it streams: the trace's live feed, tied to the goal
/// the answer will be recorded under. The sink keeps the text of the call going on, so that
/// what arrived before a cancellation can be recorded.
pub struct DeltaSink<'a> {
    bus: &'a EventBus,
    trace_id: &'a str,
    goal_id: Option<&'a str>,
    /// What the answer's text is published as: the answer's, or the closing report's.
    text: DeltaKind,
    /// The text of the current call so far.
    arrived: std::sync::Mutex<String>,
}

impl<'a> DeltaSink<'a> {
    /// A sink for the text of an answer tied to `goal_id`.
    pub fn answer(bus: &'a EventBus, trace_id: &'a str, goal_id: Option<&'a str>) -> Self {
        Self {
            bus,
            trace_id,
            goal_id,
            text: DeltaKind::Text,
            arrived: std::sync::Mutex::default(),
        }
    }

    /// A sink for the text of the closing report.
    pub fn report(bus: &'a EventBus, trace_id: &'a str) -> Self {
        Self {
            text: DeltaKind::Report,
            ..Self::answer(bus, trace_id, None)
        }
    }

    /// The text of the last call, as far as it arrived.
    pub fn arrived(&self) -> String {
        self.arrived
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Starts a new call: what arrived of the last one is forgotten.
    pub fn start(&self) {
        self.arrived
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Publishes the piece of text or reasoning `event` carries, if any.
    pub fn publish(&self, event: &ChatEvent) {
        let (kind, delta) = match event {
            ChatEvent::Text(text) => {
                self.arrived
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push_str(text);
                (self.text, text)
            }
            ChatEvent::ReasoningText { delta, .. } => (DeltaKind::Reasoning, delta),
            ChatEvent::ReasoningPreview(text) => (DeltaKind::Reasoning, text),
            _ => return,
        };
        if delta.is_empty() {
            return;
        }
        self.bus.publish_delta(LiveDelta {
            trace_id: self.trace_id.to_owned(),
            goal_id: self.goal_id.map(str::to_owned),
            kind,
            delta: delta.clone(),
        });
    }
}
