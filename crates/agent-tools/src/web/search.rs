//! `web_search(query, max_results?)` through a configured search service: a SearXNG instance's
//! JSON API (`GET <search_url>?q=<query>&format=json`), or anything that answers the same way.
//!
//! The service is the user's choice (often one on this machine), so its address is not checked
//! as `web_fetch` checks pages'. A provider that searches the web itself (OpenAI Responses,
//! Anthropic) is offered its own search instead, by the runner.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::{WEB_SEARCH, WebConfig, ensure_crypto_provider};
use crate::{Risk, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutput, TypedTool};

/// How many results a search shows when the call does not say.
const DEFAULT_RESULTS: usize = 8;
/// The most results a search shows.
const MAX_RESULTS: usize = 20;
/// The longest snippet shown of a result, in characters.
const SNIPPET_CHARS: usize = 300;

/// `web_search(query, max_results?)`: titles, links and snippets from the configured search
/// service.
#[derive(Debug, Clone)]
pub struct WebSearchTool {
    config: Arc<WebConfig>,
}

impl WebSearchTool {
    /// A search tool asking `config.search_url`.
    pub fn new(config: Arc<WebConfig>) -> Self {
        Self { config }
    }
}

/// Arguments of `web_search`.
#[derive(Debug, Deserialize)]
pub struct WebSearchArgs {
    /// What to search for.
    pub query: String,
    /// How many results to show (1 to 20, 8 by default).
    pub max_results: Option<usize>,
}

#[async_trait]
impl TypedTool for WebSearchTool {
    type Args = WebSearchArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: WEB_SEARCH.to_owned(),
            description: "Search the web. Returns the titles, links and snippets of the best \
                          results; read a result with web_fetch."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "What to search for." },
                    "max_results": { "type": "integer", "minimum": 1, "description": "How many results (default 8, at most 20)." }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    fn timeout(&self, _args: &WebSearchArgs, _limits: &ToolLimits) -> Duration {
        self.config.timeout + Duration::from_secs(5)
    }

    async fn run(&self, args: WebSearchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::failed("web_search needs a query"));
        }
        let Some(base) = &self.config.search_url else {
            return Err(ToolError::failed("no search service is configured"));
        };
        let mut url = Url::parse(base).map_err(|e| {
            ToolError::failed(format!("the search service URL {base:?} is invalid: {e}"))
        })?;
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("format", "json");
        ensure_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(self.config.timeout)
            .user_agent(self.config.user_agent.clone())
            .build()
            .map_err(|e| ToolError::failed(format!("cannot make an HTTP client: {e}")))?;
        let host = url.host_str().unwrap_or("").to_owned();
        let request = async {
            let response = client.get(url).send().await?;
            let status = response.status();
            let body = response.text().await?;
            Ok::<_, reqwest::Error>((status, body))
        };
        let (status, body) = tokio::select! {
            answered = request => answered.map_err(|e| {
                ToolError::failed(format!("the search service at {host} did not answer: {e}"))
            })?,
            () = ctx.cancel.cancelled() => return Err(ToolError::failed("web_search was cancelled")),
        };
        if !status.is_success() {
            return Err(ToolError::failed(format!(
                "the search service at {host} answered {status}"
            )));
        }
        let parsed: Value = serde_json::from_str(&body).map_err(|e| {
            ToolError::failed(format!(
                "the search service at {host} did not answer with JSON ({e}); it must answer \
                 `?q=...&format=json` as SearXNG does (enable the json format in its settings)"
            ))
        })?;
        let wanted = args
            .max_results
            .unwrap_or(DEFAULT_RESULTS)
            .clamp(1, MAX_RESULTS);
        Ok(ToolOutput::text(render(query, &host, &parsed, wanted)))
    }
}

/// The results as a numbered Markdown list.
fn render(query: &str, host: &str, parsed: &Value, wanted: usize) -> String {
    let results: Vec<&Value> = parsed
        .get("results")
        .and_then(Value::as_array)
        .map(|results| results.iter().take(wanted).collect())
        .unwrap_or_default();
    if results.is_empty() {
        return format!("No results for {query:?} (searched with {host}).");
    }
    let mut out = format!("Results for {query:?} (searched with {host}):\n");
    for (index, result) in results.iter().enumerate() {
        let field = |name: &str| {
            result
                .get(name)
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or("")
        };
        let title = field("title");
        let title = if title.is_empty() {
            field("url")
        } else {
            title
        };
        out.push_str(&format!("\n{}. [{title}]({})\n", index + 1, field("url")));
        let snippet = field("content");
        if !snippet.is_empty() {
            let mut short: String = snippet.chars().take(SNIPPET_CHARS).collect();
            if short.len() < snippet.len() {
                short.push('…');
            }
            out.push_str(&format!("   {}\n", short.replace('\n', " ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_a_numbered_list() {
        let parsed = json!({"results": [
            {"title": "Serde", "url": "https://serde.rs/", "content": "A framework for serializing."},
            {"url": "https://docs.rs/serde"},
            {"title": "third", "url": "https://x/"}
        ]});
        let text = render("serde", "search.local", &parsed, 2);
        assert!(
            text.contains("1. [Serde](https://serde.rs/)\n   A framework"),
            "{text}"
        );
        assert!(
            text.contains("2. [https://docs.rs/serde](https://docs.rs/serde)"),
            "{text}"
        );
        assert!(!text.contains("third"), "{text}");
        assert!(render("x", "h", &json!({"results": []}), 5).starts_with("No results"));
    }
}
