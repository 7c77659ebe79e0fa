//! The `web_search` tool of the Responses API, without I/O: the request that declares it
//! (`{"type": "web_search", "filters": {"allowed_domains": [...]}}`, `tool_choice: "required"`
//! so that the model searches, `include: ["web_search_call.action.sources"]` for every page it
//! consulted) and the reading of the response object that comes back.
//!
//! The output holds `web_search_call` items (`id`, `status`, `action: {"type": "search",
//! "query", "sources": [{"type": "url", "url"}]}`) and a `message` whose `output_text` parts
//! carry `url_citation` annotations (`url`, `title`, `start_index`, `end_index`). The tool has
//! no list of blocked domains: their pages are left out of the sources here, and an answer that
//! cites one is left out too.

use serde_json::{Value, json};

use super::{error_of, string, usage_of};
use crate::error::LlmError;
use crate::web_search::{WebSearchAnswer, WebSearchOptions, WebSource, prompt};

/// The body of a non-streamed request in which `model` searches for `query`.
pub(crate) fn search_body(model: &str, query: &str, options: &WebSearchOptions) -> Value {
    let mut tool = json!({"type": "web_search"});
    if !options.allowed_domains.is_empty() {
        tool["filters"] = json!({"allowed_domains": options.allowed_domains});
    }
    json!({
        "model": model,
        "input": [{"role": "user", "content": prompt(query)}],
        "tools": [tool],
        "tool_choice": "required",
        "max_tool_calls": options.max_uses,
        "include": ["web_search_call.action.sources"],
        "store": false,
        "stream": false,
    })
}

/// Reads a response object: the answer, or the error of a response that failed (including a
/// response whose searches all failed and found nothing).
pub(crate) fn read_response(
    body: &str,
    options: &WebSearchOptions,
) -> Result<WebSearchAnswer, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|err| LlmError::malformed(format!("invalid response object: {err}")))?;
    if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
        return Err(error_of(error));
    }
    let output = value
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::malformed("the response has no output"))?;
    let mut answer = WebSearchAnswer::default();
    let mut failed = false;
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("web_search_call") => {
                failed |= item["status"] == "failed";
                let action = &item["action"];
                if action["type"] != "search" {
                    continue;
                }
                let queries = action["queries"].as_array().into_iter().flatten();
                let queries: Vec<String> = queries
                    .filter_map(|q| q.as_str().map(str::to_owned))
                    .collect();
                if queries.is_empty() {
                    answer.queries.extend(string(action, "query"));
                } else {
                    answer.queries.extend(queries);
                }
                for source in action["sources"].as_array().into_iter().flatten() {
                    if let Some(url) = string(source, "url").filter(|url| !url.is_empty()) {
                        answer.add_source(WebSource::new(url.clone(), url));
                    }
                }
            }
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    if part["type"] != "output_text" {
                        continue;
                    }
                    let text = part["text"].as_str().unwrap_or("");
                    for note in part["annotations"].as_array().into_iter().flatten() {
                        if let Some(source) = citation(note, text) {
                            answer.add_source(source);
                        }
                    }
                    answer.text.push_str(text);
                }
            }
            _ => {}
        }
    }
    answer.usage = value.get("usage").map(usage_of);
    let blocked = |source: &WebSource| {
        (options.blocked_domains.iter()).any(|domain| in_domain(&source.url, domain))
    };
    if answer
        .sources
        .iter()
        .any(|s| blocked(s) && s.cited_text.is_some())
    {
        // The answer quotes a page of a blocked domain, which the tool promises never to give.
        answer.text.clear();
    }
    answer.sources.retain(|source| !blocked(source));
    if failed && answer.sources.is_empty() {
        return Err(LlmError::ServerTool {
            tool: "web_search".to_owned(),
            code: "failed".to_owned(),
        });
    }
    Ok(answer)
}

/// The page a `url_citation` annotation names, with the text it marks as the cited text.
fn citation(note: &Value, text: &str) -> Option<WebSource> {
    if note["type"] != "url_citation" {
        return None;
    }
    let url = string(note, "url").filter(|url| !url.is_empty())?;
    let title = string(note, "title")
        .filter(|title| !title.trim().is_empty())
        .unwrap_or_else(|| url.clone());
    let mut source = WebSource::new(title, url);
    // The indices count characters of the text.
    let (start, end) = (note["start_index"].as_u64(), note["end_index"].as_u64());
    if let (Some(start), Some(end)) = (start, end) {
        let cited: String = text
            .chars()
            .skip(start as usize)
            .take(end.saturating_sub(start) as usize)
            .collect();
        source.cited_text = Some(cited).filter(|cited| !cited.trim().is_empty());
    }
    Some(source)
}

/// Whether `url`'s host is `domain` or one of its subdomains.
fn in_domain(url: &str, domain: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .rsplit('@')
        .next()
        .unwrap_or("");
    let host = host.split(':').next().unwrap_or("").to_ascii_lowercase();
    let domain = domain.trim().trim_start_matches("*.").to_ascii_lowercase();
    host == domain || host.ends_with(&format!(".{domain}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_gives_its_text_sources_and_queries() {
        let body = json!({
            "id": "resp_1", "object": "response", "status": "completed",
            "output": [
                {"type": "web_search_call", "id": "ws_1", "status": "completed",
                 "action": {"type": "search", "query": "rust edition",
                            "sources": [{"type": "url", "url": "https://blog.rust-lang.org/e"},
                                        {"type": "url", "url": "https://ads.example.com/x"}]}},
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "It shipped in Rust 1.85.",
                     "annotations": [{"type": "url_citation", "start_index": 14, "end_index": 23,
                         "url": "https://blog.rust-lang.org/e", "title": "Rust 2024"}]}]}
            ],
            "usage": {"input_tokens": 50, "output_tokens": 9}
        });
        let options = WebSearchOptions::new().with_blocked_domains(vec!["example.com".into()]);
        let answer = read_response(&body.to_string(), &options).unwrap();
        assert_eq!(answer.text, "It shipped in Rust 1.85.");
        assert_eq!(answer.queries, ["rust edition"]);
        assert_eq!(answer.sources.len(), 1, "{:?}", answer.sources);
        assert_eq!(answer.sources[0].title, "Rust 2024");
        assert_eq!(answer.sources[0].cited_text.as_deref(), Some("Rust 1.85"));
        assert_eq!(answer.usage.unwrap().prompt_tokens, 50);
        // An answer citing a blocked page is not passed on; the other pages are.
        let blocked = WebSearchOptions::new().with_blocked_domains(vec!["rust-lang.org".into()]);
        let answer = read_response(&body.to_string(), &blocked).unwrap();
        assert_eq!(answer.text, "");
        assert_eq!(answer.sources.len(), 1);
        assert_eq!(answer.sources[0].url, "https://ads.example.com/x");
    }

    #[test]
    fn searches_that_all_failed_are_a_tool_failure() {
        let body = json!({"output": [
            {"type": "web_search_call", "id": "ws_1", "status": "failed",
             "action": {"type": "search", "query": "q"}}
        ]});
        assert!(matches!(
            read_response(&body.to_string(), &WebSearchOptions::new()),
            Err(LlmError::ServerTool { .. })
        ));
        assert!(in_domain("https://a.docs.rs:443/x", "docs.rs"));
        assert!(!in_domain("https://notdocs.rs/", "docs.rs"));
    }
}
