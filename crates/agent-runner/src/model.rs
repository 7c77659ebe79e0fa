//! Calling the model: the request an agent sends, the context budget of its model, the call
//! bounded by its timeout and the run's cancellation, streamed so that its text reaches watchers
//! as live deltas while it is generated, and the usage of an answer.

use std::sync::Arc;

use agent_execution::message::Message;
use agent_execution::{DeltaKind, EventBus, LiveDelta, StoreError, TraceStore};
use agent_llm::{
    ChatEvent, ChatMessage, ChatRequest, ChatResponse, LlmClient, LlmError, ResponseCollector,
    TimeoutKind, ToolSpec, Usage,
};
use agent_tools::ToolRegistry;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::compaction::ContextBudget;
use crate::error::StepError;
use crate::spec::AgentSpec;

/// The metadata key of the token counts of an assistant message
/// (`{prompt_tokens, completion_tokens, cached_tokens, estimated?}`): what its provider reported,
/// or the estimate of the whole request and the answer, with `estimated: true`, when it
/// reported none.
pub const USAGE_KEY: &str = agent_execution::meta::USAGE;

/// The context budget of the agent's model for requests that carry `tools`: their specs count
/// in every estimate of a request, and the answer's `max_tokens` is kept free.
pub(crate) fn budget_for(
    spec: &AgentSpec,
    llm: &dyn LlmClient,
    tools: &[ToolSpec],
) -> ContextBudget {
    let window = spec
        .context_window
        .unwrap_or_else(|| llm.model_info(&spec.model).context_window);
    let mut budget = ContextBudget::for_window(window);
    budget.request_tokens = agent_llm::estimate_tools_tokens(tools);
    budget.answer_tokens = spec.max_tokens.map_or(0, |max| max as usize);
    budget
}

/// The tool specs a run's last step sent, with their estimated tokens. The specs are the same
/// from step to step, and building them and counting their tokens again was a large share of a
/// step's own time. A registry whose every definition is fixed
/// ([`ToolRegistry::definitions_are_fixed`]) is asked once per run, and each step's request
/// shares the same list; otherwise the specs are built at every step and compared with the last
/// step's, so a definition that changed is counted again.
#[derive(Default)]
pub(crate) struct ToolsMemo {
    specs: Arc<Vec<ToolSpec>>,
    tokens: Option<usize>,
    /// Whether `specs` came from a registry whose definitions are fixed.
    fixed: bool,
}

impl ToolsMemo {
    /// The specs of `tools` and the context budget of a request that carries them, as
    /// [`tool_specs`] and [`budget_for`] give them. `tools` is the same registry at every step
    /// of a run.
    pub(crate) fn budget(
        &mut self,
        spec: &AgentSpec,
        llm: &dyn LlmClient,
        tools: &ToolRegistry,
    ) -> (Arc<Vec<ToolSpec>>, ContextBudget) {
        let tokens = match self.tokens {
            Some(tokens) if self.fixed => tokens,
            known => {
                self.fixed = tools.definitions_are_fixed();
                let specs = tool_specs(tools);
                match known {
                    Some(tokens) if *self.specs == specs => tokens,
                    _ => {
                        let tokens = agent_llm::estimate_tools_tokens(&specs);
                        self.specs = Arc::new(specs);
                        self.tokens = Some(tokens);
                        tokens
                    }
                }
            }
        };
        let mut budget = budget_for(spec, llm, &[]);
        budget.request_tokens = tokens;
        (self.specs.clone(), budget)
    }

    /// The specs of the last step.
    pub(crate) fn specs(&self) -> Arc<Vec<ToolSpec>> {
        self.specs.clone()
    }
}

/// The specs of the tools of a registry, as the model is told about them.
pub(crate) fn tool_specs(tools: &ToolRegistry) -> Vec<ToolSpec> {
    tools
        .definitions()
        .into_iter()
        .map(|d| ToolSpec {
            name: d.name,
            description: d.description,
            parameters: d.parameters,
        })
        .collect()
}

/// A request of the agent to `model` with `messages` and `tools`.
pub(crate) fn request(
    spec: &AgentSpec,
    model: &str,
    messages: impl Into<Arc<Vec<ChatMessage>>>,
    tools: impl Into<Arc<Vec<ToolSpec>>>,
) -> ChatRequest {
    let mut request = ChatRequest::new(model, messages);
    request.tools = tools.into();
    request.temperature = spec.temperature;
    request.max_tokens = spec.max_tokens;
    request.reasoning_effort = spec
        .reasoning_effort
        .map(|effort| effort.as_str().to_owned());
    request.thinking_budget = spec.thinking_budget;
    request
}

