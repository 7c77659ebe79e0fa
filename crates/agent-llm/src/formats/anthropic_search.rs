//! Anthropic's web search tool in the Messages format, without I/O: the request that declares
//! the server tool (`{"type": "web_search_20250305", "name": "web_search", "max_uses": N}`, with
//! `allowed_domains` or `blocked_domains`) and the reading of the message that comes back.
//!
//! The reply's content is a sequence of blocks: `server_tool_use` (the model's search, `input:
//! {"query"}`), `web_search_tool_result` (its `content` an array of `web_search_result`s —
//! `url`, `title`, `page_age`, `encrypted_content` — or one `web_search_tool_result_error` with
//! an `error_code`), and `text` blocks whose `citations` are `web_search_result_location`s
//! (`url`, `title`, `cited_text`). A reply that stops with `pause_turn` is sent back as the
//! assistant's turn so that the model goes on.

use serde_json::{Value, json};

use crate::error::LlmError;
use crate::formats::anthropic_reply::{error_event, string, usage_of};
use crate::types::Usage;
use crate::web_search::{WebSearchAnswer, WebSearchOptions, WebSource, prompt};

/// The type of the web search tool declared.
pub(crate) const TOOL_TYPE: &str = "web_search_20250305";

/// The body of a non-streamed Messages request in which `model` searches for `query`;
/// `assistant` holds the content of the replies that paused so far.
pub(crate) fn search_body(
    model: &str,
    query: &str,
    options: &WebSearchOptions,
    max_tokens: u32,
    assistant: &[Value],
) -> Value {
    let mut tool = json!({"type": TOOL_TYPE, "name": "web_search", "max_uses": options.max_uses});
    if !options.allowed_domains.is_empty() {
        tool["allowed_domains"] = json!(options.allowed_domains);
    } else if !options.blocked_domains.is_empty() {
        tool["blocked_domains"] = json!(options.blocked_domains);
    }
    let mut messages = vec![json!({"role": "user", "content": prompt(query)})];
    messages.extend(
        assistant
            .iter()
            .map(|content| json!({"role": "assistant", "content": content})),
    );
    json!({
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "tools": [tool],
        "stream": false,
    })
}

/// What one reply of a search request says.
#[derive(Debug)]
pub(crate) struct SearchReply {
    /// The reply's content, to send back when it paused.
    pub(crate) content: Value,
    /// Whether it stopped with `pause_turn`.
    pub(crate) paused: bool,
}

/// Reads one reply into `answer` (text, sources, queries, usage); the error codes of searches
/// that failed go to `failures`.
pub(crate) fn read_reply(
    body: &str,
    answer: &mut WebSearchAnswer,
    failures: &mut Vec<String>,
) -> Result<SearchReply, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|err| LlmError::malformed(format!("invalid message: {err}")))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_event(&value));
    }
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::malformed("the message has no content"))?;
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("server_tool_use") if block["name"] == "web_search" => {
                if let Some(query) = block.pointer("/input/query").and_then(Value::as_str) {
                    answer.queries.push(query.to_owned());
                }
            }
            Some("web_search_tool_result") => match &block["content"] {
                Value::Array(results) => {
                    for result in results {
                        if let Some(source) = source_of(result) {
                            answer.add_source(source);
                        }
                    }
                }
                error => failures.push(
                    string(error, "error_code").unwrap_or_else(|| "an unreadable error".into()),
                ),
            },
            Some("text") => {
                answer.text.push_str(block["text"].as_str().unwrap_or(""));
                for citation in block["citations"].as_array().into_iter().flatten() {
                    if citation["type"] != "web_search_result_location" {
                        continue;
                    }
                    if let Some(mut source) = source_of(citation) {
                        source.cited_text = string(citation, "cited_text");
                        answer.add_source(source);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(usage) = value.get("usage").map(usage_of) {
        let total = answer.usage.get_or_insert(Usage::new(0, 0));
        total.prompt_tokens += usage.prompt_tokens;
        total.completion_tokens += usage.completion_tokens;
        total.cached_tokens += usage.cached_tokens;
    }
    Ok(SearchReply {
        content: Value::Array(content.clone()),
        paused: value["stop_reason"] == "pause_turn",
    })
}

/// The page a `web_search_result` or a citation names.
fn source_of(value: &Value) -> Option<WebSource> {
    let url = string(value, "url").filter(|url| !url.is_empty())?;
    let title = string(value, "title")
        .filter(|title| !title.trim().is_empty())
        .unwrap_or_else(|| url.clone());
    let mut source = WebSource::new(title, url);
    source.page_age = string(value, "page_age").filter(|age| !age.is_empty());
    Some(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_gives_its_text_sources_and_queries() {
        let body = json!({
            "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
            "content": [
                {"type": "text", "text": "I'll search."},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                 "input": {"query": "rust 2024 edition"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                    {"type": "web_search_result", "url": "https://blog.rust-lang.org/e",
                     "title": "Rust 2024", "encrypted_content": "EqQ", "page_age": "May 1, 2025"},
                    {"type": "web_search_result", "url": "https://doc.rust-lang.org/edition-guide/",
                     "title": "", "encrypted_content": "Fa"}
                ]},
                {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search",
                 "input": {"query": "again"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
                 "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
                {"type": "text", "text": " It shipped in 1.85.", "citations": [
                    {"type": "web_search_result_location", "url": "https://blog.rust-lang.org/e",
                     "title": "Rust 2024", "encrypted_index": "x", "cited_text": "Rust 1.85 ships the 2024 edition"}
                ]}
            ],
            "usage": {"input_tokens": 100, "output_tokens": 20, "server_tool_use": {"web_search_requests": 1}}
        });
        let mut answer = WebSearchAnswer::default();
        let mut failures = Vec::new();
        let reply = read_reply(&body.to_string(), &mut answer, &mut failures).unwrap();
        assert!(!reply.paused);
        assert_eq!(answer.text, "I'll search. It shipped in 1.85.");
        assert_eq!(answer.queries, ["rust 2024 edition", "again"]);
        assert_eq!(failures, ["max_uses_exceeded"]);
        assert_eq!(answer.sources.len(), 2);
        assert_eq!(answer.sources[0].page_age.as_deref(), Some("May 1, 2025"));
        assert_eq!(
            answer.sources[0].cited_text.as_deref(),
            Some("Rust 1.85 ships the 2024 edition")
        );
        assert_eq!(answer.sources[1].title, answer.sources[1].url);
        assert_eq!(answer.usage.unwrap().prompt_tokens, 100);
    }

    #[test]
    fn the_tool_carries_one_domain_list() {
        let options = WebSearchOptions::new()
            .with_max_uses(3)
            .with_allowed_domains(vec!["docs.rs".into()])
            .with_blocked_domains(vec!["x.test".into()]);
        let body = search_body(
            "m",
            "q",
            &options,
            1024,
            &[json!([{"type": "text", "text": "a"}])],
        );
        let tool = &body["tools"][0];
        assert_eq!(tool["type"], TOOL_TYPE);
        assert_eq!(tool["name"], "web_search");
        assert_eq!(tool["max_uses"], 3);
        assert_eq!(tool["allowed_domains"], json!(["docs.rs"]));
        assert!(tool.get("blocked_domains").is_none());
        assert_eq!(body["messages"][1]["role"], "assistant");
        assert_eq!(body["stream"], false);
    }
}
