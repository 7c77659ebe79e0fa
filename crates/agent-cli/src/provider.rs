//! Builds the model client a run talks to from the resolved configuration.

use std::sync::Arc;

use agent_llm::{
    AnthropicClient, AnthropicConfig, LlmClient, OpenAiClient, OpenAiConfig, ScriptedClient,
};
use anyhow::{Context, Result, bail};

use crate::cli::ProviderKind;
use crate::config::ProviderConfig;

/// The client for `config`.
pub(crate) fn client(config: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
    Ok(match config.kind {
        ProviderKind::Openai => {
            let mut openai = OpenAiConfig::from_env();
            if let Some(url) = &config.base_url {
                openai.base_url = url.clone();
            }
            if config.api_key.is_some() {
                openai.api_key = config.api_key.clone();
            }
            openai.context_window = config.context_window.or(openai.context_window);
            Arc::new(
                OpenAiClient::new(openai).context("cannot set up the OpenAI-compatible client")?,
            )
        }
        ProviderKind::Anthropic => {
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
        ProviderKind::Scripted => {
            let Some(script) = &config.script else {
                bail!("the scripted provider needs a script: pass --script FILE");
            };
            let client = ScriptedClient::from_file(script)
                .with_context(|| format!("cannot load the script {}", script.display()))?;
            Arc::new(match config.context_window {
                Some(window) => client.with_context_window(window),
                None => client,
            })
        }
    })
}
