//! Request bodies of the OpenAI Responses API: the leading system messages as `instructions`,
//! the conversation as `input` items, function tools, and the reasoning settings.

use serde_json::{Value, json};

use crate::formats::images;
use crate::types::{ChatMessage, ChatRequest, Reasoning, ToolCall};

/// The reasoning settings of a Responses request, from the client's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReasoningOptions<'a> {
    /// `reasoning.effort` (`minimal`, `low`, `medium`, `high`), the server's default when `None`.
    pub(crate) effort: Option<&'a str>,
    /// `reasoning.summary` (`auto`, `concise`, `detailed`), no summary when `None`.
    pub(crate) summary: Option<&'a str>,
}

/// Whether `model` is one of OpenAI's reasoning models, which take a `reasoning` object and
/// refuse `temperature`.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5", "codex-mini"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// The input items of one assistant turn: its reasoning items (those with encrypted content;
/// others cannot go back with `store: false`), its text, then its function calls. A turn with
/// neither text nor calls sends no reasoning: the API refuses a reasoning item without the
/// item it preceded.
fn assistant_items(
    text: Option<&str>,
    tool_calls: &[ToolCall],
    reasoning: &[Reasoning],
    items: &mut Vec<Value>,
) {
    let text = text.filter(|text| !text.is_empty());
    let reasoning = if text.is_some() || !tool_calls.is_empty() {
        reasoning
    } else {
        &[]
    };
    for piece in reasoning {
        if let Reasoning::Item {
            id,
            summary,
            encrypted_content: Some(encrypted),
        } = piece
        {
            let summary: Vec<Value> = summary
                .iter()
                .map(|text| json!({"type": "summary_text", "text": text}))
                .collect();
            items.push(json!({
                "type": "reasoning",
                "id": id,
                "summary": summary,
                "encrypted_content": encrypted,
            }));
        }
    }
    if let Some(text) = text {
        items.push(json!({
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }));
    }
    for call in tool_calls {
        items.push(json!({
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }));
    }
}

/// The `instructions` (the leading system messages, joined with a blank line) and the `input`
/// items of a conversation. Later system messages become `system` message items in place.
fn instructions_and_input(messages: &[ChatMessage]) -> (Option<String>, Vec<Value>) {
    let leading = messages
        .iter()
        .take_while(|message| matches!(message, ChatMessage::System(_)))
        .count();
    let instructions = (leading > 0).then(|| {
        messages[..leading]
            .iter()
            .map(ChatMessage::text)
            .collect::<Vec<_>>()
            .join("\n\n")
    });
    let mut items = Vec::with_capacity(messages.len());
    let rest = &messages[leading..];
    for (index, message) in rest.iter().enumerate() {
        match message {
            ChatMessage::System(text) => items.push(json!({
                "type": "message",
                "role": "system",
                "content": [{"type": "input_text", "text": text}],
            })),
            ChatMessage::User(text) => items.push(json!({
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            })),
            ChatMessage::UserWithImages { text, images } => items.push(json!({
                "type": "message",
                "role": "user",
                "content": images::responses_parts(text, images),
            })),
            ChatMessage::Assistant {
                text,
                tool_calls,
                reasoning,
            } => assistant_items(text.as_deref(), tool_calls, reasoning, &mut items),
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => {
                items.push(json!({
                    "type": "function_call_output",
                    "call_id": tool_call_id,
                    "output": content,
                }));
                // A function call's output takes no picture: the pictures of the turn's
                // outputs follow the last of them, in one user message.
                if !matches!(rest.get(index + 1), Some(ChatMessage::Tool { .. })) {
                    let start = rest[..index]
                        .iter()
                        .rposition(|m| !matches!(m, ChatMessage::Tool { .. }))
                        .map_or(0, |at| at + 1);
                    let run: Vec<&ChatMessage> = rest[start..=index].iter().collect();
                    let (ids, pictures) = images::tool_pictures(&run);
                    if !pictures.is_empty() {
                        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                        let intro = images::tool_pictures_intro(&ids);
                        items.push(json!({
                            "type": "message",
                            "role": "user",
                            "content": images::responses_parts(&intro, &pictures),
                        }));
                    }
                }
            }
        }
    }
    (instructions, items)
}

/// The JSON body of a Responses request. Stop sequences have no place in this API and are
/// not sent; `temperature` is left out for reasoning models, which refuse it.
pub(crate) fn request_body(request: &ChatRequest, reasoning: &ReasoningOptions<'_>) -> Value {
    let (instructions, input) = instructions_and_input(&request.messages);
    let mut body = json!({
        "model": request.model,
        "input": input,
        "stream": true,
        "store": false,
        "include": ["reasoning.encrypted_content"],
    });
    if let Some(instructions) = instructions {
        body["instructions"] = json!(instructions);
    }
    if !request.tools.is_empty() {
        // Function tools of this API are strict unless told otherwise, and strict schemas must
        // list every property as required; tool schemas here are ordinary JSON schemas.
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": false,
                })
            })
            .collect();
        if let Some(choice) = request.tool_choice {
            body["tool_choice"] = json!(choice.as_str());
        }
    }
    if let Some(max_tokens) = request.max_tokens {
        body["max_output_tokens"] = json!(max_tokens);
    }
    let reasoning_model = is_reasoning_model(&request.model);
    if let Some(temperature) = request.temperature.filter(|_| !reasoning_model) {
        body["temperature"] = json!(temperature);
    }
    if reasoning_model && (reasoning.effort.is_some() || reasoning.summary.is_some()) {
        let mut settings = json!({});
        if let Some(effort) = reasoning.effort {
            settings["effort"] = json!(effort);
        }
        if let Some(summary) = reasoning.summary {
            settings["summary"] = json!(summary);
        }
        body["reasoning"] = settings;
    }
    body
}
