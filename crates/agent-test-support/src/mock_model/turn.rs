//! A scripted model answer (text, tool calls, usage) independent of any wire format, and its
//! renderings: an OpenAI chat completion or its stream chunks, an Anthropic message or its
//! stream events, with the turn's reasoning in each format's form (see `reasoning.rs`; the
//! Responses renderings are in `responses.rs`). Streams
//! are fragmented the way real servers send them: text in pieces, tool
//! arguments split mid-token.

use serde_json::{Value, json};

use super::reasoning::{self, Thought};
use super::web_search::{self, WebSearch};

/// One answer of the model: text and/or tool calls, with the usage it reports.
///
/// The server renders it in the wire format of the request it answers (OpenAI or Anthropic,
/// JSON or a stream); the `openai_*` and `anthropic_*` methods give the same renderings to
/// build partial or broken streams from.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub(super) text: Option<String>,
    pub(super) tool_calls: Vec<(String, String, Value)>,
    pub(super) usage: Option<Usage>,
    pub(super) id: Option<String>,
    pub(super) model: Option<String>,
    /// The summary of a reasoning item (rendered in the Responses format only).
    pub(super) reasoning_item: Option<String>,
    /// Searches run on the provider's servers (see `web_search.rs`).
    pub(super) web_searches: Vec<WebSearch>,
    thoughts: Vec<Thought>,
}

/// Token counts a turn reports, in Anthropic's terms: `input_tokens` are the prompt tokens
/// neither read from nor written to the cache. OpenAI's `prompt_tokens` is the sum of the
/// three input counts, with `cache_read_tokens` as `prompt_tokens_details.cached_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens that were neither read from nor written to the cache.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the cache (Anthropic only reports them).
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Uncached input and output tokens.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// With this many prompt tokens read from the cache.
    #[must_use]
    pub fn with_cache_read(mut self, tokens: u64) -> Self {
        self.cache_read_tokens = tokens;
        self
    }

    /// With this many prompt tokens written to the cache.
    #[must_use]
    pub fn with_cache_write(mut self, tokens: u64) -> Self {
        self.cache_write_tokens = tokens;
        self
    }

    pub(super) fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    fn openai(&self) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens(),
            "completion_tokens": self.output_tokens,
            "total_tokens": self.prompt_tokens() + self.output_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cache_read_tokens},
        })
    }

    fn anthropic(&self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_tokens,
            "cache_creation_input_tokens": self.cache_write_tokens,
        })
    }
}

