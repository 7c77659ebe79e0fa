//! The client trait every provider implements, and the collector that turns a stream of
//! [`ChatEvent`]s into a [`ChatResponse`].

use std::collections::BTreeMap;
use std::pin::Pin;

use futures::{Stream, StreamExt};

use crate::error::LlmError;
use crate::models::ModelInfo;
use crate::types::{ChatEvent, ChatRequest, ChatResponse, Reasoning, ToolCall, Usage};
use crate::web_search::{WebSearchAnswer, WebSearchOptions};
use crate::window::ContextWindow;

/// A stream of the events of one model turn. Dropping it cancels the request.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatEvent, LlmError>> + Send>>;

/// A chat model.
///
/// [`stream`](LlmClient::stream) is the primitive: it sends the request (retrying what is
/// worth retrying before the first event) and returns the response as a stream of events.
/// [`complete`](LlmClient::complete) collects that stream. The trait is object-safe, so callers
/// hold an `Arc<dyn LlmClient>`. Dropping a returned future or stream cancels the call.
#[async_trait::async_trait]
pub trait LlmClient: Send + Sync {
    /// Sends `request` and returns the answer as a stream of events.
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError>;

    /// Sends `request` and returns the whole answer.
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let stream = self.stream(request).await?;
        collect_stream(stream).await
    }

    /// What is known about `model`: its context window above all. The default looks the model
    /// up in the built-in table ([`ModelInfo::lookup`]).
    fn model_info(&self, model: &str) -> ModelInfo {
        ModelInfo::lookup(model)
    }

    /// Asks the model's server for the context window it runs `model` with, where the server
    /// says it (llama.cpp's `/props`, vLLM's model list, Ollama's `/api/show`), and remembers
    /// the answer for the client's life: later calls and [`known_window`](Self::known_window)
    /// give it without asking again. `None` when the client cannot ask, the server does not
    /// say, or the caller configured the window. The default asks nothing.
    async fn learn_window(&self, model: &str) -> Option<ContextWindow> {
        let _ = model;
        None
    }

    /// What [`learn_window`](Self::learn_window) learned of `model`'s window, without asking.
    fn known_window(&self, model: &str) -> Option<ContextWindow> {
        let _ = model;
        None
    }

    /// Whether the provider searches the web on its own servers, so that
    /// [`web_search`](Self::web_search) can be called (Anthropic Messages, OpenAI Responses).
    /// `false` by default.
    fn offers_web_search(&self) -> bool {
        false
    }

    /// Has `model` search the web for `query` on the provider's servers, in one request, and
    /// returns what it reported with the pages it found (see [`crate::WebSearchOptions`]). A
    /// search the provider ran but could not complete is [`LlmError::ServerTool`]. The default
    /// is [`LlmError::Unsupported`].
    async fn web_search(
        &self,
        model: &str,
        query: &str,
        options: &WebSearchOptions,
    ) -> Result<WebSearchAnswer, LlmError> {
        let _ = (model, query, options);
        Err(LlmError::Unsupported {
            message: "this provider does not search the web".to_owned(),
        })
    }
}

#[async_trait::async_trait]
impl<T: LlmClient + ?Sized> LlmClient for std::sync::Arc<T> {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        (**self).stream(request).await
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).complete(request).await
    }

    fn model_info(&self, model: &str) -> ModelInfo {
        (**self).model_info(model)
    }

    async fn learn_window(&self, model: &str) -> Option<ContextWindow> {
        (**self).learn_window(model).await
    }

    fn known_window(&self, model: &str) -> Option<ContextWindow> {
        (**self).known_window(model)
    }

    fn offers_web_search(&self) -> bool {
        (**self).offers_web_search()
    }

    async fn web_search(
        &self,
        model: &str,
        query: &str,
        options: &WebSearchOptions,
    ) -> Result<WebSearchAnswer, LlmError> {
        (**self).web_search(model, query, options).await
    }
}

/// Reads `stream` to its end and folds its events into a response.
pub async fn collect_stream(mut stream: ChatStream) -> Result<ChatResponse, LlmError> {
    let mut collector = ResponseCollector::new();
    while let Some(event) = stream.next().await {
        collector.push(event?);
    }
    collector.finish()
}

/// Folds [`ChatEvent`]s into a [`ChatResponse`], for callers that show a stream as it comes and
/// also need the whole turn.
#[derive(Debug, Default)]
pub struct ResponseCollector {
    text: String,
    saw_text: bool,
    tool_calls: BTreeMap<usize, ToolCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    response_id: Option<String>,
    model: Option<String>,
    reasoning: Vec<Reasoning>,
}

impl ResponseCollector {
    /// An empty collector.
    pub fn new() -> Self {
        ResponseCollector::default()
    }

