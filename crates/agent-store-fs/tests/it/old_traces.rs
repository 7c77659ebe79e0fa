//! Trace folders written before the typed message content and the crate split load unchanged:
//! `fixtures/demo-0.1.0` is the trace of `agent demo` as that version wrote it (a main trace
//! with an abandoned goal and two explore branches).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_execution::{Content, Role, TraceFilter, TraceStatus, TraceStore};
use agent_store_fs::FileSystemTraceStore;
use agent_test_support::conformance::assert_consistent;
use serde_json::Value;

const MAIN: &str = "c6b9176b-e1f0-461a-9020-45c874bc95ac";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/demo-0.1.0")
}

/// Every file of a folder, by relative path, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().is_some_and(|n| n != ".lock") {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    files
}

fn copy_dir(from: &Path, to: &Path) {
    for (relative, bytes) in snapshot(from) {
        let path = to.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

#[tokio::test]
async fn a_trace_folder_of_an_earlier_version_loads_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let before = snapshot(dir.path());
    assert!(before.len() > 50, "the fixture has {} files", before.len());

    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let traces = store.list_traces(&TraceFilter::default()).await.unwrap();
    assert_eq!(traces.len(), 3);
    let main = store.get_trace(MAIN).await.unwrap().unwrap();
    assert_eq!(main.status, TraceStatus::Completed);
    assert_eq!(store.get_sub_traces(MAIN).await.unwrap().len(), 2);

    let mut calls = 0;
    for trace in &traces {
        let id = &trace.trace_id;
        assert_consistent(&store, id).await;
        let tree = store.get_goal_tree(id).await.unwrap().unwrap();
        if trace.parent_trace_id.is_none() {
            assert!(
                tree.goals().len() >= 4,
                "{id} has {} goals",
                tree.goals().len()
            );
        }
        let messages = store.get_trace_messages(id).await.unwrap();
        assert_eq!(messages.len() as u64, trace.total_messages);
        for message in &messages {
            // The typed content writes back exactly the JSON that was stored.
            let file = dir
                .path()
                .join(id)
                .join("messages")
                .join(format!("{}.json", message.message_id));
            let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            assert_eq!(serde_json::to_value(message).unwrap(), stored, "{file:?}");
            match (&message.role, &message.content) {
                (Role::Assistant, Content::Assistant(turn)) => {
                    let wire = stored["content"]["tool_calls"].as_array().unwrap();
                    assert_eq!(turn.tool_calls.len(), wire.len());
                    for (call, raw) in turn.tool_calls.iter().zip(wire) {
                        assert_eq!(call.id, raw["id"].as_str().unwrap());
                        assert_eq!(call.arguments, raw["arguments"].as_str().unwrap());
                        calls += 1;
                    }
                }
                (Role::Tool, Content::ToolResult(result)) => {
                    assert!(!result.is_error, "no stored tool message had is_error");
                    assert_eq!(result.output, stored["content"].as_str().unwrap());
                }
                (Role::User | Role::System, Content::Text(text)) => {
                    assert_eq!(text, stored["content"].as_str().unwrap());
                }
                (role, content) => panic!("{role:?} message read as {content:?}"),
            }
        }
    }
    assert!(calls > 20, "only {calls} tool calls were read");
    drop(store);
    assert_eq!(snapshot(dir.path()), before, "reading changed the folder");
}
