//! What is known about common models: context windows and output limits.

/// Facts about a model that callers plan around.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelInfo {
    /// The most tokens (prompt plus completion) the model accepts.
    pub context_window: usize,
    /// The most tokens the model generates in one turn, when known.
    pub max_output_tokens: Option<u32>,
}

/// The context window assumed for a model this crate does not know (local models and new
/// releases). Clients let users set the real value.
pub const DEFAULT_CONTEXT_WINDOW: usize = 128_000;

/// Known models by name prefix: the longest matching prefix wins.
const KNOWN_MODELS: &[(&str, usize, Option<u32>)] = &[
    ("gpt-4o", 128_000, Some(16_384)),
    ("gpt-4o-mini", 128_000, Some(16_384)),
    ("gpt-4.1", 1_047_576, Some(32_768)),
    ("gpt-4-turbo", 128_000, Some(4_096)),
    ("gpt-4", 8_192, Some(8_192)),
    ("gpt-3.5-turbo", 16_385, Some(4_096)),
    ("gpt-5", 400_000, Some(128_000)),
    ("o1", 200_000, Some(100_000)),
    ("o3", 200_000, Some(100_000)),
    ("o4-mini", 200_000, Some(100_000)),
    ("claude-", 200_000, Some(8_192)),
    ("claude-3-haiku", 200_000, Some(4_096)),
    ("claude-3-opus", 200_000, Some(4_096)),
    ("claude-3-7-sonnet", 200_000, Some(64_000)),
    ("claude-sonnet-4", 200_000, Some(64_000)),
    ("claude-opus-4", 200_000, Some(32_000)),
    ("claude-haiku-4", 200_000, Some(64_000)),
    ("deepseek-chat", 128_000, Some(8_192)),
    ("deepseek-reasoner", 128_000, Some(65_536)),
    ("qwen-max", 32_768, Some(8_192)),
    ("qwen-plus", 131_072, Some(16_384)),
    ("qwen-turbo", 1_000_000, Some(16_384)),
];

impl ModelInfo {
    /// Looks `model` up in the built-in table by longest name prefix, ignoring a `provider/`
    /// prefix such as `openai/`. Unknown models get [`DEFAULT_CONTEXT_WINDOW`].
    ///
    /// ```
    /// use agent_llm::ModelInfo;
    /// assert_eq!(ModelInfo::lookup("gpt-4o-2024-08-06").context_window, 128_000);
    /// assert_eq!(ModelInfo::lookup("anthropic/claude-sonnet-4-5").context_window, 200_000);
    /// ```
    pub fn lookup(model: &str) -> ModelInfo {
        let name = model.rsplit('/').next().unwrap_or(model);
        KNOWN_MODELS
            .iter()
            .filter(|(prefix, _, _)| name.starts_with(prefix))
            .max_by_key(|(prefix, _, _)| prefix.len())
            .map(|&(_, context_window, max_output_tokens)| ModelInfo {
                context_window,
                max_output_tokens,
            })
            .unwrap_or(ModelInfo {
                context_window: DEFAULT_CONTEXT_WINDOW,
                max_output_tokens: None,
            })
    }

    /// Whether the built-in table knows `model` (by name prefix, ignoring a `provider/` prefix).
    ///
    /// ```
    /// use agent_llm::ModelInfo;
    /// assert!(ModelInfo::is_known("openai/gpt-4o-mini"));
    /// assert!(!ModelInfo::is_known("smollm2"));
    /// ```
    pub fn is_known(model: &str) -> bool {
        let name = model.rsplit('/').next().unwrap_or(model);
        KNOWN_MODELS
            .iter()
            .any(|(prefix, _, _)| name.starts_with(prefix))
    }

    /// The same info with another context window.
    #[must_use]
    pub fn with_context_window(self, context_window: usize) -> ModelInfo {
        ModelInfo {
            context_window,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(ModelInfo::lookup("gpt-4").context_window, 8_192);
        assert_eq!(ModelInfo::lookup("gpt-4.1-mini").context_window, 1_047_576);
        assert_eq!(
            ModelInfo::lookup("claude-3-7-sonnet-latest").max_output_tokens,
            Some(64_000)
        );
        assert_eq!(
            ModelInfo::lookup("llama3.1:8b").context_window,
            DEFAULT_CONTEXT_WINDOW
        );
    }
}
