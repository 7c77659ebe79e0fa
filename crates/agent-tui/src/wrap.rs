//! Styled text fitted to a width: words wrapped onto lines that start with a prefix (a list
//! marker, a quote bar, an indent), words longer than a line cut, and the model's text cleaned
//! of terminal control sequences before anything is drawn.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `text` without terminal control sequences or control characters (a tab becomes four
/// spaces; line breaks stay), so that nothing the model wrote can move the cursor or recolour
/// the screen.
pub(crate) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC and the other strings: up to BEL or ESC \.
                Some(']' | 'P' | '_' | '^') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The width of `text` on a terminal, in columns.
pub(crate) fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// The width of a line's spans.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| width(&span.content)).sum()
}

/// `text` cut to `max` columns, with `…` when something was cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `text` cut into rows of at most `columns` columns, characters kept as they are (leading
/// spaces too): for what must not be reflowed, like a command or a diff.
pub(crate) fn rows(text: &str, columns: usize) -> Vec<String> {
    let columns = columns.max(1);
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let mut row = String::new();
        let mut used = 0;
        for c in line.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > columns {
                rows.push(std::mem::take(&mut row));
                used = 0;
            }
            row.push(c);
            used += w;
        }
        rows.push(row);
    }
    rows
}

/// One piece of a paragraph: a word (its pieces in their styles: `**bold**,` is one word of
/// two pieces, never broken before its comma), a space, or a line break.
enum Token {
    Word(Vec<Span<'static>>),
    Space(Style),
    Break,
}

fn tokens(spans: &[Span<'static>]) -> Vec<Token> {
    let mut out = Vec::new();
    // The word being read, which may go on in the next span.
    let mut pieces: Vec<Span<'static>> = Vec::new();
    for span in spans {
        let mut word = String::new();
        for c in span.content.chars() {
            if c == '\n' || c == ' ' {
                if !word.is_empty() {
                    pieces.push(Span::styled(std::mem::take(&mut word), span.style));
                }
                if !pieces.is_empty() {
                    out.push(Token::Word(std::mem::take(&mut pieces)));
                }
                out.push(if c == '\n' {
                    Token::Break
                } else {
                    Token::Space(span.style)
                });
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            pieces.push(Span::styled(word, span.style));
        }
    }
    if !pieces.is_empty() {
        out.push(Token::Word(pieces));
    }
    out
}

/// Lines being filled.
struct Filler {
    width: usize,
    rest: Vec<Span<'static>>,
    lines: Vec<Line<'static>>,
    line: Vec<Span<'static>>,
    used: usize,
    /// Whether the line has text besides its prefix.
    filled: bool,
}

impl Filler {
    fn push_line(&mut self) {
        let line = std::mem::replace(&mut self.line, self.rest.clone());
        self.lines.push(Line::from(line));
        self.used = spans_width(&self.rest);
        self.filled = false;
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    fn word(&mut self, pieces: Vec<Span<'static>>) {
        let w = spans_width(&pieces);
        if w > self.room() && self.filled {
            self.push_line();
        }
        if w <= self.room() {
            self.used += w;
            self.line.extend(pieces);
            self.filled = true;
            return;
        }
        // Longer than a whole line: cut it.
        for span in pieces {
            let style = span.style;
            let mut piece = String::new();
            for c in span.content.chars() {
                let cw = c.width().unwrap_or(0);
                if cw > self.room() && (self.filled || !piece.is_empty()) {
                    if !piece.is_empty() {
                        self.line
                            .push(Span::styled(std::mem::take(&mut piece), style));
                    }
                    self.push_line();
                }
                piece.push(c);
                self.used += cw;
                self.filled = true;
            }
            if !piece.is_empty() {
                self.line.push(Span::styled(piece, style));
            }
        }
    }

    fn space(&mut self, style: Style) {
        if !self.filled {
            return;
        }
        if self.room() == 0 {
            self.push_line();
            return;
        }
        self.used += 1;
        self.line.push(Span::styled(" ", style));
    }
}

/// `spans` wrapped at word boundaries to `width` columns: the first line starts with `first`,
/// the others with `rest`; `\n` in the text breaks a line.
pub(crate) fn wrap(
    spans: &[Span<'static>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut filler = Filler {
        width: width.max(spans_width(rest) + 1).max(spans_width(first) + 1),
        rest: rest.to_vec(),
        lines: Vec::new(),
        line: first.to_vec(),
        used: spans_width(first),
        filled: false,
    };
    for token in tokens(spans) {
        match token {
            Token::Word(pieces) => filler.word(pieces),
            Token::Space(style) => filler.space(style),
            Token::Break => filler.push_line(),
        }
    }
    filler.push_line();
    for line in &mut filler.lines {
        // Spaces at the end of a line are not drawn.
        while line
            .spans
            .last()
            .is_some_and(|span| span.content.trim().is_empty() && line.spans.len() > 1)
        {
            line.spans.pop();
        }
    }
    filler.lines
}

/// Plain `text` in `style`, wrapped to `width` after `first` / `rest`.
pub(crate) fn wrap_text(
    text: &str,
    style: Style,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    wrap(&[Span::styled(clean(text), style)], width, first, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn words_wrap_under_their_prefix_and_long_words_are_cut() {
        let lines = wrap_text(
            "one two three four",
            Style::new(),
            10,
            &[Span::raw("- ")],
            &[Span::raw("  ")],
        );
        assert_eq!(texts(&lines), ["- one two", "  three", "  four"]);
        let lines = wrap_text("abcdefghij", Style::new(), 6, &[], &[]);
        assert_eq!(texts(&lines), ["abcdef", "ghij"]);
        let lines = wrap_text("a\nb", Style::new(), 6, &[], &[]);
        assert_eq!(texts(&lines), ["a", "b"]);
    }

    #[test]
    fn control_sequences_are_removed() {
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m\tb\u{7}"), "ared    b");
        assert_eq!(clean("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(rows("  abcdef\nx", 4), ["  ab", "cdef", "x"]);
    }
}
