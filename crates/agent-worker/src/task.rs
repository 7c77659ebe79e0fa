//! The task of a queued run as the factory expands it (a custom command, `/name args`, becomes
//! its prompt), done where the run executes: a worker's workspace and command files are its
//! own, and the server that queued the run may have neither. The first user message of the
//! trace takes the expansion, with the words as typed kept in its metadata
//! ([`EXPANDED_FROM`]), which also keeps a later attempt from expanding it twice.

use agent_execution::message::MessageUpdate;
use agent_execution::store::WriteOp;
use agent_execution::{Content, Role, TraceStore};
use agent_runner::RunError;
use serde_json::{Map, Value};

use crate::factory::RunnerFactory;

/// The metadata key of a task's first message that holds the words as typed, once expanded.
pub const EXPANDED_FROM: &str = "expanded_from";

/// Expands the first user message of `trace_id` with `factory` for a run in `workspace`; a
/// task the factory refuses refuses the run.
pub(crate) async fn expand(
    factory: &dyn RunnerFactory,
    store: &dyn TraceStore,
    trace_id: &str,
    workspace: &std::path::Path,
) -> Result<(), RunError> {
    let messages = store.get_trace_messages_shared(trace_id).await?;
    let Some(first) = messages.iter().find(|message| message.role == Role::User) else {
        return Ok(());
    };
    if first.metadata.contains_key(EXPANDED_FROM) {
        return Ok(());
    }
    let typed = first.content.text();
    let expanded = factory
        .task(typed, workspace)
        .map_err(|error| RunError::Refused(error.to_string()))?;
    if expanded == typed {
        return Ok(());
    }
    let mut metadata = Map::new();
    metadata.insert(EXPANDED_FROM.to_owned(), Value::from(typed));
    let update = MessageUpdate {
        content: Some(Content::Text(expanded)),
        description: None,
        metadata,
    };
    let op = WriteOp::UpdateMessage {
        message_id: first.message_id.clone(),
        update,
    };
    store.batch(trace_id, vec![op]).await?;
    Ok(())
}
