//! Reads of an opened trace through its index: messages by sequence or goal, events since an id.
//!
//! Messages are read from their lines in `events.jsonl`: the lines wanted are sorted by offset
//! and lines close together are read with one positioned read, so reading a goal's messages or
//! every message costs a few reads rather than one per message. Only the `message` field of a
//! line is parsed, and on lines this store wrote nothing after it; a read of many lines is
//! parsed on one thread per core. The lines read are kept in a bounded cache keyed by the
//! offset of each line: not parsed copies but the bytes themselves, each line a shared slice of
//! the chunk it was read with (no copy), so keeping them costs a reference count per message. A
//! later read of the same version (a goal's messages after all of them) parses the cached lines
//! without reading the file; a newer version lies at another offset and is read afresh.

use std::fs::File;
use std::path::Path;

use agent_execution::{Event, Message, StoreError};
use bytes::Bytes;
use serde::Deserialize;

use super::index::position;
use super::{EVENTS, OpenTrace, Slot};
use crate::log::{read_at, read_exact_at};

/// How many bytes of event lines one trace's cache may hold.
const CACHE_BYTES: u64 = 128 << 20;

/// Lines less than this many bytes apart are read with one read.
const GAP: u64 = 64 << 10;

/// The most bytes one read takes: a chunk small enough to be read and parsed while it stays
/// in the processor's cache.
const SPAN: u64 = 1 << 20;

/// At most this many cached messages of a goal are parsed on the caller's (async) thread; a
/// goal with more is parsed on the blocking pool, shared out among threads.
const INLINE_PARSE: usize = 64;

/// The lines of one trace's messages, by sequence, with the offset of each line. Sequences are
/// dense from 1, so the entries are a vector indexed by sequence − 1 (a lookup is an index, not
/// a hash and a probe).
#[derive(Debug, Default)]
pub(super) struct MessageCache {
    entries: Vec<Option<(u64, Bytes)>>,
    /// The sum of the line lengths of `entries`.
    bytes: u64,
}

impl MessageCache {
    fn entry(&self, sequence: u64) -> Option<&(u64, Bytes)> {
        self.entries.get(position(sequence)?)?.as_ref()
    }

    /// The line of this version of the message (the one at `offset`), if kept.
    fn get(&self, sequence: u64, offset: u64) -> Option<&Bytes> {
        self.entry(sequence)
            .filter(|entry| entry.0 == offset)
            .map(|entry| &entry.1)
    }

