//! What a trace's records say, read for spans: times, a message's start, full compactions,
//! the calls and sub-traces a turn names, messages in the GenAI conventions' JSON shape.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agent_execution::meta::MessageMeta;
use agent_execution::{Content, Message};
use agent_llm::Role;
use opentelemetry::KeyValue;
use serde_json::{Value, json};

/// When `rfc3339` was, or the epoch for a malformed time.
pub(crate) fn at(rfc3339: &str) -> SystemTime {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .and_then(|t| u64::try_from(t.timestamp_micros()).ok())
        .map_or(SystemTime::UNIX_EPOCH, |micros| {
            SystemTime::UNIX_EPOCH + Duration::from_micros(micros)
        })
}

/// When a message's work began: its model call's or tool call's start, from its duration.
pub(crate) fn started(message: &Message) -> SystemTime {
    let end = at(&message.created_at);
    let took = Duration::from_millis(message.duration_ms.unwrap_or(0));
    end.checked_sub(took).unwrap_or(end)
}

/// A time range, widened as things are found in it.
#[derive(Clone, Copy)]
pub(crate) struct Range(pub(crate) SystemTime, pub(crate) SystemTime);

impl Range {
    pub(crate) fn widen(&mut self, other: Range) {
        self.0 = self.0.min(other.0);
        self.1 = self.1.max(other.1);
    }
}

/// Whether `message` is a full compaction's summary.
pub(crate) fn is_compaction(message: &Message) -> bool {
    MessageMeta::of(message).compaction
}

/// A compaction as a span event: the context's weight before and after, in tokens.
pub(crate) fn compaction_event(
    name: &'static str,
    when: SystemTime,
    before: u64,
    after: u64,
) -> opentelemetry::trace::Event {
    opentelemetry::trace::Event::new(
        name,
        when,
        vec![
            KeyValue::new("agent.compaction.tokens_before", before as i64),
            KeyValue::new("agent.compaction.tokens_after", after as i64),
        ],
        0,
    )
}

/// The arguments of each call the model made, by call id.
pub(crate) fn calls_by_id(messages: &[Arc<Message>]) -> HashMap<&str, &str> {
    messages
        .iter()
        .filter_map(|m| match &m.content {
            Content::Assistant(turn) => Some(turn.tool_calls.iter()),
            _ => None,
        })
        .flatten()
        .map(|call| (call.id.as_str(), call.arguments.as_str()))
        .collect()
}

/// The sub-traces a tool result names (`explore`, `delegate`).
pub(crate) fn sub_traces(message: &Message) -> Vec<String> {
    MessageMeta::of(message)
        .sub_traces
        .into_iter()
        .map(|sub| sub.trace_id)
        .collect()
}

/// A message in the conventions' JSON shape (`role` and `parts`).
pub(crate) fn as_message(message: &Message) -> Option<Value> {
    let (role, parts) = match (&message.role, &message.content) {
        (Role::System, Content::Text(text)) => ("system", vec![text_part(text)]),
        (Role::User, Content::Text(text)) => ("user", vec![text_part(text)]),
        (Role::Assistant, Content::Assistant(turn)) => {
            let mut parts: Vec<Value> = turn.text.iter().map(|t| text_part(t)).collect();
            parts.extend(turn.tool_calls.iter().map(|call| {
                json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments})
            }));
            ("assistant", parts)
        }
        (Role::Tool, Content::ToolResult(result)) => (
            "tool",
            vec![json!({
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "response": result.output,
            })],
        ),
        _ => return None,
    };
    Some(json!({"role": role, "parts": parts}))
}

pub(crate) fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

pub(crate) fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}
