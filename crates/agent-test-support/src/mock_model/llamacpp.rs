//! llama.cpp's OpenAI-compatible Python server (`llama-cpp-python[server]` 0.3) as the mock
//! plays it, after captures of the real one (`crates/agent-llm/tests/fixtures/llamacpp/`):
//!
//! - an assistant message whose `content` is `null` gets a 500 with a pydantic dump ("Input
//!   should be a valid string"), one without `content` a 500 naming the missing attribute;
//! - a streamed request with tools and `tool_choice: "auto"` gets a 200 event stream with no
//!   byte in it (the server logs "Automatic streaming tool choice is not supported");
//! - a prompt over the context window gets that same empty stream when streamed, and the
//!   OpenAI-style 400 `context_length_exceeded` when not;
//! - tools reach the prompt only with a `tool_choice`: without one (or with `"none"`) the model
//!   answers in text only;
//! - streams carry no `usage`, even when asked; every tool call delta repeats the call's `id`,
//!   `type` and `function.name` beside a legacy `function_call`, the first chunk says
//!   `"tool_calls": null`, the last argument fragment is `""`.

use axum::body::Body;
use axum::response::Response;
use serde_json::{Value, json};

use super::RecordedRequest;
use super::refuse::json_response;
use super::turn::{Turn, fragments};

/// What the server answers instead of a reply, when it refuses the request or cannot stream
/// it; `overflow` says whether the prompt is over the window.
pub(super) fn refusal(request: &RecordedRequest, overflow: bool) -> Option<Response> {
    let body = &request.body;
    for (index, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if message["role"] != "assistant" {
            continue;
        }
        match message.get("content") {
            None => {
                return Some(server_error(
                    "'dict object' has no attribute 'content'".into(),
                ));
            }
            Some(Value::Null) => return Some(server_error(content_null(index, message))),
            Some(_) => {}
        }
    }
    let auto_tools = body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
        && body["tool_choice"] == "auto";
    (request.is_stream() && (overflow || auto_tools)).then(empty_stream)
}

/// The turn as this server's model can answer the request: no tool calls unless a
/// `tool_choice` other than `"none"` put the tools in the prompt.
pub(super) fn prepare(mut turn: Turn, request: &RecordedRequest) -> Turn {
    let choice = &request.body["tool_choice"];
    if choice.is_null() || choice == "none" {
        turn.tool_calls.clear();
    }
    turn
}

/// The chunks of a streamed answer, without `[DONE]`, in this server's shape.
pub(super) fn chunks(turn: &Turn) -> Vec<Value> {
    let id = turn.id.as_deref().unwrap_or("chatcmpl-llama");
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": turn.model(),
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": null, "delta": delta}]})
    };
    let mut chunks = Vec::new();
    if turn.tool_calls.is_empty() {
        chunks.push(chunk(json!({"role": "assistant"}), None));
        for piece in turn.text.as_deref().map(fragments).unwrap_or_default() {
            chunks.push(chunk(json!({"content": piece}), None));
        }
        chunks.push(chunk(json!({}), Some("stop")));
        return chunks;
    }
    chunks.push(chunk(
        json!({"role": "assistant", "content": null, "function_call": null, "tool_calls": null}),
        None,
    ));
    for (index, (call_id, name, args)) in turn.tool_calls.iter().enumerate() {
        let text = args.to_string();
        let mut pieces = fragments(&text);
        pieces.push("");
        for piece in pieces {
            let function = json!({"name": name, "arguments": piece});
            chunks.push(chunk(
                json!({"role": null, "content": null, "function_call": function,
                    "tool_calls": [{"index": index, "id": call_id, "type": "function",
                        "function": function}]}),
                None,
            ));
        }
    }
    chunks.push(chunk(
        json!({"role": null, "content": null, "function_call": null, "tool_calls": null}),
        Some("tool_calls"),
    ));
    chunks
}

/// The 200 event stream with nothing in it.
fn empty_stream() -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream; charset=utf-8")
        .body(Body::empty())
        .expect("a valid empty response")
}

fn server_error(message: String) -> Response {
    json_response(
        500,
        &[],
        &json!({"error": {"message": message, "type": "internal_server_error", "param": null,
            "code": null}}),
    )
}

/// The pydantic dump for an assistant message at `index` with `"content": null`: the message
/// fits none of the request's message models.
fn content_null(index: usize, message: &Value) -> String {
    let input = message.to_string().replace("null", "None");
    let mut errors = Vec::new();
    for role in ["system", "user"] {
        errors.push(format!(
            "{{'type': 'literal_error', 'loc': ('body', 'messages', {index}, \
             'ChatCompletionRequest{}Message', 'role'), 'msg': \"Input should be '{role}'\", \
             'input': 'assistant'}}",
            capitalised(role)
        ));
    }
    errors.push(format!(
        "{{'type': 'string_type', 'loc': ('body', 'messages', {index}, \
         'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid \
         string', 'input': None}}"
    ));
    errors.push(format!(
        "{{'type': 'missing', 'loc': ('body', 'messages', {index}, \
         'ChatCompletionRequestToolMessage', 'tool_call_id'), 'msg': 'Field required', \
         'input': {input}}}"
    ));
    format!(
        "{} validation errors:\n  {}",
        errors.len(),
        errors.join("\n  ")
    )
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
