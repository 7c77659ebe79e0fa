//! Approval rules: tool calls allowed or denied before anyone is asked (`[approvals]` in
//! `agent.toml`, "always" answers on a terminal).
//!
//! A rule names a tool, optionally with a pattern in parentheses:
//!
//! - `read_file`, `mcp__files__*`: every call of the tool (`*` matches any run of characters);
//! - `bash(cargo test)`: shell commands that start with the words `cargo test` (`cargo test`,
//!   `cargo test --all`, not `cargo tests`). A command that chains or redirects (`;`, `&&`,
//!   `||`, `|`, `&`, `>`, `<`, a backquote, `$(`, a line break) is never *allowed* by a prefix —
//!   `git status && rm -rf ~` starts with `git status` — nor is one that cannot be parsed. A
//!   command is *denied* when any simple command of the parsed script runs the rule's words
//!   (`rules/commands.rs`): quotes and escapes removed, looking through `sh -c`, `eval`,
//!   `xargs`, `env`, `timeout`, `nice`, `sudo`, `find -exec` and the like and into
//!   substitutions, with flags normalised (`rm -rf` = `rm -fr` = `rm -r -f`, `find -delete`
//!   counts as `rm -r -f`). A command whose programs cannot all be known (an expansion as the
//!   program, a shell reading a script file, a script that does not parse) could run what any
//!   `bash(...)` deny rule names: it is asked about ([`RuleVerdict::Ask`]), and refused where
//!   nobody can be asked or approvals are blanket (`--yes`);
//! - `write_file(src/**)`, `edit_file(*.md)`, `read_file(.env)`: files whose path, relative to
//!   the workspace, matches the glob, after `..` and symlinks are resolved (a deny rule also
//!   matches the path as written, and any other name of the same file: a hard link); a path
//!   outside the workspace never matches an allow rule. A `read_file` deny rule also covers
//!   `grep` over the file or a folder holding it (a hard link to it included), and a
//!   `glob_files` pattern that would list it (by its name or a symlink to it).
//!
//! Claude Code's spellings work too: `Bash(npm test:*)`, `Write(src/**)`, `Edit`, `Read`.
//! Deny rules win over allow rules; they apply to every call, risky or not.

#[cfg(feature = "shell-rules")]
mod commands;
// Without the shell parser, a script is read only when it is plain words.
#[cfg(not(feature = "shell-rules"))]
#[path = "plain_commands.rs"]
mod commands;
mod domains;
mod paths;
#[cfg(feature = "shell-rules")]
mod words;
#[cfg_attr(not(feature = "shell-rules"), allow(dead_code))]
mod wrappers;

use std::path::Path;

use globset::{Glob, GlobMatcher};
use serde_json::Value;

use domains::DomainPattern;
use paths::{
    another_name_matches, canonical_relative, listing_matches, relative_path, tree_matches,
};

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
    /// A `bash(...)` deny rule cannot tell whether the script runs what it names (the script
    /// does not parse, or a program is named by an expansion): run it only when a person says
    /// so, never under a blanket approval.
    Ask {
        /// The deny rule, as written.
        rule: String,
        /// Why the script cannot be checked.
        why: String,
    },
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
    /// The host of a URL: `domain:docs.rs` (and its subdomains), `domain:*.example.com`.
    Domain(DomainPattern),
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
/// The tools whose pattern is a domain, with their `url` argument.
const WEB_TOOLS: [&str; 1] = ["web_fetch"];

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
    #[must_use]
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
        if let Some((rule, why)) = self
            .deny
            .iter()
            .find_map(|rule| Some((rule, rule.unreadable(tool, &arguments)?)))
        {
            return Some(RuleVerdict::Ask {
                rule: rule.text.clone(),
                why,
            });
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
            Some(pattern) if WEB_TOOLS.contains(&name) => Some(Pattern::Domain(
                DomainPattern::parse(pattern).map_err(|reason| error(&reason))?,
            )),
            Some(_) => {
                return Err(error(&format!(
                    "only {}, {} and {} take a pattern",
                    SHELL_TOOLS.join(", "),
                    FILE_TOOLS.join(", "),
                    WEB_TOOLS.join(", ")
                )));
            }
        };
        Ok(Self {
            text: text.to_owned(),
            tool,
            pattern,
        })
    }

    /// Why a command rule cannot tell whether the call's script runs what it names; `None` for
    /// a script it can read, or a rule about something else.
    fn unreadable(&self, tool: &str, arguments: &Value) -> Option<String> {
        let Some(Pattern::Prefix(words)) = &self.pattern else {
            return None;
        };
        if !self.tool.is_match(tool) {
            return None;
        }
        let command = arguments.get("command").and_then(Value::as_str)?;
        let found = commands::commands(command);
        found.unknown.or_else(|| {
            found
                .commands
                .iter()
                .any(|run| wrappers::runs(run, words) == wrappers::Match::Maybe)
                .then(|| {
                    format!(
                        "an argument of `{}` is given by an expansion or a pattern",
                        words.join(" ")
                    )
                })
        })
    }

    /// Whether the rule covers the call; `deny` rules match a chained command by any part.
    fn matches(&self, tool: &str, arguments: &Value, workspace: &Path, deny: bool) -> bool {
        // A rule about reading a file also covers searching for it and listing it.
        let reads = matches!(tool, "grep" | "glob_files") && self.tool.is_match("read_file");
        if !self.tool.is_match(tool) && !reads {
            return false;
        }
        match &self.pattern {
            None => true,
            Some(Pattern::Prefix(words)) => {
                let Some(command) = arguments.get("command").and_then(Value::as_str) else {
                    return false;
                };
                let found = commands::commands(command);
                if deny {
                    found
                        .commands
                        .iter()
                        .any(|run| wrappers::runs(run, words) == wrappers::Match::Yes)
                } else {
                    found.unknown.is_none() && !chains(command) && starts_with_words(command, words)
                }
            }
            Some(Pattern::Domain(domain)) => arguments
                .get("url")
                .and_then(Value::as_str)
                .is_some_and(|url| domain.matches_url(url)),
            Some(Pattern::Path(glob)) if tool == "glob_files" => {
                let pattern = arguments.get("pattern").and_then(Value::as_str);
                deny && pattern.is_none_or(|pattern| listing_matches(workspace, pattern, glob))
            }
            Some(Pattern::Path(glob)) => {
                let Some(path) = arguments.get("path").and_then(Value::as_str) else {
                    return tool == "grep" && deny && tree_matches(workspace, ".", glob);
                };
                if tool == "grep" {
                    return deny && tree_matches(workspace, path, glob);
                }
                let canonical = canonical_relative(workspace, path);
                if deny {
                    canonical.is_some_and(|relative| glob.is_match(relative))
                        || match relative_path(workspace, path) {
                            Some(relative) => glob.is_match(relative),
                            None => glob.is_match(path),
                        }
                        || another_name_matches(workspace, path, glob)
                } else {
                    canonical.is_some_and(|relative| glob.is_match(relative))
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
        "WebFetch" => "web_fetch",
        "WebSearch" => "web_search",
        other => other,
    }
}

/// Whether `command`'s words start with `words`.
fn starts_with_words(command: &str, words: &[String]) -> bool {
    let mut given = command.split_whitespace();
    words.iter().all(|word| given.next() == Some(word.as_str()))
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
