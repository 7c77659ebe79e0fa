//! Agent profiles from files: the `[agents.<name>]` tables of `agent.toml` and the files of
//! `.agent/agents/`, layered on the runner's built-in profiles.
//!
//! A profile ([`AgentTypeConfig`], the runner's plain data) names an agent type: a description, a system prompt, a tool
//! set, a model, limits (the loop guard's thresholds among them), a depth limit, an approval
//! policy and a sandbox (`sandbox = "read-only"`: the stricter of it and the run's holds for the
//! commands of its traces and of every sub-agent below them; a looser one is said and not
//! applied). The built-ins are `default` (the main run), `explore` (read-only branches),
//! `delegate`, `compaction` (the summariser of full compactions: its prompt is the request for
//! the summary) and `plan` (plan mode: read-only tools and the goal tools).
//!
//! Profiles are layered, later layers winning field by field: the built-ins, then the
//! `[agents.<name>]` tables of `agent.toml` (`apply_config`), then the files of
//! `.agent/agents/` (`load_dir`). A profile that exists is changed only in the fields a layer
//! gives; a new one starts from `base` (default: `default`).
//!
//! # Profile files
//!
//! `.agent/agents/<name>.md`: front matter between `---` lines, then the system prompt. The
//! front matter is simple `key: value` lines (a subset of YAML, so Claude Code's
//! `.claude/agents/*.md` files load as they are): values are plain or quoted strings, numbers,
//! `true`/`false`, lists as `a, b`, `[a, b]` or `- item` lines; `key: |` starts a block of
//! indented lines; `#` starts a comment line; dotted keys fill tables (`loop_guard.repeated_call:
//! 5`). The keys are the fields of [`ProfileSpec`]; the name is the `name` key, else the file
//! name. Claude Code's tool names map to ours (`Read` → `read_file`, `Write` → `write_file`,
//! `Edit`/`MultiEdit` → `edit_file`, `Glob`/`LS` → `glob_files`, `Grep` → `grep`, `Bash` →
//! `bash`, `Task` → `delegate`), its other tools have no counterpart and are left out, and its
//! model aliases (`inherit`, `sonnet`, `opus`, `haiku`) mean the runner's model.
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reviews a change and reports problems; never edits.
//! tools: read_file, grep, glob_files
//! model: gpt-4.1-mini
//! max_iterations: 20
//! ---
//! You review code in {workspace}. Today is {date}. Your tools: {tools}.
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_plan::front_matter::{self, FrontMatterError, Syntax};
use agent_runner::agents::DEFAULT;
use agent_runner::{AgentTypeConfig, ProfileOrigin};
use serde_json::{Map, Value};

use self::apply::{apply_limits, apply_tools};
pub use crate::config::{LoopGuardSpec, NameList, ProfileSpec};

mod apply;
mod tool_names;

/// Where project profile files live, relative to the workspace.
pub const AGENTS_DIR: &str = ".agent/agents";

/// The longest profile name: it becomes part of sub-trace ids.
const MAX_NAME_LEN: usize = 40;

/// Profile fields whose values are always text, even when they look like numbers.
const TEXT_KEYS: &[&str] = &[
    "name",
    "description",
    "base",
    "prompt",
    "prompt_file",
    "model",
    "provider",
    "approval",
    "sandbox",
    "abandon_rollback",
    "color",
];

/// Claude Code's model aliases, which mean the runner's model here.
const INHERITED_MODELS: &[&str] = &["inherit", "sonnet", "opus", "haiku"];

/// A profile that could not be read, naming where and which field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {}{message}", field.as_ref().map(|f| format!("`{f}`: ")).unwrap_or_default())]
pub struct ProfileError {
    /// The file (and table) the profile comes from.
    pub location: String,
    /// The field at fault, when one is.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ProfileError {
    fn new(location: &str, field: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            location: location.to_owned(),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }
}

