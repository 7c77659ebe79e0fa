//! What a message says, typed by role: [`Content`].
//!
//! The stored JSON keeps the LLM API shape (a Contract): a system or user message is a string, an
//! assistant message is `{"text": string|null, "tool_calls": [{"id", "name", "arguments"}]}`
//! (with `"reasoning"` only when the model reasoned), and a tool message is its result string;
//! whether a tool call failed is the message's `is_error` field, written only when true. Reading
//! is lenient, so that every trace folder written before stays loadable: an odd shape is kept as
//! text rather than refused.

pub use agent_llm::{Reasoning, ToolCall};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use agent_llm::Role;

/// The content of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A system or user message: its text.
    Text(String),
    /// A model turn: its text, the tools it called and its reasoning.
    Assistant(AssistantContent),
    /// The result of a tool call.
    ToolResult(ToolResultContent),
}

/// What the model said in one turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistantContent {
    /// The text of the answer, if any.
    pub text: Option<String>,
    /// The tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    /// The model's reasoning, as its provider sent it (kept apart from the text, and sent back
    /// where the provider wants it).
    pub reasoning: Vec<Reasoning>,
}

/// What a tool call returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolResultContent {
    /// The text the model is shown.
    pub output: String,
    /// The call did not achieve what was asked (unknown tool, bad arguments, a failing command).
    pub is_error: bool,
}

impl AssistantContent {
    /// The readable reasoning, its pieces joined by blank lines (empty when there is none).
    pub fn reasoning_text(&self) -> String {
        let parts: Vec<String> = self
            .reasoning
            .iter()
            .map(Reasoning::text)
            .filter(|text| !text.is_empty())
            .collect();
        parts.join("\n\n")
    }

    /// A turn with `text` and `tool_calls`, without reasoning.
    pub fn new(text: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            text,
            tool_calls,
            reasoning: Vec::new(),
        }
    }
}

impl Content {
    /// An assistant turn with `text` and `tool_calls`.
    pub fn assistant(text: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant(AssistantContent::new(text, tool_calls))
    }

    /// The text a reader sees: a user or system message's text, an assistant's answer (empty
    /// when it only called tools), a tool's output.
    pub fn text(&self) -> &str {
        match self {
            Self::Text(text) => text,
            Self::Assistant(turn) => turn.text.as_deref().unwrap_or(""),
            Self::ToolResult(result) => &result.output,
        }
    }

    /// The tool calls of an assistant turn; empty for any other message.
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Self::Assistant(turn) => &turn.tool_calls,
            _ => &[],
        }
    }

    /// The assistant turn, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantContent> {
        match self {
            Self::Assistant(turn) => Some(turn),
            _ => None,
        }
    }

    /// True for the result of a tool call that failed.
    pub fn is_error(&self) -> bool {
        matches!(self, Self::ToolResult(result) if result.is_error)
    }

    /// Reads stored content of a message of `role`; `is_error` is the message's flag.
    ///
    /// Never fails: a shape other than the documented one is kept as its JSON text, and a tool
    /// call with missing fields gets empty ones (arguments that are not a string are kept as
    /// their JSON text).
    pub fn from_stored(role: Role, value: Value, is_error: bool) -> Self {
        match role {
            Role::Assistant => Self::Assistant(assistant_from(value)),
            Role::Tool => Self::ToolResult(ToolResultContent {
                output: text_from(value),
                is_error,
            }),
            Role::System | Role::User => Self::Text(text_from(value)),
        }
    }

    /// The stored JSON of this content (what [`Serialize`] writes), as a value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => serializer.serialize_str(text),
            Self::ToolResult(result) => serializer.serialize_str(&result.output),
            Self::Assistant(turn) => {
                let len = 2 + usize::from(!turn.reasoning.is_empty());
                let mut map = serializer.serialize_map(Some(len))?;
                map.serialize_entry("text", &turn.text)?;
                map.serialize_entry("tool_calls", &turn.tool_calls)?;
                if !turn.reasoning.is_empty() {
                    map.serialize_entry("reasoning", &turn.reasoning)?;
                }
                map.end()
            }
        }
    }
}

