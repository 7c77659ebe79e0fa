//! Token estimation before sending a prompt.
//!
//! With the `tiktoken` feature (on by default), counts use the `o200k_base` encoding of current
//! OpenAI models, its table taken from `tiktoken-rs` at build time and embedded, so counting
//! works offline; the encoding is loaded once per process, in a few milliseconds
//! (`o200k.rs`). For other providers the count is an estimate within a
//! few percent, which is what context budgeting needs. Counts of long texts are cached by
//! content hash, so calling these on every step of an agent loop costs little more than hashing
//! the new messages.
//!
//! Without the feature, a text counts one token per 4 bytes of UTF-8, rounded up: deterministic
//! and nearly free, close for English prose, high for text in multi-byte scripts.

use crate::types::{ChatMessage, ChatRequest, ToolSpec};

/// Tokens every message costs on top of its content (role and separators).
const MESSAGE_OVERHEAD: usize = 4;
/// Tokens every tool call or tool spec costs on top of its text.
const TOOL_OVERHEAD: usize = 8;
/// Bytes of UTF-8 per token in the estimate without the `tiktoken` feature.
#[cfg(not(feature = "tiktoken"))]
const BYTES_PER_TOKEN: usize = 4;

/// The estimated number of tokens of `text`: its o200k_base count with the `tiktoken` feature,
/// else its length in bytes divided by 4, rounded up.
///
/// ```
/// let n = agent_llm::estimate_tokens("Hello, world!");
/// assert!((3..=5).contains(&n));
/// ```
pub fn estimate_tokens(text: &str) -> usize {
    count(text)
}

/// Starts loading the token encoding on a thread of its own, once per process, so that the
/// first estimate finds it ready (or waits only for the rest of the load) instead of paying
/// the whole load on the caller's thread: building the `o200k_base` map takes a few
/// milliseconds, which a run can overlap with its start-up. Without the `tiktoken` feature
/// there is nothing to load and this does nothing.
///
/// ```
/// agent_llm::prepare_token_estimates();
/// assert!((3..=5).contains(&agent_llm::estimate_tokens("Hello, world!")));
/// ```
pub fn prepare_token_estimates() {
    #[cfg(feature = "tiktoken")]
    {
        static STARTED: std::sync::Once = std::sync::Once::new();
        STARTED.call_once(|| {
            let spawned = std::thread::Builder::new()
                .name("token-encoding".into())
                .spawn(bpe::load);
            // Without a thread, the first estimate loads the encoding as it always could.
            drop(spawned);
        });
    }
}

#[cfg(feature = "tiktoken")]
use bpe::estimate as count;

/// One token per [`BYTES_PER_TOKEN`] bytes, rounded up.
#[cfg(not(feature = "tiktoken"))]
fn count(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// Counting with tiktoken's `o200k_base`, with a cache of long texts' counts.
#[cfg(feature = "tiktoken")]
mod bpe {
    use std::collections::HashMap;
    use std::hash::{DefaultHasher, Hash, Hasher};
    use std::sync::{Mutex, OnceLock};

    use crate::o200k::encoding;

    /// Texts shorter than this are counted directly; longer ones go through the cache.
    const CACHE_MIN_LEN: usize = 256;
    /// The cache is cleared when it holds this many entries.
    const CACHE_MAX_ENTRIES: usize = 20_000;
    /// Words longer than this (minified code, base64) are estimated from their length, since
    /// byte-pair merging is quadratic in the length of one word.
    const LONG_WORD: usize = 200;
    /// Text is handed to the encoder in pieces of about this many bytes.
    const CHUNK: usize = 4_096;

    /// Loads the encoding (see [`prepare_token_estimates`](super::prepare_token_estimates)).
    pub(super) fn load() {
        encoding();
    }

    fn cache() -> &'static Mutex<HashMap<u64, usize>> {
        static CACHE: OnceLock<Mutex<HashMap<u64, usize>>> = OnceLock::new();
        CACHE.get_or_init(|| Mutex::new(HashMap::new()))
    }

    /// The token count of `text`, from the cache when it is long and was counted before.
    pub(super) fn estimate(text: &str) -> usize {
        if text.len() < CACHE_MIN_LEN {
            return count_uncached(text);
        }
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if let Ok(cache) = cache().lock()
            && let Some(&count) = cache.get(&key)
        {
            return count;
        }
        let count = count_uncached(text);
        if let Ok(mut cache) = cache().lock() {
            if cache.len() >= CACHE_MAX_ENTRIES {
                cache.clear();
            }
            cache.insert(key, count);
        }
        count
    }

    fn count_uncached(text: &str) -> usize {
        let Some(bpe) = encoding() else {
            return text.len().div_ceil(4);
        };
        if text.len() <= CHUNK && !text.split_whitespace().any(|word| word.len() > LONG_WORD) {
            return bpe.count(text);
        }
        let mut total = 0;
        let mut start = 0;
        let mut pending_end = 0;
        for (offset, word) in split_words(text) {
            if word.trim().len() > LONG_WORD {
                total += bpe.count(&text[start..pending_end]);
                total += word.len().div_ceil(3);
                start = offset + word.len();
                pending_end = start;
                continue;
            }
            pending_end = offset + word.len();
            if pending_end - start >= CHUNK {
                total += bpe.count(&text[start..pending_end]);
                start = pending_end;
            }
        }
        total + bpe.count(&text[start..pending_end])
    }

    /// The words of `text`, each with the whitespace after it, and their byte offsets.
    fn split_words(text: &str) -> impl Iterator<Item = (usize, &str)> {
        text.split_inclusive(char::is_whitespace)
            .scan(0, |offset, word| {
                let at = *offset;
                *offset += word.len();
                Some((at, word))
            })
    }
}

