//! How a risky call is shown before the user decides: the whole command of `bash`, a unified
//! diff of what `write_file` or `edit_file` would change (green and red when colours are on),
//! the arguments of any other tool. Everything the model wrote is stripped of terminal control
//! sequences first.

use std::path::Path;

use serde_json::Value;
use similar::TextDiff;

use crate::output::clean;

/// At most this many diff lines are shown; the rest is counted.
const MAX_DIFF_LINES: usize = 200;

/// The lines that describe `tool` called with `arguments` in `workspace`, with colours when
/// `color`.
pub(crate) fn describe(tool: &str, arguments: &str, workspace: &Path, color: bool) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(clean);
    match (tool, text("path")) {
        ("bash", _) => match text("command") {
            Some(command) => format!("{tool} wants to run:\n{}", indent(&command)),
            None => other(tool, &args),
        },
        ("write_file", Some(path)) => {
            let old = read(workspace, &path);
            let new = text("content").unwrap_or_default();
            let what = if old.is_some() { "replace" } else { "create" };
            format!(
                "{tool} wants to {what} {path}:\n{}",
                diff(&path, old.as_deref().unwrap_or(""), &new, color)
            )
        }
        ("edit_file", Some(path)) => {
            let (Some(old_text), Some(new_text)) = (text("old"), text("new")) else {
                return other(tool, &args);
            };
            let all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
            match read(workspace, &path) {
                Some(before) if before.contains(&old_text) => {
                    let after = if all {
                        before.replace(&old_text, &new_text)
                    } else {
                        before.replacen(&old_text, &new_text, 1)
                    };
                    format!(
                        "{tool} wants to change {path}:\n{}",
                        diff(&path, &before, &after, color)
                    )
                }
                _ => format!(
                    "{tool} wants to change {path} (the text to replace is not in the file; the \
                     edit will fail):\n{}",
                    diff(&path, &old_text, &new_text, color)
                ),
            }
        }
        _ => other(tool, &args),
    }
}

/// Any other tool: its name and its arguments as indented JSON.
fn other(tool: &str, args: &Value) -> String {
    let shown = match args {
        Value::Null => "(arguments that are not JSON)".to_owned(),
        args => serde_json::to_string_pretty(args).unwrap_or_default(),
    };
    format!("{tool} wants to run with:\n{}", indent(&clean(&shown)))
}

/// The file's text, if it is a readable UTF-8 file of the workspace.
fn read(workspace: &Path, path: &str) -> Option<String> {
    let absolute = agent_tools::resolve_in_workspace(workspace, path).ok()?;
    std::fs::read_to_string(absolute).ok()
}

/// A unified diff of `old` and `new`, at most [`MAX_DIFF_LINES`] lines, indented.
fn diff(path: &str, old: &str, new: &str, color: bool) -> String {
    let diff = TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_DIFF_LINES)
        .map(|line| format!("  {}", paint(line, color)))
        .collect();
    if lines.len() > MAX_DIFF_LINES {
        out.push(format!("  … {} more lines", lines.len() - MAX_DIFF_LINES));
    }
    if out.is_empty() {
        out.push("  (no change)".to_owned());
    }
    out.join("\n")
}

/// A diff line in its colour: additions green, removals red, hunk headers cyan.
fn paint(line: &str, color: bool) -> String {
    if !color {
        return line.to_owned();
    }
    let code = if line.starts_with("+++") || line.starts_with("---") {
        "1"
    } else if line.starts_with('+') {
        "32"
    } else if line.starts_with('-') {
        "31"
    } else if line.starts_with("@@") {
        "36"
    } else {
        return line.to_owned();
    };
    format!("\x1b[{code}m{line}\x1b[0m")
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_shows_the_diff_against_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let args = serde_json::json!({"path": "a.txt", "content": "one\n2\nthree\n"}).to_string();
        let shown = describe("write_file", &args, dir.path(), false);
        assert!(
            shown.starts_with("write_file wants to replace a.txt:"),
            "{shown}"
        );
        assert!(shown.contains("  -two\n  +2\n"), "{shown}");
        let args = serde_json::json!({"path": "new.txt", "content": "x\n"}).to_string();
        let shown = describe("write_file", &args, dir.path(), true);
        assert!(shown.contains("create new.txt"), "{shown}");
        assert!(shown.contains("\x1b[32m+x\x1b[0m"), "{shown}");
    }

    #[test]
    fn an_edit_shows_the_file_as_it_would_become() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        let args =
            serde_json::json!({"path": "b.rs", "old": "fn b() {}", "new": "fn c() {}"}).to_string();
        let shown = describe("edit_file", &args, dir.path(), false);
        assert!(shown.contains("  -fn b() {}\n  +fn c() {}"), "{shown}");
        let args = serde_json::json!({"path": "b.rs", "old": "zzz", "new": "y"}).to_string();
        assert!(describe("edit_file", &args, dir.path(), false).contains("will fail"));
    }

    #[test]
    fn commands_and_other_tools_are_shown_whole_and_clean() {
        let dir = tempfile::tempdir().unwrap();
        let args = serde_json::json!({"command": "cargo test\n\u{1b}[2Jrm -rf x"}).to_string();
        let shown = describe("bash", &args, dir.path(), false);
        assert_eq!(shown, "bash wants to run:\n  cargo test\n  rm -rf x");
        let shown = describe("mcp__files__delete", r#"{"path":"x"}"#, dir.path(), false);
        assert!(shown.contains("\"path\": \"x\""), "{shown}");
        assert!(describe("mcp__x__y", "nope", dir.path(), false).contains("not JSON"));
    }
}
