//! The OpenAI Responses format of the mock server (`POST {base}/responses`): a [`Turn`]
//! rendered as a response object or as its streamed events, reasoning items whose encrypted
//! content the server remembers, and the request rules of that API.
//!
//! The rules, as OpenAI documents and enforces them for requests without
//! `previous_response_id` (with `store: false` nothing is kept between turns, so the input
//! must carry everything): a `model`; an `input` string or non-empty array of items; message
//! items of a known role; every `function_call_output` answers a `function_call` item before
//! it with the same `call_id`, and every `function_call` is answered; a `reasoning` item is
//! followed by the item it preceded (an assistant message or a function call, after any
//! further reasoning items); with `store: false` a reasoning item carries the
//! `encrypted_content` this server issued for its id, unchanged; function tools are
//! `{type: "function", name, parameters}` with names as in chat completions.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::RecordedRequest;
use super::lock;
use super::rules::{non_empty_string, tool_name};
use super::turn::{Turn, Usage, fragments};
use super::web_search;

/// The reasoning items the server issued: id to encrypted content.
#[derive(Debug, Default)]
pub(super) struct Issued {
    items: Mutex<HashMap<String, String>>,
}

impl Issued {
    /// Issues a new reasoning item: its id and encrypted content.
    fn issue(&self, summary: &str) -> (String, String) {
        let mut items = lock(&self.items);
        let n = items.len() + 1;
        let id = format!("rs_mock_{n}");
        // Opaque to clients, like the real thing; the summary's length makes tampering with
        // the content of one item for another detectable by comparison alone.
        let content = format!("gAAAAB-mock-{n}-{}-{:x}", summary.len(), n * 7919);
        items.insert(id.clone(), content.clone());
        (id, content)
    }

    fn get(&self, id: &str) -> Option<String> {
        lock(&self.items).get(id).cloned()
    }
}

/// The output items of a turn, finished: reasoning, web searches, message, function calls;
/// the searches' sources when `sources` says the request asked for them.
fn output_items(turn: &Turn, issued: &Issued, sources: bool) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(summary) = &turn.reasoning_item {
        let (id, content) = issued.issue(summary);
        items.push(json!({
            "id": id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": content,
        }));
    }
    items.extend(web_search::responses_items(&turn.web_searches, sources));
    if let Some(text) = &turn.text {
        let annotations = web_search::responses_annotations(&turn.web_searches, text);
        items.push(json!({
            "id": "msg_mock",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": annotations}],
        }));
    }
    for (n, (call_id, name, args)) in turn.tool_calls.iter().enumerate() {
        items.push(json!({
            "id": format!("fc_mock_{n}"),
            "type": "function_call",
            "status": "completed",
            "call_id": call_id,
            "name": name,
            "arguments": args.to_string(),
        }));
    }
    items
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens(),
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.prompt_tokens() + usage.output_tokens,
    })
}

fn response_object(turn: &Turn, status: &str, output: Vec<Value>) -> Value {
    json!({
        "id": turn.id.as_deref().unwrap_or("resp_mock"),
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": turn.model(),
        "output": output,
        "usage": turn.usage.as_ref().map(usage_json),
    })
}

/// Whether a request asks for the sources of its web searches.
pub(super) fn wants_sources(request: &RecordedRequest) -> bool {
    request.body["include"].as_array().is_some_and(|include| {
        include
            .iter()
            .any(|i| i == "web_search_call.action.sources")
    })
}

/// A complete response object (`"object": "response"`).
pub(super) fn response(turn: &Turn, issued: &Issued, sources: bool) -> Value {
    response_object(turn, "completed", output_items(turn, issued, sources))
}

