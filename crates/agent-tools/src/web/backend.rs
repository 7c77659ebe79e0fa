//! Where `web_search` gets its results: a [`SearchBackend`]. The tool (its arguments, its
//! approval rules, cancellation and the text the model reads) is one piece of code; the backend
//! is the part that differs — a search service this crate asks over HTTP ([`SearchService`],
//! a SearXNG instance), or the model provider's own search, which a caller that knows the
//! provider adapts (this crate knows no provider).
//!
//! [`SearchService`]: super::SearchService

use std::time::Duration;

use async_trait::async_trait;
use url::Url;

/// One search the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchQuery {
    /// What to search for.
    pub query: String,
    /// How many results to show.
    pub max_results: usize,
    /// When not empty, only results from these domains (and their subdomains).
    pub allowed_domains: Vec<String>,
    /// Never results from these domains (and their subdomains).
    pub blocked_domains: Vec<String>,
}

impl SearchQuery {
    /// A search for `query`, eight results, every domain.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            max_results: 8,
            allowed_domains: Vec::new(),
            blocked_domains: Vec::new(),
        }
    }

    /// Whether the domain lists let a result at `url` through (an address that does not parse
    /// is let through only when no domain is allowed by name).
    pub fn admits(&self, url: &str) -> bool {
        let host = Url::parse(url.trim())
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        let within = |domain: &String| {
            let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
            host.as_deref()
                .is_some_and(|host| host == domain || host.ends_with(&format!(".{domain}")))
        };
        (self.allowed_domains.is_empty() || self.allowed_domains.iter().any(within))
            && !self.blocked_domains.iter().any(within)
    }
}

/// A page a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchSource {
    /// The page's title (its address when there is none).
    pub title: String,
    /// The page's address.
    pub url: String,
    /// A snippet of the page: the search engine's summary, or the text an answer quotes.
    pub snippet: Option<String>,
    /// How old the page is, as the search says it.
    pub age: Option<String>,
}

impl SearchSource {
    /// The page at `url` titled `title`.
    pub fn new(title: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            url: url.into(),
            snippet: None,
            age: None,
        }
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct SearchResults {
    /// What a model wrote of the results, when the search is a provider's (which answers in
    /// words, with its sources).
    pub answer: Option<String>,
    /// The pages found, best first.
    pub sources: Vec<SearchSource>,
    /// The queries that were run, when they differ from the one asked.
    pub queries: Vec<String>,
    /// The tokens and the cost (dollars) of the model call the search was, when it was one (a
    /// provider's search): recorded on the tool's message ([`crate::TOOL_USAGE`]), so the run's
    /// totals and its cost budget count them.
    pub usage: Option<(u64, f64)>,
}

impl SearchResults {
    /// These pages, and nothing else.
    pub fn new(sources: Vec<SearchSource>) -> Self {
        Self {
            sources,
            ..Self::default()
        }
    }
}

/// Why a search failed; the model is shown the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct SearchError {
    /// What went wrong, and what to do about it when something can be done.
    pub message: String,
}

impl SearchError {
    /// A failure saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// What answers `web_search`.
///
/// ```
/// use std::time::Duration;
/// use agent_tools::async_trait;
/// use agent_tools::web::{SearchBackend, SearchError, SearchQuery, SearchResults, SearchSource};
///
/// /// Finds the crate of the same name on docs.rs.
/// #[derive(Debug)]
/// struct DocsRs;
///
/// #[async_trait]
/// impl SearchBackend for DocsRs {
///     fn name(&self) -> String {
///         "docs.rs".to_owned()
///     }
///
///     fn timeout(&self) -> Duration {
///         Duration::from_secs(5)
///     }
///
///     async fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
///         let url = format!("https://docs.rs/{}", query.query.trim());
///         Ok(SearchResults::new(vec![SearchSource::new(query.query.clone(), url)]))
///     }
/// }
/// ```
#[async_trait]
pub trait SearchBackend: Send + Sync + std::fmt::Debug {
    /// Who searches, as the results name it: a host (`search.example.org`), or a provider's
    /// search (`Anthropic's web search`).
    fn name(&self) -> String;

    /// The longest a search may take.
    fn timeout(&self) -> Duration;

    /// Runs `query`. The call is dropped when the tool call is cancelled.
    async fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_domain_lists_decide_by_host() {
        let mut query = SearchQuery::new("q");
        assert!(query.admits("https://any.test/"));
        query.allowed_domains = vec!["docs.rs".into()];
        assert!(query.admits("https://docs.rs/serde"));
        assert!(query.admits("https://www.docs.rs/"));
        assert!(!query.admits("https://notdocs.rs/"));
        assert!(
            !query.admits("https://evil.test\\@docs.rs/"),
            "judged by the real host"
        );
        assert!(!query.admits("not a url"));
        let mut query = SearchQuery::new("q");
        query.blocked_domains = vec!["example.com".into()];
        assert!(!query.admits("https://a.example.com/x"));
        assert!(query.admits("https://example.org/"));
    }
}
