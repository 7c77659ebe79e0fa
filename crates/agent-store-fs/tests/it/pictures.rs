//! Pictures are kept once per trace, by hash, in `pictures/`: the log names them by id, and every
//! read (messages, events, a store opened afresh) gives them back whole.

use std::fs;

use agent_execution::message::ChatImage;
use agent_execution::{EventKind, NewMessage, NewTrace, TraceStore, meta};
use agent_store_fs::{Durability, FileSystemTraceStore};
use base64::Engine;

const DOT: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";

/// A 2×1 PNG, another picture than [`DOT`].
fn png() -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwHwQZGBgAQPEH+ZxH6n4AAAAASUVORK5CYII=")
        .unwrap()
}

fn with_pictures(text: &str, pictures: &[ChatImage]) -> NewMessage {
    let mut message = NewMessage::user(text);
    meta::set_images(&mut message.metadata, pictures);
    message
}

#[tokio::test]
async fn a_picture_sent_twice_is_stored_once_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSystemTraceStore::open(dir.path())
        .unwrap()
        .with_durability(Durability::Fsync);
    let id = store
        .create_trace(NewTrace::agent("look"))
        .await
        .unwrap()
        .trace_id;
    let dot = ChatImage::from_bytes(DOT, Some("dot.gif")).unwrap();
    let png = ChatImage::from_bytes(&png(), Some("two.png")).unwrap();
    for (text, pictures) in [
        ("first", vec![dot.clone()]),
        ("again", vec![dot.clone(), png.clone()]),
    ] {
        store
            .add_message(&id, with_pictures(text, &pictures))
            .await
            .unwrap();
    }

    let folder = dir.path().join(&id);
    let log = fs::read_to_string(folder.join("events.jsonl")).unwrap();
    for picture in [&dot, &png] {
        let data = picture.data.as_deref().unwrap();
        assert!(
            !log.contains(data),
            "the log names the picture, not its bytes"
        );
        assert!(log.contains(&picture.id));
    }
    let mut files: Vec<_> = fs::read_dir(folder.join("pictures"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut ids = vec![dot.id.clone(), png.id.clone()];
    ids.sort();
    assert_eq!(files, ids, "one file per picture, however often it is sent");
    assert_eq!(
        fs::read(folder.join("pictures").join(&dot.id)).unwrap(),
        DOT
    );

    let expect = [vec![dot.clone()], vec![dot.clone(), png.clone()]];
    let check = |messages: Vec<agent_execution::Message>| {
        let read: Vec<_> = messages
            .iter()
            .filter(|m| m.metadata.contains_key(meta::IMAGES))
            .map(|m| meta::images(&m.metadata))
            .collect();
        assert_eq!(read, expect);
    };
    check(store.get_trace_messages(&id).await.unwrap());
    let events = store.get_events(&id, 0).await.unwrap();
    check(
        events
            .into_iter()
            .filter_map(|event| match event.kind {
                EventKind::MessageAdded { message, .. } => Some(message),
                _ => None,
            })
            .collect(),
    );
    drop(store);
    let reopened = FileSystemTraceStore::open(dir.path()).unwrap();
    check(reopened.get_trace_messages(&id).await.unwrap());

    // A lost picture file loses the picture's bytes, not the message.
    fs::remove_file(folder.join("pictures").join(&png.id)).unwrap();
    let fresh = FileSystemTraceStore::open(dir.path()).unwrap();
    let messages = fresh.get_trace_messages(&id).await.unwrap();
    let last = meta::images(&messages.last().unwrap().metadata);
    assert_eq!(last[0], dot);
    assert_eq!(
        (last[1].id.as_str(), last[1].data.as_deref()),
        (png.id.as_str(), None)
    );
}