    /// Keeps a message's line, if it fits in place of the sequence's current entry.
    fn insert(&mut self, sequence: u64, offset: u64, line: Bytes) {
        let Some(index) = position(sequence) else {
            return;
        };
        let replaced = self.entry(sequence).map_or(0, |entry| entry.1.len() as u64);
        let length = line.len() as u64;
        if self.bytes - replaced + length > CACHE_BYTES {
            return;
        }
        if self.entries.len() <= index {
            self.entries.resize_with(index + 1, || None);
        }
        self.bytes = self.bytes - replaced + length;
        if let Some(slot) = self.entries.get_mut(index) {
            *slot = Some((offset, line));
        }
    }
}

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
        Ok(self.messages_at(open, &[sequence], true)?.pop())
    }

    /// The newest version of a message, read without keeping it in the cache.
    pub(super) fn message_at(
        &self,
        open: &OpenTrace,
        sequence: u64,
    ) -> Result<Option<Message>, StoreError> {
        Ok(self.messages_at(open, &[sequence], false)?.pop())
    }

    /// The newest versions of these messages, in the order asked, leaving out the sequences the
    /// trace does not have. `remember` keeps the lines read in the cache.
    fn messages_at(
        &self,
        open: &OpenTrace,
        sequences: &[u64],
        remember: bool,
    ) -> Result<Vec<Message>, StoreError> {
        let path = self.dir.join(EVENTS);
        let mut cached: Vec<(usize, Bytes)> = Vec::new();
        let mut wanted = Vec::new();
        {
            let cache = open.cache.borrow();
            for (slot, &sequence) in sequences.iter().enumerate() {
                let Some(&(offset, length)) = position(sequence).and_then(|i| open.messages.get(i))
                else {
                    continue;
                };
                match cache.get(sequence, offset) {
                    Some(line) => cached.push((slot, line.clone())),
                    None => wanted.push((offset, length, slot)),
                }
            }
        }
        let mut parts = parse_cached(&path, &cached)?;
        if let (Some(log), false) = (&open.log, wanted.is_empty()) {
            let read = parse_lines(log, &path, &mut wanted, remember)?;
            let mut cache = open.cache.borrow_mut();
            for line in read.iter().flatten() {
                let sequence = sequences.get(line.slot).copied().unwrap_or_default();
                if let Some((offset, kept)) = &line.kept {
                    cache.insert(sequence, *offset, kept.clone());
                }
            }
            if parts.is_empty() {
                parts = read;
            } else {
                parts.extend(read);
            }
        }
        // Each part is in the order it was read (log order, or the order asked for cached
        // lines), which is the order asked when the sequences rise, no message was rewritten
        // and the lines all came from the file or all from the cache (the common case): then the
        // messages are moved once, into the answer. Otherwise they are put in order.
        let count = parts.iter().map(Vec::len).sum::<usize>();
        let mut slots = parts.iter().flatten().map(|line| line.slot);
        let mut last = slots.next();
        let in_order = slots.all(|slot| {
            let rises = last.is_none_or(|last| last < slot);
            last = Some(slot);
            rises
        });
        if in_order {
            let mut found = Vec::with_capacity(count);
            for part in parts {
                found.extend(part.into_iter().map(|line| line.message));
            }
            return Ok(found);
        }
        let mut found = Vec::with_capacity(count);
        for part in parts {
            found.extend(part.into_iter().map(|line| (line.slot, line.message)));
        }
        found.sort_by_key(|&(slot, _)| slot);
        Ok(found.into_iter().map(|(_, message)| message).collect())
    }

    /// All messages in sequence order.
    pub(crate) fn all_messages(&self) -> Result<Vec<Message>, StoreError> {
        let open = self.open_trace()?;
        let sequences: Vec<u64> = (1..=open.messages.len() as u64).collect();
        self.messages_at(open, &sequences, true)
    }

    /// The messages of one goal in sequence order.
    pub(crate) fn goal_messages(&self, goal_id: &str) -> Result<Vec<Message>, StoreError> {
        let open = self.open_trace()?;
        let sequences = open
            .by_goal
            .get(goal_id)
            .map(Vec::as_slice)
            .unwrap_or_default();
        self.messages_at(open, sequences, true)
    }

    /// The messages of one goal when they are few, every line of them is cached and the log has
    /// not grown since: parsed from the cache with no file read, which the store then does on
    /// the caller's thread. `None` when anything must be read, or the goal has more than
    /// [`INLINE_PARSE`] messages (parsed on the blocking pool, by several threads).
    pub(crate) fn cached_goal_messages(&self, goal_id: &str) -> Option<Vec<Message>> {
        let open = self.open.as_ref()?;
        open.state.as_ref()?;
        let sequences = open.by_goal.get(goal_id).map(Vec::as_slice);
        let sequences = sequences.unwrap_or_default();
        if sequences.len() > INLINE_PARSE {
            return None;
        }
        if open.lock.is_none() {
            // A reader: another process may have appended (one `fstat`, as the catch-up does).
            let size = open.log.as_ref()?.metadata().ok()?.len();
            if size > open.len {
                return None;
            }
        }
        let path = self.dir.join(EVENTS);
        let cache = open.cache.borrow();
        sequences
            .iter()
            .map(|&sequence| {
                let &(offset, _) = open.messages.get(position(sequence)?)?;
                message_of(&path, cache.get(sequence, offset)?).ok()
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
                serde_json::from_slice(line).map_err(|e| StoreError::Corrupt {
                    path: path.clone(),
                    detail: format!("an indexed event does not parse: {e}"),
                })
            })
            .collect()
    }
}

