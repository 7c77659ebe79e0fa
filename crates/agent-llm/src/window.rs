//! A model's context window and where the figure came from: the caller's setting, what the
//! server says of itself, the window a refusal states, the built-in table, or nothing at all.
//!
//! Local servers run a model with the window they were started with (llama.cpp's `-c`, Ollama's
//! `num_ctx`, vLLM's `--max-model-len`), which no table can know: [`LlmClient::learn_window`]
//! asks the server where it says, and [`stated_window`] reads the window out of a refusal's
//! message.
//!
//! [`LlmClient::learn_window`]: crate::LlmClient::learn_window

use crate::models::{DEFAULT_CONTEXT_WINDOW, ModelInfo};

/// Where a context window figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WindowSource {
    /// The caller set it (`--context-window`, `context_window` in a configuration).
    Configured,
    /// llama.cpp's server: `GET /props`, `default_generation_settings.n_ctx`.
    LlamaCppProps,
    /// The server's model list, `GET /v1/models`: vLLM's `max_model_len`, llama.cpp's
    /// `meta.n_ctx`, or a `context_length` field.
    ModelList,
    /// Ollama: `num_ctx` in the model's parameters (`POST /api/show`), or the context of the
    /// loaded model (`GET /api/ps`).
    Ollama,
    /// Ollama said nothing of the model's `num_ctx`: Ollama's own default is assumed, which is
    /// smaller than the `trained` window the model takes.
    OllamaDefault {
        /// The window the model was trained for (`<arch>.context_length` of `/api/show`).
        trained: usize,
    },
    /// A refusal of a request as over the window stated the window.
    Refusal,
    /// The built-in table of known models.
    Table,
    /// Nothing said it: [`DEFAULT_CONTEXT_WINDOW`] is assumed.
    Assumed,
}

impl WindowSource {
    /// Whether the model's server said it (its own endpoints or a refusal).
    pub fn is_server(self) -> bool {
        matches!(
            self,
            Self::LlamaCppProps | Self::ModelList | Self::Ollama | Self::Refusal
        )
    }

    /// A short name, for records: `configured`, `llama_cpp_props`, `model_list`, `ollama`,
    /// `ollama_default`, `refusal`, `table` or `assumed`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Configured => "configured",
            Self::LlamaCppProps => "llama_cpp_props",
            Self::ModelList => "model_list",
            Self::Ollama => "ollama",
            Self::OllamaDefault { .. } => "ollama_default",
            Self::Refusal => "refusal",
            Self::Table => "table",
            Self::Assumed => "assumed",
        }
    }

    /// Where the figure came from, in words that follow "from": `the server's /props`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Configured => "the configuration (--context-window or context_window)",
            Self::LlamaCppProps => "the server's /props",
            Self::ModelList => "the server's model list",
            Self::Ollama => "Ollama's num_ctx",
            Self::OllamaDefault { .. } => "Ollama's default num_ctx (the model's is not set)",
            Self::Refusal => "the server's refusal of a request",
            Self::Table => "the table of known models",
            Self::Assumed => "nowhere: the server does not say, so it is assumed",
        }
    }
}

/// The window of Ollama's models when their `num_ctx` is not set, on a machine without a large
/// GPU (Ollama sets it by the memory it finds; 4,096 tokens below 24 GiB).
pub const OLLAMA_DEFAULT_WINDOW: usize = 4_096;

/// A model's context window, in tokens, and where the figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// The most tokens, prompt and answer, a request may take.
    pub tokens: usize,
    /// Where the figure came from.
    pub source: WindowSource,
}

impl ContextWindow {
    /// A window the caller set.
    pub fn configured(tokens: usize) -> Self {
        Self {
            tokens,
            source: WindowSource::Configured,
        }
    }

    /// The window of `model` by the built-in table ([`ModelInfo::lookup`]), or the default
    /// assumed for a model the table does not know.
    ///
    /// ```
    /// use agent_llm::{ContextWindow, WindowSource};
    /// assert_eq!(ContextWindow::from_table("gpt-4o").source, WindowSource::Table);
    /// assert_eq!(ContextWindow::from_table("smollm2").source, WindowSource::Assumed);
    /// ```
    pub fn from_table(model: &str) -> Self {
        Self::of_info(model, ModelInfo::lookup(model))
    }

    /// The window `info` gives `model`: [`WindowSource::Table`] unless it is the default for a
    /// model the table does not know.
    pub fn of_info(model: &str, info: ModelInfo) -> Self {
        let source = if ModelInfo::is_known(model) {
            WindowSource::Table
        } else if info.context_window == DEFAULT_CONTEXT_WINDOW {
            WindowSource::Assumed
        } else {
            WindowSource::Configured
        };
        Self {
            tokens: info.context_window,
            source,
        }
    }
}

