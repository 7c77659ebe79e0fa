//! Recording what the loop did: one commit per batch of writes, the message of a tool call's
//! answer, and the workspace check before a run.

use std::sync::Arc;

use agent_execution::message::{Message, NewMessage, UserInput};
use agent_execution::meta;
use agent_execution::store::{TraceStore, WriteOp, WriteOutput};
use agent_llm::ToolCall;
use agent_tools::ToolResult;
use serde_json::{Map, Value};

use crate::error::{RunError, StepError};
use crate::spec::AgentSpec;

/// What is recorded for one tool call: its result and the tool message's metadata.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The result the model sees.
    pub(crate) result: ToolResult,
    /// Metadata of the tool message (sub-trace ids and statistics, for sub-agent calls).
    pub(crate) metadata: Map<String, Value>,
    /// How long the call took, approval wait included.
    pub(crate) duration_ms: Option<u64>,
    /// The tokens and cost of a model call the answer took (a goal check's judge, a provider's
    /// web search): recorded on the tool message, so the trace's totals count them.
    pub(crate) usage: Option<(u64, f64)>,
}

impl From<ToolResult> for Answer {
    fn from(mut result: ToolResult) -> Self {
        let mut metadata = std::mem::take(&mut result.metadata);
        let usage = agent_tools::take_usage(&mut metadata);
        Self {
            metadata,
            result,
            duration_ms: None,
            usage,
        }
    }
}

/// The write that records a tool call's answer, tied to `goal_id`.
pub(crate) fn tool_message(call: &ToolCall, answer: Answer, goal_id: Option<String>) -> WriteOp {
    let content = answer.result.content;
    let tokens = agent_llm::estimate_tokens(&content) as u64;
    let mut message = if answer.result.is_error {
        NewMessage::tool_error(call.id.clone(), call.name.clone(), content)
    } else {
        NewMessage::tool(call.id.clone(), call.name.clone(), content)
    };
    message.goal_id = goal_id;
    let (used, cost) = answer.usage.unwrap_or_default();
    message.tokens = Some(tokens + used);
    message.cost = (cost > 0.0).then_some(cost);
    message.metadata = answer.metadata;
    let images = meta::pictures(answer.result.images.iter().map(|i| (&i.data[..], None)));
    meta::set_images(&mut message.metadata, &images);
    if let Some(Ok(outcome)) = answer.result.outcome.map(serde_json::to_value) {
        message.metadata.insert(meta::OUTCOME.to_owned(), outcome);
    }
    message.duration_ms = answer.duration_ms;
    WriteOp::AddMessage(message)
}

/// `images` after the pictures `text` mentions in the workspace (`@shot.png`, read as
/// `read_file` reads), for `spec`'s model: refused when it takes none, or a mention cannot be.
pub(crate) fn pictures(
    spec: &AgentSpec,
    UserInput { text, images }: UserInput<'_>,
) -> Result<Vec<agent_llm::ChatImage>, RunError> {
    let found =
        agent_tools::mentioned_pictures(text, &spec.workspace).map_err(RunError::Picture)?;
    let mut all = meta::pictures(
        found
            .iter()
            .map(|(name, i)| (&i.data[..], Some(name.as_str()))),
    );
    all.extend_from_slice(images);
    spec.vision
        .check(&spec.model, &all)
        .map_err(RunError::NoVision)?;
    Ok(all)
}

/// Records a batch of writes in one commit and returns the messages it stored.
pub(crate) async fn record(
    store: &dyn TraceStore,
    trace_id: &str,
    ops: Vec<WriteOp>,
) -> Result<Vec<Arc<Message>>, StepError> {
    let outputs = store.batch(trace_id, ops).await?;
    Ok(outputs
        .into_iter()
        .filter_map(|output| match output {
            WriteOutput::Message(message) => Some(Arc::new(message)),
            _ => None,
        })
        .collect())
}

/// Fails unless the agent's workspace is a folder.
pub(crate) fn check_workspace(spec: &AgentSpec) -> Result<(), RunError> {
    let path = &spec.workspace;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(RunError::Workspace {
            path: path.clone(),
            message: "not a folder".into(),
        }),
        Err(e) => Err(RunError::Workspace {
            path: path.clone(),
            message: e.to_string(),
        }),
    }
}
