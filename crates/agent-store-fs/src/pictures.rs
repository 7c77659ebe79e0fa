//! Pictures kept once per trace, by hash: `pictures/<sha256>` holds a picture's bytes as they
//! were sent (a PNG is a PNG file), and the message lines of `events.jsonl` and the message files
//! name it by id only. A picture attached to several messages (a chat that sends the same
//! screenshot again, a resume) is written once.
//!
//! A commit writes its new pictures before its event lines, so a line never names a picture that
//! is not on disk (in `Fsync` mode each picture and the folder are synced first). Reads put the
//! bytes back, so a caller of the store sees the message as it was added. A picture whose file
//! was lost reads back without its bytes, and the model is told a picture could not be loaded
//! ([`ChatImage::missing_text`](agent_execution::message::ChatImage::missing_text)).

use std::fs;
use std::path::Path;

use agent_execution::message::ChatImage;
use agent_execution::{Event, EventKind, Message, StoreError, meta};
use base64::Engine;

/// The folder of a trace's pictures.
pub(crate) const PICTURES: &str = "pictures";

/// A picture a commit writes: its id (the SHA-256 of `bytes`) and its bytes.
#[derive(Debug)]
pub(crate) struct Picture {
    pub(crate) id: String,
    pub(crate) bytes: Vec<u8>,
}

/// Takes the bytes out of the message's pictures, leaving each entry's id, type and size, and
/// returns the pictures that were taken. A picture whose bytes do not hash to its id (or are not
/// a picture) keeps its bytes inline: it is stored as it came, never under a wrong name.
pub(crate) fn take(message: &mut Message) -> Vec<Picture> {
    let mut images = meta::images(&message.metadata);
    let mut taken = Vec::new();
    for image in &mut images {
        let Some(data) = image.data.as_deref() else {
            continue;
        };
        if !ChatImage::is_id(&image.id) {
            continue;
        }
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.trim()) else {
            continue;
        };
        if ChatImage::from_bytes(&bytes, None).is_ok_and(|checked| checked.id == image.id) {
            image.data = None;
            taken.push(Picture {
                id: image.id.clone(),
                bytes,
            });
        }
    }
    if !taken.is_empty() {
        meta::set_images(&mut message.metadata, &images);
    }
    taken
}

/// The event as it is written to the log: a message event's pictures without their bytes, which
/// are added to `pictures`; `None` when the event has no picture bytes to take.
pub(crate) fn without_pictures(event: &Event, pictures: &mut Vec<Picture>) -> Option<Event> {
    let (EventKind::MessageAdded { message, .. } | EventKind::MessageUpdated { message }) =
        &event.kind
    else {
        return None;
    };
    if !has_bytes(message) {
        return None;
    }
    let mut event = event.clone();
    let (EventKind::MessageAdded { message, .. } | EventKind::MessageUpdated { message }) =
        &mut event.kind
    else {
        return None;
    };
    let taken = take(message);
    if taken.is_empty() {
        return None;
    }
    pictures.extend(taken);
    Some(event)
}

/// True when some picture of the message carries its bytes.
fn has_bytes(message: &Message) -> bool {
    matches!(message.metadata.get(meta::IMAGES), Some(serde_json::Value::Array(list))
        if list.iter().any(|entry| entry.get("data").is_some()))
}

/// Writes the pictures a trace does not have yet, each through a temporary file and a rename;
/// `sync` makes each durable, and the folder, before the event lines that name them.
pub(crate) fn write(dir: &Path, pictures: &[Picture], sync: bool) -> Result<(), StoreError> {
    if pictures.is_empty() {
        return Ok(());
    }
    let folder = dir.join(PICTURES);
    fs::create_dir_all(&folder).map_err(|e| StoreError::io(&folder, e))?;
    let mut wrote = false;
    for picture in pictures {
        let path = folder.join(&picture.id);
        // A file already there is kept only when it is this picture: a crash of a store that
        // does not sync may have left it empty or cut short.
        if fs::read(&path).is_ok_and(|bytes| bytes == picture.bytes) {
            continue;
        }
        crate::files::write_replacing(&path, &picture.bytes, sync)?;
        wrote = true;
    }
    if sync && wrote {
        crate::files::sync_dir(&folder)?;
        crate::files::sync_dir(dir)?;
    }
    Ok(())
}