/// The events of a streamed response: `response.created`, each output item added, its deltas
/// in fragments and done, then `response.completed` with the usage.
pub(super) fn events(turn: &Turn, issued: &Issued, sources: bool) -> Vec<Value> {
    let items = output_items(turn, issued, sources);
    let mut events = vec![
        json!({"type": "response.created", "response": response_object(turn, "in_progress", vec![])}),
        json!({"type": "response.in_progress", "response": response_object(turn, "in_progress", vec![])}),
    ];
    for (index, item) in items.iter().enumerate() {
        let id = item["id"].clone();
        let mut added = item.clone();
        let deltas: Vec<Value> = match item["type"].as_str().unwrap_or_default() {
            "reasoning" => {
                added["summary"] = json!([]);
                added.as_object_mut().map(|o| o.remove("encrypted_content"));
                let text = item["summary"][0]["text"].as_str().unwrap_or_default();
                let mut deltas = vec![json!({"type": "response.reasoning_summary_part.added",
                    "item_id": id, "output_index": index, "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""}})];
                deltas.extend(fragments(text).into_iter().map(|piece| {
                    json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                        "output_index": index, "summary_index": 0, "delta": piece})
                }));
                deltas.push(json!({"type": "response.reasoning_summary_text.done",
                    "item_id": id, "output_index": index, "summary_index": 0, "text": text}));
                deltas
            }
            "web_search_call" => {
                added["status"] = json!("in_progress");
                let done = if item["status"] == "failed" {
                    "failed"
                } else {
                    "completed"
                };
                ["in_progress", "searching", done]
                    .iter()
                    .map(|stage| {
                        json!({"type": format!("response.web_search_call.{stage}"),
                            "item_id": id, "output_index": index})
                    })
                    .collect()
            }
            "message" => {
                added["content"] = json!([]);
                added["status"] = json!("in_progress");
                let text = item["content"][0]["text"].as_str().unwrap_or_default();
                let mut deltas = vec![json!({"type": "response.content_part.added",
                    "item_id": id, "output_index": index, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}})];
                deltas.extend(fragments(text).into_iter().map(|piece| {
                    json!({"type": "response.output_text.delta", "item_id": id,
                        "output_index": index, "content_index": 0, "delta": piece})
                }));
                deltas.push(json!({"type": "response.output_text.done", "item_id": id,
                    "output_index": index, "content_index": 0, "text": text}));
                deltas
            }
            _ => {
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                let arguments = item["arguments"].as_str().unwrap_or_default();
                let mut deltas: Vec<Value> = fragments(arguments)
                    .into_iter()
                    .map(|piece| {
                        json!({"type": "response.function_call_arguments.delta",
                            "item_id": id, "output_index": index, "delta": piece})
                    })
                    .collect();
                deltas.push(json!({"type": "response.function_call_arguments.done",
                    "item_id": id, "output_index": index, "arguments": arguments}));
                deltas
            }
        };
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        events.extend(deltas);
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    events.push(json!({"type": "response.completed",
        "response": response_object(turn, "completed", items)}));
    for (sequence, event) in events.iter_mut().enumerate() {
        event["sequence_number"] = json!(sequence);
    }
    events
}

/// The first rule a Responses request breaks.
pub(super) fn rules(request: &RecordedRequest, issued: &Issued) -> Result<(), String> {
    let body = &request.body;
    non_empty_string(body, "model")?;
    let items = match &body["input"] {
        Value::String(text) if !text.is_empty() => return tools(body),
        Value::Array(items) if !items.is_empty() => items,
        _ => return Err("Missing required parameter: 'input'.".into()),
    };
    let stored = body["store"] != Value::Bool(false);
    let mut calls: HashSet<&str> = HashSet::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        let kind = item["type"].as_str().unwrap_or("message");
        match kind {
            "message" => match item["role"].as_str().unwrap_or_default() {
                "user" | "assistant" | "system" | "developer" => {}
                other => {
                    return Err(format!("Invalid value: {other:?}. input[{index}].role"));
                }
            },
            "function_call" => {
                let call_id = item["call_id"].as_str().unwrap_or_default();
                if call_id.is_empty() || item["name"].as_str().is_none_or(str::is_empty) {
                    return Err(format!(
                        "Missing required parameter: 'input[{index}].call_id' or 'name'."
                    ));
                }
                calls.insert(call_id);
            }
            "function_call_output" => {
                let call_id = item["call_id"].as_str().unwrap_or_default();
                if !calls.contains(call_id) {
                    return Err(format!(
                        "No tool call found for function call output with call_id {call_id}."
                    ));
                }
                answered.insert(call_id);
            }
            "reasoning" => reasoning(items, index, stored, issued)?,
            other => return Err(format!("Invalid value: {other:?}. input[{index}].type")),
        }
    }
    if let Some(open) = calls.difference(&answered).next() {
        return Err(format!("No tool output found for function call {open}."));
    }
    tools(body)
}

/// The rules of the reasoning item at `index`.
fn reasoning(items: &[Value], index: usize, stored: bool, issued: &Issued) -> Result<(), String> {
    let item = &items[index];
    let id = item["id"].as_str().unwrap_or_default();
    let follower = items[index + 1..]
        .iter()
        .find(|next| next["type"] != "reasoning");
    let follows = follower.is_some_and(|next| {
        next["type"] == "function_call"
            || (next["type"] == "message" && next["role"] == "assistant")
    });
    if !follows {
        return Err(format!(
            "Item '{id}' of type 'reasoning' was provided without its required following item."
        ));
    }
    match item["encrypted_content"].as_str() {
        None if !stored => Err(format!(
            "Item with id '{id}' not found. Items are not persisted when `store` is set to \
             false. Try again with `store` set to true, or remove this item from your input."
        )),
        None => Ok(()),
        Some(content) if issued.get(id).as_deref() == Some(content) => Ok(()),
        Some(_) => Err(format!(
            "The encrypted content for item {id} could not be verified."
        )),
    }
}

fn tools(body: &Value) -> Result<(), String> {
    web_search::responses_rules(body)?;
    for (index, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        if tool["type"] == "function" {
            if tool.get("name").is_none() {
                return Err(format!(
                    "Missing required parameter: 'tools[{index}].name'."
                ));
            }
            tool_name(&tool["name"])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(input: Value) -> RecordedRequest {
        RecordedRequest {
            index: 0,
            method: "POST".into(),
            path: "/v1/responses".into(),
            headers: Vec::new(),
            body: json!({"model": "gpt-5", "store": false, "input": input}),
        }
    }

    #[test]
    fn reasoning_items_need_their_follower_and_the_content_issued() {
        let issued = Issued::default();
        let turn = Turn::tool_call("call_1", "f", json!({})).with_reasoning_item("why");
        let output = response(&turn, &issued, false)["output"].clone();
        let user = json!({"type": "message", "role": "user", "content": "hi"});
        let answer = json!({"type": "function_call_output", "call_id": "call_1", "output": ""});
        let (reasoning, call) = (output[0].clone(), output[1].clone());
        let good = json!([user, reasoning, call, answer]);
        assert_eq!(rules(&request(good), &issued), Ok(()));
        let alone = json!([user, reasoning]);
        assert!(
            rules(&request(alone), &issued)
                .unwrap_err()
                .contains("required following item")
        );
        let mut bare = reasoning.clone();
        bare.as_object_mut().map(|o| o.remove("encrypted_content"));
        let unstored = json!([user, bare, call, answer]);
        assert!(
            rules(&request(unstored), &issued)
                .unwrap_err()
                .contains("not persisted")
        );
        let unanswered = json!([user, reasoning, call]);
        assert!(
            rules(&request(unanswered), &issued)
                .unwrap_err()
                .contains("No tool output")
        );
    }
}
