//! What a request asks of a turn beyond its messages ([`ToolChoice`]) and how a turn ended
//! ([`FinishReason`]), in the words every provider's are mapped to.

use serde::{Deserialize, Serialize};

/// Whether the model may, must or must not call a tool in its answer.
///
/// A request with tools and no choice is sent as [`ToolChoice::Auto`] to OpenAI-compatible
/// servers, because some (llama.cpp's server among them) render the tools into the prompt only
/// when a choice is given. A request without tools sends no choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides between text and tool calls.
    Auto,
    /// The model answers in text; the tools are still described (a summary call that must not
    /// wander off into tool calls).
    None,
    /// The model must call at least one tool.
    Required,
}

impl ToolChoice {
    /// The OpenAI wire name: `auto`, `none` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "required",
        }
    }
}

/// Why a model stopped generating, mapped from each provider's word for it.
///
/// ```
/// use agent_llm::FinishReason;
/// assert_eq!(FinishReason::from_provider("length"), FinishReason::Length);
/// assert_eq!(FinishReason::from_provider("max_tokens"), FinishReason::Length);
/// assert_eq!(FinishReason::from_provider("end_turn"), FinishReason::Stop);
/// assert!(matches!(FinishReason::from_provider("pause_turn"), FinishReason::Other(_)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model finished its answer (`stop`, Anthropic's `end_turn` and `stop_sequence`).
    Stop,
    /// The answer was cut at the token limit (`length`, Anthropic's `max_tokens`, the
    /// Responses API's `max_output_tokens`): it is incomplete, and tool call arguments in it
    /// may be truncated JSON.
    Length,
    /// The model asked for tool calls (`tool_calls`, the legacy `function_call`, Anthropic's
    /// `tool_use`).
    ToolCalls,
    /// The provider's content filter stopped the answer (`content_filter`, Anthropic's
    /// `refusal`).
    ContentFilter,
    /// Another reason, as the provider said it.
    Other(String),
}

impl FinishReason {
    /// The reason a provider's finish word stands for.
    pub fn from_provider(reason: &str) -> Self {
        match reason {
            "stop" | "end_turn" | "stop_sequence" | "eos" => FinishReason::Stop,
            "length" | "max_tokens" | "max_output_tokens" | "model_length" => FinishReason::Length,
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}