/// Where the pieces of an answer go while it streams: the trace's live feed, tied to the goal
/// the answer will be recorded under. The sink keeps the text of the call going on, so that
/// what arrived before a cancellation can be recorded.
pub(crate) struct DeltaSink<'a> {
    bus: &'a EventBus,
    trace_id: &'a str,
    goal_id: Option<&'a str>,
    /// What the answer's text is published as: the answer's, or the closing report's.
    text: DeltaKind,
    /// The text of the current call so far.
    arrived: std::sync::Mutex<String>,
}

impl<'a> DeltaSink<'a> {
    /// A sink for the text of an answer tied to `goal_id`.
    pub(crate) fn answer(bus: &'a EventBus, trace_id: &'a str, goal_id: Option<&'a str>) -> Self {
        Self {
            bus,
            trace_id,
            goal_id,
            text: DeltaKind::Text,
            arrived: std::sync::Mutex::default(),
        }
    }

    /// A sink for the text of the closing report.
    pub(crate) fn report(bus: &'a EventBus, trace_id: &'a str) -> Self {
        Self {
            text: DeltaKind::Report,
            ..Self::answer(bus, trace_id, None)
        }
    }

    /// The text of the last call, as far as it arrived.
    pub(crate) fn arrived(&self) -> String {
        self.arrived
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn start(&self) {
        self.arrived
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Publishes the piece of text or reasoning `event` carries, if any.
    fn publish(&self, event: &ChatEvent) {
        let (kind, delta) = match event {
            ChatEvent::Text(text) => {
                self.arrived
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push_str(text);
                (self.text, text)
            }
            ChatEvent::ReasoningText { delta, .. } => (DeltaKind::Reasoning, delta),
            ChatEvent::ReasoningPreview(text) => (DeltaKind::Reasoning, text),
            _ => return,
        };
        if delta.is_empty() {
            return;
        }
        self.bus.publish_delta(LiveDelta {
            trace_id: self.trace_id.to_owned(),
            goal_id: self.goal_id.map(str::to_owned),
            kind,
            delta: delta.clone(),
        });
    }
}

/// Streams the answer to `request`, publishing its pieces on `sink` if any, and collects it.
async fn stream(
    llm: &dyn LlmClient,
    request: ChatRequest,
    sink: Option<&DeltaSink<'_>>,
) -> Result<ChatResponse, LlmError> {
    if let Some(sink) = sink {
        sink.start();
    }
    let mut events = llm.stream(request).await?;
    let mut collector = ResponseCollector::new();
    while let Some(event) = events.next().await {
        let event = event?;
        if let Some(sink) = sink {
            sink.publish(&event);
        }
        collector.push(event);
    }
    collector.finish()
}

/// Calls the model, streaming its answer to `sink` (none for calls whose text is not the
/// agent's, as a summary's); the whole call is bounded by the agent's
/// request timeout and stopped by the run's cancellation.
pub(crate) async fn call(
    llm: &dyn LlmClient,
    spec: &AgentSpec,
    request: ChatRequest,
    sink: Option<&DeltaSink<'_>>,
    cancel: &CancellationToken,
) -> Result<ChatResponse, StepError> {
    let timeout = spec.limits.llm_timeout;
    tokio::select! {
        result = tokio::time::timeout(timeout, stream(llm, request, sink)) => match result {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(error)) => Err(StepError::Llm(error)),
            Err(_) => Err(StepError::Llm(LlmError::Timeout {
                kind: TimeoutKind::Request,
                after: timeout,
            })),
        },
        () = cancel.cancelled() => Err(StepError::Cancelled),
    }
}

/// What an answer used: the provider's count, or an estimate (`estimated_prompt` for the prompt)
/// when it reported none.
pub(crate) fn usage_of(response: &ChatResponse, estimated_prompt: usize) -> Usage {
    response.usage.unwrap_or_else(|| {
        let mut completion = response
            .text
            .as_deref()
            .map_or(0, agent_llm::estimate_tokens);
        completion += response
            .tool_calls
            .iter()
            .map(|c| agent_llm::estimate_tokens(&c.name) + agent_llm::estimate_tokens(&c.arguments))
            .sum::<usize>();
        Usage::estimate(estimated_prompt as u64, completion as u64)
    })
}

/// True when the token counts recorded on `message` are the agent's estimate (its provider
/// reported none), so that what shows them can say so.
pub fn usage_is_estimated(message: &Message) -> bool {
    message
        .metadata
        .get(USAGE_KEY)
        .and_then(|usage| usage.get("estimated"))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// True when any model call recorded in the trace has estimated token counts: its totals are
/// then estimates, in part or whole.
pub async fn tokens_estimated(store: &dyn TraceStore, trace_id: &str) -> Result<bool, StoreError> {
    let messages = store.get_trace_messages_shared(trace_id).await?;
    Ok(messages.iter().any(|message| usage_is_estimated(message)))
}
