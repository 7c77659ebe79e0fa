//! `web_search(query, max_results?, allowed_domains?, blocked_domains?)`: one tool whatever
//! answers it — a configured search service ([`SearchService`], SearXNG's JSON API) or the
//! model provider's own search, through a [`SearchBackend`]. The arguments, the approval rules
//! (`web_search` in `[approvals]`), cancellation and the text the model reads are this file's;
//! the backend only searches.
//!
//! The model reads a numbered Markdown list of the pages found (title, link, age, snippet or
//! quoted text), after the answer a provider's search wrote, under a heading that says who
//! searched and which queries ran.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::backend::{SearchBackend, SearchQuery, SearchResults};
use super::{SearchService, WEB_SEARCH, WebConfig};
use crate::{Risk, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutput, TypedTool};

/// How many results a search shows when the call does not say.
const DEFAULT_RESULTS: usize = 8;
/// The most results a search shows.
const MAX_RESULTS: usize = 20;

/// `web_search(query, max_results?, allowed_domains?, blocked_domains?)`: the pages a
/// [`SearchBackend`] finds, as titles, links and snippets.
#[derive(Debug, Clone)]
pub struct WebSearchTool {
    backend: Arc<dyn SearchBackend>,
}

impl WebSearchTool {
    /// A search tool asking the search service of `config.search_url`.
    pub fn new(config: Arc<WebConfig>) -> Self {
        Self::with_backend(Arc::new(SearchService::new(config)))
    }

    /// A search tool asking `backend`.
    pub fn with_backend(backend: Arc<dyn SearchBackend>) -> Self {
        Self { backend }
    }
}

/// Arguments of `web_search`.
#[derive(Debug, Deserialize)]
pub struct WebSearchArgs {
    /// What to search for.
    pub query: String,
    /// How many results to show (1 to 20, 8 by default).
    pub max_results: Option<usize>,
    /// Only results from these domains.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Never results from these domains.
    #[serde(default)]
    pub blocked_domains: Vec<String>,
}

#[async_trait]
impl TypedTool for WebSearchTool {
    type Args = WebSearchArgs;

    fn definition(&self) -> ToolDefinition {
        let domains =
            |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
        ToolDefinition {
            name: WEB_SEARCH.to_owned(),
            description: "Search the web. Returns the titles, links and snippets of the best \
                          results; read a result with web_fetch."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "What to search for." },
                    "max_results": { "type": "integer", "minimum": 1, "description": "How many results (default 8, at most 20)." },
                    "allowed_domains": domains("Only results from these domains (e.g. docs.rs)."),
                    "blocked_domains": domains("Never results from these domains (not with allowed_domains).")
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
        self.backend.timeout() + Duration::from_secs(5)
    }

    async fn run(&self, args: WebSearchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = search_query(args)?;
        let name = self.backend.name();
        let results = tokio::select! {
            found = self.backend.search(&query) => found.map_err(|e| ToolError::failed(e.message))?,
            () = ctx.cancel.cancelled() => return Err(ToolError::failed("web_search was cancelled")),
        };
        let output = ToolOutput::text(render(&query, &name, &results));
        Ok(match results.usage {
            Some((tokens, cost)) => output.with_usage(tokens, cost),
            None => output,
        })
    }
}

/// The search the arguments ask for, checked.
fn search_query(args: WebSearchArgs) -> Result<SearchQuery, ToolError> {
    let text = args.query.trim();
    if text.is_empty() {
        return Err(ToolError::failed("web_search needs a query"));
    }
    let domains = |list: Vec<String>| -> Result<Vec<String>, ToolError> {
        list.into_iter()
            .map(|domain| {
                let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
                let plain = !domain.is_empty()
                    && domain
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
                if plain {
                    Ok(domain)
                } else {
                    Err(ToolError::failed(format!(
                        "{domain:?} is not a domain name (give names such as docs.rs, without \
                         a scheme or a path)"
                    )))
                }
            })
            .collect()
    };
    let mut query = SearchQuery::new(text);
    query.max_results = args
        .max_results
        .unwrap_or(DEFAULT_RESULTS)
        .clamp(1, MAX_RESULTS);
    query.allowed_domains = domains(args.allowed_domains)?;
    query.blocked_domains = domains(args.blocked_domains)?;
    if !query.allowed_domains.is_empty() && !query.blocked_domains.is_empty() {
        return Err(ToolError::failed(
            "give allowed_domains or blocked_domains, not both",
        ));
    }
    Ok(query)
}

