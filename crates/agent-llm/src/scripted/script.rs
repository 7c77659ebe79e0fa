//! The script format: the serde types a script is made of, how its JSON is parsed, and which
//! route claims a request.
//!
//! The format itself is documented in the crate docs. A script holds a main queue of turns,
//! routes with queues of their own, a fallback answer and the context window to report; this
//! module says what a script means, and the client in the parent module serves it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{LlmError, TimeoutKind};
use crate::types::{ChatMessage, ChatRequest, Usage};

/// One tool call of a scripted turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedToolCall {
    /// The call id; `call_<turn>_<position>` (both from 1) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments: a JSON value is sent as its JSON text, a string is sent as it is (so a
    /// script can produce malformed arguments).
    #[serde(default)]
    pub arguments: serde_json::Value,
}

/// The kinds of error a script can make the client return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedErrorKind {
    /// [`LlmError::Authentication`].
    Authentication,
    /// [`LlmError::RateLimited`].
    RateLimited,
    /// [`LlmError::ContextWindowExceeded`].
    ContextWindowExceeded,
    /// [`LlmError::BadRequest`].
    BadRequest,
    /// [`LlmError::Server`].
    Server,
    /// [`LlmError::Network`].
    Network,
    /// [`LlmError::Timeout`].
    Timeout,
    /// [`LlmError::MalformedResponse`].
    MalformedResponse,
}

/// An error a scripted turn returns instead of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedError {
    /// Which error.
    pub kind: ScriptedErrorKind,
    /// Its message.
    #[serde(default)]
    pub message: String,
    /// For `rate_limited`: the `retry_after` to report, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl ScriptedError {
    /// The error the client returns.
    pub fn to_error(&self) -> LlmError {
        let message = self.message.clone();
        match self.kind {
            ScriptedErrorKind::Authentication => LlmError::Authentication {
                status: 401,
                message,
            },
            ScriptedErrorKind::RateLimited => LlmError::RateLimited {
                retry_after: self.retry_after_ms.map(Duration::from_millis),
                message,
            },
            ScriptedErrorKind::ContextWindowExceeded => LlmError::ContextWindowExceeded { message },
            ScriptedErrorKind::BadRequest => LlmError::BadRequest {
                status: 400,
                message,
            },
            ScriptedErrorKind::Server => LlmError::Server {
                status: 500,
                message,
            },
            ScriptedErrorKind::Network => LlmError::Network { message },
            ScriptedErrorKind::Timeout => LlmError::Timeout {
                kind: TimeoutKind::Request,
                after: Duration::ZERO,
            },
            ScriptedErrorKind::MalformedResponse => LlmError::MalformedResponse { message },
        }
    }
}

/// One scripted model turn: text and/or tool calls, or an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptedTurn {
    /// The assistant's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedToolCall>,
    /// The usage to report; estimated from the request and the answer when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The finish reason; `tool_calls` when there are tool calls, else `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// An error to return instead of an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ScriptedError>,
    /// How long to wait before answering, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
}

impl ScriptedTurn {
    /// A turn that answers with text only.
    pub fn text(text: impl Into<String>) -> Self {
        ScriptedTurn {
            text: Some(text.into()),
            ..ScriptedTurn::default()
        }
    }

    /// A turn that makes one tool call; `arguments` is usually a `json!` object.
    pub fn tool_call(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        ScriptedTurn::default().with_tool_call(name, arguments)
    }

    /// A turn that returns `kind` of error with `message`.
    pub fn error(kind: ScriptedErrorKind, message: impl Into<String>) -> Self {
        ScriptedTurn {
            error: Some(ScriptedError {
                kind,
                message: message.into(),
                retry_after_ms: None,
            }),
            ..ScriptedTurn::default()
        }
    }

    /// The same turn with one more tool call.
    #[must_use]
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: serde_json::Value) -> Self {
        self.tool_calls.push(ScriptedToolCall {
            id: None,
            name: name.into(),
            arguments,
        });
        self
    }

    /// The same turn with this text.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// The same turn reporting this usage.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The same turn answering after `delay`.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay_ms = Some(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        self
    }
}

