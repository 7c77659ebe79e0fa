//! The `Message` model: one LLM message of a trace with its metadata, the request that adds one,
//! and the generated one-line `description`.
//!
//! Content is typed by role ([`Content`]) and stored in the LLM API shape. The serde field
//! names of [`Message`] are a Contract: extend, never rename.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

pub use agent_llm::{ChatImage, ImageError, MAX_IMAGE_BYTES, Role, image_media_type};

use crate::content::{AssistantContent, Content, ToolResultContent};

/// One recorded message.
///
/// Its JSON is a Contract (the `messages/<id>.json` files and the API): the content keeps the LLM
/// API shape (see [`Content`]), and a failed tool call has `"is_error": true`.
#[derive(Debug, Clone, PartialEq)]
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
    pub tool_name: Option<String>,
    /// What it says; its variant matches `role`.
    pub content: Content,
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
    pub metadata: Map<String, Value>,
}

/// The stored form of a [`Message`], as read.
#[derive(Deserialize)]
struct StoredMessage {
    message_id: String,
    trace_id: String,
    branch_id: Option<String>,
    role: Role,
    sequence: u64,
    goal_id: Option<String>,
    tool_call_id: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    is_error: bool,
    description: String,
    tokens: Option<u64>,
    cost: Option<f64>,
    duration_ms: Option<u64>,
    created_at: String,
    #[serde(default)]
    metadata: Map<String, Value>,
}

/// The stored form of a [`Message`], as written (borrowed, so writing copies nothing).
#[derive(Serialize)]
struct StoredMessageRef<'a> {
    message_id: &'a str,
    trace_id: &'a str,
    branch_id: &'a Option<String>,
    role: Role,
    sequence: u64,
    goal_id: &'a Option<String>,
    tool_call_id: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: &'a Option<String>,
    content: &'a Content,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    description: &'a str,
    tokens: Option<u64>,
    cost: Option<f64>,
    duration_ms: Option<u64>,
    created_at: &'a str,
    #[serde(skip_serializing_if = "Map::is_empty")]
    metadata: &'a Map<String, Value>,
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        StoredMessageRef {
            message_id: &self.message_id,
            trace_id: &self.trace_id,
            branch_id: &self.branch_id,
            role: self.role,
            sequence: self.sequence,
            goal_id: &self.goal_id,
            tool_call_id: &self.tool_call_id,
            tool_name: &self.tool_name,
            content: &self.content,
            is_error: self.content.is_error(),
            description: &self.description,
            tokens: self.tokens,
            cost: self.cost,
            duration_ms: self.duration_ms,
            created_at: &self.created_at,
            metadata: &self.metadata,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = StoredMessage::deserialize(deserializer)?;
        Ok(Self {
            content: Content::from_stored(stored.role, stored.content, stored.is_error),
            message_id: stored.message_id,
            trace_id: stored.trace_id,
            branch_id: stored.branch_id,
            role: stored.role,
            sequence: stored.sequence,
            goal_id: stored.goal_id,
            tool_call_id: stored.tool_call_id,
            tool_name: stored.tool_name,
            description: stored.description,
            tokens: stored.tokens,
            cost: stored.cost,
            duration_ms: stored.duration_ms,
            created_at: stored.created_at,
            metadata: stored.metadata,
        })
    }
}

impl Message {
    /// The names of the tools an assistant message calls, in order.
    pub fn tool_call_names(&self) -> Vec<String> {
        self.content
            .tool_calls()
            .iter()
            .map(|call| call.name.clone())
            .collect()
    }
}

/// What a person says to start or continue a trace: the text and the pictures given apart from
/// it (those the text mentions, `@shot.png`, the runner attaches itself). A `&str` is a text
/// alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserInput<'a> {
    /// The text.
    pub text: &'a str,
    /// The pictures, after the text.
    pub images: &'a [agent_llm::ChatImage],
}

impl<'a> From<&'a str> for UserInput<'a> {
    fn from(text: &'a str) -> Self {
        Self { text, images: &[] }
    }
}

impl<'a> From<&'a String> for UserInput<'a> {
    fn from(text: &'a String) -> Self {
        Self::from(text.as_str())
    }
}

