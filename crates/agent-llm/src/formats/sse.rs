//! Server-sent events: the framing both providers stream in, decoded from any stream of byte
//! chunks (a live response body or a recorded one) by a provider's [`SseDecoder`].

use std::collections::VecDeque;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};

use crate::client::ChatStream;
use crate::error::LlmError;
use crate::types::ChatEvent;

/// Turns the server-sent events of one provider into [`ChatEvent`]s.
pub(crate) trait SseDecoder: Send + 'static {
    /// The chat events one server-sent event carries.
    fn decode(&mut self, event: &Event) -> Result<Vec<ChatEvent>, LlmError>;
    /// Whether the provider has said the response is complete (nothing more is read).
    fn is_done(&self) -> bool;
    /// The last events, or an error, when the body ends.
    fn end(&mut self) -> Result<Vec<ChatEvent>, LlmError>;
}

/// The chat events of a body given as a stream of byte chunks (a live response, or a recorded
/// one), decoded by `decoder`.
pub(crate) fn decode_sse<B, S, D>(bytes: S, decoder: D) -> ChatStream
where
    B: AsRef<[u8]>,
    S: Stream<Item = Result<B, LlmError>> + Send + 'static,
    D: SseDecoder,
{
    struct State<S, D> {
        events: S,
        decoder: D,
        pending: VecDeque<ChatEvent>,
        finished: bool,
        /// Whether the body held any server-sent event.
        seen: bool,
    }
    let events = Box::pin(bytes.eventsource());
    let state = State {
        events,
        decoder,
        pending: VecDeque::new(),
        finished: false,
        seen: false,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((Ok(event), state));
            }
            if state.finished {
                return None;
            }
            let outcome = match state.events.next().await {
                Some(Ok(event)) => {
                    state.seen = true;
                    let decoded = state.decoder.decode(&event);
                    state.finished = state.decoder.is_done();
                    decoded
                }
                Some(Err(EventStreamError::Transport(error))) => Err(error),
                Some(Err(EventStreamError::Utf8(err))) => Err(LlmError::malformed(format!(
                    "the stream is not UTF-8: {err}"
                ))),
                Some(Err(EventStreamError::Parser(err))) => Err(LlmError::malformed(format!(
                    "the stream is not server-sent events: {err}"
                ))),
                // A body that ends cleanly without a single event is the server's way of
                // declining to answer, whatever the provider.
                None if !state.seen => {
                    state.finished = true;
                    Err(LlmError::EmptyResponse {
                        message: "the event stream ended before its first event".into(),
                    })
                }
                None => {
                    state.finished = true;
                    state.decoder.end()
                }
            };
            match outcome {
                Ok(decoded) => state.pending.extend(decoded),
                Err(error) => {
                    state.finished = true;
                    state.pending.clear();
                    return Some((Err(error), state));
                }
            }
        }
    }))
}
