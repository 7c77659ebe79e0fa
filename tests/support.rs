//! Support for the end-to-end tests and the benchmark program: a zero-latency model that answers
//! from a list (with routes for sub-agents) and measures each prompt, tools with fixed outputs,
//! and the long scripted task the context-economy figures are measured on.

use std::sync::Arc;
use std::sync::Mutex;

use agent_llm::{
    ChatEvent, ChatMessage, ChatRequest, ChatResponse, ChatStream, LlmClient, LlmError, ModelInfo,
    ToolCall, Usage, estimate_request_tokens,
};
use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{Value, json};

/// The README, whose Rust blocks run as this crate's doc tests: this package sees every crate they
/// name, so `cargo test --doc -p agent-e2e` keeps the README's library example compiling and true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// A model that answers from a fixed list of responses, at once, keeping only the estimated
/// prompt size of each request (not the requests themselves, so long runs stay small) and, when
/// measuring, the last request of the main line.
///
/// Routes answer sub-agents: a request whose task (its first user message) contains a route's
/// text is answered from that route's own list. When several routes' texts occur in the task
/// (an explore branch's background may name the other branches), the route whose text ends
/// latest wins, since a branch's own assignment ends its first message.
pub struct ListModel {
    responses: Vec<ChatResponse>,
    routes: Vec<(String, Vec<ChatResponse>)>,
    state: Mutex<ListState>,
    context_window: usize,
    measure: bool,
}

#[derive(Default)]
struct ListState {
    next: usize,
    prompt_tokens: Vec<usize>,
    route_next: Vec<usize>,
    route_tokens: Vec<Vec<usize>>,
    last_request: Option<ChatRequest>,
}

impl ListModel {
    /// A model answering `responses` in order; `measure` estimates each prompt's tokens.
    pub fn new(responses: Vec<ChatResponse>, context_window: usize, measure: bool) -> Self {
        Self {
            responses,
            routes: Vec::new(),
            state: Mutex::new(ListState::default()),
            context_window,
            measure,
        }
    }

    /// The same model with one more route: requests whose task contains `text` are answered
    /// from `responses`, in order.
    #[must_use]
    pub fn with_route(mut self, text: impl Into<String>, responses: Vec<ChatResponse>) -> Self {
        self.routes.push((text.into(), responses));
        self
    }

    /// The estimated prompt tokens of every request of the main line so far.
    pub fn prompt_tokens(&self) -> Vec<usize> {
        self.state
            .lock()
            .map(|s| s.prompt_tokens.clone())
            .unwrap_or_default()
    }

    /// The estimated prompt tokens of every request answered by route `index` so far.
    pub fn route_prompt_tokens(&self, index: usize) -> Vec<usize> {
        self.state
            .lock()
            .ok()
            .and_then(|s| s.route_tokens.get(index).cloned())
            .unwrap_or_default()
    }

    /// The newest request of the main line, when measuring.
    pub fn last_request(&self) -> Option<ChatRequest> {
        self.state.lock().ok().and_then(|s| s.last_request.clone())
    }

