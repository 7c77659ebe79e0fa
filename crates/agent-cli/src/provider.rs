//! Builds the model client a run talks to from the resolved configuration.

use std::sync::Arc;

use agent_llm::{
    AnthropicClient, AnthropicConfig, LlmClient, OpenAiClient, OpenAiConfig, OpenAiResponsesClient,
    OpenAiResponsesConfig, ScriptedClient, responses_only,
};
use anyhow::{Context, Result, bail};

use crate::cli::ProviderKind;
use crate::config::ProviderConfig;
use crate::exit::UsageError;

/// The client for `config`. The `openai` provider talks to OpenAI's own API through the
/// Responses API for the models served only there ([`responses_only`]); any other server
/// gets chat completions, whatever the model's name.
pub(crate) fn client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    if let Some(error) = &config.model_error {
        return Err(UsageError(error.clone()).into());
    }
    Ok(match api(config) {
        Api::Responses => responses_client(config)?,
        Api::ChatCompletions => {
            let mut openai = OpenAiConfig::from_env();
            if let Some(url) = &config.base_url {
                openai.base_url = url.clone();
            }
            if config.api_key.is_some() {
                openai.api_key = config.api_key.clone();
            }
            openai.context_window = config.context_window.or(openai.context_window);
            openai.streaming = config.stream;
            Arc::new(
                OpenAiClient::new(openai).context("cannot set up the OpenAI-compatible client")?,
            )
        }
        Api::Messages => {
            let mut anthropic = AnthropicConfig::from_env();
            if let Some(url) = &config.base_url {
                anthropic.base_url = url.clone();
            }
            if config.api_key.is_some() {
                anthropic.api_key = config.api_key.clone();
            }
            if anthropic.api_key.is_none() {
                bail!(
                    "the Anthropic provider needs an API key: set ANTHROPIC_API_KEY or pass --api-key"
                );
            }
            anthropic.context_window = config.context_window.or(anthropic.context_window);
            Arc::new(AnthropicClient::new(anthropic).context("cannot set up the Anthropic client")?)
        }
        Api::Script => {
            let Some(script) = &config.script else {
                bail!("the scripted provider needs a script: pass --script FILE");
            };
            // A script that cannot be read or parsed is the user's configuration (exit 2).
            let text = std::fs::read_to_string(script).map_err(|error| {
                UsageError(format!(
                    "cannot read the script {}: {error}",
                    script.display()
                ))
            })?;
            let client = ScriptedClient::from_json_str(&text).map_err(|error| {
                let why = error.to_string();
                let why = why.strip_prefix("invalid configuration: ").unwrap_or(&why);
                UsageError(format!("the script {}: {why}", script.display()))
            })?;
            // Nobody reads what a scripted run was asked: keep none of it.
            let client = client.keeping_requests(0);
            Arc::new(match config.context_window {
                Some(window) => client.with_context_window(window),
                None => client,
            })
        }
    })
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

/// Whether `config` reaches OpenAI's own API (no base URL, or OpenAI's).
fn on_openai(config: &ProviderConfig) -> bool {
    config
        .base_url
        .as_deref()
        .is_none_or(crate::discover::is_openai)
}

/// The Responses API client for `config`.
fn responses_client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    let mut responses = OpenAiResponsesConfig::from_env();
    if let Some(url) = &config.base_url {
        responses.base_url = url.clone();
    }
    if config.api_key.is_some() {
        responses.api_key = config.api_key.clone();
    }
    responses.context_window = config.context_window.or(responses.context_window);
    Ok(Arc::new(
        OpenAiResponsesClient::new(responses)
            .context("cannot set up the OpenAI Responses client")?,
    ))
}

/// A `tracing` layer that writes the model clients' notices ([`agent_llm::NOTICE_TARGET`])
/// as plain lines, `agent: <sentence>`, through `write`.
pub(crate) struct Notices<W> {
    write: W,
}

impl<W: Fn(Vec<u8>) + Send + Sync + 'static> Notices<W> {
    /// The layer, taking only the notices' events.
    pub(crate) fn layer<S>(write: W) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use tracing_subscriber::Layer;
        Notices { write }.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.target() == agent_llm::NOTICE_TARGET
        }))
    }
}

impl<S: tracing::Subscriber, W: Fn(Vec<u8>) + Send + Sync + 'static> tracing_subscriber::Layer<S>
    for Notices<W>
{
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        (self.write)(format!("agent: {}\n", message.0).into_bytes());
    }
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
            max_tokens: None,
            temperature: None,
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