/// The window a context-length refusal states, in the words of OpenAI and vLLM ("maximum
/// context length is 4096 tokens"), llama.cpp's server ("exceeds the available context size
/// (4096 tokens)"), Anthropic ("210000 tokens > 200000 maximum") and others ("context length
/// of 4096", "context window of 4096 tokens"); `None` when it states none.
///
/// ```
/// use agent_llm::stated_window;
/// assert_eq!(
///     stated_window("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"),
///     Some(4096)
/// );
/// assert_eq!(
///     stated_window("request (5210 tokens) exceeds the available context size (2048 tokens), try increasing it"),
///     Some(2048)
/// );
/// assert_eq!(stated_window("prompt is too long: 210000 tokens > 200000 maximum"), Some(200_000));
/// assert_eq!(stated_window("the request exceeds the available context size"), None);
/// ```
pub fn stated_window(message: &str) -> Option<usize> {
    let lower = message.to_lowercase();
    // Each phrase is followed, within a few characters, by the window.
    const AFTER: &[&str] = &[
        "maximum context length is",
        "maximum context length of",
        "available context size (",
        "context size (",
        "context length of",
        "context window of",
        "context window is",
        "context length is",
        "n_ctx:",
        "n_ctx =",
        "n_ctx (",
    ];
    for phrase in AFTER {
        if let Some(at) = lower.find(phrase) {
            let rest = &lower[at + phrase.len()..];
            if let Some(number) = leading_number(rest) {
                return Some(number);
            }
        }
    }
    // Anthropic: "<n> tokens > <window> maximum".
    if let Some(at) = lower.find("tokens >") {
        let rest = &lower[at + "tokens >".len()..];
        if let Some(number) = leading_number(rest)
            && rest.contains("maximum")
        {
            return Some(number);
        }
    }
    None
}

/// The tokens a context-length refusal's message says the server counted in the prompt it
/// refused (llama.cpp's server, OpenAI, vLLM, Anthropic), or `None`: with the agent's estimate
/// of the same request, how far that estimate is from the server's tokenizer.
///
/// ```
/// use agent_llm::stated_prompt;
/// let llama = "request (4253 tokens) exceeds the available context size (4096 tokens)";
/// assert_eq!(stated_prompt(llama), Some(4253));
/// let vllm = "This model's maximum context length is 4096 tokens. However, you requested 5000 \
///             tokens (4900 in the messages, 100 in the completion).";
/// assert_eq!(stated_prompt(vllm), Some(4900));
/// assert_eq!(stated_prompt("prompt is too long: 210000 tokens > 200000 maximum"), Some(210_000));
/// assert_eq!(stated_prompt("the request exceeds the available context size"), None);
/// ```
pub fn stated_prompt(message: &str) -> Option<usize> {
    let lower = message.to_lowercase();
    const AFTER: &[&str] = &[
        "request (",
        "messages resulted in",
        "prompt is too long:",
        "your request has",
    ];
    if let Some(number) = AFTER.iter().find_map(|phrase| {
        let at = lower.find(phrase)?;
        leading_number(&lower[at + phrase.len()..])
    }) {
        return Some(number);
    }
    // vLLM: "you requested N tokens (M in the messages, …)".
    let at = lower.find(" in the messages")?;
    let start = lower[..at].rfind('(')?;
    leading_number(&lower[start + 1..at])
}

/// The number at the start of `text` (after spaces), thousands separators allowed; `None`
/// when there is none within the first few characters, or it is not a plausible window.
fn leading_number(text: &str) -> Option<usize> {
    let text = text.trim_start();
    let digits: String = text
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|&n: &usize| n >= 256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_of_known_servers_state_their_window() {
        let check = |message: &str, window: Option<usize>| {
            assert_eq!(stated_window(message), window, "{message}");
        };
        check(
            "This model's maximum context length is 8192 tokens. However, you requested 9020 \
             tokens (9010 in the messages, 10 in the completion).",
            Some(8192),
        );
        check(
            "'max_tokens' is too large: 1000. This model's maximum context length is 4,096 \
             tokens and your request has 3500 input tokens",
            Some(4096),
        );
        check(
            "request (9000 tokens) exceeds the available context size (8192 tokens), try \
             increasing it",
            Some(8192),
        );
        check(
            "prompt is too long: 210000 tokens > 200000 maximum",
            Some(200_000),
        );
        check(
            "Trying to keep 5000 tokens when context length of 4096",
            Some(4096),
        );
        check("context window exceeded", None);
        check("maximum context length is 12 tokens", None);
    }

    #[test]
    fn sources_say_where_they_are_from() {
        assert!(WindowSource::LlamaCppProps.is_server());
        assert!(WindowSource::Refusal.is_server());
        assert!(!WindowSource::Assumed.is_server());
        assert!(!WindowSource::OllamaDefault { trained: 131_072 }.is_server());
        assert_eq!(
            WindowSource::OllamaDefault { trained: 1 }.name(),
            "ollama_default"
        );
        assert_eq!(
            ContextWindow::of_info("gpt-4o", ModelInfo::lookup("gpt-4o")).source,
            WindowSource::Table
        );
        assert_eq!(
            ContextWindow::of_info("smollm2", ModelInfo::lookup("x").with_context_window(2048))
                .source,
            WindowSource::Configured
        );
    }
}
