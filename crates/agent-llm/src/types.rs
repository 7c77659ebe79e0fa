//! Provider-neutral chat types: messages, tool calls, tool specs, usage, requests and responses.
//!
//! These are the shapes the runner builds and stores; each provider maps them to its own wire
//! format in `formats/`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub(crate) use crate::image::ChatImage;
pub use crate::reasoning::Reasoning;
pub use crate::turn::{FinishReason, ToolChoice};
pub use crate::usage::Usage;

/// The author of a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions that frame the whole conversation.
    System,
    /// The human (or the program standing in for one).
    User,
    /// The model.
    Assistant,
    /// The result of a tool call the model asked for.
    Tool,
}

impl Role {
    /// The lowercase wire name of the role (`"system"`, `"user"`, `"assistant"`, `"tool"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One message of a conversation.
///
/// It serialises as an object tagged by `role`:
/// `{"role":"system","content":"…"}`, `{"role":"user","content":"…"}`,
/// `{"role":"assistant","text":"…","tool_calls":[…]}` and
/// `{"role":"tool","tool_call_id":"…","content":"…"}`; pictures are an `images` list on a user
/// or tool message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "WireMessage", try_from = "WireMessage")]
pub enum ChatMessage {
    /// A system prompt.
    System(String),
    /// A user message.
    User(String),
    /// A user message with pictures, sent after its text.
    UserWithImages {
        /// What the user wrote.
        text: String,
        /// The pictures, in order.
        images: Vec<ChatImage>,
    },
    /// A model turn: optional text, zero or more tool calls, and the reasoning its provider
    /// reported (sent back where the provider wants it).
    Assistant {
        /// The text the model wrote, if any.
        text: Option<String>,
        /// The tool calls the model asked for, in order.
        tool_calls: Vec<ToolCall>,
        /// The model's reasoning, as its provider sent it.
        reasoning: Vec<Reasoning>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the [`ToolCall`] this answers.
        tool_call_id: String,
        /// What the tool returned (or the error text the model should see).
        content: String,
        /// Pictures the tool returned (`read_file` of a PNG). Anthropic takes them in the tool
        /// result; OpenAI's formats, which take none in a tool message, get them in a user
        /// message after the turn's tool results.
        images: Vec<ChatImage>,
    },
}

impl ChatMessage {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        ChatMessage::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage::User(text.into())
    }

    /// An assistant message with text only.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        ChatMessage::Assistant {
            text: Some(text.into()),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        }
    }

    /// An assistant message with optional text and tool calls.
    pub fn assistant(text: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        ChatMessage::Assistant {
            text,
            tool_calls,
            reasoning: Vec::new(),
        }
    }

    /// A tool result answering the call with id `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            images: Vec::new(),
        }
    }

    /// The role of this message.
    pub fn role(&self) -> Role {
        match self {
            ChatMessage::System(_) => Role::System,
            ChatMessage::User(_) | ChatMessage::UserWithImages { .. } => Role::User,
            ChatMessage::Assistant { .. } => Role::Assistant,
            ChatMessage::Tool { .. } => Role::Tool,
        }
    }

    /// The message's text: the content of system, user and tool messages, the text of an
    /// assistant message (empty when it has none).
    pub fn text(&self) -> &str {
        match self {
            ChatMessage::System(text) | ChatMessage::User(text) => text,
            ChatMessage::UserWithImages { text, .. } => text,
            ChatMessage::Assistant { text, .. } => text.as_deref().unwrap_or(""),
            ChatMessage::Tool { content, .. } => content,
        }
    }

    /// The tool calls of an assistant message; empty for every other role.
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
}

/// The serialised form of [`ChatMessage`].
#[derive(Serialize, Deserialize)]
struct WireMessage {
    role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reasoning: Vec<Reasoning>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    images: Vec<ChatImage>,
}