/// The results as Markdown: a provider's answer, then the numbered pages.
fn render(query: &SearchQuery, name: &str, results: &SearchResults) -> String {
    let asked = &query.query;
    let mut heading = format!("searched with {name}");
    let other: Vec<&String> = results.queries.iter().filter(|q| *q != asked).collect();
    if !other.is_empty() {
        let other: Vec<String> = other.iter().map(|q| format!("{q:?}")).collect();
        heading.push_str(&format!("; queries run: {}", other.join(", ")));
    }
    let sources: Vec<_> = results
        .sources
        .iter()
        .filter(|source| query.admits(&source.url))
        .take(query.max_results)
        .collect();
    let answer = results.answer.as_deref().map(str::trim).unwrap_or("");
    if sources.is_empty() && answer.is_empty() {
        return format!("No results for {asked:?} ({heading}).");
    }
    let mut out = format!("Results for {asked:?} ({heading}):\n");
    if !answer.is_empty() {
        out.push_str(&format!("\n{answer}\n"));
        if !sources.is_empty() {
            out.push_str("\nSources:\n");
        }
    }
    for (index, source) in sources.iter().enumerate() {
        let age = source
            .age
            .as_deref()
            .map_or(String::new(), |age| format!(" ({age})"));
        out.push_str(&format!(
            "\n{}. [{}]({}){age}\n",
            index + 1,
            source.title.trim(),
            source.url
        ));
        if let Some(snippet) = source.snippet.as_deref().map(str::trim)
            && !snippet.is_empty()
        {
            out.push_str(&format!("   {}\n", snippet.replace('\n', " ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::backend::SearchSource;
    use super::*;

    fn args(text: &str) -> WebSearchArgs {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn results_are_a_numbered_list() {
        let mut serde = SearchSource::new("Serde", "https://serde.rs/");
        serde.snippet = Some("A framework for serializing.".into());
        let found = SearchResults::new(vec![
            serde,
            SearchSource::new("https://docs.rs/serde", "https://docs.rs/serde"),
            SearchSource::new("third", "https://x/"),
        ]);
        let mut query = SearchQuery::new("serde");
        query.max_results = 2;
        let text = render(&query, "search.local", &found);
        assert!(
            text.contains("1. [Serde](https://serde.rs/)\n   A framework"),
            "{text}"
        );
        assert!(
            text.contains("2. [https://docs.rs/serde](https://docs.rs/serde)"),
            "{text}"
        );
        assert!(!text.contains("third"), "{text}");
        let none = render(&query, "h", &SearchResults::default());
        assert!(none.starts_with("No results"), "{none}");
    }

    #[test]
    fn a_provider_answer_comes_before_its_sources() {
        let mut found = SearchResults::new(vec![SearchSource::new("Rust", "https://rust.test/")]);
        found.answer = Some("It shipped.".into());
        found.queries = vec!["rust".into(), "rust 2024 edition".into()];
        let text = render(&SearchQuery::new("rust"), "Anthropic's web search", &found);
        assert!(
            text.starts_with(
                "Results for \"rust\" (searched with Anthropic's web search; queries run: \
                 \"rust 2024 edition\"):\n\nIt shipped.\n\nSources:\n\n1. [Rust]"
            ),
            "{text}"
        );
    }

    #[test]
    fn bad_arguments_are_refused_before_any_search() {
        assert!(search_query(args(r#"{"query": "  "}"#)).is_err());
        let both = r#"{"query": "q", "allowed_domains": ["a.b"], "blocked_domains": ["c.d"]}"#;
        let error = search_query(args(both)).unwrap_err().to_string();
        assert!(error.contains("not both"), "{error}");
        let scheme = r#"{"query": "q", "allowed_domains": ["https://docs.rs/"]}"#;
        assert!(search_query(args(scheme)).is_err());
        let fine = search_query(args(
            r#"{"query": "q", "allowed_domains": ["Docs.RS."], "max_results": 99}"#,
        ))
        .unwrap();
        assert_eq!(fine.allowed_domains, ["docs.rs"]);
        assert_eq!(fine.max_results, MAX_RESULTS);
    }
}
