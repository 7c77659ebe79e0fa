//! The providers' server-side web search in the mock: a [`Turn`](super::Turn) may carry [`WebSearch`]es,
//! which the server renders as the provider's own blocks, and a request that declares the
//! search tool must declare it as the provider documents.
//!
//! Anthropic Messages: the tool is `{"type": "web_search_20250305" | "web_search_20260209",
//! "name": "web_search", "max_uses"?: a positive integer, "allowed_domains"? | "blocked_domains"?
//! (not both), "user_location"?, "cache_control"?}`; anything else is refused with the API's
//! 400 `invalid_request_error`. A search is a `server_tool_use` block (`input: {"query"}`)
//! followed by a `web_search_tool_result` whose `content` is the `web_search_result`s (`url`,
//! `title`, `encrypted_content`, `page_age`) or a `web_search_tool_result_error` (`error_code`);
//! the searches past `max_uses` get `max_uses_exceeded`. The answer's text carries
//! `web_search_result_location` citations, and `usage.server_tool_use.web_search_requests`
//! counts the searches run.
//!
//! OpenAI Responses: the tool is `{"type": "web_search" | "web_search_2025_08_26" |
//! "web_search_preview" | "web_search_preview_2025_03_11", "filters"?: {"allowed_domains"},
//! "search_context_size"?: "low" | "medium" | "high", "user_location"?}`. A search is a
//! `web_search_call` item (`status`, `action: {"type": "search", "query", "sources"?}`, the
//! sources only when `include` names `web_search_call.action.sources`); the message's
//! `output_text` carries `url_citation` annotations.
//!
//! A turn with searches answering a request that declares no search tool is the test's mistake:
//! the server answers 418 saying so, as a real server would never search unasked.

use serde_json::{Value, json};

use super::RecordedRequest;
use super::WireFormat;

/// The Anthropic tool types of web search.
const ANTHROPIC_TYPES: [&str; 2] = ["web_search_20250305", "web_search_20260209"];
/// The Responses tool types of web search.
const RESPONSES_TYPES: [&str; 4] = [
    "web_search",
    "web_search_2025_08_26",
    "web_search_preview",
    "web_search_preview_2025_03_11",
];

/// One search the model runs on the provider's servers within a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearch {
    pub(super) query: String,
    /// Title, URL and page age of each result.
    pub(super) results: Vec<(String, String, Option<String>)>,
    /// The error code the search ends with instead of results.
    pub(super) error: Option<String>,
    /// The text of the first result the answer quotes.
    pub(super) cited: Option<String>,
}

impl WebSearch {
    /// A search for `query` that finds nothing (add results with [`WebSearch::result`]).
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            results: Vec::new(),
            error: None,
            cited: None,
        }
    }

    /// A search for `query` that fails with the provider's `error_code` (Anthropic's
    /// `max_uses_exceeded`, `too_many_requests`, `invalid_tool_input`, `query_too_long`,
    /// `unavailable`; a Responses call fails with `status: "failed"`).
    pub fn failing(query: impl Into<String>, error_code: impl Into<String>) -> Self {
        Self {
            error: Some(error_code.into()),
            ..Self::new(query)
        }
    }

    /// With a result.
    #[must_use]
    pub fn result(mut self, title: impl Into<String>, url: impl Into<String>) -> Self {
        self.results.push((title.into(), url.into(), None));
        self
    }

    /// With a result the provider dates (`page_age`).
    #[must_use]
    pub fn aged_result(
        mut self,
        title: impl Into<String>,
        url: impl Into<String>,
        age: impl Into<String>,
    ) -> Self {
        self.results
            .push((title.into(), url.into(), Some(age.into())));
        self
    }

    /// With the answer quoting `text` of the first result.
    #[must_use]
    pub fn cited(mut self, text: impl Into<String>) -> Self {
        self.cited = Some(text.into());
        self
    }

    /// The citation of the first result, when the answer quotes it.
    fn citation(&self) -> Option<(&str, &str, &str)> {
        let (title, url, _) = self.results.first()?;
        Some((url, title, self.cited.as_deref()?))
    }
}

