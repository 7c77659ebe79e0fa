//! Parameter names and `{{name}}` placeholders in a template's text, and quoting for its front
//! matter.

use std::collections::{BTreeMap, BTreeSet};

/// A parameter name: ASCII letters, digits and `_`, not starting with a digit.
pub(super) fn check_param_name(name: &str) -> Result<(), String> {
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`params`: {name:?} is not a parameter name (letters, digits and '_', not starting \
             with a digit)"
        ))
    }
}

/// The placeholders of `text`: the names in `{{name}}` (spaces inside the braces allowed).
pub fn placeholders(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    scan(text, |name| {
        found.insert(name.to_owned());
        None
    });
    found
}

/// `text` with each placeholder of `values` replaced by its value, in one pass (a value is
/// never read for placeholders).
pub(super) fn fill(text: &str, values: &BTreeMap<&str, &str>) -> String {
    scan(text, |name| values.get(name).map(|v| (*v).to_owned()))
}

/// Walks the placeholders of `text`, giving each name to `replace`; returns the text with the
/// placeholders `replace` answered replaced.
fn scan(text: &str, mut replace: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let placeholder = after.find("}}").and_then(|close| {
            let name = after[..close].trim();
            check_param_name(name)
                .ok()
                .map(|()| (name, &after[close + 2..]))
        });
        match placeholder {
            Some((name, tail)) => {
                match replace(name) {
                    Some(value) => out.push_str(&value),
                    None => out.push_str(&rest[open..rest.len() - tail.len()]),
                }
                rest = tail;
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` as a double-quoted front-matter value; control characters other than line breaks
/// and tabs become spaces.
pub(super) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