/// Reads the lines `wanted` (offset, length, and a number handed back to `each`): sorted by
/// offset, lines less than [`GAP`] apart are read with one read of at most [`SPAN`] bytes.
/// `each` gets the line, and with `share` the line as its own [`Bytes`] too: a slice of the
/// chunk read when the lines fill at least half of it, otherwise a copy (so a cached line never
/// holds a mostly unwanted mebibyte in memory).
fn for_each_line(
    log: &File,
    path: &Path,
    wanted: &mut [(u64, u64, usize)],
    share: bool,
    mut each: impl FnMut(usize, u64, &[u8], Option<Bytes>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    wanted.sort_unstable_by_key(|&(offset, _, _)| offset);
    // Without `share`, one buffer for every span: a large read does not allocate anew.
    let mut buffer = Vec::new();
    let mut rest = &wanted[..];
    while let Some(&(start, length, _)) = rest.first() {
        let mut end = start + length;
        let mut count = 1;
        let mut used = length;
        for &(offset, length, _) in &rest[1..] {
            let next_end = end.max(offset + length);
            if offset > end + GAP || next_end - start > SPAN {
                break;
            }
            end = next_end;
            count += 1;
            used += length;
        }
        let length = usize::try_from(end - start).unwrap_or(usize::MAX);
        let lines = &rest[..count];
        rest = &rest[count..];
        let slice = |offset: u64, length: u64| {
            let from = usize::try_from(offset - start).unwrap_or(usize::MAX);
            let to = usize::try_from(offset - start + length).unwrap_or(usize::MAX);
            from..to
        };
        if share {
            let mut chunk = vec![0; length];
            read_exact_at(log, &mut chunk, start).map_err(|e| StoreError::io(path, e))?;
            let chunk = Bytes::from(chunk);
            let dense = used * 2 >= end - start;
            for &(offset, length, slot) in lines {
                let range = slice(offset, length);
                let line = chunk.get(range.clone()).unwrap_or_default();
                let kept = if dense {
                    chunk.slice(range)
                } else {
                    Bytes::copy_from_slice(line)
                };
                each(slot, offset, line, Some(kept))?;
            }
            continue;
        }
        if buffer.len() < length {
            buffer.resize(length, 0);
        }
        let span = &mut buffer[..length];
        read_exact_at(log, span, start).map_err(|e| StoreError::io(path, e))?;
        for &(offset, length, slot) in lines {
            each(
                slot,
                offset,
                span.get(slice(offset, length)).unwrap_or_default(),
                None,
            )?;
        }
    }
    Ok(())
}

/// A message parsed from its line, with the number it was asked with and, when the line is to
/// be cached, the line's offset and bytes.
struct ParsedLine {
    slot: usize,
    message: Message,
    kept: Option<(u64, Bytes)>,
}

/// Lines fewer than this are read and parsed on the calling thread; more are shared out among
/// threads.
const PARALLEL_LINES: usize = 4096;

/// Cached lines fewer than this are parsed on the calling thread (no read to overlap, so
/// fewer lines pay for a thread).
const PARALLEL_CACHED: usize = 256;

/// Runs `parse` over `items` split into one run per core when there are at least `threshold`,
/// each run on its own thread (the first on the calling one); the runs come back in order,
/// each in its own vector, so that no message is moved to gather them.
fn share_out<T: Send>(
    items: &mut [T],
    threshold: usize,
    parse: impl Fn(&mut [T]) -> Result<Vec<ParsedLine>, StoreError> + Sync,
) -> Result<Vec<Vec<ParsedLine>>, StoreError> {
    let threads = parser_threads();
    if items.len() < threshold || threads < 2 {
        return Ok(vec![parse(items)?]);
    }
    let per_thread = items.len().div_ceil(threads);
    let parse = &parse;
    std::thread::scope(|scope| {
        let mut parts = items.chunks_mut(per_thread);
        let first = parts.next().unwrap_or_default();
        let others: Vec<_> = parts.map(|part| scope.spawn(move || parse(part))).collect();
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

/// Reads and parses the lines `wanted` (see [`for_each_line`]). Many lines are split into runs
/// of neighbouring lines, one per core, read and parsed side by side: parsing JSON, not reading
/// it, is most of the cost of a large read. `keep` hands back each line's bytes, for the cache.
fn parse_lines(
    log: &File,
    path: &Path,
    wanted: &mut [(u64, u64, usize)],
    keep: bool,
) -> Result<Vec<Vec<ParsedLine>>, StoreError> {
    wanted.sort_unstable_by_key(|&(offset, _, _)| offset);
    share_out(wanted, PARALLEL_LINES, |part| {
        let mut parsed = Vec::with_capacity(part.len());
        for_each_line(log, path, part, keep, |slot, offset, line, kept| {
            parsed.push(ParsedLine {
                slot,
                message: message_of(path, line)?,
                kept: kept.map(|kept| (offset, kept)),
            });
            Ok(())
        })?;
        Ok(parsed)
    })
}

/// Parses cached lines (in the order given), shared out among threads when there are many.
fn parse_cached(
    path: &Path,
    cached: &[(usize, Bytes)],
) -> Result<Vec<Vec<ParsedLine>>, StoreError> {
    if cached.is_empty() {
        return Ok(Vec::new());
    }
    let mut cached: Vec<&(usize, Bytes)> = cached.iter().collect();
    share_out(&mut cached, PARALLEL_CACHED, |part| {
        part.iter()
            .map(|&&(slot, ref line)| {
                Ok(ParsedLine {
                    slot,
                    message: message_of(path, line)?,
                    kept: None,
                })
            })
            .collect()
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
