//! The `Message` model: one LLM message of a trace with its metadata, the request that adds one,
//! and the generated one-line `description`.
//!
//! Content keeps the LLM API shape as JSON: an assistant message is
//! `{"text": string|null, "tool_calls": [{"id", "name", "arguments"}]}` (arguments is the raw
//! string the model produced), a tool message is the result string, user and system messages are
//! strings. The serde field names of [`Message`] are a Contract: extend, never rename.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The system prompt.
    System,
    /// The user (the task is the first user message).
    User,
    /// The model.
    Assistant,
    /// The result of a tool call.
    Tool,
}

/// One recorded message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `{trace_id}-{sequence:04}`.
    pub message_id: String,
    /// The trace it belongs to.
    pub trace_id: String,
    /// The branch it belongs to; `None` is the main line.
    pub branch_id: Option<String>,
    /// Who it is from.
    pub role: Role,
    /// Position in the trace, from 1, without gaps.
    pub sequence: u64,
    /// The goal it served.
    pub goal_id: Option<String>,
    /// Tool messages: the id of the call they answer.
    pub tool_call_id: Option<String>,
    /// Tool messages: the name of the tool that produced them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The content in LLM API shape (see the module documentation).
    pub content: Value,
    /// A generated one-line description (see [`describe`]).
    pub description: String,
    /// Tokens the message cost (prompt and completion for an assistant message).
    pub tokens: Option<u64>,
    /// Cost in US dollars.
    pub cost: Option<f64>,
    /// How long producing it took.
    pub duration_ms: Option<u64>,
    /// When it was recorded (RFC 3339, fixed width).
    pub created_at: String,
    /// Free-form annotations added later, e.g. a compaction note.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

impl Message {
    /// The names of the tools an assistant message calls, in order.
    pub fn tool_call_names(&self) -> Vec<String> {
        tool_call_names(&self.content)
    }
}

/// A request to add a message; the store assigns id, sequence, description and time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    /// Who it is from.
    pub role: Role,
    /// The content in LLM API shape.
    pub content: Value,
    /// The goal it served; its stats and its ancestors' are updated.
    pub goal_id: Option<String>,
    /// Tool messages: the id of the call they answer.
    pub tool_call_id: Option<String>,
    /// Tool messages: the tool's name (becomes the description).
    pub tool_name: Option<String>,
    /// The branch; `None` is the main line.
    pub branch_id: Option<String>,
    /// Tokens, if known.
    pub tokens: Option<u64>,
    /// Cost in US dollars, if known.
    pub cost: Option<f64>,
    /// How long producing it took.
    pub duration_ms: Option<u64>,
    /// Annotations stored with the message, e.g. the mark of a compaction summary.
    pub metadata: Map<String, Value>,
}

impl NewMessage {
    fn with_content(role: Role, content: Value) -> Self {
        Self {
            role,
            content,
            goal_id: None,
            tool_call_id: None,
            tool_name: None,
            branch_id: None,
            tokens: None,
            cost: None,
            duration_ms: None,
            metadata: Map::new(),
        }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::with_content(Role::System, Value::String(text.into()))
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::with_content(Role::User, Value::String(text.into()))
    }

    /// An assistant message with `{"text", "tool_calls"}` content.
    pub fn assistant(content: Value) -> Self {
        Self::with_content(Role::Assistant, content)
    }

    /// The result of the tool call `tool_call_id` of tool `tool_name`.
    pub fn tool(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        output: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            tool_name: Some(tool_name.into()),
            ..Self::with_content(Role::Tool, Value::String(output.into()))
        }
    }

    /// Ties the message to a goal.
    pub fn goal(mut self, goal_id: impl Into<String>) -> Self {
        self.goal_id = Some(goal_id.into());
        self
    }

    /// Sets tokens and cost.
    pub fn usage(mut self, tokens: u64, cost: f64) -> Self {
        self.tokens = Some(tokens);
        self.cost = Some(cost);
        self
    }

    /// Sets the duration.
    pub fn duration_ms(mut self, duration_ms: u64) -> Self {
        self.duration_ms = Some(duration_ms);
        self
    }
}

/// A change to a recorded message. Statistics (tokens, cost) never change after recording.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageUpdate {
    /// New content.
    pub content: Option<Value>,
    /// New description.
    pub description: Option<String>,
    /// Merged into the message's metadata; a `null` value removes the key.
    pub metadata: Map<String, Value>,
}

