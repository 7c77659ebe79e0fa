//! Agent Skills (the agentskills.io format, as Claude Code reads it): a folder `<name>/` holding
//! a `SKILL.md` — front matter with `name`, `description` and optionally `allowed-tools`, then
//! Markdown instructions — and any files the instructions refer to.
//!
//! Skills are found, in this order of precedence (the first skill of a name wins), in the
//! workspace's `.agent/skills/`, `.claude/skills/` and `.agents/skills/`, then in the user's
//! `skills/` folder (`$XDG_CONFIG_HOME/agent/skills/`, else `~/.config/agent/skills/`), then in
//! the enabled plugins ([`crate::plugins`]), so that folders written for Claude Code or other
//! agents work as they are.
//!
//! Disclosure is progressive: every run's system prompt lists each skill's name and description
//! ([`instruction`]); the body enters the context only when the model calls the `skill` tool
//! ([`SkillTool`]), which returns it with the folder's path. [`SkillsExtension`] adds both to
//! every runner of an [`AppFactory`](crate::AppFactory). A profile may limit them: its `skills`
//! (Claude Code's key in an agent's front matter; `skills = [...]` in an `[agents.NAME]` table)
//! names the skills a run as that profile offers — listed, and loadable by the tool — every
//! skill when it is left out, none when it is empty ([`Found::limited`]). The profile is the
//! one the runner runs as; its sub-agents see the same list.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let folder = dir.path().join(".claude/skills/changelog");
//! std::fs::create_dir_all(&folder).unwrap();
//! std::fs::write(
//!     folder.join("SKILL.md"),
//!     "---\nname: changelog\ndescription: Writes CHANGELOG entries.\n---\nRead the log first.\n",
//! )
//! .unwrap();
//! let found = agent_app::skills::discover(dir.path(), None);
//! assert_eq!(found.skills[0].name, "changelog");
//! assert_eq!(found.skills[0].source.to_string(), ".claude/skills");
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use agent_plan::front_matter::{self, Syntax};
use agent_runner::Instruction;
use serde_json::Value;

mod tool;

pub use tool::{SKILL_TOOL, SkillTool, SkillsExtension};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The project folders skills are read from, relative to the workspace, in precedence order.
pub const PROJECT_DIRS: [&str; 3] = [".agent/skills", ".claude/skills", ".agents/skills"];

/// The longest skill name (agentskills.io's limit).
const MAX_NAME_LEN: usize = 64;

/// The longest description kept (agentskills.io's limit); a longer one is cut.
const MAX_DESCRIPTION_LEN: usize = 1024;

/// The largest `SKILL.md` read; a larger one is skipped with a warning.
pub const MAX_SKILL_BYTES: u64 = 512 * 1024;

/// The most skills listed; later ones are skipped with a warning, so that a folder of
/// thousands cannot fill every prompt.
const MAX_SKILLS: usize = 200;

/// Front-matter fields whose values are always text.
const TEXT_KEYS: &[&str] = &["name", "description", "license", "argument-hint", "model"];

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillSource {
    /// One of the workspace's folders ([`PROJECT_DIRS`]), as written there.
    Project(&'static str),
    /// The user's `skills/` folder.
    User(PathBuf),
    /// An enabled plugin's `skills/` folder (`crate::plugins`), by the plugin's name.
    Plugin(String),
}

impl fmt::Display for SkillSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Project(dir) => f.write_str(dir),
            Self::User(dir) => write!(f, "{}", dir.display()),
            Self::Plugin(name) => write!(f, "plugin {name}"),
        }
    }
}

/// One skill: what the prompt lists, and where its body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The name the model calls it by (the `name` field, else the folder's name).
    pub name: String,
    /// When to use it, as the model sees it in every prompt.
    pub description: String,
    /// The tools the skill says it uses (`allowed-tools`), Claude Code's names as written.
    /// Shown to the model with the body; approvals still apply to every call.
    pub allowed_tools: Vec<String>,
    /// The skill's folder.
    pub dir: PathBuf,
    /// Where it was found.
    pub source: SkillSource,
}

impl Skill {
    /// The path of its `SKILL.md`.
    pub fn file(&self) -> PathBuf {
        self.dir.join(SKILL_FILE)
    }
}

/// The skills found for a workspace, and what could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The skills, first found first (a later skill of the same name is left out).
    pub skills: Vec<Skill>,
    /// One line per skill that could not be read, or left out, saying why.
    pub warnings: Vec<String>,
}

impl Found {
    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// Only the skills named in `names` (a profile's `skills`); all of them when `None`.
    #[must_use]
    pub fn limited(mut self, names: Option<&[String]>) -> Self {
        if let Some(names) = names {
            self.skills.retain(|skill| names.contains(&skill.name));
        }
        self
    }
}

