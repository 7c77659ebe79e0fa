//! The Anthropic Messages wire format: request bodies and tool call ids (what the server sends
//! back is read by `anthropic_reply.rs`, its stream by `anthropic_stream.rs`). No I/O here.

use serde_json::{Map, Value, json};

pub(crate) use crate::formats::anthropic_reply::{parse_error, parse_response};
pub(crate) use crate::formats::anthropic_stream::StreamDecoder;
use crate::formats::images;
use crate::types::{ChatMessage, ChatRequest, Reasoning, ToolChoice};

/// The smallest thinking budget Anthropic accepts.
const MIN_THINKING_BUDGET: u32 = 1_024;

/// Which parts of a request carry `cache_control` breakpoints.
///
/// Anthropic caches the prefix of a request up to a breakpoint (tools, then system, then
/// messages) and reads it back at a tenth of the input price when the next request starts with
/// the same bytes; writing the cache costs a quarter more than plain input. Prompts shorter than
/// the model's minimum (1,024 tokens for most models) are not cached, and nothing fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptCache {
    /// No breakpoints; the system prompt is sent as one string.
    Off,
    /// The tool specs and the static system blocks (every system message but the last, or the
    /// only one): what stays the same for a whole run.
    Prefix,
    /// The prefix and the newest message, so consecutive calls of one run read the whole
    /// conversation from the cache while the plan (the last system block) is unchanged.
    #[default]
    Conversation,
}

/// The `input` object of a `tool_use` block: the call's arguments when they are a JSON object,
/// else an empty object (the tool result already told the model its arguments were invalid).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}

/// The role and content blocks of one message, or `None` for a system message.
fn blocks(message: &ChatMessage) -> Option<(&'static str, Vec<Value>)> {
    let text_block = |text: &str| json!({"type": "text", "text": text});
    match message {
        ChatMessage::System(_) => None,
        ChatMessage::User(text) => {
            let blocks = if text.trim().is_empty() {
                Vec::new()
            } else {
                vec![text_block(text)]
            };
            Some(("user", blocks))
        }
        ChatMessage::UserWithImages { text, images } => {
            // Pictures first, then the words about them, as Anthropic advises.
            let mut blocks = images::anthropic_blocks(images);
            if !text.trim().is_empty() {
                blocks.push(text_block(text));
            }
            Some(("user", blocks))
        }
        ChatMessage::Assistant {
            text,
            tool_calls,
            reasoning,
        } => {
            // Thinking blocks come first and unchanged (their signatures are checked), as
            // Anthropic requires of the assistant turn of a tool use; reasoning of other
            // providers is never sent.
            let mut blocks: Vec<Value> = reasoning.iter().filter_map(thinking_block).collect();
            if let Some(text) = text.as_deref().filter(|text| !text.trim().is_empty()) {
                blocks.push(text_block(text));
            }
            blocks.extend(tool_calls.iter().map(|call| {
                json!({
                    "type": "tool_use",
                    "id": wire_id(&call.id),
                    "name": call.name,
                    "input": tool_input(&call.arguments),
                })
            }));
            Some(("assistant", blocks))
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
            images,
        } if !images.is_empty() => {
            let mut parts = Vec::with_capacity(images.len() + 1);
            if !content.trim().is_empty() {
                parts.push(text_block(content));
            }
            parts.extend(images::anthropic_blocks(images));
            let id = wire_id(tool_call_id);
            Some((
                "user",
                vec![json!({"type": "tool_result", "tool_use_id": id, "content": parts})],
            ))
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
            ..
        } => Some((
            "user",
            vec![
                json!({"type": "tool_result", "tool_use_id": wire_id(tool_call_id), "content": content}),
            ],
        )),
    }
}

/// A `thinking` or `redacted_thinking` block as Anthropic sent it, or `None` for reasoning of
/// another provider.
fn thinking_block(reasoning: &Reasoning) -> Option<Value> {
    match reasoning {
        Reasoning::Thinking {
            thinking,
            signature,
        } => Some(json!({"type": "thinking", "thinking": thinking, "signature": signature})),
        Reasoning::RedactedThinking { data } => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        Reasoning::Text { .. } | Reasoning::Item { .. } => None,
    }
}

