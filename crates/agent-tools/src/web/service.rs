//! [`SearchService`]: the [`SearchBackend`] of a configured search service, a SearXNG
//! instance's JSON API (`GET <search_url>?q=<query>&format=json`), or anything that answers the
//! same way (`{"results": [{"title", "url", "content"}]}`).
//!
//! The service is the user's choice (often one on this machine), so its address is not checked
//! as `web_fetch` checks pages'. The domain lists of a search are applied to the results it
//! returns.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use url::Url;

use super::backend::{SearchBackend, SearchError, SearchQuery, SearchResults, SearchSource};
use super::{WebConfig, ensure_crypto_provider};

/// The longest snippet kept of a result, in characters.
const SNIPPET_CHARS: usize = 300;

/// The search service of [`WebConfig::search_url`].
#[derive(Debug, Clone)]
pub struct SearchService {
    config: Arc<WebConfig>,
}

impl SearchService {
    /// The service `config.search_url` names (a search fails saying so when it names none).
    pub fn new(config: Arc<WebConfig>) -> Self {
        Self { config }
    }

    fn host(&self) -> String {
        self.config
            .search_url
            .as_deref()
            .and_then(|url| Url::parse(url).ok())
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "the search service".to_owned())
    }
}

#[async_trait]
impl SearchBackend for SearchService {
    fn name(&self) -> String {
        self.host()
    }

    fn timeout(&self) -> Duration {
        self.config.timeout
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        let Some(base) = &self.config.search_url else {
            return Err(SearchError::new("no search service is configured"));
        };
        let mut url = Url::parse(base).map_err(|e| {
            SearchError::new(format!("the search service URL {base:?} is invalid: {e}"))
        })?;
        url.query_pairs_mut()
            .append_pair("q", &query.query)
            .append_pair("format", "json");
        ensure_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(self.config.timeout)
            .user_agent(self.config.user_agent.clone())
            .build()
            .map_err(|e| SearchError::new(format!("cannot make an HTTP client: {e}")))?;
        let host = self.host();
        let failed = |e: reqwest::Error| {
            SearchError::new(format!("the search service at {host} did not answer: {e}"))
        };
        let response = client.get(url).send().await.map_err(failed)?;
        let status = response.status();
        let body = response.text().await.map_err(failed)?;
        if !status.is_success() {
            return Err(SearchError::new(format!(
                "the search service at {host} answered {status}"
            )));
        }
        let parsed: Value = serde_json::from_str(&body).map_err(|e| {
            SearchError::new(format!(
                "the search service at {host} did not answer with JSON ({e}); it must answer \
                 `?q=...&format=json` as SearXNG does (enable the json format in its settings)"
            ))
        })?;
        Ok(results(&parsed, query))
    }
}

/// The results of a SearXNG answer the query's domain lists let through.
fn results(parsed: &Value, query: &SearchQuery) -> SearchResults {
    let sources = parsed
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|result| {
            let field = |name: &str| {
                result
                    .get(name)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .unwrap_or("")
            };
            let url = field("url");
            if url.is_empty() || !query.admits(url) {
                return None;
            }
            let title = match field("title") {
                "" => url,
                title => title,
            };
            let mut source = SearchSource::new(title, url);
            let snippet = field("content").replace('\n', " ");
            if !snippet.is_empty() {
                let mut short: String = snippet.chars().take(SNIPPET_CHARS).collect();
                if short.len() < snippet.len() {
                    short.push('…');
                }
                source.snippet = Some(short);
            }
            source.age = Some(field("publishedDate").to_owned()).filter(|age| !age.is_empty());
            Some(source)
        })
        .collect();
    SearchResults::new(sources)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn results_keep_what_the_domain_lists_let_through() {
        let parsed = json!({"results": [
            {"title": "Serde", "url": "https://serde.rs/", "content": "A framework\nfor serializing."},
            {"url": "https://docs.rs/serde", "publishedDate": "2025-01-02"},
            {"title": "no address"}
        ]});
        let found = results(&parsed, &SearchQuery::new("serde"));
        assert_eq!(found.sources.len(), 2);
        assert_eq!(
            found.sources[0].snippet.as_deref(),
            Some("A framework for serializing.")
        );
        assert_eq!(found.sources[1].title, "https://docs.rs/serde");
        assert_eq!(found.sources[1].age.as_deref(), Some("2025-01-02"));
        let mut query = SearchQuery::new("serde");
        query.allowed_domains = vec!["docs.rs".into()];
        let found = results(&parsed, &query);
        assert_eq!(found.sources.len(), 1);
        assert_eq!(found.sources[0].url, "https://docs.rs/serde");
    }
}
