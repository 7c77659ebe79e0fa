//! The OpenAI chat-completions wire format: request bodies (what the server sends back is read by
//! `openai_reply.rs`, its stream by `openai_stream.rs`). No I/O here.

use serde_json::{Value, json};

use crate::formats::images;
use crate::types::{ChatMessage, ChatRequest, Reasoning};

pub(crate) use super::openai_reply::{parse_error, parse_response};
pub(crate) use super::openai_stream::StreamDecoder;

/// Whether `model` takes `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning
/// models and GPT-5 reject the older name).
fn uses_max_completion_tokens(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

fn message_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::System(text) => json!({"role": "system", "content": text}),
        ChatMessage::User(text) => json!({"role": "user", "content": text}),
        ChatMessage::UserWithImages { text, images } => {
            json!({"role": "user", "content": images::openai_parts(text, images)})
        }
        ChatMessage::Assistant {
            text,
            tool_calls,
            reasoning,
        } => {
            // `content` is a string even on a turn of tool calls only: OpenAI accepts `""` as
            // it accepts `null`, and llama.cpp's Python server refuses `null` with a 500.
            let content = text.as_deref().unwrap_or("");
            let mut object = json!({"role": "assistant", "content": content});
            // Reasoning goes back only in the field the server sent it in: Anthropic and
            // Responses reasoning never reach an OpenAI-compatible server, and a message without
            // reasoning text gets no field (strict servers refuse unknown fields).
            for (field, text) in reasoning_fields(reasoning) {
                object[field] = Value::String(text);
            }
            if !tool_calls.is_empty() {
                object["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
            }
            object
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
            ..
        } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
}

/// The reasoning texts of a message joined per field, in the order the fields first appear.
fn reasoning_fields(reasoning: &[Reasoning]) -> Vec<(&str, String)> {
    let mut fields: Vec<(&str, String)> = Vec::new();
    for piece in reasoning {
        let Reasoning::Text { field, text } = piece else {
            continue;
        };
        match fields.iter_mut().find(|(name, _)| name == field) {
            Some((_, joined)) => joined.push_str(text),
            None => fields.push((field.as_str(), text.clone())),
        }
    }
    fields
}

/// The messages of a request as JSON, adjacent system messages joined into one (blank line
/// between them): the static system prompt and the plan arrive as two messages, and some chat
/// templates accept only one. The static part stays a byte-identical prefix either way.
///
/// A tool message takes no picture: the pictures of a turn's tool results follow its last tool
/// message, in one user message.
fn messages_json(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut previous_was_system = false;
    for (index, message) in messages.iter().enumerate() {
        if let ChatMessage::Tool { .. } = message
            && !matches!(messages.get(index + 1), Some(ChatMessage::Tool { .. }))
        {
            out.push(message_json(message));
            previous_was_system = false;
            let start = messages[..index]
                .iter()
                .rposition(|m| !matches!(m, ChatMessage::Tool { .. }))
                .map_or(0, |at| at + 1);
            let run: Vec<&ChatMessage> = messages[start..=index].iter().collect();
            let (ids, pictures) = images::tool_pictures(&run);
            if !pictures.is_empty() {
                let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                let intro = images::tool_pictures_intro(&ids);
                let content = images::openai_parts(&intro, &pictures);
                out.push(json!({"role": "user", "content": content}));
            }
            continue;
        }
        if let ChatMessage::System(text) = message
            && previous_was_system
            && let Some(Value::String(content)) =
                out.last_mut().and_then(|last| last.get_mut("content"))
        {
            content.push_str("\n\n");
            content.push_str(text);
            continue;
        }
        previous_was_system = matches!(message, ChatMessage::System(_));
        out.push(message_json(message));
    }
    out
}

/// The JSON body of a chat-completions request.
pub(crate) fn request_body(request: &ChatRequest, stream: bool) -> Value {
    let mut body = json!({
        "model": request.model,
        "messages": messages_json(&request.messages),
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        // Sent whenever tools are: llama.cpp's server renders the tools into the prompt only
        // when a choice is given, and `auto` is what every server assumes without one.
        if let Some(choice) = request.effective_tool_choice() {
            body["tool_choice"] = json!(choice.as_str());
        }
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = request.max_tokens {
        let field = if uses_max_completion_tokens(&request.model) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[field] = json!(max_tokens);
    }
    if !request.stop.is_empty() {
        body["stop"] = json!(request.stop);
    }
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ToolCall, ToolSpec};

    #[test]
    fn request_bodies_follow_the_wire_format() {
        let mut request = ChatRequest::new(
            "gpt-4o",
            vec![
                ChatMessage::system("sys"),
                ChatMessage::user("hi"),
                ChatMessage::assistant(None, vec![ToolCall::new("c1", "f", "{}")]),
                ChatMessage::tool_result("c1", "ok"),
            ],
        )
        .with_tools(vec![ToolSpec::new(
            "f",
            "does f",
            json!({"type": "object"}),
        )]);
        request.max_tokens = Some(10);
        request.stop = vec!["END".into()];
        let body = request_body(&request, true);
        assert_eq!(body["messages"][2]["content"], "");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["name"],
            "f"
        );
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 10);
        assert_eq!(body["stop"][0], "END");
        request.model = "o3-mini".into();
        assert_eq!(request_body(&request, false)["max_completion_tokens"], 10);
    }

    #[test]
    fn adjacent_system_messages_are_sent_as_one() {
        let request = ChatRequest::new(
            "gpt-4o",
            vec![
                ChatMessage::system("static"),
                ChatMessage::system("## Current Plan"),
                ChatMessage::user("task"),
                ChatMessage::system("later note"),
            ],
        );
        let body = request_body(&request, false);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "static\n\n## Current Plan"},
                {"role": "user", "content": "task"},
                {"role": "system", "content": "later note"},
            ])
        );
    }

    #[test]
    fn error_bodies_are_read() {
        let info = parse_error(
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        );
        assert!(info.context_overflow);
        assert_eq!(parse_error("plain text").message, "plain text");
    }
}
