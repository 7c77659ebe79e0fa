//! Approval rules: tool calls allowed or denied before anyone is asked (`[approvals]` in
//! `agent.toml`, "always" answers on a terminal).
//!
//! A rule names a tool, optionally with a pattern in parentheses:
//!
//! - `read_file`, `mcp__files__*`: every call of the tool (`*` matches any run of characters);
//! - `bash(cargo test)`: shell commands that start with the words `cargo test` (`cargo test`,
//!   `cargo test --all`, not `cargo tests`). A command that chains or redirects (`;`, `&&`,
//!   `||`, `|`, `&`, `>`, `<`, a backquote, `$(`, a line break) is never *allowed* by a prefix —
//!   `git status && rm -rf ~` starts with `git status` — but is *denied* when any of its parts
//!   runs a denied prefix, looking through variable assignments, wrappers such as `sudo` or
//!   `env`, and a path before the program (`FOO=1 sudo /bin/rm -rf` runs `rm -rf`);
//! - `write_file(src/**)`, `edit_file(*.md)`, `read_file(.env)`: files whose path, relative to
//!   the workspace, matches the glob; a path outside the workspace never matches an allow rule.
//!
//! Claude Code's spellings work too: `Bash(npm test:*)`, `Write(src/**)`, `Edit`, `Read`.
//! Deny rules win over allow rules; they apply to every call, risky or not.

use std::path::Path;

use globset::{Glob, GlobMatcher};
use serde_json::Value;

/// A rule that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("approval rule {rule:?}: {reason}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub reason: String,
}

/// What the rules say about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// An allow rule matches (and no deny rule): run it without asking.
    Allow(String),
    /// A deny rule matches: refuse it; the rule as written.
    Deny(String),
}

/// One rule.
#[derive(Debug, Clone)]
struct Rule {
    text: String,
    tool: GlobMatcher,
    pattern: Option<Pattern>,
}

#[derive(Debug, Clone)]
enum Pattern {
    /// Words a shell command starts with.
    Prefix(Vec<String>),
    /// A glob over a file path relative to the workspace.
    Path(GlobMatcher),
}

/// Allow and deny rules, checked before a risky call asks for approval.
#[derive(Debug, Clone, Default)]
pub struct ApprovalRules {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
}

/// The tools whose pattern is a shell command prefix.
const SHELL_TOOLS: [&str; 1] = ["bash"];
/// The tools whose pattern is a path glob, with their `path` argument.
const FILE_TOOLS: [&str; 3] = ["read_file", "write_file", "edit_file"];

