//! Reads of an opened trace through its index: messages by sequence or goal, events since an id.
//!
//! Messages are read from their lines in `events.jsonl`: the lines wanted are sorted by offset
//! and lines close together are read with one positioned read, so reading a goal's messages or
//! every message costs a few reads rather than one per message. Only the `message` field of a
//! line is parsed, and on lines this store wrote nothing after it; a read of many lines is
//! parsed on one thread per core. Parsed messages are shared ([`Arc`]) and kept in a bounded
//! cache keyed by the offset of their line: a later read of the same version hands out the kept
//! message again (for a goal's messages, on the caller's thread), with no parse and no copy; a
//! newer version lies at another offset and is read afresh. A reader that wants messages of its
//! own copies them out of the shared ones.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use agent_execution::{Event, Message, StoreError};
use serde::Deserialize;

use super::index::position;
use super::{EVENTS, OpenTrace, Slot};
use crate::log::{read_at, read_exact_at};

/// How many bytes of event lines the parsed messages of one trace may stand for in its cache.
const CACHE_BYTES: u64 = 128 << 20;

/// Lines less than this many bytes apart are read with one read.
const GAP: u64 = 64 << 10;

/// The most bytes one read takes: small enough that the buffer each parser reuses stays in the
/// processor's cache between the read and the parse, and is touched for the first time once.
const SPAN: u64 = 1 << 20;

/// Parsed messages of one trace, by sequence, with the offset and length of the line they came
/// from. Sequences are dense from 1, so the entries are a vector indexed by sequence − 1 (a
/// lookup is an index, not a hash and a probe; a goal's read of a thousand cached messages
/// does a thousand of them).
#[derive(Debug, Default)]
pub(super) struct MessageCache {
    entries: Vec<Option<Entry>>,
    /// The sum of the line lengths of `entries`.
    bytes: u64,
}

impl MessageCache {
    fn entry(&self, sequence: u64) -> Option<&Entry> {
        self.entries.get(position(sequence)?)?.as_ref()
    }

    fn get(&self, sequence: u64, offset: u64) -> Option<&Arc<Message>> {
        self.entry(sequence)
            .filter(|entry| entry.0 == offset)
            .map(|entry| &entry.2)
    }

    /// Whether a line of `length` bytes fits in place of the sequence's current entry.
    fn room_for(&self, sequence: u64, length: u64) -> bool {
        let replaced = self.entry(sequence).map_or(0, |entry| entry.1);
        self.bytes - replaced + length <= CACHE_BYTES
    }

    /// Keeps a parsed message; the caller has checked [`room_for`](Self::room_for).
    fn insert(&mut self, sequence: u64, entry: Entry) {
        let Some(index) = position(sequence) else {
            return;
        };
        if self.entries.len() <= index {
            self.entries.resize_with(index + 1, || None);
        }
        let replaced = self.entry(sequence).map_or(0, |entry| entry.1);
        self.bytes = self.bytes - replaced + entry.1;
        if let Some(slot) = self.entries.get_mut(index) {
            *slot = Some(entry);
        }
    }
}

/// A cached message: the offset and length of the line it was parsed from, and the message.
type Entry = (u64, u64, Arc<Message>);

/// The part of a message event line a read needs.
#[derive(Deserialize)]
struct MessageLine<'a> {
    event_id: u64,
    #[serde(borrow)]
    event: &'a str,
    message: Option<Message>,
}

impl Slot {
    fn open_trace(&self) -> Result<&OpenTrace, StoreError> {
        self.open.as_ref().ok_or_else(|| self.not_found())
    }

    /// The newest version of the message with this sequence.
    pub(crate) fn message(&self, sequence: u64) -> Result<Option<Message>, StoreError> {
        let open = self.open_trace()?;
        let found = self.messages_at(open, &[sequence], true)?.pop();
        Ok(found.map(Arc::unwrap_or_clone))
    }

    /// The newest version of a message, read without keeping it in the cache.
    pub(super) fn message_at(
        &self,
        open: &OpenTrace,
        sequence: u64,
    ) -> Result<Option<Message>, StoreError> {
        let found = self.messages_at(open, &[sequence], false)?.pop();
        // Unless an earlier read cached it, this is the only holder: no copy.
        Ok(found.map(Arc::unwrap_or_clone))
    }

