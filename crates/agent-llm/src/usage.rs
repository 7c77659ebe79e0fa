//! The token counts of one model call ([`Usage`]), reported by its provider or estimated.

use serde::{Deserialize, Serialize};

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// All input tokens, cached ones included.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// The part of `prompt_tokens` served from the provider's prompt cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Whether the counts are this crate's estimate rather than the provider's report (a
    /// server that streams without a `usage` chunk). Not serialised when false, so stored
    /// usage of reported counts keeps its form.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl Usage {
    /// Usage from prompt and completion counts, with nothing cached.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens: 0,
            estimated: false,
        }
    }

    /// An estimate of prompt and completion counts ([`Usage::estimated`] set).
    pub fn estimate(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Usage {
            estimated: true,
            ..Usage::new(prompt_tokens, completion_tokens)
        }
    }

    /// Prompt plus completion tokens.
    pub fn total_tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens + other.prompt_tokens,
            completion_tokens: self.completion_tokens + other.completion_tokens,
            cached_tokens: self.cached_tokens + other.cached_tokens,
            estimated: self.estimated || other.estimated,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}
