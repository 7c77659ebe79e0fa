//! Front matter: `key: value` lines between two `---` lines at the top of a Markdown file, a
//! subset of YAML, read into JSON values. Agent profile files (`.agent/agents/*.md`) and plan
//! templates (`.agent/plans/*.md`, [`crate::plan_templates`]) use it.
//!
//! The subset: values are plain or quoted strings (`"…"` with `\"`, `\\`, `\n`, `\t` escapes,
//! or `'…'` with `''`), numbers, `true`/`false`, lists as `[a, b]` or `- item` lines under their
//! key; `key: |` (lines kept) and `key: >` (lines joined) start a block of indented lines;
//! indented `key: value` lines under a `key:` make a table; dotted keys fill tables
//! (`loop_guard.repeated_call: 5`); `#` starts a comment line, and ` #` a comment after a value.
//! Field names are letters, digits, `_`, `.` and `-` (Claude Code's `allowed-tools`).
//!
//! ```
//! use agent_plan::front_matter::{self, Syntax};
//!
//! let text = "---\ndescription: Reviews code\nmax_iterations: 20\nparams:\n  module: src/lib.rs\n---\nBody\n";
//! let (fields, body) = front_matter::parse(text, &Syntax::default()).unwrap();
//! assert_eq!(fields["description"], "Reviews code");
//! assert_eq!(fields["max_iterations"], 20);
//! assert_eq!(fields["params"]["module"], "src/lib.rs");
//! assert_eq!(body, "Body\n");
//! ```

use serde_json::{Map, Value};

/// Why front matter cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontMatterError {
    /// The text does not start with a `---` line.
    #[error("has no front matter: the file does not start with a `---` line")]
    Missing,
    /// The opening `---` line has no closing one.
    #[error("the front matter that starts on line 1 has no closing `---` line")]
    Unclosed,
    /// A line or a field cannot be read.
    #[error("{message}")]
    Invalid {
        /// The field at fault, when one is.
        field: Option<String>,
        /// What is wrong, with its line number.
        message: String,
    },
}

/// How values are read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Syntax<'a> {
    /// Keys (the last part of a dotted key) whose values are always text, even when they look
    /// like numbers or booleans.
    pub text_keys: &'a [&'a str],
    /// Every value written on its key's line is text (unquoted), never a number, boolean or
    /// list.
    pub all_text: bool,
    /// A key with no value (`key:` alone, or `key: ~`) is kept as `null` instead of left out.
    pub keep_empty: bool,
}

/// Splits `text` into its front-matter fields and its body (what follows the closing `---`
/// line). A text that does not start with a `---` line is [`FrontMatterError::Missing`]; see
/// [`has_front_matter`].
pub fn parse<'t>(
    text: &'t str,
    syntax: &Syntax<'_>,
) -> Result<(Map<String, Value>, &'t str), FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !has_front_matter(text) {
        return Err(FrontMatterError::Missing);
    }
    let first_end = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut offset = first_end;
    let mut number = 1;
    let mut lines = Vec::new();
    while offset < text.len() {
        let end = text[offset..]
            .find('\n')
            .map_or(text.len(), |i| offset + i + 1);
        let line = text[offset..end].trim_end_matches(['\n', '\r']);
        number += 1;
        if line.trim_end() == "---" {
            let fields = Reader { syntax }
                .fields(&lines)
                .map_err(|(field, message)| FrontMatterError::Invalid { field, message })?;
            return Ok((fields, &text[end..]));
        }
        lines.push((number, line));
        offset = end;
    }
    Err(FrontMatterError::Unclosed)
}

/// Whether `text` starts with a `---` line (after a byte-order mark), that is has front matter
/// for [`parse`] to read.
pub fn has_front_matter(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_end = text.find('\n').map_or(text.len(), |i| i + 1);
    text[..first_end].trim_end() == "---"
}

/// An error: the field at fault, if one is, and what is wrong.
type ParseError = (Option<String>, String);

/// Reads lines with a [`Syntax`].
struct Reader<'s> {
    syntax: &'s Syntax<'s>,
}

