//! The index checkpoint, `events.index`: what the cold open of a trace would learn by replaying
//! `events.jsonl` (the state, where every event and the newest version of every message lie,
//! the messages of each goal), saved by the writer so that the next open reads it instead of
//! parsing every event, then replays only the commits after it.
//!
//! The file is two lines: the checkpoint as JSON, then the checksum of that line. It names the
//! length of the log it covers and the checksum of the last bytes of that prefix. It is used
//! only when both checksums match and the log is at least that long, so a torn or stale
//! checkpoint, or one left next to a log that was replaced, is ignored and the log is replayed
//! from its start. The log stays the record: removing `events.index` loses nothing.

use std::fs::File;
use std::path::Path;

use agent_execution::{GoalTree, StoreError, Trace, TraceState};
use serde::{Deserialize, Serialize};

use super::OpenTrace;
use crate::files::write_atomic;
use crate::log::read_at;

/// The checkpoint's file name inside a trace folder.
pub(crate) const INDEX: &str = "events.index";

/// The version of the checkpoint's format; a checkpoint of another version is ignored.
const VERSION: u32 = 1;

/// How many bytes at the end of the covered log prefix the checkpoint's log checksum covers.
const TAIL: u64 = 4096;

/// The checkpoint as written.
#[derive(Serialize)]
struct Out<'a> {
    version: u32,
    log_len: u64,
    log_tail: u64,
    mirrored: u64,
    trace: &'a Trace,
    goal_tree: &'a GoalTree,
    last_event_id: u64,
    last_sequence: u64,
    sub_trace_count: u64,
    events: &'a [u64],
    messages: &'a [(u64, u64)],
    by_goal: Vec<(&'a str, &'a [u64])>,
}

/// The checkpoint as read.
#[derive(Deserialize)]
struct In {
    version: u32,
    log_len: u64,
    log_tail: u64,
    mirrored: u64,
    trace: Trace,
    goal_tree: GoalTree,
    last_event_id: u64,
    last_sequence: u64,
    sub_trace_count: u64,
    events: Vec<u64>,
    messages: Vec<(u64, u64)>,
    by_goal: Vec<(String, Vec<u64>)>,
}

/// FNV-1a, 64 bits: enough to tell a torn or foreign file from the one that was written.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The checksum of the last [`TAIL`] bytes of the log's first `len` bytes.
fn log_tail(log: &File, len: u64) -> std::io::Result<u64> {
    let start = len.saturating_sub(TAIL);
    Ok(checksum(&read_at(log, start, len - start)?))
}

/// The checkpoint of `open`, ready to be written; `None` before the trace has a state.
pub(super) fn encode(open: &OpenTrace, log_path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    let (Some(state), Some(log)) = (&open.state, &open.log) else {
        return Ok(None);
    };
    let mut by_goal: Vec<(&str, &[u64])> = open
        .by_goal
        .iter()
        .map(|(goal, sequences)| (goal.as_str(), sequences.as_slice()))
        .collect();
    by_goal.sort_unstable_by_key(|(goal, _)| *goal);
    let out = Out {
        version: VERSION,
        log_len: open.len,
        log_tail: log_tail(log, open.len).map_err(|e| StoreError::io(log_path, e))?,
        mirrored: open.mirrored.min(open.len),
        trace: &state.trace,
        goal_tree: &state.goal_tree,
        last_event_id: state.last_event_id,
        last_sequence: state.last_sequence,
        sub_trace_count: state.sub_trace_count,
        events: &open.events,
        messages: &open.messages,
        by_goal,
    };
    let mut bytes = serde_json::to_vec(&out)
        .map_err(|e| StoreError::Internal(format!("the index cannot be serialised: {e}")))?;
    let sum = checksum(&bytes);
    bytes.extend_from_slice(format!("\n{sum:016x}\n").as_bytes());
    Ok(Some(bytes))
}

/// Writes an encoded checkpoint into the trace folder `dir`.
pub(super) fn write(dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic(&dir.join(INDEX), bytes)
}

/// Fills `open` (a trace of which nothing is read yet) from the checkpoint in `dir`, when there
/// is a valid one for the `size` bytes of `log`; returns whether it did.
pub(super) fn load(dir: &Path, log: &File, size: u64, open: &mut OpenTrace) -> bool {
    let path = dir.join(INDEX);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) => {
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::debug!(%error, path = %path.display(), "index checkpoint not read");
            }
            return false;
        }
    };
    match parse(&bytes, log, size) {
        Ok(read) => {
            apply(read, open);
            true
        }
        Err(reason) => {
            tracing::debug!(path = %path.display(), reason, "index checkpoint ignored; replaying the log");
            false
        }
    }
}

/// A checkpoint's content, if it is whole and covers a prefix of this log.
fn parse(bytes: &[u8], log: &File, size: u64) -> Result<In, &'static str> {
    let body_end = bytes[..bytes.len().saturating_sub(1)]
        .iter()
        .rposition(|&b| b == b'\n')
        .ok_or("torn")?;
    let (body, trailer) = bytes.split_at(body_end);
    let trailer = std::str::from_utf8(trailer).map_err(|_| "torn")?.trim();
    let sum = u64::from_str_radix(trailer, 16).map_err(|_| "torn")?;
    if checksum(body) != sum {
        return Err("checksum mismatch");
    }
    let read: In = serde_json::from_slice(body).map_err(|_| "does not parse")?;
    if read.version != VERSION {
        return Err("another version");
    }
    if read.log_len > size || read.mirrored > read.log_len {
        return Err("longer than the log");
    }
    if log_tail(log, read.log_len).map_err(|_| "log unreadable")? != read.log_tail {
        return Err("made for another log");
    }
    let consistent = read.events.len() as u64 == read.last_event_id
        && read.messages.len() as u64 == read.last_sequence
        && read.events.iter().all(|&offset| offset < read.log_len)
        && read
            .messages
            .iter()
            .all(|&(offset, length)| offset.saturating_add(length) <= read.log_len)
        && read
            .by_goal
            .iter()
            .flat_map(|(_, sequences)| sequences)
            .all(|&sequence| (1..=read.last_sequence).contains(&sequence));
    if !consistent || read.last_event_id == 0 {
        return Err("inconsistent");
    }
    Ok(read)
}

fn apply(read: In, open: &mut OpenTrace) {
    open.state = Some(TraceState {
        trace: read.trace,
        goal_tree: read.goal_tree,
        last_event_id: read.last_event_id,
        last_sequence: read.last_sequence,
        sub_trace_count: read.sub_trace_count,
    });
    open.len = read.log_len;
    open.checkpointed = read.log_len;
    open.mirrored = read.mirrored;
    open.events = read.events;
    open.messages = read.messages;
    open.by_goal = read.by_goal.into_iter().collect();
}
