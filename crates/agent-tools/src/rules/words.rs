//! A word of a script as the shell expands it, as far as that can be told without running it:
//! quotes and escapes removed, ANSI-C quoting (`$'\x72m'`) decoded, brace expansion
//! (`{rm,-rf,t}`, `r{m,}`, `{1..3}`) done, and what runs inside it (command substitutions, also
//! inside parameter expansions such as `${x:-$(cmd)}` and arithmetic such as `$(( $(cmd) ))`)
//! walked. A word that depends on an expansion, or is a pathname pattern (`/usr/bin/r[m]`),
//! has no known text.

use brush_parser::ParserOptions;
use brush_parser::word::WordPiece;

/// What expanding words tells the walk of a script: what cannot be known, the variables
/// arithmetic reads, and the scripts of command substitutions, to be walked in turn.
pub(crate) trait Found {
    /// Some of what runs cannot be known, and why.
    fn unknown(&mut self, why: String);
    /// Arithmetic reads the variable `name`.
    fn arithmetic_name(&mut self, name: String);
    /// A substitution runs `script`, `depth` levels deep.
    fn script(&mut self, script: &str, depth: usize);
}

/// How many words one word may expand to before its braces count as unreadable.
const MAX_BRACE_WORDS: usize = 256;

/// The characters of a word, each with whether it was quoted (quoted ones are never syntax).
type Chars = Vec<(char, bool)>;

/// The words `word` expands to (`None` for one that depends on an expansion or is a pattern);
/// what runs inside it is added to `found`.
pub(crate) fn expand<F: Found>(word: &str, depth: usize, found: &mut F) -> Vec<Option<String>> {
    let options = ParserOptions::default();
    let Ok(pieces) = brush_parser::word::parse(word, &options) else {
        found.unknown(format!("the word {word:?} cannot be parsed"));
        return vec![None];
    };
    let mut chars = Some(Chars::new());
    for piece in &pieces {
        let raw = word.get(piece.start_index..piece.end_index).unwrap_or("");
        literal(&piece.piece, raw, false, depth, found, &mut chars);
    }
    let Some(chars) = chars else {
        return vec![None];
    };
    let Some(words) = braces(&chars) else {
        found.unknown("a brace expansion too large to read".into());
        return vec![None];
    };
    words
        .into_iter()
        .map(|chars| {
            let pattern = chars.iter().enumerate().any(|(i, (c, quoted))| {
                !quoted
                    && (matches!(c, '*' | '?' | '[')
                        || (matches!(c, '+' | '@' | '!')
                            && chars.get(i + 1).is_some_and(|(next, q)| *next == '(' && !q)))
            });
            (!pattern).then(|| chars.into_iter().map(|(c, _)| c).collect())
        })
        .collect()
}

fn literal<F: Found>(
    piece: &WordPiece,
    raw: &str,
    quoted: bool,
    depth: usize,
    found: &mut F,
    chars: &mut Option<Chars>,
) {
    let mut push = |text: &str, quoted: bool| {
        if let Some(chars) = chars.as_mut() {
            chars.extend(text.chars().map(|c| (c, quoted)));
        }
    };
    match piece {
        WordPiece::Text(s) => push(s, quoted),
        WordPiece::SingleQuotedText(s) => push(s, true),
        WordPiece::AnsiCQuotedText(s) => push(&ansi_c(s), true),
        WordPiece::EscapeSequence(s) => push(s.strip_prefix('\\').unwrap_or(s), true),
        WordPiece::TildeExpansion(_) => push("~", quoted),
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for piece in inner {
                let raw = raw_of(raw, piece.start_index, piece.end_index);
                literal(&piece.piece, raw, true, depth, found, chars);
            }
        }
        WordPiece::CommandSubstitution(script)
        | WordPiece::BackquotedCommandSubstitution(script) => {
            found.script(script, depth + 1);
            *chars = None;
        }
        WordPiece::ParameterExpansion(_) => {
            parameter(raw, depth, found);
            *chars = None;
        }
        WordPiece::ArithmeticExpression(expression) => {
            arithmetic(&expression.value, depth, found);
            *chars = None;
        }
    }
}

/// The source text of a piece nested in another (the indexes of nested pieces are those of the
/// whole word, or of the sequence; the piece's own text is looked up either way).
fn raw_of(raw: &str, start: usize, end: usize) -> &str {
    raw.get(start..end).unwrap_or(raw)
}

/// What runs inside a parameter expansion's words (`${x:-$(cmd)}`, `${a[$(cmd)]}`); a prompt
/// expansion (`${x@P}`) runs what the variable holds, which cannot be known.
fn parameter<F: Found>(raw: &str, depth: usize, found: &mut F) {
    let Some(inner) = raw.strip_prefix("${").and_then(|r| r.strip_suffix('}')) else {
        if let Some(name) = raw.strip_prefix('$') {
            found.arithmetic_name(name.to_owned());
        }
        return;
    };
    if inner.contains("@P") {
        found.unknown("a prompt expansion (`@P`) runs what a variable holds".into());
    }
    // Subscripts and offsets are arithmetic, which reads variables as expressions.
    if inner.contains('[') || inner.contains(':') {
        arithmetic(inner, depth, found);
        return;
    }
    if inner.contains("$(") || inner.contains('`') || inner.contains("${") {
        let _ = expand(inner, depth + 1, found);
    }
}