    /// The newest versions of these messages, in the order asked, leaving out the sequences the
    /// trace does not have. `remember` keeps what is parsed in the cache.
    fn messages_at(
        &self,
        open: &OpenTrace,
        sequences: &[u64],
        remember: bool,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        let mut cached: Vec<(usize, Arc<Message>)> = Vec::new();
        let mut wanted = Vec::new();
        {
            let cache = open.cache.borrow();
            for (slot, &sequence) in sequences.iter().enumerate() {
                let Some(&(offset, length)) = position(sequence).and_then(|i| open.messages.get(i))
                else {
                    continue;
                };
                match cache.get(sequence, offset) {
                    Some(message) => cached.push((slot, message.clone())),
                    None => wanted.push((offset, length, slot)),
                }
            }
        }
        let (Some(log), false) = (&open.log, wanted.is_empty()) else {
            return Ok(cached.into_iter().map(|(_, message)| message).collect());
        };
        let path = self.dir.join(EVENTS);
        let parts = parse_lines(log, &path, &mut wanted)?;
        if remember {
            let mut cache = open.cache.borrow_mut();
            for line in parts.iter().flatten() {
                let sequence = sequences.get(line.slot).copied().unwrap_or_default();
                if cache.room_for(sequence, line.length) {
                    let entry = (line.offset, line.length, line.message.clone());
                    cache.insert(sequence, entry);
                }
            }
        }
        // Each part is in log order, which is the order asked when the sequences rise and no
        // message was rewritten (the common case, and every read of all messages so far): then
        // the parts are joined as they are. Otherwise the messages are put in order.
        let count = parts.iter().map(Vec::len).sum::<usize>() + cached.len();
        let mut slots = parts.iter().flatten().map(|line| line.slot);
        let in_order = cached.is_empty() && {
            let mut last = slots.next();
            slots.all(|slot| {
                let rises = last.is_none_or(|last| last < slot);
                last = Some(slot);
                rises
            })
        };
        if in_order {
            let mut found = Vec::with_capacity(count);
            for part in parts {
                found.extend(part.into_iter().map(|line| line.message));
            }
            return Ok(found);
        }
        cached.reserve(count - cached.len());
        for part in parts {
            cached.extend(part.into_iter().map(|line| (line.slot, line.message)));
        }
        cached.sort_by_key(|&(slot, _)| slot);
        Ok(cached.into_iter().map(|(_, message)| message).collect())
    }

    /// All messages in sequence order.
    pub(crate) fn all_messages(&self) -> Result<Vec<Arc<Message>>, StoreError> {
        let open = self.open_trace()?;
        let sequences: Vec<u64> = (1..=open.messages.len() as u64).collect();
        self.messages_at(open, &sequences, true)
    }

    /// The messages of one goal in sequence order.
    pub(crate) fn goal_messages(&self, goal_id: &str) -> Result<Vec<Arc<Message>>, StoreError> {
        let open = self.open_trace()?;
        let sequences = open
            .by_goal
            .get(goal_id)
            .map(Vec::as_slice)
            .unwrap_or_default();
        self.messages_at(open, sequences, true)
    }

    /// The messages of one goal when every one of them is parsed already and the log has not
    /// grown since: the cached messages themselves, with no file read, which the store then
    /// serves on the caller's thread. `None` when anything must be read.
    pub(crate) fn cached_goal_messages(&self, goal_id: &str) -> Option<Vec<Arc<Message>>> {
        let open = self.open.as_ref()?;
        open.state.as_ref()?;
        if open.lock.is_none() {
            // A reader: another process may have appended (one `fstat`, as the catch-up does).
            let size = open.log.as_ref()?.metadata().ok()?.len();
            if size > open.len {
                return None;
            }
        }
        let cache = open.cache.borrow();
        let sequences = open.by_goal.get(goal_id).map(Vec::as_slice);
        sequences
            .unwrap_or_default()
            .iter()
            .map(|&sequence| {
                let &(offset, _) = open.messages.get(position(sequence)?)?;
                cache.get(sequence, offset).cloned()
            })
            .collect()
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
                let mut event = serde_json::from_slice(line).map_err(|e| StoreError::Corrupt {
                    path: path.clone(),
                    detail: format!("an indexed event does not parse: {e}"),
                })?;
                crate::pictures::fill_event(&self.dir, &mut event);
                Ok(event)
            })
            .collect()
    }
}

/// Reads the lines `wanted` (offset, length, and a number handed back to `each`): sorted by
/// offset, lines less than [`GAP`] apart are read with one read of at most [`SPAN`] bytes.
fn for_each_line(
    log: &File,
    path: &Path,
    wanted: &mut [(u64, u64, usize)],
    mut each: impl FnMut(usize, u64, &[u8]) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    wanted.sort_unstable_by_key(|&(offset, _, _)| offset);
    // One buffer for every span: a large read does not allocate and zero each span anew.
    let mut buffer = Vec::new();
    let mut rest = &wanted[..];
    while let Some(&(start, length, _)) = rest.first() {
        let mut end = start + length;
        let mut count = 1;
        for &(offset, length, _) in &rest[1..] {
            let next_end = end.max(offset + length);
            if offset > end + GAP || next_end - start > SPAN {
                break;
            }
            end = next_end;
            count += 1;
        }
        let length = usize::try_from(end - start).unwrap_or(usize::MAX);
        if buffer.len() < length {
            buffer.resize(length, 0);
        }
        let span = &mut buffer[..length];
        read_exact_at(log, span, start).map_err(|e| StoreError::io(path, e))?;
        for &(offset, length, slot) in &rest[..count] {
            let from = usize::try_from(offset - start).unwrap_or(usize::MAX);
            let to = usize::try_from(offset - start + length).unwrap_or(usize::MAX);
            each(slot, offset, span.get(from..to).unwrap_or_default())?;
        }
        rest = &rest[count..];
    }
    Ok(())
}