impl Turn {
    /// A final answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().with_text(text)
    }

    /// A turn making one tool call with these arguments.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self::default().with_tool_call(id, name, arguments)
    }

    /// Sets the text (said before any tool call).
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Adds a tool call.
    #[must_use]
    pub fn with_tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.tool_calls.push((id.into(), name.into(), arguments));
        self
    }

    /// Adds a search the provider runs on its servers before the text (Anthropic's web search
    /// tool, Responses' `web_search`); the request must declare the search tool.
    #[must_use]
    pub fn with_web_search(mut self, search: WebSearch) -> Self {
        self.web_searches.push(search);
        self
    }

    /// Starts with a reasoning item with this summary and encrypted content the server
    /// remembers (the Responses format only; the other formats leave it out).
    #[must_use]
    pub fn with_reasoning_item(mut self, summary: impl Into<String>) -> Self {
        self.reasoning_item = Some(summary.into());
        self
    }

    /// Adds reasoning: `reasoning_content` of an OpenAI-compatible message, a signed `thinking`
    /// block of an Anthropic one.
    #[must_use]
    pub fn with_reasoning(self, text: impl Into<String>) -> Self {
        self.with_reasoning_in("reasoning_content", text)
    }

    /// Adds reasoning in this OpenAI-compatible message field (`reasoning` for OpenRouter and
    /// newer vLLM); a signed `thinking` block for Anthropic all the same.
    #[must_use]
    pub fn with_reasoning_in(mut self, field: impl Into<String>, text: impl Into<String>) -> Self {
        self.thoughts.push(Thought::Text {
            field: field.into(),
            text: text.into(),
        });
        self
    }

    /// Adds an Anthropic `redacted_thinking` block with this data (sealed by the server so that
    /// a changed copy is refused); OpenAI-compatible renderings leave it out.
    #[must_use]
    pub fn with_redacted_thinking(mut self, data: impl Into<String>) -> Self {
        self.thoughts.push(Thought::Redacted(data.into()));
        self
    }

    /// The turn as the server sends it: with reasoning in DeepSeek thinking mode, and its
    /// reasoning remembered in `state` for each of its tool calls.
    pub(super) fn prepared(
        self,
        state: &reasoning::ReasoningState,
        format: Option<super::WireFormat>,
    ) -> Turn {
        let turn = if state.deepseek()
            && format == Some(super::WireFormat::OpenAi)
            && self.thoughts().is_empty()
        {
            self.with_reasoning(reasoning::DEFAULT_REASONING)
        } else {
            self
        };
        if let Some((_, text)) = reasoning::openai_fields(turn.thoughts())
            .into_iter()
            .find(|(field, _)| field == "reasoning_content")
        {
            state.issued(turn.tool_call_ids(), &text);
        }
        turn
    }

    pub(super) fn thoughts(&self) -> &[Thought] {
        &self.thoughts
    }

    pub(super) fn tool_call_ids(&self) -> impl Iterator<Item = &str> {
        self.tool_calls.iter().map(|(id, _, _)| id.as_str())
    }

    /// Reports this usage.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The response id (`chatcmpl-mock` or `msg_mock` otherwise).
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The model the response names (the request's model when the server renders it,
    /// `mock-model` otherwise).
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// This turn reporting `prompt_tokens` (and an estimate of its own tokens) unless it
    /// reports a usage already.
    pub(super) fn or_usage(mut self, prompt_tokens: u64) -> Self {
        if self.usage.is_none() {
            let mut answer = self.text.as_deref().map_or(0, str::len);
            answer += self
                .tool_calls
                .iter()
                .map(|(_, name, args)| name.len() + args.to_string().len())
                .sum::<usize>();
            self.usage = Some(Usage::new(prompt_tokens, answer.div_ceil(4) as u64 + 1));
        }
        self
    }

    /// This turn naming `model` unless it names one already.
    pub(super) fn or_model(mut self, model: Option<&str>) -> Self {
        if self.model.is_none() {
            self.model = model.map(str::to_owned);
        }
        self
    }

    pub(super) fn model(&self) -> &str {
        self.model.as_deref().unwrap_or("mock-model")
    }

    /// A chat completion (`"object": "chat.completion"`).
    pub fn openai_completion(&self) -> Value {
        let calls: Vec<Value> = self
            .tool_calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}})
            })
            .collect();
        let mut message = json!({"role": "assistant", "content": self.text});
        for (field, text) in reasoning::openai_fields(&self.thoughts) {
            message[field] = Value::String(text);
        }
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let mut completion = json!({
            "id": self.id.as_deref().unwrap_or("chatcmpl-mock"),
            "object": "chat.completion",
            "created": 0,
            "model": self.model(),
            "choices": [{"index": 0, "message": message, "finish_reason": self.openai_finish()}],
        });
        if let Some(usage) = &self.usage {
            completion["usage"] = usage.openai();
        }
        completion
    }

    /// The chunks of a streamed chat completion, without the final `[DONE]`: the text in
    /// pieces, each tool call's start then its arguments in fragments, the finish, and (when
    /// the turn has usage) a last chunk with no choices and the usage.
    pub fn openai_chunks(&self) -> Vec<Value> {
        let chunk = |delta: Value, finish: Option<&str>| {
            json!({
                "id": self.id.as_deref().unwrap_or("chatcmpl-mock"),
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model(),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            })
        };
        let text = self.text.as_deref().map(fragments).unwrap_or_default();
        let mut chunks = Vec::new();
        // Reasoning streams first, in pieces, as thinking servers send it.
        for (field, reasoning) in reasoning::openai_fields(&self.thoughts) {
            for piece in fragments(&reasoning) {
                let mut delta = json!({"role": "assistant", "content": null});
                delta[&field] = json!(piece);
                chunks.push(chunk(delta, None));
            }
        }
        chunks.push(chunk(
            json!({"role": "assistant", "content": text.first().copied()}),
            None,
        ));
        for piece in text.iter().skip(1) {
            chunks.push(chunk(json!({"content": piece}), None));
        }
        for (index, (id, name, args)) in self.tool_calls.iter().enumerate() {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            for piece in fragments(&args.to_string()) {
                chunks.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
        }
        chunks.push(chunk(json!({}), Some(self.openai_finish())));
        if let Some(usage) = &self.usage {
            let mut last = chunk(json!({}), None);
            last["choices"] = json!([]);
            last["usage"] = usage.openai();
            chunks.push(last);
        }
        chunks
    }

    fn openai_finish(&self) -> &'static str {
        if self.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
    }

    fn anthropic_stop(&self) -> &'static str {
        if self.tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        }
    }

    fn anthropic_blocks(&self) -> Vec<Value> {
        let citations = web_search::anthropic_citations(&self.web_searches);
        let text = self.text.iter().map(|t| match citations.is_empty() {
            true => json!({"type": "text", "text": t}),
            false => json!({"type": "text", "text": t, "citations": citations}),
        });
        let calls = self.tool_calls.iter().map(
            |(id, name, args)| json!({"type": "tool_use", "id": id, "name": name, "input": args}),
        );
        reasoning::anthropic_blocks(&self.thoughts)
            .into_iter()
            .chain(web_search::anthropic_blocks(&self.web_searches))
            .chain(text)
            .chain(calls)
            .collect()
    }

    /// The Anthropic `usage`, with the searches run when there are any.
    fn anthropic_usage(&self) -> Value {
        let mut usage = self.usage.unwrap_or_default().anthropic();
        if !self.web_searches.is_empty() {
            usage["server_tool_use"] =
                json!({"web_search_requests": web_search::searches_run(&self.web_searches)});
        }
        usage
    }

    /// A Messages response (`"type": "message"`).
    pub fn anthropic_message(&self) -> Value {
        json!({
            "id": self.id.as_deref().unwrap_or("msg_mock"),
            "type": "message",
            "role": "assistant",
            "model": self.model(),
            "content": self.anthropic_blocks(),
            "stop_reason": self.anthropic_stop(),
            "stop_sequence": null,
            "usage": self.anthropic_usage(),
        })
    }

    /// The events of a streamed Messages response: `message_start` (with the input usage),
    /// each block's `content_block_start`, deltas in fragments and `content_block_stop`, then
    /// `message_delta` (stop reason and output tokens) and `message_stop`.
    pub fn anthropic_events(&self) -> Vec<Value> {
        let usage = self.usage.unwrap_or_default();
        let mut start_usage = usage.anthropic();
        start_usage["output_tokens"] = json!(1);
        let mut events = vec![json!({"type": "message_start", "message": {
            "id": self.id.as_deref().unwrap_or("msg_mock"),
            "type": "message",
            "role": "assistant",
            "model": self.model(),
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": start_usage,
        }})];
        for (index, block) in self.anthropic_blocks().into_iter().enumerate() {
            let (start, deltas) = if block["type"] == "thinking" {
                let pieces = fragments(block["thinking"].as_str().unwrap_or_default());
                let mut deltas: Vec<Value> = pieces
                    .into_iter()
                    .map(|t| json!({"type": "thinking_delta", "thinking": t}))
                    .collect();
                deltas.push(json!({"type": "signature_delta", "signature": block["signature"]}));
                (json!({"type": "thinking", "thinking": ""}), deltas)
            } else if matches!(
                block["type"].as_str(),
                Some("redacted_thinking" | "web_search_tool_result")
            ) {
                (block.clone(), Vec::new())
            } else if block["type"] == "text" {
                let pieces = fragments(block["text"].as_str().unwrap_or_default());
                let mut deltas: Vec<Value> = pieces
                    .into_iter()
                    .map(|t| json!({"type": "text_delta", "text": t}))
                    .collect();
                for citation in block["citations"].as_array().into_iter().flatten() {
                    deltas.push(json!({"type": "citations_delta", "citation": citation}));
                }
                (json!({"type": "text", "text": ""}), deltas)
            } else {
                let input = block["input"].to_string();
                let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
                deltas.extend(
                    fragments(&input)
                        .into_iter()
                        .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
                );
                let mut start = block.clone();
                start["input"] = json!({});
                (start, deltas)
            };
            events.push(
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
        }
        events.push(json!({"type": "message_delta",
            "delta": {"stop_reason": self.anthropic_stop(), "stop_sequence": null},
            "usage": {"output_tokens": usage.output_tokens}}));
        events.push(json!({"type": "message_stop"}));
        events
    }
}