/// An arithmetic expression: what runs in it is walked, and the variables it reads are noted
/// (a variable holding `a[$(cmd)]` runs `cmd` when read here).
pub(crate) fn arithmetic<F: Found>(text: &str, depth: usize, found: &mut F) {
    if text.contains("$(") || text.contains('`') || text.contains("${") {
        let _ = expand(text, depth + 1, found);
    }
    let mut name = String::new();
    let mut in_number = false;
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            if name.is_empty() && c.is_ascii_digit() {
                in_number = true;
            }
            name.push(c);
            continue;
        }
        if !name.is_empty() && !in_number {
            found.arithmetic_name(std::mem::take(&mut name));
        }
        name.clear();
        in_number = false;
    }
}

/// Decodes the inside of ANSI-C quoting (`$'...'`) as bash does.
pub(crate) fn ansi_c(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(kind) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut digits = |radix: u32, max: usize, first: Option<char>| {
            let mut value = String::new();
            value.extend(first);
            while value.len() < max
                && let Some(&d) = chars.peek()
                && d.is_digit(radix)
            {
                value.push(d);
                chars.next();
            }
            u32::from_str_radix(&value, radix)
                .ok()
                .and_then(char::from_u32)
        };
        let decoded = match kind {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(kind),
            '0'..='7' => digits(8, 3, Some(kind)),
            'x' => digits(16, 2, None),
            'u' => digits(16, 4, None),
            'U' => digits(16, 8, None),
            'c' => chars
                .next()
                .and_then(|c| char::from_u32(u32::from(c.to_ascii_uppercase()) ^ 0x40)),
            other => {
                out.push('\\');
                Some(other)
            }
        };
        out.extend(decoded);
    }
    out
}

/// The words brace expansion makes of `chars` (unquoted braces only); `None` past
/// [`MAX_BRACE_WORDS`].
fn braces(chars: &[(char, bool)]) -> Option<Vec<Chars>> {
    let Some((open, close, alternatives)) = first_brace(chars) else {
        return Some(vec![chars.to_vec()]);
    };
    let mut words = Vec::new();
    for alternative in alternatives {
        let mut joined = chars[..open].to_vec();
        joined.extend(alternative);
        joined.extend_from_slice(&chars[close + 1..]);
        words.extend(braces(&joined)?);
        if words.len() > MAX_BRACE_WORDS {
            return None;
        }
    }
    Some(words)
}

/// The first brace expression of `chars`: where it opens and closes, and its alternatives.
fn first_brace(chars: &[(char, bool)]) -> Option<(usize, usize, Vec<Chars>)> {
    let syntax = |i: usize, c: char| chars.get(i).is_some_and(|(x, q)| *x == c && !q);
    for open in (0..chars.len()).filter(|&i| syntax(i, '{')) {
        let (mut level, mut commas) = (0, Vec::new());
        let mut close = None;
        for i in open + 1..chars.len() {
            if syntax(i, '{') {
                level += 1;
            } else if syntax(i, '}') {
                if level == 0 {
                    close = Some(i);
                    break;
                }
                level -= 1;
            } else if syntax(i, ',') && level == 0 {
                commas.push(i);
            }
        }
        let Some(close) = close else { continue };
        if !commas.is_empty() {
            let mut parts = Vec::new();
            let mut start = open + 1;
            for comma in commas.into_iter().chain(std::iter::once(close)) {
                parts.push(chars[start..comma].to_vec());
                start = comma + 1;
            }
            return Some((open, close, parts));
        }
        let body: String = chars[open + 1..close].iter().map(|(c, _)| *c).collect();
        if let Some(sequence) = sequence(&body) {
            let parts = sequence
                .into_iter()
                .map(|item| item.chars().map(|c| (c, true)).collect())
                .collect();
            return Some((open, close, parts));
        }
    }
    None
}

/// The items of a sequence expression's body (`1..3`, `a..e`, `10..1..2`).
fn sequence(body: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = body.split("..").collect();
    let (start, end, step) = match parts.as_slice() {
        [start, end] => (*start, *end, 1),
        [start, end, step] => (
            *start,
            *end,
            step.parse::<i64>().ok()?.unsigned_abs().max(1),
        ),
        _ => return None,
    };
    let step = usize::try_from(step).ok()?;
    if let (Ok(a), Ok(b)) = (start.parse::<i64>(), end.parse::<i64>()) {
        let items: Vec<i64> = if a <= b {
            (a..=b).step_by(step).take(MAX_BRACE_WORDS + 1).collect()
        } else {
            (b..=a)
                .rev()
                .step_by(step)
                .take(MAX_BRACE_WORDS + 1)
                .collect()
        };
        return Some(items.into_iter().map(|n| n.to_string()).collect());
    }
    let (mut a, mut b) = (start.chars(), end.chars());
    let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else {
        return None;
    };
    let (lo, hi) = (u32::from(a.min(b)), u32::from(a.max(b)));
    let mut items: Vec<String> = (lo..=hi)
        .step_by(step)
        .filter_map(char::from_u32)
        .map(String::from)
        .collect();
    if a > b {
        items.reverse();
    }
    Some(items)
}
