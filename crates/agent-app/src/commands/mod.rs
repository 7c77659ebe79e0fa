//! Custom commands: Markdown prompt files a person runs as `/name args`, as Claude Code reads
//! them, the same at every door (`agent run "/name args"`, the chat's line mode and full-screen
//! UI, ACP, `POST /api/traces`).
//!
//! A command is a file `<name>.md` in the workspace's `.agent/commands/` or `.claude/commands/`,
//! in the user's `commands/` folder (`$XDG_CONFIG_HOME/agent/commands/`), or in an enabled
//! plugin's ([`crate::plugins`]), the first of a name winning. Its optional front matter gives a `description` (else the body's first line),
//! an `argument-hint` (shown beside the name), and `model` and `allowed-tools`, which are read
//! and shown; the body is the prompt. In the body, `$ARGUMENTS` is the whole text after the name
//! and `$1` … `$9` its words (quotes group words); a body that uses none of them gets the
//! arguments after a blank line, as `ARGUMENTS: …`, so they are never lost.
//!
//! [`Found::expand`] is the one expansion every door uses: a text that starts with `/name` of a command
//! becomes its prompt; any other text (a built-in command, an unknown name, a path such as
//! `/etc/hosts is odd`) is left as it is.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir_all(dir.path().join(".agent/commands")).unwrap();
//! std::fs::write(
//!     dir.path().join(".agent/commands/review.md"),
//!     "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 for bugs.\n",
//! )
//! .unwrap();
//! let found = agent_app::commands::discover(dir.path(), None);
//! let expanded = found.expand("/review src/app.py").unwrap().unwrap();
//! assert_eq!(expanded.task, "Review src/app.py for bugs.");
//! assert!(found.expand("/etc/hosts is odd").is_none());
//! ```

use std::path::{Path, PathBuf};

use agent_plan::front_matter::{self, Syntax};
use serde_json::Value;

/// The project folders commands are read from, relative to the workspace, in precedence order.
pub const PROJECT_DIRS: [&str; 2] = [".agent/commands", ".claude/commands"];

/// The largest command file read.
const MAX_COMMAND_BYTES: u64 = 256 * 1024;

/// Front-matter fields whose values are always text.
const TEXT_KEYS: &[&str] = &["description", "argument-hint", "model"];

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// The name typed after `/` (the file's name without `.md`).
    pub name: String,
    /// What it does (the `description` field, else the body's first line).
    pub description: String,
    /// What its arguments are (`argument-hint`), e.g. `FILE [FOCUS]`.
    pub argument_hint: Option<String>,
    /// The model it asks for (`model`).
    pub model: Option<String>,
    /// The tools it says it uses (`allowed-tools`), as written.
    pub allowed_tools: Vec<String>,
    /// The prompt, with its placeholders.
    pub body: String,
    /// The file.
    pub path: PathBuf,
    /// Where it was found: a project folder as written, or the user's folder.
    pub source: String,
}

impl CustomCommand {
    /// What `/help` and completion show: `/name`, and the argument hint with the description.
    pub fn listed(&self) -> (String, String) {
        let about = match &self.argument_hint {
            Some(hint) => format!("{hint}  {}", self.description),
            None => self.description.clone(),
        };
        (format!("/{}", self.name), about)
    }

    /// The prompt for `arguments` (the text after the name).
    pub fn prompt(&self, arguments: &str) -> String {
        let arguments = arguments.trim();
        let words = words(arguments);
        let mut used = false;
        let mut out = String::with_capacity(self.body.len() + arguments.len());
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(arguments);
                used = true;
                rest = tail;
            } else if let Some(digit) = after.chars().next().filter(|c| matches!(c, '1'..='9')) {
                let index = digit as usize - '1' as usize;
                out.push_str(words.get(index).map_or("", String::as_str));
                used = true;
                rest = &after[1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        let mut out = out.trim().to_owned();
        if !used && !arguments.is_empty() {
            out.push_str(&format!("\n\nARGUMENTS: {arguments}"));
        }
        out
    }
}

/// A command expanded: the task to send, and what the command asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The command's name.
    pub name: String,
    /// The prompt, its placeholders filled.
    pub task: String,
    /// The model the command asks for.
    pub model: Option<String>,
}

