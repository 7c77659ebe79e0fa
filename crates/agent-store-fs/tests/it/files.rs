//! Filesystem-specific behaviour: torn and half-written tails of `events.jsonl`, damaged files,
//! ids that try to leave the base folder, the writer lock, and mirror files rebuilt from the log.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use agent_execution::{NewMessage, NewTrace, StoreError, TraceFilter, TraceStore};
use agent_store_fs::{Durability, FileSystemTraceStore};
use agent_test_support::conformance::assert_consistent;

fn open(base: &Path) -> Arc<FileSystemTraceStore> {
    Arc::new(
        FileSystemTraceStore::open(base)
            .unwrap()
            .with_durability(Durability::Buffered),
    )
}

/// Creates a trace with three messages and returns its id.
async fn trace_with_messages(store: &FileSystemTraceStore) -> String {
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    for step in 0..3 {
        store
            .add_message(&id, NewMessage::user(format!("m{step}")))
            .await
            .unwrap();
    }
    id
}

fn append(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

fn assert_every_line_parses(path: &Path) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<agent_execution::Event>(line).unwrap();
    }
}

#[tokio::test]
async fn a_torn_last_line_is_ignored_and_cut_before_the_next_append() {
    let base = tempfile::tempdir().unwrap();
    let store = open(base.path());
    let id = trace_with_messages(&store).await;
    drop(store);
    let log = base.path().join(&id).join("events.jsonl");
    append(&log, br#"{"event_id":5,"event":"message_added","mess"#);

    let store = open(base.path());
    assert_eq!(store.get_events(&id, 0).await.unwrap().len(), 4);
    assert_eq!(
        store.get_trace(&id).await.unwrap().unwrap().total_messages,
        3
    );
    let message = store
        .add_message(&id, NewMessage::user("after"))
        .await
        .unwrap();
    assert_eq!(message.sequence, 4);
    let events = store.get_events(&id, 0).await.unwrap();
    assert_eq!(events.last().unwrap().event_id, 5);
    assert_every_line_parses(&log);
    assert_consistent(&*store, &id).await;
}

#[tokio::test]
async fn a_commit_without_its_last_event_is_dropped_as_a_whole() {
    let base = tempfile::tempdir().unwrap();
    let store = open(base.path());
    let id = trace_with_messages(&store).await;
    drop(store);
    // The first event of a two-event commit, complete, without the second.
    let log = base.path().join(&id).join("events.jsonl");
    let text = fs::read_to_string(&log).unwrap();
    let last = text.lines().last().unwrap();
    let mut orphan: serde_json::Value = serde_json::from_str(last).unwrap();
    orphan["event_id"] = 5.into();
    orphan["message"]["sequence"] = 4.into();
    orphan["commit_continues"] = true.into();
    append(&log, format!("{orphan}\n").as_bytes());

    let store = open(base.path());
    assert_eq!(
        store.get_trace(&id).await.unwrap().unwrap().total_messages,
        3
    );
    store
        .add_message(&id, NewMessage::user("after"))
        .await
        .unwrap();
    assert_eq!(store.get_events(&id, 4).await.unwrap().len(), 1);
    assert_consistent(&*store, &id).await;
    assert_every_line_parses(&log);
}

#[tokio::test]
async fn a_corrupted_meta_json_is_named_and_other_traces_stay_listable() {
    let base = tempfile::tempdir().unwrap();
    let store = open(base.path());
    let broken = trace_with_messages(&store).await;
    let fine = trace_with_messages(&store).await;
    drop(store);
    let meta = base.path().join(&broken).join("meta.json");
    fs::write(&meta, "{ not json").unwrap();

    let store = open(base.path());
    match store.get_trace(&broken).await {
        Err(StoreError::Corrupt { path, detail }) => {
            assert_eq!(path, meta);
            assert!(detail.contains("remove this file"), "{detail}");
        }
        other => panic!("expected a corrupt meta.json, got {other:?}"),
    }
    let listed = store.list_traces(&TraceFilter::default()).await.unwrap();
    let ids: Vec<_> = listed.iter().map(|t| t.trace_id.as_str()).collect();
    assert_eq!(ids, [fine.as_str()]);
    assert_eq!(
        store
            .get_trace(&fine)
            .await
            .unwrap()
            .unwrap()
            .total_messages,
        3
    );
    drop(store);

    // Removing the damaged mirror lets the store rebuild it from events.jsonl.
    fs::remove_file(&meta).unwrap();
    let store = open(base.path());
    store
        .add_message(&broken, NewMessage::user("again"))
        .await
        .unwrap();
    store.flush().await.unwrap();
    let rebuilt: agent_execution::Trace =
        serde_json::from_slice(&fs::read(&meta).unwrap()).unwrap();
    assert_eq!(rebuilt.total_messages, 4);
}

#[tokio::test]
async fn a_corrupted_line_inside_the_log_is_named_with_its_line() {
    let base = tempfile::tempdir().unwrap();
    let store = open(base.path());
    let id = trace_with_messages(&store).await;
    drop(store);
    let log = base.path().join(&id).join("events.jsonl");
    let text = fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "garbage";
    fs::write(&log, lines.join("\n") + "\n").unwrap();
    let store = open(base.path());
    match store.get_events(&id, 0).await {
        Err(StoreError::Corrupt { path, detail }) => {
            assert_eq!(path, log);
            assert!(detail.starts_with("line 2:"), "{detail}");
        }
        other => panic!("expected a corrupt log, got {other:?}"),
    }
}

#[tokio::test]
async fn invalid_ids_never_touch_the_filesystem_outside_the_base() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().join("traces");
    let store = open(&base);
    for bad in ["../escape", "..", "a/../../escape", "/tmp/abs"] {
        let result = store.create_trace(NewTrace::agent("x").with_id(bad)).await;
        assert!(
            matches!(result, Err(StoreError::InvalidId { .. })),
            "{bad}: {result:?}"
        );
    }
    assert!(!root.path().join("escape").exists());
    let entries: Vec<_> = fs::read_dir(root.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "only the base folder exists");
}