/// The first rule the declaration of a search tool in an Anthropic request breaks.
pub(super) fn anthropic_rules(body: &Value) -> Result<(), String> {
    for (index, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        let Some(kind) = tool["type"].as_str() else {
            continue;
        };
        if kind == "custom" {
            continue;
        }
        if !kind.starts_with("web_search") {
            continue;
        }
        let at = format!("tools.{index}.{kind}");
        if !ANTHROPIC_TYPES.contains(&kind) {
            return Err(format!(
                "tools.{index}: Input tag '{kind}' found using 'type' does not match any of the \
                 expected tags: {}",
                ANTHROPIC_TYPES.join(", ")
            ));
        }
        if tool["name"] != "web_search" {
            return Err(format!("{at}.name: Input should be 'web_search'"));
        }
        if let Some(uses) = tool.get("max_uses").filter(|v| !v.is_null())
            && uses.as_u64().is_none_or(|n| n == 0)
        {
            return Err(format!(
                "{at}.max_uses: Input should be greater than 0 (an integer)"
            ));
        }
        for list in ["allowed_domains", "blocked_domains"] {
            if let Some(value) = tool.get(list).filter(|v| !v.is_null())
                && !value
                    .as_array()
                    .is_some_and(|items| items.iter().all(Value::is_string))
            {
                return Err(format!(
                    "{at}.{list}: Input should be a valid list of strings"
                ));
            }
        }
        if tool.get("allowed_domains").is_some_and(|v| !v.is_null())
            && tool.get("blocked_domains").is_some_and(|v| !v.is_null())
        {
            return Err(format!(
                "{at}: cannot specify both allowed_domains and blocked_domains"
            ));
        }
        let known = [
            "type",
            "name",
            "max_uses",
            "allowed_domains",
            "blocked_domains",
            "user_location",
            "cache_control",
        ];
        if let Some(extra) = tool
            .as_object()
            .and_then(|fields| fields.keys().find(|key| !known.contains(&key.as_str())))
        {
            return Err(format!("{at}.{extra}: Extra inputs are not permitted"));
        }
    }
    Ok(())
}

/// The first rule the declaration of a search tool in a Responses request breaks.
pub(super) fn responses_rules(body: &Value) -> Result<(), String> {
    for (index, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        let kind = tool["type"].as_str().unwrap_or_default();
        if !kind.starts_with("web_search") {
            continue;
        }
        if !RESPONSES_TYPES.contains(&kind) {
            return Err(format!(
                "Invalid value: '{kind}'. Supported values are: 'function', 'file_search', \
                 'computer_use_preview', 'web_search', 'web_search_preview', 'mcp', \
                 'code_interpreter', 'image_generation' and 'custom'. (tools[{index}].type)"
            ));
        }
        if let Some(size) = tool.get("search_context_size")
            && !matches!(size.as_str(), Some("low" | "medium" | "high"))
        {
            return Err(format!(
                "Invalid value: {size}. Supported values are: 'low', 'medium', and 'high'. \
                 (tools[{index}].search_context_size)"
            ));
        }
        if let Some(filters) = tool.get("filters").filter(|v| !v.is_null()) {
            if kind.starts_with("web_search_preview") {
                return Err(format!("Unknown parameter: 'tools[{index}].filters'."));
            }
            let domains = &filters["allowed_domains"];
            if !domains.is_null()
                && !domains
                    .as_array()
                    .is_some_and(|items| items.iter().all(Value::is_string))
            {
                return Err(format!(
                    "Invalid type for 'tools[{index}].filters.allowed_domains': expected an \
                     array of strings."
                ));
            }
        }
        let known = ["type", "filters", "search_context_size", "user_location"];
        if let Some(extra) = tool
            .as_object()
            .and_then(|fields| fields.keys().find(|key| !known.contains(&key.as_str())))
        {
            return Err(format!("Unknown parameter: 'tools[{index}].{extra}'."));
        }
    }
    Ok(())
}

/// The search tool a request declares, when it declares one.
fn declared(request: &RecordedRequest) -> Option<&Value> {
    let types: &[&str] = match request.format()? {
        WireFormat::Anthropic => &ANTHROPIC_TYPES,
        WireFormat::Responses => &RESPONSES_TYPES,
        WireFormat::OpenAi => return None,
    };
    request.body["tools"].as_array()?.iter().find(|tool| {
        tool["type"]
            .as_str()
            .is_some_and(|kind| types.contains(&kind))
    })
}

/// A turn's searches as they answer `request`: the searches past the tool's `max_uses` fail
/// with `max_uses_exceeded`. An error message when the turn searches and the request declares
/// no search tool.
pub(super) fn prepare(searches: &mut [WebSearch], request: &RecordedRequest) -> Result<(), String> {
    if searches.is_empty() {
        return Ok(());
    }
    let Some(tool) = declared(request) else {
        return Err(
            "the scripted turn searches the web, but the request declares no web search tool"
                .into(),
        );
    };
    let limit = tool["max_uses"].as_u64().map_or(usize::MAX, |n| n as usize);
    for search in searches.iter_mut().skip(limit) {
        search.results.clear();
        search.error = Some("max_uses_exceeded".into());
    }
    Ok(())
}

