//! What a front end names about a model, as types rather than strings: the provider behind it
//! ([`ProviderKind`]) and how hard a reasoning model thinks ([`ReasoningEffort`]). Their names
//! are those of `--provider`, `--reasoning-effort`, `agent.toml` and the stored traces.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The model provider behind a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// Any OpenAI-compatible chat completions server (OpenAI, DeepSeek, Qwen, Ollama, vLLM,
    /// llama.cpp, ...); on OpenAI's own API, models served only on the Responses API use that
    /// API.
    Openai,
    /// The OpenAI Responses API (`gpt-5-codex`, `o3-pro`, ...).
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// A deterministic script of answers, for tests and offline use.
    Scripted,
}

impl ProviderKind {
    /// Every provider, in the order they are listed to people.
    pub const ALL: [ProviderKind; 4] = [
        Self::Openai,
        Self::OpenaiResponses,
        Self::Anthropic,
        Self::Scripted,
    ];

    /// The provider's name, as `--provider`, `agent.toml` and traces write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::OpenaiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Scripted => "scripted",
        }
    }

    /// The provider `name` names (as [`ProviderKind::name`] writes it, in any case).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The provider whose server, key and settings this one shares: OpenAI's two APIs share
    /// them.
    #[must_use]
    pub fn account(self) -> ProviderKind {
        match self {
            Self::OpenaiResponses => Self::Openai,
            other => other,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no provider's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider {0:?}; use openai, openai-responses, anthropic or scripted")]
pub struct UnknownProvider(pub String);

impl FromStr for ProviderKind {
    type Err = UnknownProvider;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::from_name(text).ok_or_else(|| UnknownProvider(text.to_owned()))
    }
}

/// How hard an OpenAI-compatible reasoning model thinks (`reasoning_effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// Little reasoning: faster and cheaper.
    Low,
    /// The usual amount.
    Medium,
    /// Much reasoning: slower, for hard tasks.
    High,
}

impl ReasoningEffort {
    /// Every effort, from the least.
    pub const ALL: [ReasoningEffort; 3] = [Self::Low, Self::Medium, Self::High];

    /// The word sent to the server.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

impl fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is no reasoning effort.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown reasoning effort {0:?}; use low, medium or high")]
pub struct UnknownEffort(pub String);

impl FromStr for ReasoningEffort {
    type Err = UnknownEffort;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|effort| effort.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownEffort(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_written() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.name().parse::<ProviderKind>(), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<ProviderKind>(&json).unwrap(), kind);
        }
        for effort in ReasoningEffort::ALL {
            assert_eq!(effort.as_str().parse::<ReasoningEffort>(), Ok(effort));
            let json = serde_json::to_string(&effort).unwrap();
            assert_eq!(json, format!("\"{effort}\""));
        }
        assert!("openai-chat".parse::<ProviderKind>().is_err());
        assert_eq!(
            ProviderKind::OpenaiResponses.account(),
            ProviderKind::Openai
        );
    }
}