#[tokio::test]
async fn a_second_writer_is_refused_and_readers_see_new_writes() {
    let base = tempfile::tempdir().unwrap();
    let writer = open(base.path());
    let id = trace_with_messages(&writer).await;
    let other = open(base.path());
    assert_eq!(
        other.get_trace(&id).await.unwrap().unwrap().total_messages,
        3
    );
    match other
        .add_message(&id, NewMessage::user("second writer"))
        .await
    {
        Err(StoreError::Locked { trace_id, path }) => {
            assert_eq!(trace_id, id);
            assert!(path.ends_with(".lock"));
        }
        result => panic!("expected Locked, got {result:?}"),
    }
    writer
        .add_message(&id, NewMessage::user("more"))
        .await
        .unwrap();
    assert_eq!(
        other.get_trace(&id).await.unwrap().unwrap().total_messages,
        4
    );
    assert_eq!(other.get_trace_messages(&id).await.unwrap().len(), 4);
    drop(writer);
    other
        .add_message(&id, NewMessage::user("now mine"))
        .await
        .unwrap();
    assert_consistent(&*other, &id).await;
}

#[tokio::test]
async fn missing_mirror_files_are_rebuilt_from_the_log() {
    let base = tempfile::tempdir().unwrap();
    let store = open(base.path());
    let id = trace_with_messages(&store).await;
    drop(store);
    let dir = base.path().join(&id);
    fs::remove_file(dir.join("goal.json")).unwrap();
    fs::remove_file(dir.join("messages").join(format!("{id}-0002.json"))).unwrap();
    let store = open(base.path());
    store
        .add_message(&id, NewMessage::user("m3"))
        .await
        .unwrap();
    // Message files trail the log until the store is flushed (or dropped).
    store.flush().await.unwrap();
    assert!(dir.join("goal.json").is_file());
    let names: Vec<_> = (1..=4)
        .map(|sequence| {
            dir.join("messages")
                .join(format!("{id}-{sequence:04}.json"))
        })
        .collect();
    for name in names {
        let message: agent_execution::Message =
            serde_json::from_slice(&fs::read(&name).unwrap()).unwrap();
        assert_eq!(
            name.file_stem().unwrap().to_string_lossy(),
            message.message_id
        );
    }
}