/// Whether a content block is thinking, which cannot carry a `cache_control` breakpoint.
fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// The JSON body of a Messages request. System messages become the `system` blocks; tool results
/// become `tool_result` blocks of user messages; consecutive messages of one role are merged,
/// as the API wants roles to alternate.
///
/// With prompt caching on, `cache_control` breakpoints go on the last tool spec and on the last
/// static system block: every system message but the last is static, and the last one is the
/// part that changes (the runner's plan) unless it is the only one. [`PromptCache::Conversation`]
/// adds one on the newest message, so the next call reads the conversation from the cache.
pub(crate) fn request_body(
    request: &ChatRequest,
    stream: bool,
    max_tokens: u32,
    cache: PromptCache,
) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|message| match message {
            ChatMessage::System(text) => Some(text.as_str()),
            _ => None,
        })
        .filter(|text| !text.trim().is_empty())
        .collect();
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for (role, content) in request.messages.iter().filter_map(blocks) {
        if content.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last_content)) if *last_role == role => last_content.extend(content),
            _ => messages.push((role, content)),
        }
    }
    if cache == PromptCache::Conversation
        && let Some(block) = messages
            .last_mut()
            .and_then(|(_, content)| content.iter_mut().rev().find(|b| !is_thinking(b)))
    {
        block["cache_control"] = ephemeral();
    }
    let mut max_tokens = request.max_tokens.unwrap_or(max_tokens);
    let thinking = request
        .thinking_budget
        .map(|budget| budget.max(MIN_THINKING_BUDGET));
    if let Some(budget) = thinking
        && max_tokens <= budget
    {
        // The budget is part of `max_tokens`, which must exceed it: the answer gets the room it
        // would have had without thinking.
        max_tokens = budget.saturating_add(max_tokens);
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": max_tokens,
        "messages": messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["system"] = system_field(&system, cache);
    }
    if stream {
        body["stream"] = json!(true);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if cache != PromptCache::Off
            && let Some(last) = tools.last_mut()
        {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = Value::Array(tools);
        // Sent only when asked for: `auto` is Anthropic's default. With extended thinking only
        // `auto` and `none` are allowed, so `required` is left to the prompt there.
        let choice = match request.tool_choice {
            Some(ToolChoice::None) => Some("none"),
            Some(ToolChoice::Required) if request.thinking_budget.is_none() => Some("any"),
            _ => None,
        };
        if let Some(kind) = choice {
            body["tool_choice"] = json!({"type": kind});
        }
    }
    match thinking {
        Some(budget) => {
            // Thinking is not compatible with a changed temperature.
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
        None => {
            if let Some(temperature) = request.temperature {
                body["temperature"] = json!(temperature);
            }
        }
    }
    if !request.stop.is_empty() {
        body["stop_sequences"] = json!(request.stop);
    }
    body
}

/// A `cache_control` breakpoint with the default lifetime.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The `system` field: one string without caching, else one text block per system message with
/// a breakpoint on the last static one.
fn system_field(system: &[&str], cache: PromptCache) -> Value {
    if cache == PromptCache::Off {
        return json!(system.join("\n\n"));
    }
    let cached = system.len().saturating_sub(2);
    let blocks = system
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let mut block = json!({"type": "text", "text": text});
            if index == cached {
                block["cache_control"] = ephemeral();
            }
            block
        })
        .collect();
    Value::Array(blocks)
}

