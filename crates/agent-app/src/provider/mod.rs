//! The model a run talks to: [`ProviderConfig`] resolved from the overrides, the environment and
//! `agent.toml` ([`resolve`]), and the client built from it ([`client`]).
//!
//! The provider is the one a flag names, else `agent.toml`'s, else the one a `--script` implies,
//! else the one whose key or base URL the environment holds. The file's model, base URL and key
//! belong to the file's provider: a run on another one (by a flag or a profile) does not send
//! them there, though OpenAI's two APIs share them. Without a model named anywhere, an
//! OpenAI-compatible server other than OpenAI's own is asked for its models (`GET /v1/models`):
//! the one it serves is used, and a server serving several is an error that lists them.

mod client;
#[cfg(feature = "openai")]
mod discover;

use std::path::PathBuf;

use agent_llm::ProviderKind;

pub use client::client;

use crate::config::{Environment, FileConfig, ProviderOverrides};

/// How to reach a model, once overrides, environment and file are merged.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProviderConfig {
    /// The provider.
    pub kind: ProviderKind,
    /// The model name asked for.
    pub model: String,
    /// The base URL, when one was configured.
    pub base_url: Option<String>,
    /// The API key, when one was configured.
    pub api_key: Option<String>,
    /// The scripted provider's script.
    pub script: Option<PathBuf>,
    /// The context window, when one was configured.
    pub context_window: Option<usize>,
    /// Whether to ask for streamed answers (`--no-stream`, `[models."NAME"] stream = false`).
    pub stream: bool,
    /// Why the model could not be found out from the server, when none was named and the
    /// server did not name exactly one; building the client reports it.
    pub model_error: Option<String>,
}

/// The message shown when no provider is configured.
pub const NO_PROVIDER: &str = "no model provider is configured.

Configure one of:
  OpenAI or any OpenAI-compatible server (DeepSeek, Qwen, Ollama, vLLM, llama.cpp, LM Studio):
      export OPENAI_API_KEY=sk-...            # and for a local server:
      export OPENAI_BASE_URL=http://localhost:11434/v1
  OpenAI's Responses API (Codex models; chosen by itself for models only served there):
      export OPENAI_API_KEY=sk-...  and pass --provider openai-responses
  Anthropic:
      export ANTHROPIC_API_KEY=sk-ant-...
  or pass --provider openai|openai-responses|anthropic|scripted with --model, --base-url, --api-key, --script,
  or write them in agent.toml (current folder, or ~/.config/agent/agent.toml).

To see the agent work without any model, run:  agent demo";

/// The environment variables of a provider's key and base URL (empty for the scripted one).
pub fn variables(kind: ProviderKind) -> (&'static str, &'static str) {
    match kind.account() {
        ProviderKind::Anthropic => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        ProviderKind::Scripted => ("", ""),
        _ => ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    }
}

/// The model a provider uses when none is named.
pub fn default_model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai => "gpt-4o-mini",
        ProviderKind::OpenaiResponses => "gpt-5-codex",
        ProviderKind::Anthropic => "claude-sonnet-4-5",
        ProviderKind::Scripted => "scripted",
    }
}

/// The provider an override, the file or the environment names; `None` when nothing does.
pub fn chosen(
    flags: &ProviderOverrides,
    file: &FileConfig,
    env: &Environment,
) -> Option<ProviderKind> {
    flags
        .kind
        .or(file.provider)
        .or_else(|| flags.script.as_ref().map(|_| ProviderKind::Scripted))
        .or_else(|| {
            if env.get("OPENAI_API_KEY").is_some() || env.get("OPENAI_BASE_URL").is_some() {
                Some(ProviderKind::Openai)
            } else if env.get("ANTHROPIC_API_KEY").is_some()
                || env.get("ANTHROPIC_BASE_URL").is_some()
            {
                Some(ProviderKind::Anthropic)
            } else {
                None
            }
        })
}

/// Merges overrides > environment > file into a provider configuration. `None` when nothing
/// names a provider. `AGENT_MODEL` names the model when no override does.
pub fn resolve(
    flags: &ProviderOverrides,
    file: &FileConfig,
    env: &Environment,
) -> Option<ProviderConfig> {
    let kind = chosen(flags, file, env)?;
    let (key_var, url_var) = variables(kind);
    let from_env = |name: &str| {
        if name.is_empty() {
            None
        } else {
            env.get(name).map(str::to_owned)
        }
    };
    // The file's model, URL and key belong to the file's provider: a run on another one (by a
    // flag or a profile) does not send them there. OpenAI's two APIs share them.
    let own = |value: &Option<String>| match file.provider {
        Some(file_kind) if file_kind.account() != kind.account() => None,
        _ => value.clone(),
    };
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| from_env(url_var))
        .or_else(|| own(&file.base_url));
    let api_key = flags
        .api_key
        .clone()
        .or_else(|| from_env(key_var))
        .or_else(|| own(&file.api_key));
    let named = flags
        .model
        .clone()
        .or_else(|| env.get("AGENT_MODEL").map(str::to_owned))
        .or_else(|| own(&file.model));
    let (model, model_error) = match (named, kind, &base_url) {
        (Some(model), _, _) => (model, None),
        // A local server is asked which model it serves.
        #[cfg(feature = "openai")]
        (None, ProviderKind::Openai, Some(url)) if !discover::is_openai(url) => {
            match discover::served_model(url, api_key.clone()) {
                Ok(model) => (model, None),
                Err(error) => (default_model(kind).to_owned(), Some(error)),
            }
        }
        (None, _, _) => (default_model(kind).to_owned(), None),
    };
    let stream = !flags.no_stream
        && file
            .models
            .get(&model)
            .and_then(|m| m.stream)
            .unwrap_or(true);
    Some(ProviderConfig {
        kind,
        base_url,
        api_key,
        script: flags.script.clone().or_else(|| file.script.clone()),
        context_window: flags.context_window.or(file.context_window(&model)),
        stream,
        model_error,
        model,
    })
}

/// Whether `url` is OpenAI's own API.
pub fn is_openai(url: &str) -> bool {
    #[cfg(feature = "openai")]
    {
        discover::is_openai(url)
    }
    #[cfg(not(feature = "openai"))]
    {
        url.trim_end_matches('/') == "https://api.openai.com/v1"
    }
}

/// The models the OpenAI-compatible server at `base_url` serves (`GET {base_url}/models`), asked
/// on a thread of its own so that it works inside and outside an async runtime; the error says
/// why there is no list.
pub fn served_models(base_url: &str, api_key: Option<String>) -> Result<Vec<String>, String> {
    #[cfg(feature = "openai")]
    {
        discover::models(base_url, api_key)
    }
    #[cfg(not(feature = "openai"))]
    {
        let _ = (base_url, api_key);
        Err("this build has no OpenAI-compatible provider".into())
    }
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
