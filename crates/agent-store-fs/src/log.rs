//! `events.jsonl`, the write-ahead record of a trace: reading it commit by commit.
//!
//! Every line is one event. The events of one commit are written with one `write` call; all but
//! the last carry `"commit_continues": true`. A crash can therefore leave a torn last line or the
//! first lines of a commit without its last one. Both are the tail of a write that was never
//! acknowledged: the scan stops before them, and the writer cuts them off before it appends.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};

use agent_execution::Event;

/// Why a scan stopped with an error.
#[derive(Debug)]
pub(crate) enum ScanError {
    /// Reading the file failed.
    Io(std::io::Error),
    /// A complete line is not an event, or the event does not follow from the previous ones.
    Corrupt {
        /// The line number, from 1.
        line: u64,
        /// What is wrong.
        detail: String,
    },
}

/// Reads complete commits from byte `offset` (the start of line `first_line`), calling `apply`
/// with each event, its byte offset and its length (newline included), commit by commit. Returns
/// the offset just after the last complete commit.
pub(crate) fn scan(
    file: &File,
    offset: u64,
    first_line: u64,
    mut apply: impl FnMut(Event, u64, u64) -> Result<(), String>,
) -> Result<u64, ScanError> {
    let mut handle = file;
    handle
        .seek(SeekFrom::Start(offset))
        .map_err(ScanError::Io)?;
    let mut reader = BufReader::with_capacity(1 << 16, handle);
    let mut line = Vec::new();
    let mut at = offset;
    let mut committed = offset;
    let mut number = first_line;
    let mut pending: Vec<(Event, u64, u64, u64)> = Vec::new();
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(ScanError::Io)?;
        if read == 0 || line.last() != Some(&b'\n') {
            // End of file, or a torn last line.
            return Ok(committed);
        }
        let event: Event =
            serde_json::from_slice(&line[..line.len() - 1]).map_err(|e| ScanError::Corrupt {
                line: number,
                detail: format!("not an event: {e}"),
            })?;
        let length = read as u64;
        let last_of_commit = !event.commit_continues;
        pending.push((event, at, length, number));
        at += length;
        number += 1;
        if last_of_commit {
            for (event, offset, length, line) in pending.drain(..) {
                apply(event, offset, length)
                    .map_err(|detail| ScanError::Corrupt { line, detail })?;
            }
            committed = at;
        }
    }
}

/// Reads `length` bytes at `offset`.
pub(crate) fn read_at(file: &File, offset: u64, length: u64) -> std::io::Result<Vec<u8>> {
    let mut buffer = vec![0; usize::try_from(length).unwrap_or(usize::MAX)];
    read_exact_at(file, &mut buffer, offset)?;
    Ok(buffer)
}

/// Fills `buffer` with the bytes at `offset`.
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

/// Fills `buffer` with the bytes at `offset`.
#[cfg(not(unix))]
pub(crate) fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::Read;
    let mut handle = file;
    handle.seek(SeekFrom::Start(offset))?;
    handle.read_exact(buffer)
}