impl ApprovalRules {
    /// Reads `allow` and `deny` rules; the first rule that cannot be read is the error.
    pub fn parse<S: AsRef<str>>(allow: &[S], deny: &[S]) -> Result<Self, RuleError> {
        let read = |rules: &[S]| {
            rules
                .iter()
                .map(|rule| Rule::parse(rule.as_ref()))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self {
            allow: read(allow)?,
            deny: read(deny)?,
        })
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// These rules without their allow rules: what still holds where nothing risky may run
    /// unasked (a server whose approval mode is `never` refuses every risky call, yet a deny
    /// rule still refuses the calls it names that are not risky).
    pub fn deny_only(&self) -> Self {
        Self {
            allow: Vec::new(),
            deny: self.deny.clone(),
        }
    }

    /// Adds an allow rule (an "always" answer).
    pub fn allow(&mut self, rule: &str) -> Result<(), RuleError> {
        self.allow.push(Rule::parse(rule)?);
        Ok(())
    }

    /// What the rules say about calling `tool` with `arguments` (JSON as the model wrote it) in
    /// `workspace`; `None` when no rule matches.
    pub fn verdict(&self, tool: &str, arguments: &str, workspace: &Path) -> Option<RuleVerdict> {
        let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        if let Some(rule) = self
            .deny
            .iter()
            .find(|rule| rule.matches(tool, &arguments, workspace, true))
        {
            return Some(RuleVerdict::Deny(rule.text.clone()));
        }
        self.allow
            .iter()
            .find(|rule| rule.matches(tool, &arguments, workspace, false))
            .map(|rule| RuleVerdict::Allow(rule.text.clone()))
    }
}

/// The rule that allows commands starting as `command` does: its first two words (`cargo test`
/// for `cargo test --all`, `ls` for `ls -la`); `None` for a command that chains or redirects,
/// which no prefix may allow.
pub fn suggested_prefix(command: &str) -> Option<String> {
    if chains(command) {
        return None;
    }
    let words: Vec<&str> = command
        .split_whitespace()
        .take_while(|word| !word.starts_with('-'))
        .take(2)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Whether a command does more than run one program: a list, a pipe, a redirection, a
/// substitution or a background job.
fn chains(command: &str) -> bool {
    const OPERATORS: [&str; 9] = [";", "&", "|", ">", "<", "`", "$(", "\n", "\r"];
    OPERATORS.iter().any(|op| command.contains(op))
}

impl Rule {
    fn parse(text: &str) -> Result<Self, RuleError> {
        let error = |reason: &str| RuleError {
            rule: text.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = text.trim();
        let (name, pattern) = match trimmed.split_once('(') {
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| error("a pattern must end with `)`"))?;
                (name.trim(), Some(inner.trim()))
            }
            None => (trimmed, None),
        };
        if name.is_empty() {
            return Err(error("no tool name"));
        }
        let name = claude_alias(name);
        let tool = Glob::new(name)
            .map_err(|e| error(&format!("bad tool name: {e}")))?
            .compile_matcher();
        let pattern = match pattern {
            Some("") => {
                return Err(error(&format!(
                    "an empty pattern (`{name}` alone covers every call)"
                )));
            }
            None | Some("*" | "**") => None,
            Some(pattern) if SHELL_TOOLS.contains(&name) => {
                let pattern = pattern.strip_suffix(":*").unwrap_or(pattern);
                let pattern = pattern.strip_suffix(" *").unwrap_or(pattern);
                if chains(pattern) {
                    return Err(error("a command prefix cannot chain or redirect"));
                }
                let words: Vec<String> = pattern.split_whitespace().map(str::to_owned).collect();
                if words.is_empty() {
                    return Err(error("an empty command prefix"));
                }
                Some(Pattern::Prefix(words))
            }
            Some(pattern) if FILE_TOOLS.contains(&name) => Some(Pattern::Path(
                Glob::new(pattern)
                    .map_err(|e| error(&format!("bad path pattern: {e}")))?
                    .compile_matcher(),
            )),
            Some(_) => {
                return Err(error(&format!(
                    "only {} and {} take a pattern",
                    SHELL_TOOLS.join(", "),
                    FILE_TOOLS.join(", ")
                )));
            }
        };
        Ok(Self {
            text: text.to_owned(),
            tool,
            pattern,
        })
    }

    /// Whether the rule covers the call; `deny` rules match a chained command by any part.
    fn matches(&self, tool: &str, arguments: &Value, workspace: &Path, deny: bool) -> bool {
        if !self.tool.is_match(tool) {
            return false;
        }
        match &self.pattern {
            None => true,
            Some(Pattern::Prefix(words)) => {
                let Some(command) = arguments.get("command").and_then(Value::as_str) else {
                    return false;
                };
                if deny {
                    split_commands(command).any(|part| runs_words(part, words))
                } else {
                    !chains(command) && starts_with_words(command, words)
                }
            }
            Some(Pattern::Path(glob)) => {
                let Some(path) = arguments.get("path").and_then(Value::as_str) else {
                    return false;
                };
                match relative_path(workspace, path) {
                    Some(relative) => glob.is_match(relative),
                    // Outside the workspace: an allow never covers it; a deny matches the path
                    // as written.
                    None => deny && glob.is_match(path),
                }
            }
        }
    }
}

/// The tool names Claude Code's settings use, as this runtime names them.
fn claude_alias(name: &str) -> &str {
    match name {
        "Bash" => "bash",
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit_file",
        "Grep" => "grep",
        "Glob" => "glob_files",
        other => other,
    }
}

/// The simple commands of a command line, split at the operators that chain them.
fn split_commands(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(['\n', '\r', ';', '&', '|', '`', '(', ')', '>', '<'])
        .map(|part| part.trim_start_matches('$').trim())
        .filter(|part| !part.is_empty())
}

/// Commands that run the command after them (a deny rule looks through them).
const WRAPPERS: [&str; 9] = [
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice",
];

/// Whether the simple command `part` runs `words`, looking through what only changes how it
/// runs: variable assignments (`FOO=1 rm`), wrappers and their options (`sudo -u x rm`,
/// `env rm`), a path or a backslash before the program (`/bin/rm`, `\rm`). For deny rules.
fn runs_words(part: &str, words: &[String]) -> bool {
    let mut given = part.split_whitespace().peekable();
    let mut after_wrapper = false;
    while let Some(word) = given.peek() {
        let assignment = word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        let program = word.trim_start_matches('\\');
        let program = program.rsplit('/').next().unwrap_or(program);
        if assignment || (after_wrapper && word.starts_with('-')) {
            given.next();
        } else if WRAPPERS.contains(&program) {
            after_wrapper = true;
            given.next();
        } else {
            break;
        }
    }
    let mut first = true;
    words.iter().all(|word| {
        let Some(next) = given.next() else {
            return false;
        };
        if std::mem::take(&mut first) {
            let program = next.trim_start_matches('\\');
            program.rsplit('/').next() == Some(word.as_str()) || next == word
        } else {
            next == word
        }
    })
}

/// Whether `command`'s words start with `words`.
fn starts_with_words(command: &str, words: &[String]) -> bool {
    let mut given = command.split_whitespace();
    words.iter().all(|word| given.next() == Some(word.as_str()))
}

/// `path` relative to `workspace` when it lies inside (without `..` escapes), as `/`-separated
/// text.
fn relative_path(workspace: &Path, path: &str) -> Option<String> {
    let path = Path::new(path);
    let relative = if path.is_absolute() {
        path.strip_prefix(workspace).ok()?
    } else {
        path
    };
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_str()?.to_owned()),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
#[path = "approval_rules_tests.rs"]
mod tests;
