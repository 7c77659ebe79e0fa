//! Laying styled text out on a terminal: words wrapped to its width (a word is broken only when
//! it is wider than a whole row), and tables aligned in columns.

use pulldown_cmark::{Alignment, Event, Parser, Tag};

use super::inline::{Span, Style, options};

/// The columns `text` takes on a terminal.
pub(super) fn width(text: &str) -> usize {
    console::measure_text_width(text)
}

/// A word: the pieces of text between two spaces, each in its own style.
type Word = Vec<Span>;

/// The words of `spans`: runs of text between whitespace, kept whole across style changes (so
/// that `**bold**,` never breaks before its comma).
fn words(spans: &[Span]) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut word: Word = Vec::new();
    for span in spans {
        for c in span.text.chars() {
            if c.is_whitespace() {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            match word.last_mut() {
                Some(last) if last.style == span.style => last.text.push(c),
                _ => word.push(Span::new(c.to_string(), span.style)),
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The rows of `spans` laid out in `columns` columns: the first row starts with `first` (styled
/// already, `first_width` columns wide), the others with `hang` spaces. Always at least one row.
pub(super) fn wrap(
    spans: &[Span],
    columns: usize,
    (first, first_width): (&str, usize),
    hang: usize,
    color: bool,
) -> Vec<String> {
    // Too narrow a terminal still gets a few columns of text per row.
    let room = |start: usize| columns.saturating_sub(start).max(columns.min(8)).max(1);
    let mut rows = Vec::new();
    let mut row = first.to_owned();
    let mut used = 0;
    let mut limit = room(first_width);
    for word in words(spans) {
        let wide: usize = word.iter().map(|span| width(&span.text)).sum();
        if used > 0 && used + 1 + wide > limit {
            rows.push(std::mem::replace(&mut row, " ".repeat(hang)));
            used = 0;
            limit = room(hang);
        }
        if used > 0 {
            row.push(' ');
            used += 1;
        }
        for span in &word {
            // A word wider than a whole row is the only one ever broken.
            let mut piece = String::new();
            for c in span.text.chars() {
                let w = width(c.encode_utf8(&mut [0; 4]));
                if used + w > limit && used > 0 {
                    row.push_str(&span.style.paint(&piece, color));
                    piece.clear();
                    rows.push(std::mem::replace(&mut row, " ".repeat(hang)));
                    used = 0;
                    limit = room(hang);
                }
                piece.push(c);
                used += w;
            }
            row.push_str(&span.style.paint(&piece, color));
        }
    }
    rows.push(row);
    rows
}

/// The rows of a table, as Markdown; `None` when they are not a table (no delimiter row).
pub(super) fn table(rows: &[String], columns: usize, color: bool) -> Option<Vec<String>> {
    let text = rows.join("\n");
    let mut alignments = Vec::new();
    let mut cells: Vec<Vec<Vec<Span>>> = Vec::new();
    let mut styles = vec![Style::default()];
    let mut found = false;
    for event in Parser::new_ext(&text, options()) {
        let top = styles.last().copied().unwrap_or_default();
        match event {
            Event::Start(tag) => {
                let style = match tag {
                    Tag::Table(aligned) => {
                        found = true;
                        alignments = aligned;
                        top
                    }
                    Tag::TableHead => {
                        cells.push(Vec::new());
                        top.bold()
                    }
                    Tag::TableRow => {
                        cells.push(Vec::new());
                        top
                    }
                    Tag::TableCell => {
                        if let Some(row) = cells.last_mut() {
                            row.push(Vec::new());
                        }
                        top
                    }
                    Tag::Emphasis => Style {
                        italic: true,
                        ..top
                    },
                    Tag::Strong => top.bold(),
                    Tag::Strikethrough => Style {
                        strike: true,
                        ..top
                    },
                    _ => top,
                };
                styles.push(style);
            }
            Event::End(_) => {
                styles.pop();
            }
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                push_cell(&mut cells, Span::new(text.to_string(), top));
            }
            Event::Code(code) => {
                let style = top.colour(super::inline::Colour::Cyan);
                push_cell(&mut cells, Span::new(code.to_string(), style));
            }
            _ => {}
        }
    }
    if !found || cells.is_empty() {
        return None;
    }
    Some(lay_out_table(&cells, &alignments, columns, color))
}

fn push_cell(cells: &mut [Vec<Vec<Span>>], span: Span) {
    if let Some(cell) = cells.last_mut().and_then(|row| row.last_mut()) {
        cell.push(span);
    }
}

/// The table drawn with ` │ ` between columns and a rule under the header, each column as wide
/// as its widest cell, narrowed (its cells wrapped) when the whole is wider than the terminal.
fn lay_out_table(
    cells: &[Vec<Vec<Span>>],
    alignments: &[Alignment],
    columns: usize,
    color: bool,
) -> Vec<String> {
    let count = cells.iter().map(Vec::len).max().unwrap_or(0);
    let cell_width = |cell: &[Span]| cell.iter().map(|s| width(&s.text)).sum::<usize>();
    let mut widths: Vec<usize> = (0..count)
        .map(|i| {
            cells
                .iter()
                .filter_map(|row| row.get(i))
                .map(|cell| cell_width(cell))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let room = columns.saturating_sub(3 * count.saturating_sub(1));
    while widths.iter().sum::<usize>() > room {
        // Narrow the widest column, down to a floor of a few columns.
        let Some((widest, _)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
            break;
        };
        if widths[widest] <= 6 {
            break;
        }
        widths[widest] -= 1;
    }
    let bar = Style::default().dim().paint(" │ ", color);
    let mut out = Vec::new();
    for (index, row) in cells.iter().enumerate() {
        let laid: Vec<Vec<String>> = (0..count)
            .map(|i| {
                let cell = row.get(i).map(Vec::as_slice).unwrap_or_default();
                wrap(cell, widths[i], ("", 0), 0, color)
            })
            .collect();
        let height = laid.iter().map(Vec::len).max().unwrap_or(1);
        for line in 0..height {
            let parts: Vec<String> = laid
                .iter()
                .enumerate()
                .map(|(i, rows)| {
                    let text = rows.get(line).map(String::as_str).unwrap_or_default();
                    let align = alignments.get(i).copied().unwrap_or(Alignment::None);
                    pad(text, widths[i], align)
                })
                .collect();
            out.push(parts.join(&bar).trim_end().to_owned());
        }
        if index == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Style::default().dim().paint(&rule.join("─┼─"), color));
        }
    }
    out
}

/// `text` padded to `columns` as `align` says.
fn pad(text: &str, columns: usize, align: Alignment) -> String {
    let gap = columns.saturating_sub(width(text));
    match align {
        Alignment::Right => format!("{}{text}", " ".repeat(gap)),
        Alignment::Center => {
            let left = gap / 2;
            format!("{}{text}{}", " ".repeat(left), " ".repeat(gap - left))
        }
        Alignment::Left | Alignment::None => format!("{text}{}", " ".repeat(gap)),
    }
}
