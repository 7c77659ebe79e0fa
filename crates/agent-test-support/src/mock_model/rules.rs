//! The documented request rules the mock server enforces, as the real APIs do with a 400: a
//! request that breaks one gets the provider's `invalid_request_error` instead of a scripted
//! reply, so a client that sends what a real server would refuse fails its test.
//!
//! OpenAI chat completions: a `model`, a non-empty `messages` array of known roles; a `tool`
//! message answers a call of the assistant message before it, and every call of an assistant
//! message is answered before the next other message; `stream_options` only with `stream`;
//! function names of 1 to 64 letters, digits, `_` or `-`.
//!
//! OpenAI Responses: see `responses.rs`.
//!
//! Anthropic Messages: the `anthropic-version` header; a `model`, a positive `max_tokens` and a
//! non-empty `messages` array of `user` and `assistant` messages starting with `user` (system
//! text goes in `system`); every `tool_use` of an assistant message is answered by a
//! `tool_result` in the next message, and a `tool_result` answers a `tool_use` of the message
//! before it; `tool_use` ids match `^[a-zA-Z0-9_-]+$`; a request with tool blocks defines
//! `tools`; at most four `cache_control`
//! breakpoints; tool names as above; a web search tool declared as documented (see
//! `web_search.rs`).

use std::collections::HashSet;

use serde_json::Value;

use super::RecordedRequest;

/// The first rule an OpenAI chat-completions request breaks.
pub(super) fn openai(request: &RecordedRequest) -> Result<(), String> {
    let body = &request.body;
    non_empty_string(body, "model")?;
    let messages = messages(body)?;
    let mut unanswered: Vec<String> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let Some(at) = unanswered.iter().position(|open| open == id) else {
                return Err(format!(
                    "messages[{index}]: messages with role 'tool' must be a response to a \
                     preceding message with 'tool_calls' (no call {id:?})"
                ));
            };
            unanswered.remove(at);
            continue;
        }
        if !unanswered.is_empty() {
            return Err(format!(
                "messages[{index}]: an assistant message with 'tool_calls' must be followed by \
                 tool messages responding to each 'tool_call_id' (missing: {unanswered:?})"
            ));
        }
        match role {
            "system" | "developer" | "user" => {}
            "assistant" => {
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    unanswered.push(call["id"].as_str().unwrap_or_default().to_owned());
                }
            }
            other => return Err(format!("messages[{index}]: unknown role {other:?}")),
        }
    }
    if !unanswered.is_empty() {
        return Err(format!(
            "an assistant message with 'tool_calls' must be followed by tool messages \
             responding to each 'tool_call_id' (missing: {unanswered:?})"
        ));
    }
    if body.get("stream_options").is_some() && body["stream"] != Value::Bool(true) {
        return Err("stream_options is only allowed when stream is true".into());
    }
    for tool in body["tools"].as_array().into_iter().flatten() {
        tool_name(&tool["function"]["name"])?;
    }
    Ok(())
}

/// The first rule an Anthropic Messages request breaks.
pub(super) fn anthropic(request: &RecordedRequest) -> Result<(), String> {
    if request.header("anthropic-version").is_none() {
        return Err("anthropic-version: header is required".into());
    }
    let body = &request.body;
    non_empty_string(body, "model")?;
    if body["max_tokens"].as_u64().is_none_or(|n| n == 0) {
        return Err("max_tokens: field required (a positive integer)".into());
    }
    let messages = messages(body)?;
    if messages[0]["role"] != "user" {
        return Err("messages: the first message must use the \"user\" role".into());
    }
    let mut open: HashSet<String> = HashSet::new();
    for (index, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let of_type = |kind: &str| {
            blocks
                .iter()
                .filter(|b| b["type"] == kind)
                .cloned()
                .collect::<Vec<_>>()
        };
        match message["role"].as_str().unwrap_or_default() {
            "user" => {
                for result in of_type("tool_result") {
                    let id = result["tool_use_id"].as_str().unwrap_or_default();
                    if !open.remove(id) {
                        return Err(format!(
                            "messages.{index}: unexpected `tool_use_id` found in `tool_result` \
                             blocks: {id}. Each `tool_result` block must have a corresponding \
                             `tool_use` block in the previous message."
                        ));
                    }
                }
            }
            "assistant" => {}
            other => {
                return Err(format!(
                    "messages.{index}: role {other:?} is not allowed (only \"user\" and \
                     \"assistant\"; system text goes in the top-level `system`)"
                ));
            }
        }
        if !open.is_empty() {
            return Err(format!(
                "messages.{index}: `tool_use` ids were found without `tool_result` blocks \
                 immediately after: {open:?}"
            ));
        }
        if message["role"] == "assistant" {
            for call in of_type("tool_use") {
                let id = call["id"].as_str().unwrap_or_default();
                let fits = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
                if id.is_empty() || !id.chars().all(fits) {
                    return Err(format!(
                        "messages.{index}.content: String should match pattern \
                         '^[a-zA-Z0-9_-]+$' (tool_use id {id:?})"
                    ));
                }
                open.insert(id.to_owned());
            }
        }
    }
    let has_tool_blocks = messages.iter().any(|message| {
        message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|block| matches!(block["type"].as_str(), Some("tool_use" | "tool_result")))
    });
    let has_tools = body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty());
    if has_tool_blocks && !has_tools {
        return Err(
            "Requests which include `tool_use` or `tool_result` blocks must define tools.".into(),
        );
    }
    let breakpoints = count_key(body, "cache_control");
    if breakpoints > 4 {
        return Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
        ));
    }
    super::web_search::anthropic_rules(body)?;
    for tool in body["tools"].as_array().into_iter().flatten() {
        tool_name(&tool["name"])?;
    }
    Ok(())
}

/// How many objects in `value` have the key `key`.
fn count_key(value: &Value, key: &str) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key(key))
                + map.values().map(|v| count_key(v, key)).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(|v| count_key(v, key)).sum(),
        _ => 0,
    }
}

pub(super) fn non_empty_string(body: &Value, field: &str) -> Result<(), String> {
    match body[field].as_str() {
        Some(text) if !text.is_empty() => Ok(()),
        _ => Err(format!("{field}: field required (a non-empty string)")),
    }
}

fn messages(body: &Value) -> Result<&Vec<Value>, String> {
    match body["messages"].as_array() {
        Some(messages) if !messages.is_empty() => Ok(messages),
        _ => Err("messages: field required (a non-empty array)".into()),
    }
}

pub(super) fn tool_name(name: &Value) -> Result<(), String> {
    let name = name.as_str().unwrap_or_default();
    let valid = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "tools: {name:?} does not match '^[a-zA-Z0-9_-]{{1,64}}$'"
        ))
    }
}