/// A request to add a message; the store assigns id, sequence, description and time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    /// Who it is from.
    pub role: Role,
    /// What it says; its variant matches `role`.
    pub content: Content,
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
    fn with_content(role: Role, content: Content) -> Self {
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
        Self::with_content(Role::System, Content::Text(text.into()))
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::with_content(Role::User, Content::Text(text.into()))
    }

    /// An assistant message.
    pub fn assistant(content: AssistantContent) -> Self {
        Self::with_content(Role::Assistant, Content::Assistant(content))
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
            ..Self::with_content(
                Role::Tool,
                Content::ToolResult(ToolResultContent {
                    output: output.into(),
                    is_error: false,
                }),
            )
        }
    }

    /// The result of the tool call `tool_call_id` of tool `tool_name`, which failed.
    pub fn tool_error(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        output: impl Into<String>,
    ) -> Self {
        let mut message = Self::tool(tool_call_id, tool_name, output);
        if let Content::ToolResult(result) = &mut message.content {
            result.is_error = true;
        }
        message
    }

    /// Ties the message to a goal.
    #[must_use]
    pub fn goal(mut self, goal_id: impl Into<String>) -> Self {
        self.goal_id = Some(goal_id.into());
        self
    }

    /// Sets tokens and cost.
    #[must_use]
    pub fn usage(mut self, tokens: u64, cost: f64) -> Self {
        self.tokens = Some(tokens);
        self.cost = Some(cost);
        self
    }

    /// Sets the duration.
    #[must_use]
    pub fn duration_ms(mut self, duration_ms: u64) -> Self {
        self.duration_ms = Some(duration_ms);
        self
    }
}

/// A change to a recorded message. Statistics (tokens, cost) never change after recording.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageUpdate {
    /// New content; its variant must match the message's role.
    pub content: Option<Content>,
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
/// use agent_execution::{describe, Content};
/// use agent_llm::ToolCall;
/// let calls = vec![ToolCall::new("1", "read_file", "{}"), ToolCall::new("2", "bash", "{}")];
/// assert_eq!(describe(&Content::assistant(None, calls), None), "tool call: read_file, bash");
/// let text = Content::assistant(Some("Let me look. Then fix it.".into()), vec![]);
/// assert_eq!(describe(&text, None), "Let me look.");
/// assert_eq!(describe(&Content::Text("Fix it! Now.".into()), None), "Fix it!");
/// ```
pub fn describe(content: &Content, tool_name: Option<&str>) -> String {
    match content {
        Content::ToolResult(_) => tool_name.unwrap_or("tool").to_owned(),
        Content::Assistant(turn) => match turn.text.as_deref().map(first_sentence) {
            Some(sentence) if !sentence.is_empty() => truncate(sentence),
            _ if turn.tool_calls.is_empty() => String::new(),
            _ => {
                let names: Vec<&str> = turn.tool_calls.iter().map(|c| c.name.as_str()).collect();
                truncate(&format!("tool call: {}", names.join(", ")))
            }
        },
        Content::Text(text) => truncate(first_sentence(text)),
    }
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

    fn said(text: &str) -> Content {
        Content::assistant(Some(text.to_owned()), Vec::new())
    }

    #[test]
    fn descriptions() {
        let check = |content: Content, tool: Option<&str>, expect: &str| {
            assert_eq!(describe(&content, tool), expect, "{content:?}");
        };
        check(
            said("Version 1.2 is out. Yes."),
            None,
            "Version 1.2 is out.",
        );
        check(said("先读代码。然后修改"), None, "先读代码。");
        check(said("line one\nline two"), None, "line one");
        let call = agent_llm::ToolCall::new("c", "glob_files", "{}");
        check(
            Content::assistant(Some(String::new()), vec![call]),
            None,
            "tool call: glob_files",
        );
        check(Content::assistant(None, Vec::new()), None, "");
        let output = NewMessage::tool("c", "t", "output").content;
        check(output, None, "tool");
        check(
            Content::Text("Fix the bug! Please.".into()),
            None,
            "Fix the bug!",
        );
        let long = "word ".repeat(40);
        let cut = describe(&Content::Text(long), None);
        assert_eq!(cut.chars().count(), DESCRIPTION_MAX_CHARS);
        assert!(cut.ends_with("word…"), "{cut}");
    }

    #[test]
    fn json_is_the_stored_shape_and_old_files_load() {
        let old = json!({
            "message_id": "t-0002", "trace_id": "t", "branch_id": null, "role": "tool",
            "sequence": 2, "goal_id": "1", "tool_call_id": "c1", "tool_name": "bash",
            "content": "error: exit 1", "description": "bash", "tokens": 3, "cost": null,
            "duration_ms": null, "created_at": "2026-01-01T00:00:00.000000Z"
        });
        let message: Message = serde_json::from_value(old.clone()).unwrap();
        assert!(!message.content.is_error());
        assert_eq!(serde_json::to_value(&message).unwrap(), old);
        let mut failed = message;
        failed.content = NewMessage::tool_error("c1", "bash", "exit 1").content;
        let value = serde_json::to_value(&failed).unwrap();
        assert_eq!(value["is_error"], json!(true));
        assert_eq!(value["content"], json!("exit 1"));
        let back: Message = serde_json::from_value(value).unwrap();
        assert!(back.content.is_error());
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
            content: Content::Text("x".into()),
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