/// Puts the bytes of the message's pictures back from the trace's `pictures/` folder and
/// returns how many bytes that added; a picture whose file is missing, unreadable or not the
/// picture its id names (a torn write) stays without bytes.
pub(crate) fn fill(dir: &Path, message: &mut Message) -> u64 {
    let Some(serde_json::Value::Array(list)) = message.metadata.get(meta::IMAGES) else {
        return 0;
    };
    if !list.iter().any(|entry| entry.get("data").is_none()) {
        return 0;
    }
    let mut images = meta::images(&message.metadata);
    let mut added = 0;
    for image in &mut images {
        if image.data.is_some() || !ChatImage::is_id(&image.id) {
            continue;
        }
        let Ok(bytes) = fs::read(dir.join(PICTURES).join(&image.id)) else {
            continue;
        };
        if let Ok(checked) = ChatImage::from_bytes(&bytes, None)
            && checked.id == image.id
        {
            added += checked.data.as_deref().map_or(0, str::len) as u64;
            image.data = checked.data;
        }
    }
    meta::set_images(&mut message.metadata, &images);
    added
}

/// [`fill`] for a message event.
pub(crate) fn fill_event(dir: &Path, event: &mut Event) {
    if let EventKind::MessageAdded { message, .. } | EventKind::MessageUpdated { message } =
        &mut event.kind
    {
        let _ = fill(dir, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOT: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";

    fn with(images: &[ChatImage]) -> Message {
        let mut message: Message = serde_json::from_value(serde_json::json!({
            "message_id": "t-1", "trace_id": "t", "role": "user", "sequence": 1,
            "content": "look", "description": "look", "created_at": "2026-01-01T00:00:00Z"
        }))
        .unwrap();
        meta::set_images(&mut message.metadata, images);
        message
    }

    #[test]
    fn a_picture_goes_to_its_file_and_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let picture = ChatImage::from_bytes(DOT, Some("dot.gif")).unwrap();
        let mut message = with(std::slice::from_ref(&picture));
        let taken = take(&mut message);
        assert_eq!(taken.len(), 1);
        let stored = meta::images(&message.metadata);
        assert_eq!(stored[0].data, None, "the bytes left the message");
        assert_eq!(stored[0].name.as_deref(), Some("dot.gif"));
        write(dir.path(), &taken, true).unwrap();
        let file = dir.path().join(PICTURES).join(&picture.id);
        assert_eq!(
            fs::read(&file).unwrap(),
            DOT,
            "the file is the picture itself"
        );
        let _ = fill(dir.path(), &mut message);
        assert_eq!(meta::images(&message.metadata), vec![picture]);
    }

    #[test]
    fn bytes_that_do_not_match_their_id_stay_inline() {
        let mut picture = ChatImage::from_bytes(DOT, None).unwrap();
        picture.id = "0".repeat(64);
        let mut message = with(std::slice::from_ref(&picture));
        assert!(take(&mut message).is_empty());
        assert_eq!(meta::images(&message.metadata), vec![picture.clone()]);
        picture.id = "../../escape".into();
        let mut message = with(std::slice::from_ref(&picture));
        assert!(
            take(&mut message).is_empty(),
            "not a hash: never a file name"
        );
    }

    #[test]
    fn a_lost_or_torn_file_reads_back_without_bytes_and_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let picture = ChatImage::from_bytes(DOT, None).unwrap();
        let mut message = with(std::slice::from_ref(&picture));
        let taken = take(&mut message);
        assert_eq!(fill(dir.path(), &mut message), 0);
        assert_eq!(meta::images(&message.metadata)[0].data, None);
        // Torn: the first half of the picture, as an unsynced crash may leave it.
        let file = dir.path().join(PICTURES).join(&picture.id);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, &DOT[..DOT.len() / 2]).unwrap();
        assert_eq!(
            fill(dir.path(), &mut message),
            0,
            "not the picture its id names"
        );
        write(dir.path(), &taken, false).unwrap();
        assert_eq!(
            fs::read(&file).unwrap(),
            DOT,
            "a later commit of it writes it again"
        );
        let added = fill(dir.path(), &mut message);
        assert_eq!(added as usize, picture.data.as_deref().unwrap().len());
        assert_eq!(meta::images(&message.metadata), vec![picture]);
    }
}
