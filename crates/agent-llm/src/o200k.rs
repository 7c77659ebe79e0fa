//! Counting tokens of the `o200k_base` encoding, the count `tiktoken`'s `encode_ordinary` gives,
//! from a table the build writes (`build.rs`): one map from each token's bytes, borrowed from
//! the table embedded in the program, to its rank. Loading it takes a few milliseconds, where
//! tiktoken-rs's own loader decodes base64 and builds an encoder, a decoder and a sorted copy
//! of 200,000 tokens, a few hundred milliseconds before a process's first count.
//!
//! The words are split by tiktoken's own pattern and merged by its byte-pair algorithm, so the
//! counts are the same (a test holds them against tiktoken-rs on varied text).

use std::sync::OnceLock;

use fancy_regex::Regex;
use rustc_hash::FxHashMap;

/// The table: for each rank, one length byte and the token's bytes.
static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bin"));

/// The loaded encoding: the word pattern and the ranks of the tokens.
pub(crate) struct Encoding {
    pattern: Regex,
    ranks: FxHashMap<&'static [u8], u32>,
}

/// The encoding, loaded on first use, once per process; `None` if tiktoken's pattern did not
/// compile, which the tests rule out.
pub(crate) fn encoding() -> Option<&'static Encoding> {
    static ENCODING: OnceLock<Option<Encoding>> = OnceLock::new();
    ENCODING.get_or_init(load).as_ref()
}

fn load() -> Option<Encoding> {
    let mut ranks = FxHashMap::with_capacity_and_hasher(200_000, Default::default());
    let (mut at, mut rank) = (0, 0u32);
    while at < TABLE.len() {
        let len = usize::from(TABLE[at]);
        if len > 0 {
            ranks.insert(&TABLE[at + 1..at + 1 + len], rank);
        }
        at += 1 + len;
        rank += 1;
    }
    let pattern = Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).ok()?;
    Some(Encoding { pattern, ranks })
}

impl Encoding {
    /// The number of tokens `encode_ordinary` gives for `text`.
    pub(crate) fn count(&self, text: &str) -> usize {
        let mut total = 0;
        let mut end = 0;
        for found in self.pattern.find_iter(text) {
            let Ok(word) = found else {
                // The pattern gave up (a backtracking limit): the rest at 4 bytes a token.
                return total + (text.len() - end).div_ceil(4);
            };
            end = word.end();
            let piece = word.as_str().as_bytes();
            total += if self.ranks.contains_key(piece) {
                1
            } else {
                self.merged(piece)
            };
        }
        total
    }

    /// The rank of `bytes`, or `u32::MAX` when they are not a token.
    fn rank(&self, bytes: &[u8]) -> u32 {
        self.ranks.get(bytes).copied().unwrap_or(u32::MAX)
    }

    /// The tokens of one word not in the table: tiktoken's byte-pair merge, which joins the
    /// adjacent pair of lowest rank until no pair is a token.
    fn merged(&self, piece: &[u8]) -> usize {
        if piece.len() < 2 {
            return piece.len();
        }
        // The rank of the part at `i` joined with the next one, or none.
        let rank = |parts: &[(usize, u32)], i: usize| -> u32 {
            parts
                .get(i + 3)
                .map_or(u32::MAX, |&(end, _)| self.rank(&piece[parts[i].0..end]))
        };
        // (start of the part, rank of the part joined with the next one)
        let mut parts: Vec<(usize, u32)> = (0..piece.len() - 1)
            .map(|i| (i, self.rank(&piece[i..i + 2])))
            .collect();
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        while let Some((i, _)) = parts[..parts.len() - 1]
            .iter()
            .enumerate()
            .filter(|(_, part)| part.1 != u32::MAX)
            .min_by_key(|(i, part)| (part.1, *i))
        {
            if i > 0 {
                parts[i - 1].1 = rank(&parts, i - 1);
            }
            parts[i].1 = rank(&parts, i);
            parts.remove(i + 1);
        }
        parts.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_tiktokens() {
        let reference = tiktoken_rs::o200k_base().unwrap();
        let schema = r#"{"type":"object","properties":{"path":{"type":"string","description":"The file to read, relative to the workspace"},"offset":{"type":"integer"}},"required":["path"]}"#;
        let texts = [
            "",
            "a",
            "Hello, world!",
            "The quick brown fox jumps over the lazy dog.\n\n  Indented\tline\r\n",
            schema,
            "fn main() {\n    println!(\"{}\", 42_000_000 + 0x1F);\n}\n",
            "Größe, naïve café — 東京タワー, Привет мир, مرحبا, 🙂👍🏽 emoji",
            "supercalifragilisticexpialidocious antidisestablishmentarianism",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "ZmFzdCBsb2FkaW5nIG9mIHRoZSB0b2tlbiB0YWJsZQ==/9j/4AAQSkZJRgABAQAAAQABAAD",
            "I'm sure they'll say we've done it, won't they? DON'T SHOUT'S",
            "   trailing spaces   \n\n\n",
        ];
        for text in texts {
            assert_eq!(
                encoding().unwrap().count(text),
                reference.encode_ordinary(text).len(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn the_table_holds_every_ordinary_token() {
        let reference = tiktoken_rs::o200k_base().unwrap();
        let ranks = &encoding().unwrap().ranks;
        assert_eq!(ranks.len(), 199_998);
        for (bytes, &rank) in ranks.iter().step_by(997) {
            assert_eq!(reference.decode_bytes(&[rank]).unwrap(), *bytes);
        }
    }
}