impl Reader<'_> {
    /// Reads `key: value` lines (with their line numbers) into an object.
    fn fields(&self, lines: &[(usize, &str)]) -> Result<Map<String, Value>, ParseError> {
        let mut map = Map::new();
        let mut index = 0;
        while index < lines.len() {
            let (number, line) = lines[index];
            index += 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if line.starts_with([' ', '\t']) || trimmed.starts_with('-') {
                return Err((
                    None,
                    format!("line {number}: an indented line or list item belongs under a `key:`"),
                ));
            }
            let Some((key, rest)) = trimmed.split_once(':') else {
                return Err((None, format!("line {number}: expected `key: value`")));
            };
            let key = key.trim();
            let key_ok = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !key_ok {
                return Err((None, format!("line {number}: {key:?} is not a field name")));
            }
            let fail =
                |message: String| (Some(key.to_owned()), format!("line {number}: {message}"));
            let rest = without_comment(rest.trim());
            // The indented lines (and list items) that follow belong to this key.
            let start = index;
            while index < lines.len() {
                let next = lines[index].1;
                let next_trimmed = next.trim();
                let belongs = next.starts_with([' ', '\t'])
                    || next_trimmed.is_empty()
                    || (rest.is_empty() && next_trimmed.starts_with('-'));
                if !belongs {
                    break;
                }
                index += 1;
            }
            let block = &lines[start..index];
            let value = match rest {
                "|" | "|-" | "|+" => Value::String(block_text(block, "\n")),
                ">" | ">-" | ">+" => Value::String(block_text(block, " ")),
                "" => self
                    .nested(block)
                    .map_err(|(_, message)| (Some(key.to_owned()), message))?,
                _ if block.iter().any(|(_, l)| !l.trim().is_empty()) => {
                    return Err(fail(
                        "a value on the line of its key cannot go on over indented lines; use \
                         `key: |` for text of several lines"
                            .into(),
                    ));
                }
                _ => self.scalar(key, rest),
            };
            if value.is_null() && !self.syntax.keep_empty {
                continue;
            }
            insert(&mut map, key, value).map_err(fail)?;
        }
        Ok(map)
    }

    /// The value of a key with nothing after its colon: the list or the table of the lines under
    /// it, or nothing.
    fn nested(&self, block: &[(usize, &str)]) -> Result<Value, ParseError> {
        let items: Vec<(usize, &str)> = block
            .iter()
            .copied()
            .filter(|(_, line)| !line.trim().is_empty() && !line.trim().starts_with('#'))
            .collect();
        if items.is_empty() {
            return Ok(Value::Null);
        }
        if items.iter().all(|(_, line)| line.trim().starts_with('-')) {
            return Ok(Value::Array(
                items
                    .iter()
                    .map(|(_, line)| Value::String(unquote(line.trim()[1..].trim())))
                    .collect(),
            ));
        }
        let indent = indent_of(&items);
        let dedented: Vec<(usize, &str)> = items
            .iter()
            .map(|(number, line)| (*number, line.get(indent..).unwrap_or("")))
            .collect();
        self.fields(&dedented).map(Value::Object)
    }

    /// A value written on its key's line.
    fn scalar(&self, key: &str, text: &str) -> Value {
        let last = key.rsplit('.').next().unwrap_or(key);
        if self.syntax.all_text || self.syntax.text_keys.contains(&last) {
            if self.syntax.all_text && text == "~" {
                return Value::Null;
            }
            return Value::String(unquote(text));
        }
        if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return Value::Array(
                inner
                    .split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| Value::String(unquote(item)))
                    .collect(),
            );
        }
        match text {
            "true" => return Value::Bool(true),
            "false" => return Value::Bool(false),
            "null" | "~" => return Value::Null,
            _ => {}
        }
        if let Ok(number) = text.parse::<u64>() {
            return Value::from(number);
        }
        if let Ok(number) = text.parse::<i64>() {
            return Value::from(number);
        }
        if let Ok(number) = text.parse::<f64>()
            && number.is_finite()
        {
            return Value::from(number);
        }
        Value::String(unquote(text))
    }
}

/// The text of a `|` or `>` block: its lines without their common indent, joined by `join`
/// (a blank line always starts a new paragraph).
fn block_text(block: &[(usize, &str)], join: &str) -> String {
    let lines: Vec<&str> = block.iter().map(|(_, line)| *line).collect();
    let indent = indent_of(block);
    let mut out = String::new();
    let mut previous_blank = true;
    for line in lines {
        let text = line.get(indent..).unwrap_or("").trim_end();
        if text.trim().is_empty() {
            out.push('\n');
            previous_blank = true;
            continue;
        }
        if !previous_blank {
            out.push_str(join);
        }
        out.push_str(text);
        previous_blank = false;
    }
    out.trim().to_owned()
}

/// The smallest indent of the non-blank lines.
fn indent_of(lines: &[(usize, &str)]) -> usize {
    lines
        .iter()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(_, line)| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0)
}

/// A value without its trailing comment: ` #` and what follows, outside quotes (as in YAML, so
/// a `#` inside a word, like `C#`, stays).
fn without_comment(text: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if std::mem::take(&mut escaped) {
            previous = c;
            continue;
        }
        match (quote, c) {
            (None, '"' | '\'') if at == 0 => quote = Some(c),
            (Some('"'), '\\') => escaped = true,
            (Some(open), _) if c == open => quote = None,
            (None, '#') if previous.is_whitespace() && at > 0 => return text[..at].trim_end(),
            _ => {}
        }
        previous = c;
    }
    text
}

/// A string without its quotes (`"…"` with `\"`, `\\`, `\n` escapes, or `'…'` with `''`).
fn unquote(text: &str) -> String {
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        let inner = &text[1..text.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        return out;
    }
    if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') {
        return text[1..text.len() - 1].replace("''", "'");
    }
    text.to_owned()
}

/// Inserts `value` under a key that may be dotted (`loop_guard.repeated_call`).
fn insert(map: &mut Map<String, Value>, key: &str, value: Value) -> Result<(), String> {
    let mut parts = key.split('.').peekable();
    let mut current = map;
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(format!("{key:?} is not a field name"));
        }
        if parts.peek().is_none() {
            if current.contains_key(part) {
                return Err(format!("`{key}` is given twice"));
            }
            current.insert(part.to_owned(), value);
            return Ok(());
        }
        let entry = current
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(next) = entry else {
            return Err(format!("`{part}` is not a table, so `{key}` cannot be set"));
        };
        current = next;
    }
    Ok(())
}