/// Checks a profile name: 1 to 40 ASCII letters, digits, `-` or `_`, starting with a letter or
/// digit (it becomes part of sub-trace ids).
pub(crate) fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid profile name {name:?}: use 1 to {MAX_NAME_LEN} ASCII letters, digits, `-` \
             or `_`, starting with a letter or digit"
        ))
    }
}

/// Applies the `[agents.<name>]` tables of the configuration file `config_file` to `profiles`.
/// A `prompt_file` is read relative to the configuration file's folder.
pub(crate) fn apply_config(
    profiles: &mut BTreeMap<String, AgentTypeConfig>,
    specs: &BTreeMap<String, ProfileSpec>,
    config_file: &Path,
) -> Result<(), ProfileError> {
    for (name, spec) in specs {
        let source = format!("{} [agents.{name}]", config_file.display());
        if let Some(given) = &spec.name
            && given != name
        {
            return Err(ProfileError::new(
                &source,
                Some("name"),
                format!("the table is [agents.{name}]; leave `name` out or make it {name:?}"),
            ));
        }
        let origin = ProfileOrigin::Config(config_file.to_owned());
        define(profiles, name, spec, None, &origin, &source)?;
    }
    Ok(())
}

/// Loads every `*.md` file of `dir` (in name order) into `profiles`; returns the names it
/// defined. A missing folder defines nothing.
pub(crate) fn load_dir(
    profiles: &mut BTreeMap<String, AgentTypeConfig>,
    dir: &Path,
) -> Result<Vec<String>, ProfileError> {
    let files = files_in(dir)?;
    let mut names = Vec::with_capacity(files.len());
    for path in files {
        let (name, spec, body) = read_profile_file(&path)?;
        let source = path.display().to_string();
        define(
            profiles,
            &name,
            &spec,
            body,
            &ProfileOrigin::File(path.clone()),
            &source,
        )?;
        names.push(name);
    }
    Ok(names)
}

/// The profile files of `dir` (its `*.md` files), in name order; none when it does not exist.
pub(crate) fn files_in(dir: &Path) -> Result<Vec<PathBuf>, ProfileError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            let source = dir.display().to_string();
            return Err(ProfileError::new(&source, None, error.to_string()));
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Reads a profile file: its name, its fields, and its body (the system prompt) when it has
/// one.
pub(crate) fn read_profile_file(
    path: &Path,
) -> Result<(String, ProfileSpec, Option<String>), ProfileError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|error| ProfileError::new(&source, None, error.to_string()))?;
    let syntax = Syntax {
        text_keys: TEXT_KEYS,
        ..Syntax::default()
    };
    let (fields, body) = front_matter::parse(&text, &syntax).map_err(|error| match error {
        // A stray Markdown file in an agents folder is not a profile.
        FrontMatterError::Missing => ProfileError::new(
            &source,
            None,
            "has no front matter: a profile file starts with a `---` line, its fields \
             (`description: ...` at least), a closing `---` line, then the system prompt",
        ),
        FrontMatterError::Invalid { field, message } => {
            ProfileError::new(&source, field.as_deref(), message)
        }
        other => ProfileError::new(&source, None, other.to_string()),
    })?;
    let spec = spec_from(fields, &source)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = spec.name.clone().unwrap_or(stem);
    let body = Some(body.trim().to_owned()).filter(|b| !b.is_empty());
    Ok((name, spec, body))
}

/// Deserialises front-matter fields, naming the field that does not fit.
fn spec_from(fields: Map<String, Value>, source: &str) -> Result<ProfileSpec, ProfileError> {
    serde_json::from_value(Value::Object(fields.clone())).map_err(|error| {
        // Try the fields one by one to name the one at fault.
        let culprit = fields.iter().find(|(key, value)| {
            let alone = Map::from_iter([((*key).clone(), (*value).clone())]);
            serde_json::from_value::<ProfileSpec>(Value::Object(alone)).is_err()
        });
        ProfileError::new(
            source,
            culprit.map(|(key, _)| key.as_str()),
            error.to_string(),
        )
    })
}