/// The Anthropic blocks of a turn's searches: `server_tool_use` and `web_search_tool_result`
/// for each.
pub(super) fn anthropic_blocks(searches: &[WebSearch]) -> Vec<Value> {
    let mut blocks = Vec::new();
    for (n, search) in searches.iter().enumerate() {
        let id = format!("srvtoolu_mock_{}", n + 1);
        blocks.push(
            json!({"type": "server_tool_use", "id": id, "name": "web_search",
            "input": {"query": search.query}}),
        );
        let content = match &search.error {
            Some(code) => json!({"type": "web_search_tool_result_error", "error_code": code}),
            None => Value::Array(
                search
                    .results
                    .iter()
                    .enumerate()
                    .map(|(r, (title, url, age))| {
                        json!({"type": "web_search_result", "url": url, "title": title,
                            "encrypted_content": format!("EqMock{n}x{r}"), "page_age": age})
                    })
                    .collect(),
            ),
        };
        blocks.push(json!({"type": "web_search_tool_result", "tool_use_id": id,
            "content": content}));
    }
    blocks
}

/// The `web_search_result_location` citations of the turn's text.
pub(super) fn anthropic_citations(searches: &[WebSearch]) -> Vec<Value> {
    searches
        .iter()
        .filter(|search| search.error.is_none())
        .filter_map(WebSearch::citation)
        .enumerate()
        .map(|(n, (url, title, cited))| {
            json!({"type": "web_search_result_location", "url": url, "title": title,
                "encrypted_index": format!("EiMock{n}"), "cited_text": cited})
        })
        .collect()
}

/// How many searches of the turn ran (failed ones but `max_uses_exceeded` count).
pub(super) fn searches_run(searches: &[WebSearch]) -> usize {
    searches
        .iter()
        .filter(|search| search.error.as_deref() != Some("max_uses_exceeded"))
        .count()
}

/// The Responses `web_search_call` items of a turn's searches; their sources only when the
/// request asks for them.
pub(super) fn responses_items(searches: &[WebSearch], with_sources: bool) -> Vec<Value> {
    searches
        .iter()
        .enumerate()
        .map(|(n, search)| {
            let mut action = json!({"type": "search", "query": search.query});
            if with_sources && search.error.is_none() {
                let sources: Vec<Value> = search
                    .results
                    .iter()
                    .map(|(_, url, _)| json!({"type": "url", "url": url}))
                    .collect();
                action["sources"] = Value::Array(sources);
            }
            let status = if search.error.is_some() {
                "failed"
            } else {
                "completed"
            };
            json!({"type": "web_search_call", "id": format!("ws_mock_{}", n + 1),
                "status": status, "action": action})
        })
        .collect()
}

/// The `url_citation` annotations of the turn's text: each over the quoted text where the text
/// holds it, else over the whole text.
pub(super) fn responses_annotations(searches: &[WebSearch], text: &str) -> Vec<Value> {
    let length = text.chars().count();
    searches
        .iter()
        .filter(|search| search.error.is_none())
        .filter_map(WebSearch::citation)
        .map(|(url, title, cited)| {
            let (start, end) = match text.find(cited) {
                Some(at) => {
                    let start = text[..at].chars().count();
                    (start, start + cited.chars().count())
                }
                None => (0, length),
            };
            json!({"type": "url_citation", "start_index": start, "end_index": end,
                "url": url, "title": title})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_declarations_are_checked_as_the_api_does() {
        let ok = |tool: Value| anthropic_rules(&json!({"tools": [tool]}));
        assert_eq!(
            ok(json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})),
            Ok(())
        );
        assert_eq!(ok(json!({"name": "f", "input_schema": {}})), Ok(()));
        for (tool, said) in [
            (
                json!({"type": "web_search_2025", "name": "web_search"}),
                "expected tags",
            ),
            (
                json!({"type": "web_search_20250305", "name": "search"}),
                ".name",
            ),
            (
                json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 0}),
                "max_uses",
            ),
            (
                json!({"type": "web_search_20250305", "name": "web_search",
                    "allowed_domains": ["a.b"], "blocked_domains": ["c.d"]}),
                "both",
            ),
            (
                json!({"type": "web_search_20250305", "name": "web_search", "query": "x"}),
                "Extra inputs",
            ),
        ] {
            let error = ok(tool.clone()).unwrap_err();
            assert!(error.contains(said), "{tool}: {error}");
        }
    }

    #[test]
    fn responses_declarations_are_checked_as_the_api_does() {
        let ok = |tool: Value| responses_rules(&json!({"tools": [tool]}));
        assert_eq!(
            ok(json!({"type": "web_search", "filters": {"allowed_domains": ["a.b"]}})),
            Ok(())
        );
        assert!(
            ok(json!({"type": "web_search_x"}))
                .unwrap_err()
                .contains("Invalid value")
        );
        assert!(
            ok(json!({"type": "web_search", "max_uses": 3}))
                .unwrap_err()
                .contains("Unknown parameter")
        );
        assert!(ok(json!({"type": "web_search", "search_context_size": "huge"})).is_err());
    }
}
