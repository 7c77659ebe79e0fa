//! The `[web]` table of `agent.toml`, as written; the factory reads it into the web tools'
//! settings and chooses what answers `web_search`.

use serde::Deserialize;

/// `[web]` of `agent.toml`: the settings of `web_fetch` and `web_search`, read into
/// `agent_tools::web::WebConfig` by the factory.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WebFile {
    /// `false`: runs have no web tools.
    pub enabled: Option<bool>,
    /// Host names, addresses and ranges whose internal addresses `web_fetch` may read.
    #[serde(default)]
    pub allow_private_hosts: Vec<String>,
    /// The search service of `web_search` (a SearXNG instance).
    pub search_url: Option<String>,
    /// What answers `web_search` [default: auto].
    pub search: Option<SearchChoice>,
    /// The most bytes of a response body read [default: 2 MiB].
    pub max_bytes: Option<usize>,
    /// Seconds one request may take [default: 30].
    pub timeout: Option<u64>,
}

/// What answers `web_search` (`[web] search`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SearchChoice {
    /// The search service when `search_url` is set, else the provider's own search when the
    /// main model's provider has one and is reached at its own address (not a configured base
    /// URL: a proxy or a compatible server may not search), else no `web_search`.
    #[default]
    Auto,
    /// The main model's provider searches (Anthropic's web search tool, OpenAI Responses'
    /// `web_search`); a provider without one is a configuration error.
    Provider,
    /// The search service of `search_url`, which must be set.
    Service,
    /// No `web_search`.
    Off,
}