/// Makes `path` and everything under it read-only (or writable again).
fn set_read_only(path: &Path, read_only: bool) {
    use std::os::unix::fs::PermissionsExt;
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            set_read_only(&entry.unwrap().path(), read_only);
        }
    }
    let mode = match (path.is_dir(), read_only) {
        (true, true) => 0o555,
        (true, false) => 0o755,
        (false, true) => 0o444,
        (false, false) => 0o644,
    };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn a_trace_folder_this_process_may_not_write_is_still_read() {
    let base = tempfile::tempdir().unwrap();
    let store = open(base.path());
    let id = trace_with_messages(&store).await;
    drop(store);
    set_read_only(base.path(), true);
    // A privileged user (root in a container) writes whatever the permissions say: nothing to
    // check then (the agent-cli tests run the binary as another user for that case).
    let probe = fs::OpenOptions::new()
        .append(true)
        .open(base.path().join(&id).join("events.jsonl"));
    if probe.is_ok() {
        set_read_only(base.path(), false);
        eprintln!("skipped: this process writes read-only files (it is privileged)");
        return;
    }
    let store = open(base.path());
    let trace = store.get_trace(&id).await.unwrap().unwrap();
    assert_eq!(trace.total_messages, 3);
    assert_eq!(store.get_trace_messages(&id).await.unwrap().len(), 3);
    assert!(!store.get_events(&id, 0).await.unwrap().is_empty());
    let listed = store.list_traces(&TraceFilter::default()).await.unwrap();
    assert_eq!(listed.len(), 1);
    // Writing is what fails, as a permission error.
    let error = store
        .add_message(&id, NewMessage::user("more"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied),
        "{error:?}"
    );
    drop(store);
    set_read_only(base.path(), false);
}

#[tokio::test]
async fn a_reader_in_another_instance_needs_no_mirror_file() {
    let base = tempfile::tempdir().unwrap();
    let writer = open(base.path());
    let id = trace_with_messages(&writer).await;
    // Everything written first, so the flusher has nothing left to write while the files go.
    writer.flush().await.unwrap();
    // As if the writer's flusher had not written anything yet.
    let dir = base.path().join(&id);
    for entry in fs::read_dir(dir.join("messages")).unwrap() {
        fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let reader = open(base.path());
    let messages = reader.get_trace_messages(&id).await.unwrap();
    let texts: Vec<_> = messages.iter().map(|m| m.content.text()).collect();
    assert_eq!(texts, ["m0", "m1", "m2"]);
    assert_eq!(
        reader.get_message(&messages[1].message_id).await.unwrap(),
        Some(messages[1].clone())
    );
    assert_eq!(reader.writer_alive(&id).await.unwrap(), Some(true));
    drop(writer);
    assert_eq!(reader.writer_alive(&id).await.unwrap(), Some(false));
    // The next writer rebuilds the files.
    reader
        .add_message(&id, NewMessage::user("m3"))
        .await
        .unwrap();
    reader.flush().await.unwrap();
    assert_eq!(fs::read_dir(dir.join("messages")).unwrap().count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_fsync_trace_gets_its_message_files_once_it_is_quiet() {
    let base = tempfile::tempdir().unwrap();
    let store = FileSystemTraceStore::open(base.path()).unwrap();
    assert_eq!(store.durability(), Durability::Fsync);
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    let mut ids = Vec::new();
    for step in 0..5 {
        let message = store
            .add_message(&id, NewMessage::user(format!("step {step}")))
            .await
            .unwrap();
        ids.push(message.message_id);
    }
    // Neither flushed nor dropped: the flusher writes them once no commit came for a while.
    let messages = base.path().join(&id).join("messages");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ids
        .iter()
        .all(|id| messages.join(format!("{id}.json")).is_file())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the message files of a quiet trace were never written"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    drop(store);
}
