//! Calling the model: the request an agent sends, the context budget of its model, the call
//! bounded by its timeout and the run's cancellation, and the usage of an answer.

use agent_llm::{
    ChatMessage, ChatRequest, ChatResponse, LlmClient, LlmError, TimeoutKind, ToolSpec, Usage,
};
use agent_tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

use crate::compaction::ContextBudget;
use crate::error::StepError;
use crate::spec::AgentSpec;

/// The context budget of the agent's model.
pub(crate) fn budget_for(spec: &AgentSpec, llm: &dyn LlmClient) -> ContextBudget {
    let window = spec
        .context_window
        .unwrap_or_else(|| llm.model_info(&spec.model).context_window);
    ContextBudget::for_window(window)
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
    messages: Vec<ChatMessage>,
    tools: Vec<ToolSpec>,
) -> ChatRequest {
    let mut request = ChatRequest::new(model, messages);
    request.tools = tools;
    request.temperature = spec.temperature;
    request.max_tokens = spec.max_tokens;
    request.reasoning_effort = spec.reasoning_effort.clone();
    request.thinking_budget = spec.thinking_budget;
    request
}

/// Calls the model, bounded by the agent's request timeout and the run's cancellation.
pub(crate) async fn call(
    llm: &dyn LlmClient,
    spec: &AgentSpec,
    request: ChatRequest,
    cancel: &CancellationToken,
) -> Result<ChatResponse, StepError> {
    let timeout = spec.limits.llm_timeout;
    tokio::select! {
        result = tokio::time::timeout(timeout, llm.complete(request)) => match result {
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
        Usage {
            prompt_tokens: estimated_prompt as u64,
            completion_tokens: completion as u64,
            cached_tokens: 0,
        }
    })
}
