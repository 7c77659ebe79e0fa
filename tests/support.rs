//! Support for the end-to-end tests and the benchmark program: a zero-latency model that answers
//! from a list and measures each prompt, tools with fixed outputs, and the long scripted task the
//! context-economy figures are measured on.

use std::sync::Arc;
use std::sync::Mutex;

use agent_execution::tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use agent_llm::{
    ChatEvent, ChatRequest, ChatResponse, ChatStream, LlmClient, LlmError, ModelInfo, ToolCall,
    Usage, estimate_request_tokens,
};
use async_trait::async_trait;
use serde_json::{Value, json};

/// A model that answers from a fixed list of responses, at once, keeping only the estimated
/// prompt size of each request (not the requests themselves, so long runs stay small).
pub struct ListModel {
    responses: Vec<ChatResponse>,
    state: Mutex<ListState>,
    context_window: usize,
    measure: bool,
}

#[derive(Default)]
struct ListState {
    next: usize,
    prompt_tokens: Vec<usize>,
}

impl ListModel {
    /// A model answering `responses` in order; `measure` estimates each prompt's tokens.
    pub fn new(responses: Vec<ChatResponse>, context_window: usize, measure: bool) -> Self {
        Self {
            responses,
            state: Mutex::new(ListState::default()),
            context_window,
            measure,
        }
    }

    /// The estimated prompt tokens of every request so far.
    pub fn prompt_tokens(&self) -> Vec<usize> {
        self.state
            .lock()
            .map(|s| s.prompt_tokens.clone())
            .unwrap_or_default()
    }
}

/// A response calling one tool.
pub fn call(id: usize, name: &str, arguments: Value) -> ChatResponse {
    ChatResponse {
        text: None,
        tool_calls: vec![ToolCall::new(
            format!("call_{id}"),
            name,
            arguments.to_string(),
        )],
        usage: Some(Usage {
            prompt_tokens: 100,
            completion_tokens: 10,
            cached_tokens: 0,
        }),
        finish_reason: Some("tool_calls".into()),
        response_id: None,
        model: None,
    }
}

/// A final answer.
pub fn answer(text: &str) -> ChatResponse {
    ChatResponse {
        text: Some(text.to_owned()),
        tool_calls: Vec::new(),
        usage: Some(Usage {
            prompt_tokens: 100,
            completion_tokens: 10,
            cached_tokens: 0,
        }),
        finish_reason: Some("stop".into()),
        response_id: None,
        model: None,
    }
}

#[async_trait]
impl LlmClient for ListModel {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let response = self.complete(request).await?;
        let mut events = Vec::new();
        if let Some(text) = response.text {
            events.push(Ok(ChatEvent::Text(text)));
        }
        for (index, call) in response.tool_calls.into_iter().enumerate() {
            events.push(Ok(ChatEvent::ToolCallStart {
                index,
                id: call.id,
                name: call.name,
            }));
            events.push(Ok(ChatEvent::ToolCallArgs {
                index,
                fragment: call.arguments,
            }));
        }
        if let Some(usage) = response.usage {
            events.push(Ok(ChatEvent::Usage(usage)));
        }
        let reason = response.finish_reason.unwrap_or_else(|| "stop".into());
        events.push(Ok(ChatEvent::Finish { reason }));
        Ok(Box::pin(futures::stream::iter(events)))
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let tokens = if self.measure {
            estimate_request_tokens(&request)
        } else {
            0
        };
        let mut state = self.state.lock().map_err(|_| LlmError::MalformedResponse {
            message: "model state poisoned".into(),
        })?;
        state.prompt_tokens.push(tokens);
        let index = state.next;
        state.next += 1;
        self.responses
            .get(index)
            .cloned()
            .ok_or(LlmError::ScriptExhausted {
                served: self.responses.len(),
            })
    }

    fn model_info(&self, model: &str) -> ModelInfo {
        ModelInfo::lookup(model).with_context_window(self.context_window)
    }
}

/// A read-only tool that does nothing and says `ok`.
pub struct NoopTool;

#[async_trait]
impl Tool for NoopTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "noop".into(),
            description: "Does nothing.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

/// A read-only tool whose output is `bytes` long and different for every `n`: a stand-in for
/// reading files or running commands in the context-economy measurement.
pub struct EmitTool {
    /// How long each output is.
    pub bytes: usize,
}

#[async_trait]
impl Tool for EmitTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "emit".into(),
            description: "Returns a block of text.".into(),
            parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let n = args.get("n").and_then(Value::as_u64).unwrap_or(0);
        Ok(ToolOutput::text(emitted_text(n, self.bytes)))
    }
}

/// Deterministic prose-like text of about `bytes` bytes, unique to `n`.
pub fn emitted_text(n: u64, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 32);
    let mut i = 0u64;
    while out.len() < bytes {
        out.push_str(&format!(
            "line {n}.{i}: value {} of the record set; ",
            (n * 7919 + i * 104_729) % 100_000
        ));
        i += 1;
    }
    out
}

/// The long task of the context-economy measurement: `goals` goals, each with `calls` calls of
/// `emit`, finished with a summary; goal 3 is abandoned halfway and replaced by a new goal.
pub fn long_task(goals: usize, calls: usize) -> Vec<ChatResponse> {
    let mut out = Vec::new();
    let mut id = 0;
    let mut next = |name: &str, args: Value| {
        id += 1;
        call(id, name, args)
    };
    let names: Vec<String> = (1..=goals).map(|g| format!("Part {g}")).collect();
    out.push(next("goal", json!({"add": names.join(", ")})));
    let mut emitted = 0u64;
    let mut number = 1;
    for goal in 1..=goals {
        out.push(next("goal", json!({"focus": number.to_string()})));
        let abandon = goal == 3;
        let work = if abandon { calls / 2 } else { calls };
        for _ in 0..work {
            emitted += 1;
            out.push(next("emit", json!({"n": emitted})));
        }
        if abandon {
            // The abandoned goal leaves the numbering; its replacement takes the last place.
            out.push(next(
                "goal",
                json!({"abandon": "this approach does not scale", "add": "Part 3 again"}),
            ));
            continue;
        }
        out.push(next(
            "goal",
            json!({"done": format!("part {goal} finished: records {emitted} checked")}),
        ));
        number += 1;
    }
    // The replacement of the abandoned goal is the last visible goal.
    out.push(next("goal", json!({"focus": number.to_string()})));
    for _ in 0..calls {
        emitted += 1;
        out.push(next("emit", json!({"n": emitted})));
    }
    out.push(next("goal", json!({"done": "part 3 redone"})));
    out.push(answer("All parts are done."));
    out
}

/// A shared handle to a model, as the runner takes it.
pub fn shared(model: ListModel) -> Arc<ListModel> {
    Arc::new(model)
}
