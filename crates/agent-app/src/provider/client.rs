//! Builds the model client a run talks to from the resolved configuration. A provider this
//! build leaves out (its cargo feature off) is a usage error that says so.

use std::sync::Arc;

use agent_llm::{LlmClient, ProviderKind, ScriptedClient};

use super::ProviderConfig;
use crate::error::{Error, Result};

/// The client for `config`. The `openai` provider talks to OpenAI's own API through the
/// Responses API for the models served only there (`agent_llm::responses_only`); any other
/// server gets chat completions, whatever the model's name.
pub fn client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    if let Some(error) = &config.model_error {
        return Err(Error::usage(error.clone()));
    }
    match api(config) {
        Api::Responses => responses_client(config),
        Api::ChatCompletions => chat_client(config),
        Api::Messages => messages_client(config),
        Api::Script => script_client(config),
    }
}

/// The API a configuration talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    /// OpenAI-compatible chat completions.
    ChatCompletions,
    /// OpenAI's Responses API.
    Responses,
    /// Anthropic Messages.
    Messages,
    /// A script of answers.
    Script,
}

/// The API of `config`: its provider's, except that `openai` on OpenAI's own API reaches the
/// models served only on the Responses API there.
fn api(config: &ProviderConfig) -> Api {
    match config.kind {
        ProviderKind::Openai if responses_only(&config.model) && on_openai(config) => {
            Api::Responses
        }
        ProviderKind::Openai => Api::ChatCompletions,
        ProviderKind::OpenaiResponses => Api::Responses,
        ProviderKind::Anthropic => Api::Messages,
        ProviderKind::Scripted => Api::Script,
    }
}

/// Whether `model` is served only on OpenAI's Responses API.
fn responses_only(model: &str) -> bool {
    #[cfg(feature = "openai-responses")]
    {
        agent_llm::responses_only(model)
    }
    #[cfg(not(feature = "openai-responses"))]
    {
        let _ = model;
        false
    }
}

/// Whether `config` reaches OpenAI's own API (no base URL, or OpenAI's).
fn on_openai(config: &ProviderConfig) -> bool {
    config.base_url.as_deref().is_none_or(super::is_openai)
}

/// The error for a provider this build was made without.
#[allow(dead_code)]
fn left_out(provider: &str, feature: &str) -> Error {
    Error::usage(format!(
        "this build has no {provider} provider (the `{feature}` feature of agent-app)"
    ))
}

#[cfg(feature = "openai")]
fn chat_client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    let mut openai = agent_llm::OpenAiConfig::from_env();
    if let Some(url) = &config.base_url {
        openai.base_url = url.clone();
    }
    if config.api_key.is_some() {
        openai.api_key = config.api_key.clone();
    }
    openai.context_window = config.context_window.or(openai.context_window);
    openai.streaming = config.stream;
    let client = agent_llm::OpenAiClient::new(openai).map_err(|error| {
        Error::Failed(format!(
            "cannot set up the OpenAI-compatible client: {error}"
        ))
    })?;
    Ok(Arc::new(client))
}

#[cfg(not(feature = "openai"))]
fn chat_client(_: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    Err(left_out("OpenAI-compatible", "openai"))
}

#[cfg(feature = "anthropic")]
fn messages_client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    let mut anthropic = agent_llm::AnthropicConfig::from_env();
    if let Some(url) = &config.base_url {
        anthropic.base_url = url.clone();
    }
    if config.api_key.is_some() {
        anthropic.api_key = config.api_key.clone();
    }
    if anthropic.api_key.is_none() {
        return Err(Error::Failed(
            "the Anthropic provider needs an API key: set ANTHROPIC_API_KEY or pass --api-key"
                .into(),
        ));
    }
    anthropic.context_window = config.context_window.or(anthropic.context_window);
    let client = agent_llm::AnthropicClient::new(anthropic)
        .map_err(|error| Error::Failed(format!("cannot set up the Anthropic client: {error}")))?;
    Ok(Arc::new(client))
}

#[cfg(not(feature = "anthropic"))]
fn messages_client(_: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    Err(left_out("Anthropic", "anthropic"))
}

#[cfg(feature = "openai-responses")]
fn responses_client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    let mut responses = agent_llm::OpenAiResponsesConfig::from_env();
    if let Some(url) = &config.base_url {
        responses.base_url = url.clone();
    }
    if config.api_key.is_some() {
        responses.api_key = config.api_key.clone();
    }
    responses.context_window = config.context_window.or(responses.context_window);
    let client = agent_llm::OpenAiResponsesClient::new(responses).map_err(|error| {
        Error::Failed(format!(
            "cannot set up the OpenAI Responses client: {error}"
        ))
    })?;
    Ok(Arc::new(client))
}

#[cfg(not(feature = "openai-responses"))]
fn responses_client(_: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    Err(left_out("OpenAI Responses", "openai-responses"))
}

fn script_client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    let Some(script) = &config.script else {
        return Err(Error::Failed(
            "the scripted provider needs a script: pass --script FILE".into(),
        ));
    };
    // A script that cannot be read or parsed is the user's configuration.
    let text = std::fs::read_to_string(script).map_err(|error| {
        Error::usage(format!(
            "cannot read the script {}: {error}",
            script.display()
        ))
    })?;
    let client = ScriptedClient::from_json_str(&text).map_err(|error| {
        let why = error.to_string();
        let why = why.strip_prefix("invalid configuration: ").unwrap_or(&why);
        Error::usage(format!("the script {}: {why}", script.display()))
    })?;
    // Nobody reads what a scripted run was asked: keep none of it.
    let client = client.keeping_requests(0);
    Ok(Arc::new(match config.context_window {
        Some(window) => client.with_context_window(window),
        None => client,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(kind: ProviderKind, model: &str, base_url: Option<&str>) -> ProviderConfig {
        ProviderConfig {
            kind,
            model: model.into(),
            base_url: base_url.map(str::to_owned),
            api_key: Some("sk-test".into()),
            script: None,
            context_window: None,
            stream: true,
            model_error: None,
        }
    }

    #[test]
    fn only_openai_itself_is_reached_through_responses_for_responses_only_models() {
        assert!(on_openai(&config(
            ProviderKind::Openai,
            "gpt-5-codex",
            None
        )));
        assert!(on_openai(&config(
            ProviderKind::Openai,
            "gpt-5-codex",
            Some("https://api.openai.com/v1/")
        )));
        assert!(!on_openai(&config(
            ProviderKind::Openai,
            "gpt-5-codex",
            Some("http://localhost:11434/v1")
        )));
    }

    #[test]
    fn responses_only_models_on_openai_itself_use_the_responses_api() {
        let api_of = |kind, model, url| api(&config(kind, model, url));
        assert_eq!(
            api_of(ProviderKind::Openai, "gpt-5-codex", None),
            Api::Responses
        );
        assert_eq!(
            api_of(
                ProviderKind::Openai,
                "gpt-5-codex",
                Some("http://localhost:8000/v1")
            ),
            Api::ChatCompletions,
            "another server with a model of that name gets chat completions"
        );
        assert_eq!(
            api_of(ProviderKind::Openai, "gpt-4o", None),
            Api::ChatCompletions
        );
        assert_eq!(
            api_of(
                ProviderKind::OpenaiResponses,
                "gpt-4o",
                Some("http://localhost:8000/v1")
            ),
            Api::Responses
        );
        assert_eq!(
            api_of(ProviderKind::Anthropic, "claude-sonnet-4-5", None),
            Api::Messages
        );
    }
}