impl From<ChatMessage> for WireMessage {
    fn from(message: ChatMessage) -> Self {
        let role = message.role();
        let mut wire = WireMessage {
            role,
            content: None,
            text: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning: Vec::new(),
            images: Vec::new(),
        };
        match message {
            ChatMessage::System(content) | ChatMessage::User(content) => {
                wire.content = Some(content)
            }
            ChatMessage::UserWithImages { text, images } => {
                wire.content = Some(text);
                wire.images = images;
            }
            ChatMessage::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                wire.text = text;
                wire.tool_calls = tool_calls;
                wire.reasoning = reasoning;
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
                images,
            } => {
                wire.tool_call_id = Some(tool_call_id);
                wire.content = Some(content);
                wire.images = images;
            }
        }
        wire
    }
}

impl TryFrom<WireMessage> for ChatMessage {
    type Error = String;

    fn try_from(wire: WireMessage) -> Result<Self, Self::Error> {
        Ok(match wire.role {
            Role::System => ChatMessage::System(wire.content.or(wire.text).unwrap_or_default()),
            Role::User => ChatMessage::user_with_images(
                wire.content.or(wire.text).unwrap_or_default(),
                wire.images,
            ),
            Role::Assistant => ChatMessage::Assistant {
                text: wire.text.or(wire.content),
                tool_calls: wire.tool_calls,
                reasoning: wire.reasoning,
            },
            Role::Tool => ChatMessage::Tool {
                tool_call_id: wire
                    .tool_call_id
                    .ok_or_else(|| "a tool message needs a tool_call_id".to_string())?,
                content: wire.content.unwrap_or_default(),
                images: wire.images,
            },
        })
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; tool results refer to it.
    pub id: String,
    /// The name of the tool.
    pub name: String,
    /// The arguments as raw JSON text, exactly as the model produced them. It may be malformed.
    pub arguments: String,
}

impl ToolCall {
    /// A tool call from its parts.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// The arguments parsed as JSON, or the parse error when the model produced malformed JSON.
    pub fn parse_arguments(&self) -> Result<serde_json::Value, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            return Ok(serde_json::Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.arguments)
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name, unique within a request.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON schema of the tool's arguments (an object schema).
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// A tool spec from its parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// A request for one model turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model name as the provider knows it.
    pub model: String,
    /// The conversation so far, in order. Shared, so that a caller that sends a growing
    /// conversation turn after turn can keep it and extend it in place once the request is
    /// gone, instead of copying it into every request.
    pub messages: Arc<Vec<ChatMessage>>,
    /// The tools the model may call. Shared, so that a caller whose tools do not change from
    /// turn to turn can hand the same list to every request instead of building it again.
    #[serde(default)]
    pub tools: Arc<Vec<ToolSpec>>,
    /// Sampling temperature; the provider's default when `None`.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// The most tokens to generate; the provider's default when `None` (Anthropic requires a
    /// value and gets the client's configured default).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    #[serde(default)]
    pub stop: Vec<String>,
    /// How hard an OpenAI-compatible reasoning model thinks (`low`, `medium` or `high`), sent as
    /// `reasoning_effort`; not sent when `None`. Anthropic ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Anthropic extended thinking: the most tokens the model may think for, sent as
    /// `thinking: {"type": "enabled", "budget_tokens": N}` (at least 1,024; `max_tokens` is
    /// raised above it and no temperature is sent, as Anthropic requires). Off when `None`;
    /// OpenAI-compatible servers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// Whether the model may call tools in this turn. `None` means [`ToolChoice::Auto`] when
    /// there are tools (OpenAI-compatible requests then say `"tool_choice": "auto"`, which some
    /// local servers need to offer the tools at all) and nothing otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Whether to ask for this answer as a stream: `Some(false)` asks for a whole answer (a
    /// server or model that cannot stream), `None` leaves it to the client's setting. The
    /// OpenAI-compatible client honours it; the other providers always stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

impl ChatRequest {
    /// A request for `model` with these messages and nothing else set.
    pub fn new(model: impl Into<String>, messages: impl Into<Arc<Vec<ChatMessage>>>) -> Self {
        ChatRequest {
            model: model.into(),
            messages: messages.into(),
            ..ChatRequest::default()
        }
    }