/// The commands found for a workspace, and what could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The commands, by name.
    pub commands: Vec<CustomCommand>,
    /// One line per command file that could not be read, or was shadowed.
    pub warnings: Vec<String>,
}

impl Found {
    /// The command called `name`.
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|command| command.name == name)
    }

    /// `text` expanded when it starts with `/name` of a command: `None` for any other text.
    /// A command whose file can no longer be read is an error saying so.
    pub fn expand(&self, text: &str) -> Option<Result<Expanded, String>> {
        let line = text.trim_start().strip_prefix('/')?;
        let end = line.find(char::is_whitespace).unwrap_or(line.len());
        let command = self.get(&line[..end])?;
        // Read again: the file may have changed since the list was made.
        let fresh = read_command(&command.path, command.source.clone());
        Some(fresh.map(|fresh| Expanded {
            name: fresh.name.clone(),
            task: fresh.prompt(&line[end..]),
            model: fresh.model,
        }))
    }

    /// The `/help` and completion lines of every command.
    pub fn listed(&self) -> Vec<(String, String)> {
        self.commands.iter().map(CustomCommand::listed).collect()
    }
}

/// The command folders of `workspace` and of the user's agent folder `user_dir`, in precedence
/// order, each with how it is shown.
fn dirs(workspace: &Path, user_dir: Option<&Path>) -> Vec<(PathBuf, String)> {
    let mut dirs: Vec<_> = PROJECT_DIRS
        .iter()
        .map(|dir| (workspace.join(dir), (*dir).to_owned()))
        .collect();
    if let Some(user) = user_dir {
        let dir = user.join("commands");
        let shown = dir.display().to_string();
        dirs.push((dir, shown));
        for (name, plugin) in crate::plugins::enabled(user) {
            dirs.push((plugin.join("commands"), format!("plugin {name}")));
        }
    }
    dirs
}

/// Every command for `workspace`, with the user's under `user_dir` (the user's agent folder).
pub fn discover(workspace: &Path, user_dir: Option<&Path>) -> Found {
    let mut found = Found::default();
    for (dir, source) in dirs(workspace, user_dir) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "md") && path.is_file())
            .collect();
        files.sort();
        for file in files {
            match read_command(&file, source.clone()) {
                Ok(command) if found.get(&command.name).is_some() => {
                    found.warnings.push(format!(
                        "the command /{} in {} is shadowed by one of the same name found first",
                        command.name,
                        file.display()
                    ));
                }
                Ok(command) => found.commands.push(command),
                Err(error) => found.warnings.push(error),
            }
        }
    }
    found
}

/// Reads the command file `file`.
fn read_command(file: &Path, source: String) -> Result<CustomCommand, String> {
    let fail = |why: String| format!("the command {} is not used: {why}", file.display());
    let name = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if !valid {
        return Err(fail(format!("{name:?} is not a command name")));
    }
    let size = std::fs::metadata(file)
        .map_err(|error| fail(error.to_string()))?
        .len();
    if size > MAX_COMMAND_BYTES {
        return Err(fail(format!(
            "it is larger than {} KiB",
            MAX_COMMAND_BYTES / 1024
        )));
    }
    let text = std::fs::read_to_string(file).map_err(|error| fail(error.to_string()))?;
    let (fields, body) = if front_matter::has_front_matter(&text) {
        let syntax = Syntax {
            text_keys: TEXT_KEYS,
            ..Syntax::default()
        };
        front_matter::parse(&text, &syntax).map_err(|error| fail(error.to_string()))?
    } else {
        (serde_json::Map::new(), text.as_str())
    };
    let text_field = |key: &str| match fields.get(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.trim().to_owned()),
        _ => None,
    };
    let first_line = body
        .lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .to_owned();
    Ok(CustomCommand {
        description: text_field("description").unwrap_or(first_line),
        argument_hint: text_field("argument-hint"),
        model: text_field("model"),
        allowed_tools: fields
            .get("allowed-tools")
            .map(crate::skills::tool_list)
            .unwrap_or_default(),
        body: body.to_owned(),
        path: file.to_path_buf(),
        source,
        name,
    })
}

/// The words of `text`: split on white space, `"…"` and `'…'` grouping words (the quotes
/// dropped).
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), c) => current.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(current.take()),
            (None, c) => current.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(current);
    words
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