/// The id of a tool call as Anthropic accepts it (`^[a-zA-Z0-9_-]+$`): unchanged when it fits,
/// else every other character replaced by `_` and a hash of the original appended, so that
/// distinct ids stay distinct and a call and its result map alike. Ids other providers issued
/// (Kimi K2's `functions.read_file:0`) are the ones that need it; ids Anthropic issued always
/// fit, so nothing it returns needs mapping back.
pub(crate) fn wire_id(id: &str) -> std::borrow::Cow<'_, str> {
    let fits = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !id.is_empty() && id.chars().all(fits) {
        return std::borrow::Cow::Borrowed(id);
    }
    // FNV-1a: stable across runs and platforms, which a request rebuilt on resume needs.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let cleaned: String = id.chars().map(|c| if fits(c) { c } else { '_' }).collect();
    std::borrow::Cow::Owned(format!("{cleaned}_{hash:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ToolCall, ToolSpec};

    #[test]
    fn request_bodies_merge_roles_and_lift_the_system_prompt() {
        let request = ChatRequest::new(
            "claude-sonnet-4-5",
            vec![
                ChatMessage::system("sys"),
                ChatMessage::user("hi"),
                ChatMessage::assistant(
                    Some("calling".into()),
                    vec![
                        ToolCall::new("t1", "f", r#"{"a":1}"#),
                        ToolCall::new("t2", "g", "{bad"),
                    ],
                ),
                ChatMessage::tool_result("t1", "one"),
                ChatMessage::tool_result("t2", "two"),
                ChatMessage::user("go on"),
            ],
        )
        .with_tools(vec![ToolSpec::new(
            "f",
            "does f",
            json!({"type": "object"}),
        )]);
        let body = request_body(&request, true, 1024, PromptCache::Off);
        assert_eq!(body["system"], "sys");
        assert_eq!(body["max_tokens"], 1024);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1]["content"][1]["input"], json!({"a": 1}));
        assert_eq!(messages[1]["content"][2]["input"], json!({}));
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(messages[2]["content"][0]["type"], "tool_result");
        assert_eq!(messages[2]["content"][1]["tool_use_id"], "t2");
        assert_eq!(messages[2]["content"][2]["text"], "go on");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(body.get("tool_choice"), None, "auto is the default");
        let none = request_body(
            &request.clone().with_tool_choice(ToolChoice::None),
            true,
            1024,
            PromptCache::Off,
        );
        assert_eq!(none["tool_choice"], json!({"type": "none"}));
        let required = request.with_tool_choice(ToolChoice::Required);
        let body = request_body(&required, true, 1024, PromptCache::Off);
        assert_eq!(body["tool_choice"], json!({"type": "any"}));
    }

    #[test]
    fn cache_breakpoints_go_on_the_tools_the_static_system_blocks_and_the_newest_message() {
        let request = ChatRequest::new(
            "claude-sonnet-4-5",
            vec![
                ChatMessage::system("static"),
                ChatMessage::system("## Current Plan"),
                ChatMessage::user("task"),
                ChatMessage::assistant(None, vec![ToolCall::new("t1", "f", "{}")]),
                ChatMessage::tool_result("t1", "one"),
            ],
        )
        .with_tools(vec![
            ToolSpec::new("f", "does f", json!({"type": "object"})),
            ToolSpec::new("g", "does g", json!({"type": "object"})),
        ]);
        let marker = json!({"type": "ephemeral"});
        let body = request_body(&request, false, 1024, PromptCache::Conversation);
        assert_eq!(
            body["system"],
            json!([
                {"type": "text", "text": "static", "cache_control": marker},
                {"type": "text", "text": "## Current Plan"},
            ])
        );
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(body["tools"][1]["cache_control"], marker);
        assert_eq!(body["messages"][2]["content"][0]["cache_control"], marker);
        assert!(
            body["messages"][0]["content"][0]
                .get("cache_control")
                .is_none()
        );

        let prefix = request_body(&request, false, 1024, PromptCache::Prefix);
        assert_eq!(prefix["system"], body["system"]);
        assert!(
            prefix["messages"][2]["content"][0]
                .get("cache_control")
                .is_none()
        );

        let off = request_body(&request, false, 1024, PromptCache::Off);
        assert_eq!(off["system"], "static\n\n## Current Plan");
        assert!(!off.to_string().contains("cache_control"));

        // A lone system prompt is static: it carries the breakpoint itself.
        let lone = ChatRequest::new(
            "claude-sonnet-4-5",
            vec![ChatMessage::system("only"), ChatMessage::user("hi")],
        );
        let body = request_body(&lone, false, 1024, PromptCache::Prefix);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "only", "cache_control": marker}])
        );
    }
}