/// Defines or changes the profile `name` with `spec` (and the prompt `body` of a file).
fn define(
    profiles: &mut BTreeMap<String, AgentTypeConfig>,
    name: &str,
    spec: &ProfileSpec,
    body: Option<String>,
    origin: &ProfileOrigin,
    source: &str,
) -> Result<(), ProfileError> {
    let fail = |field: &str, message: String| ProfileError::new(source, Some(field), message);
    validate_name(name).map_err(|message| fail("name", message))?;
    let mut profile = match (profiles.get(name), &spec.base) {
        (Some(_), Some(_)) => {
            return Err(fail(
                "base",
                format!("{name:?} exists already; `base` only starts a new profile"),
            ));
        }
        (Some(existing), None) => existing.clone(),
        (None, base) => {
            let base = base.as_deref().unwrap_or(DEFAULT);
            profiles.get(base).cloned().ok_or_else(|| {
                fail(
                    "base",
                    format!("there is no profile {base:?} to start from"),
                )
            })?
        }
    };
    profile.origin = origin.clone();
    if let Some(description) = &spec.description {
        profile.description = description.trim().to_owned();
    }
    let dir = match origin {
        ProfileOrigin::Config(path) | ProfileOrigin::File(path) => path.parent(),
        ProfileOrigin::BuiltIn => None,
    };
    profile.system_prompt = match (&spec.prompt, &spec.prompt_file, body) {
        (Some(_), Some(_), _) => {
            return Err(fail(
                "prompt_file",
                "give `prompt` or `prompt_file`, not both".into(),
            ));
        }
        (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
            return Err(fail(
                "prompt",
                "the file has a body, which is the prompt; leave `prompt` and `prompt_file` \
                 out"
                .into(),
            ));
        }
        (Some(prompt), None, None) => Some(prompt.clone()),
        (None, Some(file), None) => {
            let path = dir.map_or_else(|| file.clone(), |dir| dir.join(file));
            let text = std::fs::read_to_string(&path)
                .map_err(|e| fail("prompt_file", format!("{}: {e}", path.display())))?;
            Some(text)
        }
        (None, None, Some(body)) => Some(body),
        (None, None, None) => profile.system_prompt,
    };
    apply_tools(&mut profile.tools, spec).map_err(|(field, m)| fail(field, m))?;
    if let Some(model) = &spec.model {
        let model = model.trim();
        profile.model =
            (!INHERITED_MODELS.contains(&model) && !model.is_empty()).then(|| model.to_owned());
    }
    if let Some(provider) = &spec.provider {
        profile.provider = match provider.trim() {
            "" => None,
            name => Some(
                name.parse::<agent_llm::ProviderKind>()
                    .map_err(|error| fail("provider", error.to_string()))?,
            ),
        };
    }
    if let Some(effort) = spec.reasoning_effort {
        profile.reasoning_effort = Some(effort);
    }
    if let Some(budget) = spec.thinking_budget {
        if budget < 1024 {
            return Err(fail(
                "thinking_budget",
                "must be at least 1024 tokens".into(),
            ));
        }
        profile.thinking_budget = Some(budget);
    }
    apply_limits(&mut profile.limits, spec).map_err(|(field, m)| fail(field, m))?;
    if let Some(depth) = spec.max_depth {
        profile.max_depth = depth;
    }
    if let Some(approval) = spec.approval {
        profile.approval = approval;
    }
    if let Some(sandbox) = spec.sandbox {
        profile.sandbox = Some(sandbox);
    }
    if let Some(report) = spec.closing_report {
        profile.closing_report = report;
    }
    profiles.insert(name.to_owned(), profile);
    Ok(())
}

#[cfg(test)]
#[path = "profile_files_tests.rs"]
mod tests;