    /// Takes one event into account.
    pub fn push(&mut self, event: ChatEvent) {
        match event {
            ChatEvent::Started { response_id, model } => {
                if response_id.is_some() {
                    self.response_id = response_id;
                }
                if model.is_some() {
                    self.model = model;
                }
            }
            ChatEvent::Text(text) => {
                self.saw_text = true;
                self.text.push_str(&text);
            }
            ChatEvent::ToolCallStart { index, id, name } => {
                let call = self
                    .tool_calls
                    .entry(index)
                    .or_insert_with(|| ToolCall::new("", "", ""));
                call.id = id;
                call.name = name;
            }
            ChatEvent::ToolCallArgs { index, fragment } => {
                let call = self
                    .tool_calls
                    .entry(index)
                    .or_insert_with(|| ToolCall::new("", "", ""));
                call.arguments.push_str(&fragment);
            }
            ChatEvent::ReasoningText { field, delta } => match self.reasoning.last_mut() {
                Some(Reasoning::Text { field: last, text }) if *last == field => {
                    text.push_str(&delta);
                }
                _ => self.reasoning.push(Reasoning::Text { field, text: delta }),
            },
            ChatEvent::ReasoningPreview(_) => {}
            ChatEvent::ReasoningBlock(block) => self.reasoning.push(block),
            ChatEvent::Usage(usage) => self.usage = Some(usage),
            ChatEvent::Finish { reason } => self.finish_reason = Some(reason),
        }
    }

    /// The response so far. Tool calls without arguments get `{}`; a tool call that never got
    /// a name is a malformed response.
    pub fn finish(self) -> Result<ChatResponse, LlmError> {
        let mut tool_calls = Vec::with_capacity(self.tool_calls.len());
        for (index, mut call) in self.tool_calls {
            if call.name.is_empty() {
                return Err(LlmError::malformed(format!(
                    "tool call {index} has no name"
                )));
            }
            if call.id.is_empty() {
                call.id = format!("call_{index}");
            }
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".to_string();
            }
            tool_calls.push(call);
        }
        Ok(ChatResponse {
            text: (self.saw_text && !self.text.is_empty()).then_some(self.text),
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            response_id: self.response_id,
            model: self.model,
            reasoning: self.reasoning,
        })
    }
}

/// The events that replay a complete response, for providers that answered without streaming.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "openai-responses"
))]
pub(crate) fn response_events(response: ChatResponse) -> Vec<ChatEvent> {
    let mut events = vec![ChatEvent::Started {
        response_id: response.response_id,
        model: response.model,
    }];
    events.extend(
        response
            .reasoning
            .into_iter()
            .map(ChatEvent::ReasoningBlock),
    );
    if let Some(text) = response.text {
        events.push(ChatEvent::Text(text));
    }
    for (index, call) in response.tool_calls.into_iter().enumerate() {
        events.push(ChatEvent::ToolCallStart {
            index,
            id: call.id,
            name: call.name,
        });
        events.push(ChatEvent::ToolCallArgs {
            index,
            fragment: call.arguments,
        });
    }
    if let Some(usage) = response.usage {
        events.push(ChatEvent::Usage(usage));
    }
    if let Some(reason) = response.finish_reason {
        events.push(ChatEvent::Finish { reason });
    }
    events
}

/// A stream that yields these events and ends.
pub(crate) fn stream_of(events: Vec<ChatEvent>) -> ChatStream {
    Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collector_assembles_fragments_in_index_order() {
        let mut collector = ResponseCollector::new();
        for event in [
            ChatEvent::Started {
                response_id: Some("r1".into()),
                model: Some("m".into()),
            },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "b".into(),
                name: "two".into(),
            },
            ChatEvent::ToolCallStart {
                index: 0,
                id: "a".into(),
                name: "one".into(),
            },
            ChatEvent::ToolCallArgs {
                index: 0,
                fragment: "{\"x\":".into(),
            },
            ChatEvent::ToolCallArgs {
                index: 1,
                fragment: "".into(),
            },
            ChatEvent::ToolCallArgs {
                index: 0,
                fragment: "1}".into(),
            },
            ChatEvent::Usage(Usage::new(1, 2)),
            ChatEvent::Usage(Usage::new(3, 4)),
            ChatEvent::Finish {
                reason: "tool_calls".into(),
            },
        ] {
            collector.push(event);
        }
        let response = collector.finish().unwrap();
        assert_eq!(response.text, None);
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::new("a", "one", "{\"x\":1}"),
                ToolCall::new("b", "two", "{}")
            ]
        );
        assert_eq!(response.usage, Some(Usage::new(3, 4)));
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(response.response_id.as_deref(), Some("r1"));
    }

    #[test]
    fn a_tool_call_without_a_name_is_malformed() {
        let mut collector = ResponseCollector::new();
        collector.push(ChatEvent::ToolCallArgs {
            index: 0,
            fragment: "{}".into(),
        });
        assert!(matches!(
            collector.finish(),
            Err(LlmError::MalformedResponse { .. })
        ));
    }
}