/// `text` cut into three pieces of about the same length, on character boundaries (fewer when
/// it is shorter; one empty piece when it is empty).
pub(super) fn fragments(text: &str) -> Vec<&str> {
    let chars = text.chars().count();
    if chars < 3 {
        return vec![text];
    }
    let cut = |n: usize| text.char_indices().nth(n).map_or(text.len(), |(at, _)| at);
    let (a, b) = (cut(chars / 3), cut(2 * chars / 3));
    vec![&text[..a], &text[a..b], &text[b..]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_cover_the_text_on_character_boundaries() {
        assert_eq!(fragments(""), [""]);
        assert_eq!(fragments("ab"), ["ab"]);
        assert_eq!(
            fragments("{\"city\": \"Paris\"}").concat(),
            "{\"city\": \"Paris\"}"
        );
        assert_eq!(fragments("21°C, sunny").concat(), "21°C, sunny");
        assert_eq!(fragments("abcdef"), ["ab", "cd", "ef"]);
    }

    #[test]
    fn usage_is_rendered_in_each_providers_terms() {
        let usage = Usage::new(200, 20)
            .with_cache_read(3_000)
            .with_cache_write(150);
        let openai = Turn::text("ok").with_usage(usage).openai_completion();
        assert_eq!(openai["usage"]["prompt_tokens"], 3_350);
        assert_eq!(
            openai["usage"]["prompt_tokens_details"]["cached_tokens"],
            3_000
        );
        let anthropic = Turn::text("ok").with_usage(usage).anthropic_message();
        assert_eq!(anthropic["usage"]["input_tokens"], 200);
        assert_eq!(anthropic["usage"]["cache_creation_input_tokens"], 150);
    }
}
