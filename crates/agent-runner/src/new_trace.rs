//! A new task's trace: created with the run's model settings and limits, its task the first
//! user message, once the `UserPromptSubmit` hooks accepted it.

use agent_execution::ids::new_trace_id;
use agent_execution::message::{NewMessage, UserInput};
use agent_execution::trace::{ModelSettings, NewTrace};

use crate::agent::Agent;
use crate::agents::DEFAULT;
use crate::error::RunError;
use crate::record::check_workspace;

/// Creates the trace for a task and records the task as its first user message.
pub(crate) async fn create_trace(
    agent: &Agent,
    input: UserInput<'_>,
    trace_id: Option<&str>,
) -> Result<String, RunError> {
    check_workspace(&agent.spec)?;
    let (task, images) = (input.text, crate::record::pictures(&agent.spec, input)?);
    let store = agent.store();
    let root = &agent.engine.root;
    let settings = ModelSettings {
        provider: root.provider.map(|kind| kind.name().to_owned()),
        model: Some(agent.spec.model.clone()),
        base_url: root.base_url.clone(),
        context_window: agent.spec.context_window.map(|window| window as u64),
        max_tokens: agent.spec.max_tokens,
    };
    let mut new = NewTrace::agent(task)
        .with_model(&agent.spec.model)
        .with_limits(agent.spec.limits.stored())
        .with_model_settings(settings);
    let id = trace_id.map_or_else(new_trace_id, str::to_owned);
    let refused = agent.hooks(&id).prompt(task).await;
    refused.map_err(RunError::Refused)?;
    new = new.with_id(id);
    if let Some(profile) = agent.spec.lineage.last().filter(|a| *a != DEFAULT) {
        new = new.with_agent_type(profile);
    }
    let trace = store.create_trace(new).await?;
    let mut first = NewMessage::user(task);
    agent_execution::meta::set_images(&mut first.metadata, &images);
    store.add_message(&trace.trace_id, first).await?;
    Ok(trace.trace_id)
}
