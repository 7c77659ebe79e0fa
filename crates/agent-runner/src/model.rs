//! Calling the model: the request an agent sends, the context budget of its model, the call
//! bounded by its timeout and the run's cancellation, streamed so that its text reaches watchers
//! as live deltas while it is generated, and the usage of an answer.

use std::sync::Arc;

use agent_execution::DeltaSink;
use agent_llm::{
    ChatMessage, ChatRequest, ChatResponse, ContextWindow, LlmClient, LlmError, ResponseCollector,
    TimeoutKind, ToolSpec,
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

/// The context budget of requests that carry `tools` in `window` (the agent's window is
/// [`window::current`](crate::window::current)): their specs count in every estimate of a
/// request, and the answer's `max_tokens` is kept free.
pub(crate) fn budget_in(
    spec: &AgentSpec,
    window: ContextWindow,
    tools: &[ToolSpec],
) -> ContextBudget {
    let mut budget = ContextBudget::for_model(window.tokens, &spec.model);
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
    /// [`tool_specs`] and [`budget_in`] give them. `tools` is the same registry at every step
    /// of a run.
    pub(crate) fn budget(
        &mut self,
        spec: &AgentSpec,
        window: ContextWindow,
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
        let mut budget = budget_in(spec, window, &[]);
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
    if !spec.vision.takes_images(model) && request.messages.iter().any(|m| !m.images().is_empty()) {
        agent_llm::leave_out_images(Arc::make_mut(&mut request.messages).as_mut_slice(), model);
    }
    request.tools = tools.into();
    request.temperature = spec.temperature;
    request.max_tokens = spec.max_tokens;
    request.reasoning_effort = spec
        .reasoning_effort
        .map(|effort| effort.as_str().to_owned());
    request.thinking_budget = spec.thinking_budget;
    request
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
