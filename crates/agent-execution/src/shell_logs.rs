//! What a run's background shells printed, kept with the trace when the run ends. A shell is
//! told of on the tool messages that started, read or stopped it (metadata `shells`, [`SHELLS`]: a list of
//! statuses, `{id, command, state, ...}`); at the run's end the message that started each shell
//! is updated with the shell's last status and everything it printed (`shell_logs`, [`SHELL_LOGS`]: `{id:
//! text}`), so the trace keeps output the model never read. The model's context is the messages'
//! text, which does not change.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::meta::{SHELL_LOGS, SHELLS};
use crate::{Message, MessageUpdate, StoreError, TraceStore};

/// Updates the message of `messages` (a trace's, in order) that first told of each shell with
/// its last status and its output (each log a `(status, output)`: `agent_tools`' `ShellLog`
/// converts); a shell no message tells of is left out. Messages are
/// updated one write each, so a store error leaves the others kept.
pub async fn keep<L: Into<(Value, String)>>(
    store: &dyn TraceStore,
    messages: &[Arc<Message>],
    logs: impl IntoIterator<Item = L>,
) -> Result<(), StoreError> {
    let logs: Vec<(Value, String)> = logs.into_iter().map(Into::into).collect();
    let mut updates: BTreeMap<&str, (Vec<Value>, Map<String, Value>)> = BTreeMap::new();
    for (status, output) in logs {
        let Some(id) = status.get("id").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let Some(message) = messages.iter().find(|m| tells_of(m, &id)) else {
            continue;
        };
        let (shells, kept) = updates.entry(&message.message_id).or_insert_with(|| {
            let shells = message.metadata.get(SHELLS).and_then(Value::as_array);
            let kept = message.metadata.get(SHELL_LOGS).and_then(Value::as_object);
            (
                shells.cloned().unwrap_or_default(),
                kept.cloned().unwrap_or_default(),
            )
        });
        for entry in shells.iter_mut() {
            if entry.get("id").and_then(Value::as_str) == Some(id.as_str()) {
                *entry = status.clone();
            }
        }
        kept.insert(id, Value::String(output));
    }
    for (message_id, (shells, kept)) in updates {
        let mut metadata = Map::new();
        metadata.insert(SHELLS.to_owned(), Value::Array(shells));
        metadata.insert(SHELL_LOGS.to_owned(), Value::Object(kept));
        let update = MessageUpdate {
            metadata,
            ..MessageUpdate::default()
        };
        store.update_message(message_id, update).await?;
    }
    Ok(())
}

/// True when the message's [`SHELLS`] name the shell `id`.
fn tells_of(message: &Message, id: &str) -> bool {
    let shells = message.metadata.get(SHELLS).and_then(Value::as_array);
    shells.is_some_and(|list| {
        list.iter()
            .any(|entry| entry.get("id").and_then(Value::as_str) == Some(id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InMemoryTraceStore, NewMessage, NewTrace};
    use serde_json::json;

    #[tokio::test]
    async fn the_starting_message_keeps_the_last_status_and_the_output() {
        let store = InMemoryTraceStore::new();
        let id = store
            .create_trace(NewTrace::agent("t"))
            .await
            .unwrap()
            .trace_id;
        let running = json!({"id": "sh-1", "command": "serve", "state": "running"});
        let mut started = NewMessage::tool("c1", "bash", "Started background shell sh-1");
        started.metadata.insert(SHELLS.into(), json!([running]));
        let mut read = NewMessage::tool("c2", "shell_output", "ready");
        read.metadata.insert(SHELLS.into(), json!([running]));
        for message in [started, read] {
            store.add_message(&id, message).await.unwrap();
        }
        let messages = store.get_trace_messages_shared(&id).await.unwrap();
        let killed = json!({"id": "sh-1", "command": "serve", "state": "killed", "signal": 15});
        let unknown = json!({"id": "sh-9", "state": "running"});
        let logs = vec![
            (killed.clone(), "ready\nlistening\n".to_owned()),
            (unknown, String::new()),
        ];
        keep(&store, &messages, logs).await.unwrap();
        let after = store.get_trace_messages(&id).await.unwrap();
        assert_eq!(after[0].metadata[SHELLS], json!([killed]));
        assert_eq!(
            after[0].metadata[SHELL_LOGS],
            json!({"sh-1": "ready\nlistening\n"})
        );
        assert_eq!(
            after[1].metadata[SHELLS],
            json!([running]),
            "only the starting one"
        );
        assert_eq!(after[0].content.text(), "Started background shell sh-1");
    }
}
