//! The model provider's own web search as the [`SearchBackend`] of `web_search`: Anthropic's
//! web search tool, OpenAI Responses' `web_search` ([`LlmClient::web_search`]), asked with the
//! runner's main model. Its answer (what the model wrote, the pages it found or cited, the
//! queries it ran) becomes the tool's results; a search the provider could not complete is a
//! tool error that says why in words the model can act on.

use std::sync::Arc;
use std::time::Duration;

use agent_llm::{LlmClient, LlmError, PriceTable, WebSearchAnswer, WebSearchOptions};
use agent_tools::async_trait;
use agent_tools::web::{SearchBackend, SearchError, SearchQuery, SearchResults, SearchSource};

/// What one search costs besides its tokens, in dollars: $10 per 1,000 searches, the price
/// Anthropic and OpenAI publish for their web search (some older OpenAI models bill more).
const SEARCH_FEE: f64 = 0.01;

/// The longest a provider's search may take: the model searches, reads and writes its answer.
const TIMEOUT: Duration = Duration::from_secs(300);

/// A provider's own web search, asked with one model.
#[derive(Clone)]
pub(crate) struct ProviderSearch {
    client: Arc<dyn LlmClient>,
    model: String,
    /// What the search's tokens cost, so that the run's totals and budget count them.
    prices: PriceTable,
}

impl std::fmt::Debug for ProviderSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSearch")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ProviderSearch {
    /// The search of `client`'s provider, run by `model`, its tokens priced by `prices`.
    pub(crate) fn new(client: Arc<dyn LlmClient>, model: &str, prices: PriceTable) -> Self {
        Self {
            client,
            model: model.to_owned(),
            prices,
        }
    }
}

#[async_trait]
impl SearchBackend for ProviderSearch {
    fn name(&self) -> String {
        format!("the web search of {}'s provider", self.model)
    }

    fn timeout(&self) -> Duration {
        TIMEOUT
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        let options = WebSearchOptions::new()
            .with_allowed_domains(query.allowed_domains.clone())
            .with_blocked_domains(query.blocked_domains.clone());
        let answer = self
            .client
            .web_search(&self.model, &query.query, &options)
            .await
            .map_err(|error| SearchError::new(failure(&error)))?;
        // Each query the provider ran is a search it bills, besides the tokens.
        let fee = SEARCH_FEE * answer.queries.len().max(1) as f64;
        let usage = answer.usage.map_or((0, fee), |usage| {
            let tokens = usage.prompt_tokens + usage.completion_tokens;
            (tokens, self.prices.cost(&self.model, &usage) + fee)
        });
        let mut found = results(answer);
        found.usage = Some(usage);
        Ok(found)
    }
}

/// The tool's results of a provider's answer.
fn results(answer: WebSearchAnswer) -> SearchResults {
    let sources = answer
        .sources
        .into_iter()
        .map(|page| {
            let mut source = SearchSource::new(page.title, page.url);
            source.snippet = page.cited_text.map(|text| format!("“{}”", text.trim()));
            source.age = page.page_age;
            source
        })
        .collect();
    let mut results = SearchResults::new(sources);
    results.answer = Some(answer.text.trim().to_owned()).filter(|text| !text.is_empty());
    results.queries = answer.queries;
    results
}

/// What the model is told of a search that failed.
fn failure(error: &LlmError) -> String {
    match error {
        LlmError::ServerTool { code, .. } => {
            let advice = match code.as_str() {
                "max_uses_exceeded" => "it ran out of searches; search for something narrower",
                "too_many_requests" => "the provider is rate limiting searches; try again later",
                "query_too_long" => "the query is too long; shorten it",
                "invalid_tool_input" | "invalid_input" => "the query was refused; rephrase it",
                "unavailable" => "the search is unavailable now; try again later",
                _ => "try again, or search differently",
            };
            format!("the provider's web search failed ({code}): {advice}")
        }
        LlmError::Unsupported { message } => format!("web_search is not available: {message}"),
        other => format!("the provider's web search did not answer: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use agent_llm::WebSource;

    use super::*;

    #[test]
    fn an_answer_becomes_results_and_an_error_code_words() {
        let mut answer = WebSearchAnswer::new(" It shipped. ");
        let mut page = WebSource::new("Rust 2024", "https://blog.rust-lang.org/e");
        page.cited_text = Some("Rust 1.85 ".into());
        page.page_age = Some("May 1, 2025".into());
        answer.add_source(page);
        answer.queries = vec!["rust edition".into()];
        let found = results(answer);
        assert_eq!(found.answer.as_deref(), Some("It shipped."));
        assert_eq!(found.sources[0].snippet.as_deref(), Some("“Rust 1.85”"));
        assert_eq!(found.sources[0].age.as_deref(), Some("May 1, 2025"));
        assert_eq!(found.queries, ["rust edition"]);
        let error = LlmError::ServerTool {
            tool: "web_search".into(),
            code: "max_uses_exceeded".into(),
        };
        assert!(failure(&error).contains("(max_uses_exceeded): it ran out of searches"));
    }
}
