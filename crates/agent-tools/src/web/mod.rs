//! The web tools (feature `web`): `web_fetch`, which reads a page over HTTP(S) as Markdown, and
//! `web_search`, which asks a [`SearchBackend`]: a configured search service ([`SearchService`],
//! a SearXNG instance's JSON API), or the model provider's own search, adapted by a caller that
//! knows the provider (this crate knows none).
//!
//! `web_fetch` is risky (it waits for approval; `web_fetch(domain:docs.rs)` rules allow or deny
//! it by host) and refuses the addresses of this machine and its networks — loopback, private,
//! link-local, shared and cloud metadata addresses — unless [`WebConfig::allow_private_hosts`]
//! names them (`[web] allow_private_hosts` in `agent.toml`). The check is made on the addresses
//! the host name resolves to, at every hop of a redirect, and the connection is made to exactly
//! the addresses that were checked, so a name that resolves anew to a private address between
//! the check and the connection (DNS rebinding) is never reached. Redirects on the same host
//! are followed (at most [`WebConfig::max_redirects`]); one to another host is not followed but
//! named to the model, so that fetching it is a call of its own, under its own approval. The
//! proxy of the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`) is honoured;
//! through a proxy the check is made on the addresses this machine resolves.
//!
//! HTML becomes Markdown (`htmd`: headings, lists, tables, links kept as Markdown links; no
//! script, style or other content a reader does not see); text and JSON come as they are; a
//! PNG, JPEG, GIF or WebP comes as a picture. What was cut (a body over
//! [`WebConfig::max_bytes`], Markdown over the tool output limit) is said.

mod address;
mod backend;
mod fetch;
mod page;
mod search;
mod service;

use std::sync::Arc;
use std::time::Duration;

pub use address::{BadHostEntry, PrivateHosts};
pub use backend::{SearchBackend, SearchError, SearchQuery, SearchResults, SearchSource};
pub use fetch::{WebFetchArgs, WebFetchTool};
pub use search::{WebSearchArgs, WebSearchTool};
pub use service::SearchService;

use crate::Tool;
use crate::typed::TypedTool;

/// The name of the fetch tool.
pub const WEB_FETCH: &str = "web_fetch";
/// The name of the search tool (the same name as a provider's own web search).
pub const WEB_SEARCH: &str = "web_search";

/// Settings of the web tools (`[web]` in `agent.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// Hosts, addresses and ranges whose internal addresses `web_fetch` may reach.
    pub allow_private_hosts: PrivateHosts,
    /// The most bytes of a response body read; the rest is left unread and the cut is said.
    pub max_bytes: usize,
    /// How long one request may take, connecting and reading included.
    pub timeout: Duration,
    /// How many redirects on the same host are followed.
    pub max_redirects: usize,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The search service `web_search` asks, when there is one: a URL answering
    /// `?q=<query>&format=json` as SearXNG does.
    pub search_url: Option<String>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            allow_private_hosts: PrivateHosts::default(),
            max_bytes: 2 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
            user_agent: format!(
                "Mozilla/5.0 (compatible; agent/{}; +web_fetch)",
                env!("CARGO_PKG_VERSION")
            ),
            search_url: None,
        }
    }
}

/// The web tools `config` gives: `web_fetch` always, `web_search` when a search service is
/// configured ([`WebSearchTool::with_backend`] makes one that asks another backend).
pub fn web_tools(config: &WebConfig) -> Vec<Arc<dyn Tool>> {
    let config = Arc::new(config.clone());
    let mut tools = vec![WebFetchTool::new(config.clone()).into_tool()];
    if config.search_url.is_some() {
        tools.push(WebSearchTool::new(config).into_tool());
    }
    tools
}

/// Installs rustls's ring provider unless one is installed (this workspace builds reqwest
/// without a default one).
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race against another installer is fine: a provider is installed either way.
        // ring builds without a C toolchain; rustls deprecates it only for its lack of
        // post-quantum key exchange (see `agent_llm::ensure_crypto_provider`).
        #[allow(deprecated)]
        let provider = rustls::crypto::ring::default_provider();
        let _ = provider.install_default();
    }
}
