//! Output limits: one helper that truncates tool output with a note saying how much was cut, and
//! a bounded buffer for streams whose size is not known in advance.

use std::collections::VecDeque;

/// Which part of an over-long output to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The beginning, for file contents and search results the model can page through.
    Head,
    /// The beginning and the end, for command output whose last lines often matter most.
    HeadAndTail,
}

/// Truncates `text` to at most `max_bytes` bytes of content (cut at character boundaries) and
/// adds a note saying how many bytes were omitted; text within the limit is returned unchanged.
pub fn truncate_output(text: &str, max_bytes: usize, keep: Keep) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    match keep {
        Keep::Head => {
            let head = &text[..floor_char_boundary(text, max_bytes)];
            let omitted = text.len() - head.len();
            format!("{head}{}", note(omitted, text.len()))
        }
        Keep::HeadAndTail => {
            let head = &text[..floor_char_boundary(text, max_bytes / 2)];
            let tail_start = ceil_char_boundary(text, text.len() - (max_bytes - head.len()));
            let tail = &text[tail_start..];
            let omitted = text.len() - head.len() - tail.len();
            format!("{head}{}{tail}", note(omitted, text.len()))
        }
    }
}

/// The note that marks where output was cut.
pub(crate) fn note(omitted: usize, total: usize) -> String {
    format!("\n[... output truncated: {omitted} of {total} bytes omitted ...]\n")
}

pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    (0..=index.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

fn ceil_char_boundary(text: &str, index: usize) -> usize {
    (index..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}

/// A byte buffer that keeps at most `cap` bytes: the first half and the most recent half of
/// everything written, and counts the rest.
#[derive(Debug)]
pub(crate) struct CappedBuffer {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
}

impl CappedBuffer {
    /// An empty buffer keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    /// Appends `bytes`, dropping from the middle once more than `cap` bytes were written.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len();
        let head_cap = self.cap / 2;
        let room = head_cap.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        let tail_cap = self.cap - head_cap;
        if rest.len() >= tail_cap {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - tail_cap..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// The number of bytes written so far.
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// The kept bytes as text (invalid UTF-8 replaced), with a truncation note in the middle when
    /// bytes were dropped.
    pub(crate) fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        let kept = self.head.len() + self.tail.len();
        if kept == self.total {
            format!("{head}{tail}")
        } else {
            format!("{head}{}{tail}", note(self.total - kept, self.total))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CappedBuffer, Keep, truncate_output};

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(truncate_output("hello", 5, Keep::Head), "hello");
        assert_eq!(truncate_output("hello", 5, Keep::HeadAndTail), "hello");
    }

    #[test]
    fn head_keeps_the_beginning_and_says_how_much_was_cut() {
        let out = truncate_output("abcdefghij", 4, Keep::Head);
        assert_eq!(
            out,
            "abcd\n[... output truncated: 6 of 10 bytes omitted ...]\n"
        );
    }

    #[test]
    fn head_and_tail_keeps_both_ends() {
        let out = truncate_output("abcdefghij", 4, Keep::HeadAndTail);
        assert_eq!(
            out,
            "ab\n[... output truncated: 6 of 10 bytes omitted ...]\nij"
        );
    }

    #[test]
    fn cuts_only_at_character_boundaries() {
        let text = "ééééé"; // Ten bytes, two per character.
        let out = truncate_output(text, 5, Keep::Head);
        assert!(out.starts_with("éé\n"), "{out}");
        let out = truncate_output(text, 5, Keep::HeadAndTail);
        assert!(out.starts_with("é\n") && out.ends_with("\né"), "{out}");
    }

    #[test]
    fn capped_buffer_keeps_head_and_latest_tail() {
        let mut buffer = CappedBuffer::new(4);
        for chunk in [b"ab".as_slice(), b"cd", b"ef", b"g", b"hij"] {
            buffer.push(chunk);
        }
        assert_eq!(buffer.total(), 10);
        assert_eq!(
            buffer.render(),
            "ab\n[... output truncated: 6 of 10 bytes omitted ...]\nij"
        );

        let mut small = CappedBuffer::new(100);
        small.push(b"all of it");
        assert_eq!(small.render(), "all of it");
    }
}