/// A message read from its line, with the number it was asked with and where its line lies.
struct ParsedLine {
    slot: usize,
    offset: u64,
    /// The line's length and the bytes of the pictures put back: what the cache counts.
    length: u64,
    message: Arc<Message>,
}

/// Lines fewer than this are parsed on the calling thread; more are shared out among threads.
const PARALLEL_LINES: usize = 4096;

/// Reads and parses the lines `wanted` (see [`for_each_line`]). Many lines are split into runs
/// of neighbouring lines, one per core, read and parsed side by side: parsing JSON, not reading
/// it, is most of the cost of a large read. The runs come back as they were parsed, in log
/// order, each in its own vector.
fn parse_lines(
    log: &File,
    path: &Path,
    wanted: &mut [(u64, u64, usize)],
) -> Result<Vec<Vec<ParsedLine>>, StoreError> {
    wanted.sort_unstable_by_key(|&(offset, _, _)| offset);
    let parse = |part: &mut [(u64, u64, usize)]| -> Result<Vec<ParsedLine>, StoreError> {
        let mut parsed = Vec::with_capacity(part.len());
        for_each_line(log, path, part, |slot, offset, line| {
            let mut message = message_of(path, line)?;
            // The cache counts the pictures' bytes put back with the line's.
            let pictures = path
                .parent()
                .map_or(0, |dir| crate::pictures::fill(dir, &mut message));
            parsed.push(ParsedLine {
                slot,
                offset,
                length: line.len() as u64 + pictures,
                message: Arc::new(message),
            });
            Ok(())
        })?;
        Ok(parsed)
    };
    if wanted.len() < PARALLEL_LINES {
        return Ok(vec![parse(wanted)?]);
    }
    let threads = parser_threads();
    if threads < 2 {
        return Ok(vec![parse(wanted)?]);
    }
    let per_thread = wanted.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut parts = wanted.chunks_mut(per_thread);
        let first = parts.next().unwrap_or_default();
        let others: Vec<_> = parts.map(|part| scope.spawn(|| parse(part))).collect();
        let mut parsed = vec![parse(first)?];
        for other in others {
            let more = other
                .join()
                .map_err(|_| StoreError::Internal("a message parser panicked".into()))??;
            parsed.push(more);
        }
        Ok(parsed)
    })
}

/// How many threads parse a large read: one per core, at most 8. Asked of the system once per
/// process, since the answer reads cgroup files (several opens and reads, far more than parsing a
/// few messages, which the flusher's single-message reads do all the time).
fn parser_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// The message carried by an event line.
fn message_of(path: &Path, line: &[u8]) -> Result<Message, StoreError> {
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_owned(),
        detail,
    };
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    if let Some(message) = message_written_here(line) {
        return Ok(message);
    }
    let parsed: MessageLine<'_> = serde_json::from_slice(line)
        .map_err(|e| corrupt(format!("an indexed message event does not parse: {e}")))?;
    match (parsed.event, parsed.message) {
        ("message_added" | "message_updated", Some(message)) => Ok(message),
        (name, _) => Err(corrupt(format!(
            "event {} is {name}, not a message event",
            parsed.event_id
        ))),
    }
}

/// The message of a line as this store writes it, `{"event_id":N,"event":"message_added",
/// "message":{...},...}`, parsed without reading past the message (a message event's other
/// fields, the statistics of the goals it touched, are not needed); `None` for any other shape.
fn message_written_here(line: &[u8]) -> Option<Message> {
    let rest = line.strip_prefix(b"{\"event_id\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = rest.get(digits..).filter(|_| digits > 0)?;
    let rest = rest
        .strip_prefix(b",\"event\":\"message_added\",\"message\":")
        .or_else(|| rest.strip_prefix(b",\"event\":\"message_updated\",\"message\":"))?;
    Message::deserialize(&mut serde_json::Deserializer::from_slice(rest)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = include_str!(
        "../../tests/fixtures/demo-0.1.0/c6b9176b-e1f0-461a-9020-45c874bc95ac/events.jsonl"
    );

    #[test]
    fn a_message_line_reads_the_same_in_any_key_order() {
        let path = Path::new("events.jsonl");
        let mut checked = 0;
        for line in LOG.lines() {
            let event: Event = serde_json::from_str(line).unwrap();
            let (agent_execution::EventKind::MessageAdded { message, .. }
            | agent_execution::EventKind::MessageUpdated { message }) = event.kind
            else {
                assert!(message_of(path, line.as_bytes()).is_err());
                continue;
            };
            assert_eq!(
                message_written_here(line.as_bytes()).as_ref(),
                Some(&message)
            );
            // The same event with its keys in another order takes the general path.
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let mut reordered = serde_json::Map::new();
            for (key, field) in value.as_object().unwrap().iter().rev() {
                reordered.insert(key.clone(), field.clone());
            }
            let reordered = serde_json::to_vec(&reordered).unwrap();
            assert_eq!(message_written_here(&reordered), None);
            assert_eq!(message_of(path, &reordered).unwrap(), message);
            checked += 1;
        }
        assert!(checked > 10, "only {checked} message lines");
    }
}