/// The skill folders of `workspace` and of the user's agent folder `user_dir`, in precedence
/// order, each with its source.
pub fn dirs(workspace: &Path, user_dir: Option<&Path>) -> Vec<(PathBuf, SkillSource)> {
    let mut dirs: Vec<_> = PROJECT_DIRS
        .iter()
        .map(|dir| (workspace.join(dir), SkillSource::Project(dir)))
        .collect();
    if let Some(user) = user_dir {
        let dir = user.join("skills");
        dirs.push((dir.clone(), SkillSource::User(dir)));
        for (name, plugin) in crate::plugins::enabled(user) {
            dirs.push((plugin.join("skills"), SkillSource::Plugin(name)));
        }
    }
    dirs
}

/// Every skill for runs in `workspace`, with the user's under `user_dir` (the user's agent
/// folder). Missing folders are no error; a skill that cannot be read is a warning.
pub fn discover(workspace: &Path, user_dir: Option<&Path>) -> Found {
    let mut found = Found::default();
    for (dir, source) in dirs(workspace, user_dir) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.join(SKILL_FILE).is_file())
            .collect();
        folders.sort();
        for folder in folders {
            match read_skill(&folder, &source) {
                Ok(skill) if found.get(&skill.name).is_some() => found.warnings.push(format!(
                    "the skill {} in {} is shadowed by one of the same name found first",
                    skill.name,
                    folder.display()
                )),
                Ok(_) if found.skills.len() >= MAX_SKILLS => {
                    found.warnings.push(format!(
                        "more than {MAX_SKILLS} skills: {} is left out",
                        folder.display()
                    ));
                }
                Ok(skill) => found.skills.push(skill),
                Err(error) => found.warnings.push(error),
            }
        }
    }
    found
}

/// Reads the skill in `folder`: its front matter only.
fn read_skill(folder: &Path, source: &SkillSource) -> Result<Skill, String> {
    let (fields, _) = read_file(folder)?;
    let file = folder.join(SKILL_FILE);
    let fail = |why: String| format!("the skill {} is not used: {why}", file.display());
    let folder_name = folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match fields.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        Some(Value::String(_)) | None => folder_name,
        Some(_) => return Err(fail("`name` is not text".into())),
    };
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if !valid {
        return Err(fail(format!(
            "{name:?} is not a skill name (letters, digits, `-`, `_`, `.`, `:`; at most \
             {MAX_NAME_LEN})"
        )));
    }
    let description = match fields.get("description") {
        Some(Value::String(text)) if !text.trim().is_empty() => text.trim(),
        _ => return Err(fail("it has no `description`".into())),
    };
    let description: String = description.chars().take(MAX_DESCRIPTION_LEN).collect();
    Ok(Skill {
        name,
        description,
        allowed_tools: fields
            .get("allowed-tools")
            .map(tool_list)
            .unwrap_or_default(),
        dir: folder.to_path_buf(),
        source: source.clone(),
    })
}

/// Reads `folder/SKILL.md`: its front matter and its body.
pub(crate) fn read_file(folder: &Path) -> Result<(serde_json::Map<String, Value>, String), String> {
    let file = folder.join(SKILL_FILE);
    let fail = |why: String| format!("the skill {} is not used: {why}", file.display());
    let size = std::fs::metadata(&file)
        .map_err(|error| fail(error.to_string()))?
        .len();
    if size > MAX_SKILL_BYTES {
        return Err(fail(format!(
            "it is larger than {} KiB",
            MAX_SKILL_BYTES / 1024
        )));
    }
    let text = std::fs::read_to_string(&file).map_err(|error| fail(error.to_string()))?;
    let syntax = Syntax {
        text_keys: TEXT_KEYS,
        ..Syntax::default()
    };
    let (fields, body) =
        front_matter::parse(&text, &syntax).map_err(|error| fail(error.to_string()))?;
    Ok((fields, body.to_owned()))
}

/// A list of tool names as written: a YAML list, or one text split on commas and spaces
/// outside parentheses (`Bash(git add:*), Read` and `Read Grep` both).
pub(crate) fn tool_list(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|item| item.as_str().map(|s| s.trim().to_owned()))
            .filter(|item| !item.is_empty())
            .collect(),
        Value::String(text) => {
            let mut items = Vec::new();
            let (mut depth, mut current) = (0usize, String::new());
            for c in text.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 && (c == ',' || c.is_whitespace()) {
                    items.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
                } else {
                    current.push(c);
                }
            }
            items.extend((!current.is_empty()).then_some(current));
            items
        }
        _ => Vec::new(),
    }
}

/// The block of the system prompt that lists `skills` (none when there are none).
pub fn instruction(skills: &[Skill]) -> Option<Instruction> {
    if skills.is_empty() {
        return None;
    }
    let mut text = format!(
        "Skills are folders of instructions, scripts and files for particular tasks. When a task \
         matches a skill's description, call the `{SKILL_TOOL}` tool with the skill's name \
         before starting, and follow what it says. The skills:\n"
    );
    for skill in skills {
        let description = skill.description.replace('\n', " ");
        text.push_str(&format!("\n- {}: {description}", skill.name));
    }
    Some(Instruction::new("Skills", text))
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