    /// The same request with these tools.
    #[must_use]
    pub fn with_tools(mut self, tools: impl Into<Arc<Vec<ToolSpec>>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// The same request with this tool choice.
    #[must_use]
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// The tool choice to send: the one set, else [`ToolChoice::Auto`] when there are tools,
    /// else none.
    pub fn effective_tool_choice(&self) -> Option<ToolChoice> {
        self.tool_choice
            .or((!self.tools.is_empty()).then_some(ToolChoice::Auto))
    }
}

/// A complete model turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The text the model wrote, if any.
    pub text: Option<String>,
    /// The tool calls the model asked for, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Token counts, when the provider reported them.
    pub usage: Option<Usage>,
    /// Why generation stopped, as the provider said it (`stop`, `tool_calls`, `end_turn`, ...).
    pub finish_reason: Option<String>,
    /// The provider's id for this response.
    pub response_id: Option<String>,
    /// The model that answered, as the provider reported it.
    pub model: Option<String>,
    /// The model's reasoning, as the provider sent it (empty when it reported none).
    pub reasoning: Vec<Reasoning>,
}

impl ChatResponse {
    /// Why generation stopped, in provider-neutral terms; `None` when the provider did not say.
    pub fn finish(&self) -> Option<FinishReason> {
        self.finish_reason
            .as_deref()
            .map(FinishReason::from_provider)
    }

    /// What the answer used: the provider's count, or, when it reported none, an estimate
    /// (`estimated_prompt` tokens for the prompt, the answer's text and tool calls counted)
    /// marked [`Usage::estimated`].
    pub fn usage_or_estimate(&self, estimated_prompt: usize) -> Usage {
        self.usage.unwrap_or_else(|| {
            let text = self.text.as_deref().map_or(0, crate::estimate_tokens);
            let calls: usize = self
                .tool_calls
                .iter()
                .map(|c| crate::estimate_tokens(&c.name) + crate::estimate_tokens(&c.arguments))
                .sum();
            Usage::estimate(estimated_prompt as u64, (text + calls) as u64)
        })
    }

    /// Whether the answer was cut at the token limit ([`FinishReason::Length`]): its text is
    /// incomplete and its tool calls may carry truncated arguments.
    pub fn truncated(&self) -> bool {
        self.finish() == Some(FinishReason::Length)
    }

    /// The assistant message that records this response in a conversation.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::Assistant {
            text: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
            reasoning: self.reasoning.clone(),
        }
    }
}

/// One piece of a streamed model turn.
///
/// A stream is a sequence of these; [`crate::ResponseCollector`] folds them into a
/// [`ChatResponse`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChatEvent {
    /// Metadata of the response, usually first.
    Started {
        /// The provider's id for the response.
        response_id: Option<String>,
        /// The model that answers.
        model: Option<String>,
    },
    /// A piece of the assistant's text.
    Text(String),
    /// A new tool call begins.
    ToolCallStart {
        /// The call's position among this response's tool calls, from 0.
        index: usize,
        /// The provider's id for the call.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments, to be appended to the earlier ones.
    ToolCallArgs {
        /// The call's position, as in [`ChatEvent::ToolCallStart`].
        index: usize,
        /// The next piece of the arguments text.
        fragment: String,
    },
    /// A piece of reasoning text of an OpenAI-compatible server, in the response field it came
    /// in; the collector joins the pieces into one [`Reasoning::Text`].
    ReasoningText {
        /// The field of the message (`reasoning_content` or `reasoning`).
        field: String,
        /// The next piece of the text.
        delta: String,
    },
    /// A piece of reasoning to show as it streams, whose whole block arrives later as a
    /// [`ChatEvent::ReasoningBlock`] (Anthropic `thinking`, a Responses reasoning summary).
    ReasoningPreview(String),
    /// A whole block of reasoning, kept as it is.
    ReasoningBlock(Reasoning),
    /// Token counts so far; a later `Usage` event replaces an earlier one.
    Usage(Usage),
    /// Generation stopped.
    Finish {
        /// Why, as the provider said it.
        reason: String,
    },
}