/// A queue of turns for the requests whose task contains a text.
///
/// The task of a request is its first user message. When several routes match, the one whose
/// text ends latest in the task wins (the first listed on a tie), so a task that states its own
/// assignment after quoted background (which may name other routes' texts) selects its own
/// route. An empty text matches nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptRoute {
    /// The text the task must contain.
    pub when_task_contains: String,
    /// The turns answered to matching requests, in order.
    #[serde(default)]
    pub turns: Vec<ScriptedTurn>,
    /// The final answer repeated once this route's turns run out; the script's `fallback`
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

impl ScriptRoute {
    /// A route answering `turns` to the requests whose task contains `text`.
    pub fn new(text: impl Into<String>, turns: Vec<ScriptedTurn>) -> Self {
        ScriptRoute {
            when_task_contains: text.into(),
            turns,
            fallback: None,
        }
    }

    /// Where the route's text ends in `task` at its last occurrence, if it occurs.
    fn match_end(&self, task: &str) -> Option<usize> {
        if self.when_task_contains.is_empty() {
            return None;
        }
        task.rfind(&self.when_task_contains)
            .map(|start| start + self.when_task_contains.len())
    }
}

/// A whole script: turns answered in order, and what to answer once they run out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "ScriptForm")]
pub struct Script {
    /// The turns, in order, for requests no route claims.
    pub turns: Vec<ScriptedTurn>,
    /// Routes with their own queues, for requests whose task contains their text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<ScriptRoute>,
    /// The final answer repeated once the turns run out; without one the client returns
    /// [`LlmError::ScriptExhausted`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The context window the client reports for every model (the built-in table otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<usize>,
}

/// The accepted JSON forms of a script: an object, or just the array of turns.
#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptForm {
    Turns(Vec<ScriptedTurn>),
    Full {
        #[serde(default)]
        turns: Vec<ScriptedTurn>,
        #[serde(default)]
        routes: Vec<ScriptRoute>,
        #[serde(default)]
        fallback: Option<String>,
        #[serde(default)]
        context_window: Option<usize>,
    },
}

impl From<ScriptForm> for Script {
    fn from(form: ScriptForm) -> Self {
        match form {
            ScriptForm::Turns(turns) => Script {
                turns,
                ..Script::default()
            },
            ScriptForm::Full {
                turns,
                routes,
                fallback,
                context_window,
            } => Script {
                turns,
                routes,
                fallback,
                context_window,
            },
        }
    }
}

impl Script {
    /// Parses a script from a JSON value; a malformed script is a configuration error.
    pub(super) fn from_json_value(value: serde_json::Value) -> Result<Self, LlmError> {
        serde_json::from_value(value).map_err(invalid_script)
    }

    /// Parses a script from JSON text; a malformed script is a configuration error.
    pub(super) fn from_json_text(json: &str) -> Result<Self, LlmError> {
        serde_json::from_str(json).map_err(invalid_script)
    }

    /// The route that claims `request`, if any: the one whose text ends latest in the task.
    pub(super) fn route_for(&self, request: &ChatRequest) -> Option<usize> {
        let task = request.messages.iter().find_map(|message| match message {
            ChatMessage::User(text) | ChatMessage::UserWithImages { text, .. } => {
                Some(text.as_str())
            }
            _ => None,
        })?;
        let mut best: Option<(usize, usize)> = None;
        for (index, route) in self.routes.iter().enumerate() {
            if let Some(end) = route.match_end(task)
                && best.is_none_or(|(_, best_end)| end > best_end)
            {
                best = Some((index, end));
            }
        }
        best.map(|(index, _)| index)
    }
}

/// The error for a script that does not parse.
fn invalid_script(err: serde_json::Error) -> LlmError {
    LlmError::config(format!("invalid script: {err}"))
}