/// The estimated prompt tokens of one message, its pictures counted by the default rule
/// ([`ImageTokens::default`](crate::ImageTokens)).
pub fn estimate_message_tokens(message: &ChatMessage) -> usize {
    let calls: usize = message
        .tool_calls()
        .iter()
        .map(|call| estimate_tokens(&call.name) + estimate_tokens(&call.arguments) + TOOL_OVERHEAD)
        .sum();
    let images: usize = message
        .images()
        .iter()
        .map(|image| crate::ImageTokens::default().estimate(image.width, image.height))
        .sum();
    MESSAGE_OVERHEAD + estimate_tokens(message.text()) + calls + images
}

/// The estimated prompt tokens of a conversation.
///
/// ```
/// use agent_llm::{estimate_messages_tokens, ChatMessage};
/// let messages = [ChatMessage::system("Be brief."), ChatMessage::user("Hi")];
/// assert!(estimate_messages_tokens(&messages) > 4);
/// ```
pub fn estimate_messages_tokens(messages: &[ChatMessage]) -> usize {
    messages.iter().map(estimate_message_tokens).sum()
}

/// The estimated prompt tokens of tool specs.
pub fn estimate_tools_tokens(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|tool| {
            estimate_tokens(&tool.name)
                + estimate_tokens(&tool.description)
                + estimate_tokens(&tool.parameters.to_string())
                + TOOL_OVERHEAD
        })
        .sum()
}

/// The estimated prompt tokens of a whole request: messages and tool specs.
pub fn estimate_request_tokens(request: &ChatRequest) -> usize {
    estimate_messages_tokens(&request.messages) + estimate_tools_tokens(&request.tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolCall;

    #[cfg(feature = "tiktoken")]
    #[test]
    fn counts_match_the_encoder_for_ordinary_text() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(200);
        let exact = tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(&text)
            .len();
        let estimate = estimate_tokens(&text);
        assert!(
            estimate.abs_diff(exact) <= exact / 50,
            "{estimate} vs {exact}"
        );
        assert_eq!(estimate_tokens(&text), estimate, "cached count is stable");
    }

    #[test]
    fn long_words_are_estimated_quickly() {
        let blob = "x".repeat(2_000_000);
        let started = std::time::Instant::now();
        let n = estimate_tokens(&blob);
        assert!(n > 100_000);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[cfg(not(feature = "tiktoken"))]
    #[test]
    fn without_tiktoken_a_token_is_four_bytes_rounded_up() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("é"), 1);
        assert_eq!(estimate_tokens(&"x".repeat(4_001)), 1_001);
    }

    #[test]
    fn empty_text_is_zero_and_messages_carry_overhead() {
        assert_eq!(estimate_tokens(""), 0);
        let call = ToolCall::new("c1", "read_file", r#"{"path":"a.rs"}"#);
        let message = ChatMessage::assistant(None, vec![call]);
        assert!(estimate_message_tokens(&message) > MESSAGE_OVERHEAD + TOOL_OVERHEAD);
    }
}