    /// The route that answers `request`, if any.
    fn route_for(&self, request: &ChatRequest) -> Option<usize> {
        let task = request.messages.iter().find_map(|message| match message {
            ChatMessage::User(text) => Some(text.as_str()),
            _ => None,
        })?;
        self.routes
            .iter()
            .enumerate()
            .filter(|(_, (text, _))| !text.is_empty())
            .filter_map(|(index, (text, _))| {
                task.rfind(text.as_str()).map(|at| (index, at + text.len()))
            })
            .max_by_key(|(_, end)| *end)
            .map(|(index, _)| index)
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
            estimated: false,
        }),
        finish_reason: Some("tool_calls".into()),
        response_id: None,
        model: None,
        reasoning: Vec::new(),
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
            estimated: false,
        }),
        finish_reason: Some("stop".into()),
        response_id: None,
        model: None,
        reasoning: Vec::new(),
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
        let route = self.route_for(&request);
        let mut state = self.state.lock().map_err(|_| LlmError::MalformedResponse {
            message: "model state poisoned".into(),
        })?;
        let (index, responses) = match route {
            Some(route) => {
                if state.route_next.len() <= route {
                    state.route_next.resize(route + 1, 0);
                    state.route_tokens.resize(route + 1, Vec::new());
                }
                state.route_tokens[route].push(tokens);
                let index = state.route_next[route];
                state.route_next[route] += 1;
                let responses = self
                    .routes
                    .get(route)
                    .map_or(&[][..], |(_, r)| r.as_slice());
                (index, responses)
            }
            None => {
                state.prompt_tokens.push(tokens);
                if self.measure {
                    state.last_request = Some(request);
                }
                let index = state.next;
                state.next += 1;
                (index, self.responses.as_slice())
            }
        };
        responses
            .get(index)
            .cloned()
            .ok_or(LlmError::ScriptExhausted {
                served: responses.len(),
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

/// A read-only tool that adds two integers: the trivial tool of the LangGraph peer's
/// trajectory, whose calls differ from turn to turn (`add(a: i, b: 1)`).
pub struct AddTool;

#[async_trait]
impl Tool for AddTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "add".into(),
            description: "Add two integers.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let a = args.get("a").and_then(Value::as_i64).unwrap_or(0);
        let b = args.get("b").and_then(Value::as_i64).unwrap_or(0);
        Ok(ToolOutput::text(a.saturating_add(b).to_string()))
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

/// The branches the long task explores.
pub const BRANCHES: [&str; 2] = [
    "Approach A: index the records by key before checking them",
    "Approach B: check the records in one ordered scan",
];

/// The long task of the context-economy measurement: the main line's responses and, for each
/// of [`BRANCHES`], the responses of its explore branch.
pub struct LongTask {
    /// The main line's responses, in order.
    pub main: Vec<ChatResponse>,
    /// Each branch's text (its route) and responses.
    pub branches: Vec<(String, Vec<ChatResponse>)>,
    /// The summary of every goal that finishes (completed or abandoned), in order.
    pub summaries: Vec<String>,
}

impl LongTask {
    /// A measuring model that plays this task, its branches included.
    pub fn model(&self, context_window: usize) -> ListModel {
        self.branches.iter().fold(
            ListModel::new(self.main.clone(), context_window, true),
            |model, (text, responses)| model.with_route(text.clone(), responses.clone()),
        )
    }
}

/// The long task of the context-economy measurement: `goals` goals, each with `calls` calls of
/// `emit`, finished with a summary. Goal 3 is abandoned halfway and replaced by a new goal done
/// last; halfway through goal `goals / 2` (the next one if that is goal 3) the model explores
/// [`BRANCHES`], each branch making a few `emit` calls of its own before it answers.
pub fn long_task(goals: usize, calls: usize) -> LongTask {
    let mut out = Vec::new();
    let mut summaries = Vec::new();
    let mut id = 0;
    let mut next = |name: &str, args: Value| {
        id += 1;
        call(id, name, args)
    };
    let abandoned = 3;
    let explored = match (goals / 2).max(1) {
        g if g == abandoned => g + 1,
        g => g,
    };
    let names: Vec<String> = (1..=goals).map(|g| format!("Part {g}")).collect();
    out.push(next("goal", json!({"add": names.join(", ")})));
    let mut emitted = 0u64;
    let mut number = 1;
    for goal in 1..=goals {
        out.push(next("goal", json!({"focus": number.to_string()})));
        let abandon = goal == abandoned;
        let work = if abandon { calls / 2 } else { calls };
        for i in 0..work {
            if goal == explored && i == work / 2 {
                out.push(next("explore", json!({"branches": BRANCHES})));
            }
            emitted += 1;
            out.push(next("emit", json!({"n": emitted})));
        }
        if abandon {
            // The abandoned goal leaves the numbering; its replacement takes the last place.
            let reason = "this approach does not scale";
            summaries.push(reason.to_owned());
            out.push(next(
                "goal",
                json!({"abandon": reason, "add": "Part 3 again"}),
            ));
            continue;
        }
        let summary = format!("part {goal} finished: records {emitted} checked");
        summaries.push(summary.clone());
        out.push(next("goal", json!({"done": summary})));
        number += 1;
    }
    // The replacement of the abandoned goal is the last visible goal.
    out.push(next("goal", json!({"focus": number.to_string()})));
    for _ in 0..calls {
        emitted += 1;
        out.push(next("emit", json!({"n": emitted})));
    }
    let summary = "part 3 redone".to_owned();
    summaries.push(summary.clone());
    out.push(next("goal", json!({"done": summary})));
    out.push(answer("All parts are done."));

    let branch_calls = (calls / 4).clamp(1, 5);
    let branches = BRANCHES
        .iter()
        .enumerate()
        .map(|(b, text)| {
            let mut responses: Vec<ChatResponse> = (0..branch_calls)
                .map(|i| {
                    let n = 1_000_000 * (b as u64 + 1) + i as u64;
                    call(i + 1, "emit", json!({ "n": n }))
                })
                .collect();
            responses.push(answer(&format!(
                "{} works: {branch_calls} record blocks checked, no conflict found.",
                text.split(':').next().unwrap_or(text)
            )));
            ((*text).to_owned(), responses)
        })
        .collect();
    LongTask {
        main: out,
        branches,
        summaries,
    }
}

/// A shared handle to a model, as the runner takes it.
pub fn shared(model: ListModel) -> Arc<ListModel> {
    Arc::new(model)
}
