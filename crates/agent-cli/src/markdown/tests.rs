//! The streaming Markdown renderer over the shared layout: a text cut anywhere renders as the
//! whole, every block without its markup, words wrapped at the width, tables aligned.

use super::*;

/// A text with every block the renderer knows, wide characters and a hostile sequence.
const SAMPLE: &str = "# Plan\n\nSome **bold**, *italic* and `code` — ünïcødé ✓ 漢字 text that is long \
enough to wrap on a narrow terminal.\n\n- one\n- two **b**\n  1. nested\n> quoted \
\u{1b}[31mred\u{1b}[0m\n\n```rust\nfn main() {}\n\n```\n| a | b |\n|:--|--:|\n| x | 10 |\n| \
longer cell | 2 |\nafter the table\n---\n[link](https://example.com) ~~gone~~ last line";

/// Rendered whole, at `width` columns, without colours.
fn whole(text: &str, width: usize, color: bool) -> String {
    let mut markdown = Markdown::new(width, color);
    let mut out = markdown.push(text);
    out.push_str(&markdown.finish());
    out
}

fn check(text: &str, width: usize, expect: &str) {
    assert_eq!(whole(text, width, false), expect, "{text:?}");
}

#[test]
fn a_stream_cut_anywhere_renders_as_the_whole() {
    for color in [false, true] {
        let expect = whole(SAMPLE, 40, color);
        for cut in (0..=SAMPLE.len()).filter(|i| SAMPLE.is_char_boundary(*i)) {
            let mut markdown = Markdown::new(40, color);
            let mut out = markdown.push(&SAMPLE[..cut]);
            out.push_str(&markdown.push(&SAMPLE[cut..]));
            out.push_str(&markdown.finish());
            assert_eq!(out, expect, "cut at byte {cut}");
        }
        // And one character at a time.
        let mut markdown = Markdown::new(40, color);
        let mut out = String::new();
        for c in SAMPLE.chars() {
            out.push_str(&markdown.push(c.encode_utf8(&mut [0; 4])));
        }
        out.push_str(&markdown.finish());
        assert_eq!(out, expect);
    }
}

#[test]
fn blocks_are_rendered_without_their_markup() {
    check(
        "# Title\n\n\n## Sub\nSome **bold** and `code`.\n",
        80,
        "Title\n\nSub\nSome bold and code.\n",
    );
    check("- one\n- two\n  - three\n", 80, "• one\n• two\n  • three\n");
    check("3. c\n4. d\n", 80, "3. c\n4. d\n");
    check("> said\n", 80, "│ said\n");
    check("- [x] done\n", 80, "• [x] done\n");
    check(
        "[docs](https://e.org) and <https://e.org>\n",
        80,
        "docs (https://e.org) and https://e.org\n",
    );
    check("---\n", 10, &format!("{}\n", "─".repeat(20)));
    check(
        "```sh\ncargo test\n  indented\n```\nafter\n",
        80,
        "  ╭ sh\n  cargo test\n    indented\nafter\n",
    );
    // An unclosed fence ends with the text.
    check("```\nopen", 80, "  open\n");
}

#[test]
fn words_wrap_at_the_width_and_items_hang_from_their_marker() {
    check(
        "alpha beta gamma delta epsilon\n",
        20,
        "alpha beta gamma\ndelta epsilon\n",
    );
    check(
        "- alpha beta gamma delta epsilon\n",
        20,
        "• alpha beta gamma\n  delta epsilon\n",
    );
    // `**bold**,` is one word: never broken before its comma.
    check(
        "aaaaaaaaaaaaaaa **bbbb**, c\n",
        20,
        "aaaaaaaaaaaaaaa\nbbbb, c\n",
    );
    // Only a word wider than the whole row is broken.
    check(
        &format!("{}\n", "x".repeat(25)),
        20,
        &format!("{}\n{}\n", "x".repeat(20), "x".repeat(5)),
    );
    // Wide characters take two columns.
    check(
        "漢字漢字漢字 漢字漢字漢字\n",
        20,
        "漢字漢字漢字\n漢字漢字漢字\n",
    );
}

#[test]
fn tables_are_aligned_once_their_last_row_is_in() {
    let mut markdown = Markdown::new(80, false);
    assert_eq!(markdown.push("| name | n |\n|---|--:|\n| a | 1 |\n"), "");
    assert_eq!(
        markdown.push("| bb | 22 |\nafter\n"),
        "name │  n\n─────┼───\na    │  1\nbb   │ 22\nafter\n"
    );
    // Rows without a delimiter row are plain lines.
    check("| just a pipe\n", 80, "| just a pipe\n");
}

#[test]
fn styles_are_drawn_with_colours_and_no_asterisks() {
    let out = whole("Some **bold** and *it* `c`\n", 80, true);
    assert!(out.contains("\u{1b}[1mbold\u{1b}[0m"), "{out:?}");
    assert!(out.contains("\u{1b}[3mit\u{1b}[0m"), "{out:?}");
    assert!(out.contains("\u{1b}[36mc\u{1b}[0m"), "{out:?}");
    assert!(!out.contains('*'), "{out:?}");
}

#[test]
fn the_models_control_sequences_never_pass() {
    let out = whole("a \u{1b}[2Jb \u{1b}]0;title\u{7}c\n", 80, true);
    assert_eq!(out, "a b c\n");
}

#[test]
fn the_unfinished_line_is_previewed_and_held() {
    let mut markdown = Markdown::new(20, false);
    assert_eq!(markdown.push("done\nalpha beta gamma delta"), "done\n");
    assert_eq!(
        markdown.preview(1).as_deref(),
        Some("delta"),
        "the last row of the wrapped unfinished line"
    );
    assert_eq!(
        markdown.preview(5).as_deref(),
        Some("alpha beta gamma\ndelta")
    );
    assert_eq!(markdown.finish(), "alpha beta gamma\ndelta\n");
    assert_eq!(markdown.preview(1), None);
}
