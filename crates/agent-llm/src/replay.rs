//! Decoding a recorded streaming response: the bytes a provider sent, in the chunks they came
//! in, go through the same server-sent-events parsing and wire-format decoding as a live stream.
//! For replaying captured responses in tests and for fuzzing the stream decoders.

use crate::client::ChatStream;
use crate::error::LlmError;
use crate::formats;
use crate::formats::sse::decode_sse;

/// The wire format of a streamed response: one variant per provider feature enabled
/// (`openai`, `openai-responses`, `anthropic`), hence non-exhaustive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamFormat {
    /// OpenAI-compatible chat completions: `data:` chunks ending with `data: [DONE]`.
    #[cfg(feature = "openai")]
    OpenAi,
    /// The OpenAI Responses API: typed events from `response.created` to `response.completed`.
    #[cfg(feature = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages: typed events from `message_start` to `message_stop`.
    #[cfg(feature = "anthropic")]
    Anthropic,
}

/// The chat events of a streamed response body given as the chunks it arrived in, decoded
/// exactly as the provider clients decode a live one (without
/// the idle deadline, which only a live connection has).
///
/// ```
/// use agent_llm::{StreamFormat, collect_stream, decode_recorded_stream};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let body = concat!(
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n",
///     "data: [DONE]\n\n",
/// );
/// // Split anywhere: the decoder reassembles events across chunks.
/// let (a, b) = body.as_bytes().split_at(30);
/// let stream = decode_recorded_stream(StreamFormat::OpenAi, vec![a.to_vec(), b.to_vec()]);
/// let response = collect_stream(stream).await.unwrap();
/// assert_eq!(response.text.as_deref(), Some("Hello"));
/// # });
/// ```
pub fn decode_recorded_stream(format: StreamFormat, chunks: Vec<Vec<u8>>) -> ChatStream {
    let bytes = futures::stream::iter(chunks.into_iter().map(Ok::<_, LlmError>));
    match format {
        #[cfg(feature = "openai")]
        StreamFormat::OpenAi => decode_sse(bytes, formats::openai::StreamDecoder::default()),
        #[cfg(feature = "openai-responses")]
        StreamFormat::OpenAiResponses => {
            decode_sse(bytes, formats::responses::StreamDecoder::default())
        }
        #[cfg(feature = "anthropic")]
        StreamFormat::Anthropic => decode_sse(bytes, formats::anthropic::StreamDecoder::default()),
    }
}