/// The text of a stored string, or of an object's `text` field, or the JSON itself.
fn text_from(value: Value) -> String {
    match value {
        Value::String(text) => text,
        Value::Null => String::new(),
        Value::Object(mut map) => match map.remove("text") {
            Some(Value::String(text)) => text,
            Some(other) => {
                map.insert("text".into(), other);
                Value::Object(map).to_string()
            }
            None => Value::Object(map).to_string(),
        },
        other => other.to_string(),
    }
}

fn assistant_from(value: Value) -> AssistantContent {
    let mut map = match value {
        Value::Object(map) => map,
        Value::Null => return AssistantContent::default(),
        other => {
            return AssistantContent {
                text: Some(text_from(other)),
                ..AssistantContent::default()
            };
        }
    };
    let text = match map.remove("text") {
        Some(Value::String(text)) => Some(text),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    let reasoning = match map.remove("reasoning") {
        Some(Value::Array(parts)) => parts
            .into_iter()
            .filter_map(|part| serde_json::from_value(part).ok())
            .collect(),
        Some(Value::String(text)) => vec![Reasoning::Text {
            field: "reasoning".into(),
            text,
        }],
        _ => Vec::new(),
    };
    let tool_calls = match map.remove("tool_calls") {
        Some(Value::Array(calls)) => calls.into_iter().map(call_from).collect(),
        _ => Vec::new(),
    };
    AssistantContent {
        text,
        tool_calls,
        reasoning,
    }
}

fn call_from(value: Value) -> ToolCall {
    let Value::Object(mut call) = value else {
        return ToolCall::new("", "", value.to_string());
    };
    let mut field = |key: &str| match call.remove(key) {
        Some(Value::String(text)) => text,
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let id = field("id");
    let name = field("name");
    let arguments = field("arguments");
    ToolCall::new(id, name, arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_json_keeps_the_llm_api_shape() {
        let turn = Content::assistant(
            None,
            vec![ToolCall::new(
                "functions.read:0",
                "read_file",
                "{\"path\":\"a\"}",
            )],
        );
        assert_eq!(
            turn.to_value(),
            json!({"text": null, "tool_calls": [
                {"id": "functions.read:0", "name": "read_file", "arguments": "{\"path\":\"a\"}"}
            ]})
        );
        let back = Content::from_stored(Role::Assistant, turn.to_value(), false);
        assert_eq!(back, turn);
        let mut thought = AssistantContent::new(Some("Done.".into()), Vec::new());
        thought.reasoning = vec![
            Reasoning::Text {
                field: "reasoning_content".into(),
                text: "Think first.".into(),
            },
            Reasoning::Thinking {
                thinking: "More.".into(),
                signature: "sig".into(),
            },
        ];
        let stored = Content::Assistant(thought.clone()).to_value();
        assert_eq!(stored["reasoning"][0]["type"], "text");
        assert_eq!(stored["reasoning"][1]["signature"], "sig");
        let back = Content::from_stored(Role::Assistant, stored, false);
        assert_eq!(back, Content::Assistant(thought.clone()));
        assert_eq!(thought.reasoning_text(), "Think first.\n\nMore.");
        let result = Content::ToolResult(ToolResultContent {
            output: "boom".into(),
            is_error: true,
        });
        assert_eq!(result.to_value(), json!("boom"));
        assert_eq!(Content::Text("hi".into()).to_value(), json!("hi"));
    }

    #[test]
    fn odd_shapes_load_as_text() {
        let odd = json!({"text": "x", "tool_calls": [{"id": 1, "name": "bash", "arguments": {"a": 1}}, 5]});
        let turn = Content::from_stored(Role::Assistant, odd, false);
        let calls = turn.tool_calls();
        assert_eq!(turn.text(), "x");
        assert_eq!(calls[0].id, "1");
        assert_eq!(calls[0].arguments, "{\"a\":1}");
        assert_eq!(calls[1].arguments, "5");
        assert_eq!(
            Content::from_stored(Role::Tool, json!({"text": "out"}), false).text(),
            "out"
        );
        assert_eq!(
            Content::from_stored(Role::User, json!([1, 2]), false).text(),
            "[1,2]"
        );
        assert_eq!(
            Content::from_stored(Role::Assistant, Value::Null, false),
            Content::assistant(None, Vec::new())
        );
    }
}