impl MessageUpdate {
    /// Applies the change to a message.
    pub fn apply_to(&self, message: &mut Message) {
        if let Some(content) = &self.content {
            message.content = content.clone();
        }
        if let Some(description) = &self.description {
            message.description = description.clone();
        }
        for (key, value) in &self.metadata {
            if value.is_null() {
                message.metadata.remove(key);
            } else {
                message.metadata.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The longest description, in characters, before it is cut with `…`.
pub const DESCRIPTION_MAX_CHARS: usize = 100;

/// The one-line description of a message.
///
/// An assistant message is described by the first sentence of its text, or when it has no text
/// by `tool call: read_file, bash`; a tool message by its tool's name; user and system messages by
/// their first sentence. Long descriptions are cut at [`DESCRIPTION_MAX_CHARS`] with `…`.
///
/// ```
/// use agent_execution::{describe, Role};
/// use serde_json::json;
/// let content = json!({"text": null, "tool_calls": [
///     {"id": "1", "name": "read_file", "arguments": "{}"},
///     {"id": "2", "name": "bash", "arguments": "{}"}]});
/// assert_eq!(describe(Role::Assistant, &content, None), "tool call: read_file, bash");
/// let content = json!({"text": "Let me look. Then fix it.", "tool_calls": []});
/// assert_eq!(describe(Role::Assistant, &content, None), "Let me look.");
/// assert_eq!(describe(Role::Tool, &json!("ok"), Some("bash")), "bash");
/// ```
pub fn describe(role: Role, content: &Value, tool_name: Option<&str>) -> String {
    match role {
        Role::Tool => tool_name.unwrap_or("tool").to_owned(),
        Role::Assistant => match text_of(content).map(first_sentence) {
            Some(sentence) if !sentence.is_empty() => truncate(sentence),
            _ => {
                let names = tool_call_names(content);
                if names.is_empty() {
                    String::new()
                } else {
                    truncate(&format!("tool call: {}", names.join(", ")))
                }
            }
        },
        Role::System | Role::User => text_of(content)
            .map(|text| truncate(first_sentence(text)))
            .unwrap_or_default(),
    }
}

/// The text of a content value: the string itself or its `text` field.
fn text_of(content: &Value) -> Option<&str> {
    match content {
        Value::String(text) => Some(text),
        Value::Object(map) => map.get("text").and_then(Value::as_str),
        _ => None,
    }
}

/// The names of the tool calls in an assistant content value, in order.
pub fn tool_call_names(content: &Value) -> Vec<String> {
    content
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|call| call.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The text up to and including the first sentence end (`.`, `!`, `?`, `。`, `！`, `？`) that is
/// followed by whitespace or the end, or up to the first line break.
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '\n' {
            return text[..at].trim_end();
        }
        let next_is_break = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        let full_width = matches!(c, '。' | '！' | '？');
        if full_width || (matches!(c, '.' | '!' | '?') && next_is_break) {
            return &text[..at + c.len_utf8()];
        }
    }
    text
}

fn truncate(text: &str) -> String {
    if text.chars().count() <= DESCRIPTION_MAX_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(DESCRIPTION_MAX_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptions() {
        let check = |role, content: Value, tool: Option<&str>, expect: &str| {
            assert_eq!(describe(role, &content, tool), expect, "{content}");
        };
        check(
            Role::Assistant,
            json!({"text": "Version 1.2 is out. Yes."}),
            None,
            "Version 1.2 is out.",
        );
        check(
            Role::Assistant,
            json!({"text": "先读代码。然后修改"}),
            None,
            "先读代码。",
        );
        check(
            Role::Assistant,
            json!({"text": "line one\nline two"}),
            None,
            "line one",
        );
        check(
            Role::Assistant,
            json!({"text": "", "tool_calls": [{"name": "glob_files"}]}),
            None,
            "tool call: glob_files",
        );
        check(
            Role::Assistant,
            json!({"text": null, "tool_calls": []}),
            None,
            "",
        );
        check(Role::Tool, json!("output"), None, "tool");
        check(
            Role::User,
            json!("Fix the bug! Please."),
            None,
            "Fix the bug!",
        );
        let long = "word ".repeat(40);
        let cut = describe(Role::User, &json!(long), None);
        assert_eq!(cut.chars().count(), DESCRIPTION_MAX_CHARS);
        assert!(cut.ends_with("word…"), "{cut}");
    }

    #[test]
    fn metadata_updates_merge_and_remove() {
        let mut message = Message {
            message_id: "t-0001".into(),
            trace_id: "t".into(),
            branch_id: None,
            role: Role::Tool,
            sequence: 1,
            goal_id: None,
            tool_call_id: None,
            tool_name: None,
            content: json!("x"),
            description: "d".into(),
            tokens: None,
            cost: None,
            duration_ms: None,
            created_at: String::new(),
            metadata: Map::new(),
        };
        let mut update = MessageUpdate::default();
        update.metadata.insert("compacted".into(), json!(true));
        update.apply_to(&mut message);
        assert_eq!(message.metadata.get("compacted"), Some(&json!(true)));
        update.metadata.insert("compacted".into(), Value::Null);
        update.apply_to(&mut message);
        assert!(message.metadata.is_empty());
    }
}
