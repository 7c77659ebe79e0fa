//! Decoding a chat-completions stream: `data:` chunks, then `data: [DONE]`, with the ways
//! OpenAI-compatible servers stray from OpenAI's own stream (ids and names repeated in every
//! delta, no `index`, `"tool_calls": null`).

use eventsource_stream::Event;

use super::openai_reply::{WireResponse, WireToolCall, stream_error};
use crate::error::LlmError;
use crate::formats::sse::SseDecoder;
use crate::types::ChatEvent;

/// A tool call seen in the stream.
#[derive(Debug)]
struct StreamedCall {
    /// The `index` the server gave it, if any.
    wire_index: Option<usize>,
    /// Its id (the server's, or `call_<position>`).
    id: String,
    /// The tool's name.
    name: String,
}

/// Decodes a chat-completions stream.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    started: bool,
    /// The calls of this response, by position.
    calls: Vec<StreamedCall>,
    finished: bool,
    done: bool,
}

impl StreamDecoder {
    /// The position of the call a delta continues, or `None` when it starts a new one.
    ///
    /// A known id continues its call (llama.cpp repeats the id in every delta); a new id with a
    /// name starts a call even under a known index (some servers number every call 0); without
    /// an id the index tells, and without either the delta continues the newest call unless
    /// it names another tool.
    fn continued(&self, call: &WireToolCall, name: Option<&str>) -> Option<usize> {
        let id = call.id.as_deref().filter(|id| !id.is_empty());
        if let Some(id) = id {
            if let Some(position) = self.calls.iter().position(|known| known.id == id) {
                return Some(position);
            }
            if name.is_some() {
                return None;
            }
        }
        match call.index {
            Some(index) => self
                .calls
                .iter()
                .rposition(|known| known.wire_index == Some(index)),
            None => match (self.calls.last(), name) {
                (Some(last), Some(name)) if last.name != name => None,
                (Some(_), _) => Some(self.calls.len() - 1),
                (None, _) => None,
            },
        }
    }

    fn tool_call(&mut self, mut call: WireToolCall, events: &mut Vec<ChatEvent>) {
        let function = call.function.take().unwrap_or_default();
        let name = function.name.as_deref().filter(|name| !name.is_empty());
        let index = match self.continued(&call, name) {
            Some(index) => index,
            None => {
                let index = self.calls.len();
                let id = call
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{index}"));
                let name = function.name.clone().unwrap_or_default();
                self.calls.push(StreamedCall {
                    wire_index: call.index,
                    id: id.clone(),
                    name: name.clone(),
                });
                events.push(ChatEvent::ToolCallStart { index, id, name });
                index
            }
        };
        if let Some(fragment) = function.arguments.filter(|fragment| !fragment.is_empty()) {
            events.push(ChatEvent::ToolCallArgs { index, fragment });
        }
    }
}

impl SseDecoder for StreamDecoder {
    fn decode(&mut self, event: &Event) -> Result<Vec<ChatEvent>, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            if !self.started {
                return Err(LlmError::empty("the stream said [DONE] and nothing else"));
            }
            return Ok(Vec::new());
        }
        let chunk: WireResponse = serde_json::from_str(data)
            .map_err(|err| LlmError::malformed(format!("invalid stream chunk {data:?}: {err}")))?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        let mut events = Vec::new();
        if !self.started {
            self.started = true;
            events.push(ChatEvent::Started {
                response_id: chunk.id,
                model: chunk.model,
            });
        }
        for choice in chunk.choices {
            if let Some(mut delta) = choice.message {
                for (field, delta) in delta.reasoning() {
                    events.push(ChatEvent::ReasoningText { field, delta });
                }
                if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                    events.push(ChatEvent::Text(text));
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.tool_call(call, &mut events);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finished = true;
                events.push(ChatEvent::Finish { reason });
            }
        }
        if let Some(usage) = chunk.usage {
            events.push(ChatEvent::Usage(usage.into()));
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end(&mut self) -> Result<Vec<ChatEvent>, LlmError> {
        if self.finished {
            Ok(Vec::new())
        } else if !self.started {
            Err(LlmError::empty(
                "the event stream ended before its first event",
            ))
        } else {
            Err(LlmError::malformed(
                "the stream ended before the response was complete: no finish reason, no [DONE]",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn decode(decoder: &mut StreamDecoder, chunk: Value) -> Vec<ChatEvent> {
        let event = Event {
            data: chunk.to_string(),
            ..Event::default()
        };
        decoder.decode(&event).unwrap()
    }

    fn starts(events: &[ChatEvent]) -> Vec<(usize, &str, &str)> {
        events
            .iter()
            .filter_map(|event| match event {
                ChatEvent::ToolCallStart { index, id, name } => {
                    Some((*index, id.as_str(), name.as_str()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn calls_that_share_wire_index_zero_are_told_apart_by_id() {
        let mut decoder = StreamDecoder::default();
        let call = |id: &str, name: &str, args: &str| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": id, "function": {"name": name, "arguments": args}}
            ]}}]})
        };
        let mut events = decode(&mut decoder, call("a", "one", "{}"));
        events.extend(decode(&mut decoder, call("b", "two", "{\"x\":")));
        events.extend(decode(
            &mut decoder,
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}}]}),
        ));
        assert_eq!(starts(&events), [(0, "a", "one"), (1, "b", "two")]);
        assert_eq!(
            events.last(),
            Some(&ChatEvent::ToolCallArgs {
                index: 1,
                fragment: "1}".into()
            })
        );
    }

    #[test]
    fn deltas_without_index_continue_by_id_or_else_the_newest_call() {
        let mut decoder = StreamDecoder::default();
        let delta = |call: Value| json!({"choices": [{"delta": {"tool_calls": [call]}}]});
        let mut events = decode(
            &mut decoder,
            delta(json!({"id": "a", "function": {"name": "one", "arguments": "{"}})),
        );
        events.extend(decode(
            &mut decoder,
            delta(json!({"id": "a", "function": {"name": "one", "arguments": "}"}})),
        ));
        events.extend(decode(
            &mut decoder,
            delta(json!({"id": "", "function": {"name": "two", "arguments": {"x": 1}}})),
        ));
        events.extend(decode(
            &mut decoder,
            delta(json!({"function": {"arguments": ""}})),
        ));
        assert_eq!(starts(&events), [(0, "a", "one"), (1, "call_1", "two")]);
        let args: Vec<_> = events
            .iter()
            .filter_map(|event| match event {
                ChatEvent::ToolCallArgs { index, fragment } => Some((*index, fragment.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(args, [(0, "{"), (0, "}"), (1, r#"{"x":1}"#)]);
    }

    #[test]
    fn an_empty_stream_is_an_empty_response_and_a_cut_one_is_malformed() {
        let mut empty = StreamDecoder::default();
        assert!(matches!(empty.end(), Err(LlmError::EmptyResponse { .. })));
        let mut cut = StreamDecoder::default();
        decode(
            &mut cut,
            json!({"choices": [{"delta": {"content": "Hel"}}]}),
        );
        assert!(matches!(cut.end(), Err(LlmError::MalformedResponse { .. })));
    }
}
