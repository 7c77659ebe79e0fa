//! Reads of an opened trace through its index: messages by sequence or goal, events since an id.

use std::path::Path;

use agent_execution::{Event, EventKind, Message, StoreError};

use super::index::position;
use super::{EVENTS, OpenTrace, Slot};
use crate::log::read_at;

impl Slot {
    fn open_trace(&self) -> Result<&OpenTrace, StoreError> {
        self.open.as_ref().ok_or_else(|| self.not_found())
    }

    /// The newest version of the message with this sequence.
    pub(crate) fn message(&self, sequence: u64) -> Result<Option<Message>, StoreError> {
        self.message_at(self.open_trace()?, sequence)
    }

    pub(super) fn message_at(
        &self,
        open: &OpenTrace,
        sequence: u64,
    ) -> Result<Option<Message>, StoreError> {
        let (Some(log), Some(&(offset, length))) = (
            &open.log,
            position(sequence).and_then(|i| open.messages.get(i)),
        ) else {
            return Ok(None);
        };
        let path = self.dir.join(EVENTS);
        let bytes = read_at(log, offset, length).map_err(|e| StoreError::io(&path, e))?;
        message_of(&path, &bytes).map(Some)
    }

    /// All messages in sequence order.
    pub(crate) fn all_messages(&self) -> Result<Vec<Message>, StoreError> {
        let open = self.open_trace()?;
        let Some(log) = &open.log else {
            return Ok(Vec::new());
        };
        // Messages are spread over most of the log: one sequential read beats a read per message.
        let path = self.dir.join(EVENTS);
        let whole = read_at(log, 0, open.len).map_err(|e| StoreError::io(&path, e))?;
        open.messages
            .iter()
            .map(|&(offset, length)| {
                let line = usize::try_from(offset)
                    .ok()
                    .zip(usize::try_from(offset + length).ok())
                    .and_then(|(start, end)| whole.get(start..end))
                    .unwrap_or_default();
                message_of(&path, line)
            })
            .collect()
    }

    /// The messages of one goal in sequence order.
    pub(crate) fn goal_messages(&self, goal_id: &str) -> Result<Vec<Message>, StoreError> {
        let open = self.open_trace()?;
        let sequences = open
            .by_goal
            .get(goal_id)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut messages = Vec::with_capacity(sequences.len());
        for &sequence in sequences {
            if let Some(message) = self.message_at(open, sequence)? {
                messages.push(message);
            }
        }
        Ok(messages)
    }

    /// The events after `since`, in order.
    pub(crate) fn events_since(&self, since: u64) -> Result<Vec<Event>, StoreError> {
        let open = self.open_trace()?;
        let Some(log) = &open.log else {
            return Ok(Vec::new());
        };
        let Some(&start) = usize::try_from(since).ok().and_then(|i| open.events.get(i)) else {
            return Ok(Vec::new());
        };
        let path = self.dir.join(EVENTS);
        let bytes = read_at(log, start, open.len - start).map_err(|e| StoreError::io(&path, e))?;
        bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                serde_json::from_slice(line).map_err(|e| StoreError::Corrupt {
                    path: path.clone(),
                    detail: format!("an indexed event does not parse: {e}"),
                })
            })
            .collect()
    }
}

/// The message carried by an event line.
fn message_of(path: &Path, line: &[u8]) -> Result<Message, StoreError> {
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_owned(),
        detail,
    };
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let event: Event = serde_json::from_slice(line)
        .map_err(|e| corrupt(format!("an indexed message event does not parse: {e}")))?;
    match event.kind {
        EventKind::MessageAdded { message, .. } | EventKind::MessageUpdated { message } => {
            Ok(message)
        }
        other => Err(corrupt(format!(
            "event {} is {}, not a message event",
            event.event_id,
            other.name()
        ))),
    }
}
