//! What the mock server answers to one request: a status, headers, a delay, and a body that is
//! JSON, a scripted model [`Turn`] (rendered in the request's wire format), raw server-sent
//! events, or nothing at all; streamed bodies can pause between pieces and end cleanly, hang,
//! break the connection, or trickle forever.

use std::time::Duration;

use axum::body::Bytes;
use serde_json::Value;

use super::turn::Turn;

/// One scripted answer of the [`MockModelServer`](super::MockModelServer).
///
/// Build it with a constructor ([`Reply::json`], [`Reply::error`], [`Reply::sse`],
/// [`Reply::openai_stream`], [`Reply::anthropic_stream`], [`Reply::trickle`], [`Reply::hang`],
/// or a [`Turn`] through `From`), then adjust it with the `with_*` and `then_*` methods.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) delay: Duration,
    pub(super) body: Body,
    pub(super) stream: StreamShape,
}

/// The body of a reply.
#[derive(Debug, Clone)]
pub(super) enum Body {
    /// A JSON document.
    Json(Value),
    /// A model turn, rendered as JSON or as events depending on the request.
    Turn(Turn),
    /// Raw server-sent-event pieces, sent as they are.
    Sse(Vec<Bytes>),
    /// No response at all: the request is read and never answered.
    Hang,
}

/// How a streamed body is sent: its pieces re-cut, the pause between pieces, and its end.
#[derive(Debug, Clone, Default)]
pub(super) struct StreamShape {
    pub(super) split_every: Option<usize>,
    pub(super) pause: Duration,
    pub(super) end: End,
}

/// What happens after the last piece of a streamed body.
#[derive(Debug, Clone, Default)]
pub(super) enum End {
    /// The body ends (the stream is complete at the HTTP level, whatever its events said).
    #[default]
    Finish,
    /// The connection stays open and nothing more is sent.
    Hang,
    /// The connection is broken: the body ends without its HTTP terminator.
    Reset,
    /// This piece is sent again after every pause, forever.
    Repeat(Bytes),
}

impl Reply {
    fn new(status: u16, body: Body) -> Self {
        Self {
            status,
            headers: Vec::new(),
            delay: Duration::ZERO,
            body,
            stream: StreamShape::default(),
        }
    }

    /// A 200 answer with this JSON body.
    pub fn json(body: Value) -> Self {
        Self::new(200, Body::Json(body))
    }

    /// An error status with this JSON body.
    pub fn error(status: u16, body: Value) -> Self {
        Self::new(status, Body::Json(body))
    }

    /// A 200 `text/event-stream` body made of these raw pieces, each sent as one write.
    pub fn sse<S: Into<String>>(pieces: impl IntoIterator<Item = S>) -> Self {
        let pieces = pieces.into_iter().map(|p| Bytes::from(p.into())).collect();
        Self::new(200, Body::Sse(pieces))
    }

    /// An OpenAI-style stream: each chunk as a `data:` event, then `data: [DONE]`.
    pub fn openai_stream(chunks: &[Value]) -> Self {
        let mut pieces: Vec<String> = chunks.iter().map(sse_data).collect();
        pieces.push(SSE_DONE.to_owned());
        Self::sse(pieces)
    }

    /// An Anthropic-style stream: each event as `event: <its type>` and `data:`.
    pub fn anthropic_stream(events: &[Value]) -> Self {
        Self::sse(events.iter().map(sse_event))
    }

    /// A 200 stream that sends `piece` every `every`, forever.
    pub fn trickle(piece: impl Into<String>, every: Duration) -> Self {
        let mut reply = Self::new(200, Body::Sse(Vec::new()));
        reply.stream.pause = every;
        reply.stream.end = End::Repeat(Bytes::from(piece.into()));
        reply
    }

    /// No answer: the request is read and the response never starts.
    pub fn hang() -> Self {
        Self::new(200, Body::Hang)
    }

    /// Adds a response header (e.g. `retry-after`).
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before sending the response headers.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Waits this long before each piece of a streamed body, and before its end.
    #[must_use]
    pub fn with_pause(mut self, pause: Duration) -> Self {
        self.stream.pause = pause;
        self
    }

    /// Re-cuts a streamed body into pieces of `bytes` bytes, so that lines, events and JSON
    /// tokens are split across network reads.
    #[must_use]
    pub fn with_pieces_of(mut self, bytes: usize) -> Self {
        self.stream.split_every = Some(bytes.max(1));
        self
    }

    /// After its pieces, a streamed body sends nothing more and keeps the connection open.
    #[must_use]
    pub fn then_hang(mut self) -> Self {
        self.stream.end = End::Hang;
        self
    }

    /// After its pieces, a streamed body breaks the connection mid-body.
    #[must_use]
    pub fn then_reset(mut self) -> Self {
        self.stream.end = End::Reset;
        self
    }
}

impl From<Turn> for Reply {
    fn from(turn: Turn) -> Self {
        Self::new(200, Body::Turn(turn))
    }
}

/// The end of an OpenAI-style stream.
pub const SSE_DONE: &str = "data: [DONE]\n\n";

/// One `data:` server-sent event carrying this JSON.
pub fn sse_data(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// One typed server-sent event: `event: <data.type>` then `data:` (the Anthropic form).
pub fn sse_event(data: &Value) -> String {
    let kind = data["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {data}\n\n")
}

/// `pieces` joined and cut again every `bytes` bytes.
pub(super) fn recut(pieces: Vec<Bytes>, bytes: usize) -> Vec<Bytes> {
    let joined: Vec<u8> = pieces.concat();
    joined.chunks(bytes).map(Bytes::copy_from_slice).collect()
}
