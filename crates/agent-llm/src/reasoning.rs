//! A model's reasoning as its provider sent it, so that it can go back in the same form.

use serde::{Deserialize, Serialize};

/// A piece of a model's reasoning, kept as its provider sent it so that it can go back to that
/// provider in the same form: reasoning from a server returns to it in the field it came in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reasoning {
    /// Reasoning text of an OpenAI-compatible server (DeepSeek, Qwen, GLM, Kimi, vLLM, llama.cpp,
    /// OpenRouter, ...), with the response field it came in (`reasoning_content` or
    /// `reasoning`).
    Text {
        /// The field of the message the server used.
        field: String,
        /// The reasoning.
        text: String,
    },
    /// An Anthropic `thinking` block with its signature.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature Anthropic checks when the block comes back.
        signature: String,
    },
    /// An Anthropic `redacted_thinking` block.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// An OpenAI Responses API reasoning item.
    Item {
        /// The item's id.
        id: String,
        /// The reasoning summary's texts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// The encrypted reasoning, returned on the next turn (with `store: false`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

impl Reasoning {
    /// The readable text of this piece (empty for redacted or encrypted-only reasoning).
    pub fn text(&self) -> String {
        match self {
            Self::Text { text, .. } => text.clone(),
            Self::Thinking { thinking, .. } => thinking.clone(),
            Self::RedactedThinking { .. } => String::new(),
            Self::Item { summary, .. } => summary.join("\n\n"),
        }
    }
}
