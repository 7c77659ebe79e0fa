//! Agent profiles: the built-in agent types, user profiles from `agent.toml` and from profile
//! files, and the system-prompt template.
//!
//! A profile ([`AgentTypeConfig`]) names an agent type: a description, a system prompt, a tool
//! set, a model, limits (the loop guard's thresholds among them), a depth limit and an approval
//! policy. The built-ins are `default` (the main run), `explore` (read-only branches),
//! `delegate`, `compaction` (the summariser of full compactions: its prompt is the request for
//! the summary) and `plan` (plan mode: the goal tools only).
//!
//! Profiles are layered, later layers winning field by field: the built-ins, then the
//! `[agents.<name>]` tables of `agent.toml` ([`apply_config`]), then the files of
//! `.agent/agents/` ([`load_dir`]). A profile that exists is changed only in the fields a layer
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
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::agents::{
    AgentTypeConfig, ApprovalPolicy, COMPACTION, DEFAULT, DELEGATE, EXPLORE, PLAN, ProfileOrigin,
    RiskLimit, ToolFilter,
};
use super::approval::RejectAll;
use super::guard::LoopGuard;
use super::step::COMPACTION_PROMPT;
use super::{AgentRunner, RunLimits, RunnerOptions};

mod front_matter;

/// Where project profile files live, relative to the workspace.
pub const AGENTS_DIR: &str = ".agent/agents";

/// The system prompt of plan mode.
pub const PLAN_PROMPT: &str = "You are in plan mode: write a plan for the task, do not carry it \
out. Use the `goal` tool only: `add` the top-level goals (comma-separated), and to break a goal \
into sub-goals, `focus` it and `add` under it. Make goals concrete and checkable, in the order \
they should be done. When the plan is complete, answer with a one-paragraph summary of it and no \
tool calls.";

/// The longest profile name: it becomes part of sub-trace ids.
const MAX_NAME_LEN: usize = 40;

/// Claude Code's tool names and ours.
const CLAUDE_TOOLS: &[(&str, &str)] = &[
    ("Read", "read_file"),
    ("Write", "write_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Glob", "glob_files"),
    ("LS", "glob_files"),
    ("Grep", "grep"),
    ("Bash", "bash"),
    ("Task", "delegate"),
];

/// Claude Code's model aliases, which mean the runner's model here.
const INHERITED_MODELS: &[&str] = &["inherit", "sonnet", "opus", "haiku"];

/// The built-in profiles by name.
pub fn builtin_profiles() -> BTreeMap<String, AgentTypeConfig> {
    let compaction = AgentTypeConfig {
        description: "The summariser of full compactions; its prompt asks for the summary.".into(),
        tools: ToolFilter::all().allowing(Vec::<String>::new()),
        system_prompt: Some(COMPACTION_PROMPT.to_owned()),
        ..AgentTypeConfig::general()
    };
    let plan = AgentTypeConfig {
        description: "Plan mode: writes the plan with the goal tools and does nothing else.".into(),
        tools: ToolFilter::all().allowing(Vec::<String>::new()),
        system_prompt: Some(PLAN_PROMPT.to_owned()),
        ..AgentTypeConfig::general()
    };
    [
        (DEFAULT, AgentTypeConfig::general()),
        (EXPLORE, AgentTypeConfig::explore()),
        (DELEGATE, AgentTypeConfig::delegate()),
        (COMPACTION, compaction),
        (PLAN, plan),
    ]
    .into_iter()
    .map(|(name, config)| (name.to_owned(), config))
    .collect()
}

/// A profile as written in `agent.toml` or a profile file; every field is optional and changes
/// only what it names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSpec {
    /// The profile's name (files only; a table's name is its key).
    pub name: Option<String>,
    /// What it is for, in one line.
    pub description: Option<String>,
    /// The profile a new one starts from [default: `default`].
    pub base: Option<String>,
    /// The system prompt, inline.
    pub prompt: Option<String>,
    /// The system prompt from a file, relative to the file that names it.
    pub prompt_file: Option<PathBuf>,
    /// Only these tools (`*` or `all`: every tool); a name may end in `*`.
    pub tools: Option<NameList>,
    /// Never these tools.
    pub deny_tools: Option<NameList>,
    /// Only read-only tools.
    pub read_only: Option<bool>,
    /// Only the tools of these MCP servers.
    pub mcp_servers: Option<NameList>,
    /// The model (`inherit`: the runner's).
    pub model: Option<String>,
    /// The provider of the model.
    pub provider: Option<String>,
    /// Model calls per run.
    pub max_iterations: Option<u32>,
    /// Spending limit per trace, in US dollars.
    pub max_cost: Option<f64>,
    /// How long one model call may take, in seconds.
    pub llm_timeout_secs: Option<u64>,
    /// Tool calls run per model turn.
    pub max_tool_calls_per_turn: Option<usize>,
    /// How many of its sub-traces may be stacked on one line of descent.
    pub max_depth: Option<usize>,
    /// `inherit`, `auto` or `deny`.
    pub approval: Option<ApprovalPolicy>,
    /// Loop-guard thresholds; the ones not given keep their value.
    pub loop_guard: Option<LoopGuardSpec>,
    /// Claude Code's display colour; read and ignored.
    pub color: Option<String>,
}

/// Loop-guard thresholds of a [`ProfileSpec`] (see [`LoopGuard`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopGuardSpec {
    /// [`LoopGuard::repeated_call`].
    pub repeated_call: Option<usize>,
    /// [`LoopGuard::repeated_error`].
    pub repeated_error: Option<usize>,
    /// [`LoopGuard::alternation`].
    pub alternation: Option<usize>,
    /// [`LoopGuard::stop_after`].
    pub stop_after: Option<usize>,
    /// [`LoopGuard::max_warnings`].
    pub max_warnings: Option<usize>,
}

/// A list of names: `"a, b"` or `["a", "b"]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum NameList {
    /// Comma-separated.
    Text(String),
    /// One name per item.
    List(Vec<String>),
}

impl NameList {
    /// The names, trimmed, without empty ones.
    pub fn names(&self) -> Vec<String> {
        let items: Vec<&str> = match self {
            Self::Text(text) => text.split(',').collect(),
            Self::List(items) => items.iter().map(String::as_str).collect(),
        };
        items
            .into_iter()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

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
pub fn validate_name(name: &str) -> Result<(), String> {
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
pub fn apply_config(
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
pub fn load_dir(
    profiles: &mut BTreeMap<String, AgentTypeConfig>,
    dir: &Path,
) -> Result<Vec<String>, ProfileError> {
    let source = dir.display().to_string();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(ProfileError::new(&source, None, error.to_string())),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md") && path.is_file())
        .collect();
    files.sort();
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

/// Reads a profile file: its name, its fields, and its body (the system prompt) when it has
/// one.
pub fn read_profile_file(
    path: &Path,
) -> Result<(String, ProfileSpec, Option<String>), ProfileError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|error| ProfileError::new(&source, None, error.to_string()))?;
    let (fields, body) = front_matter::parse(&text)
        .map_err(|(field, message)| ProfileError::new(&source, field.as_deref(), message))?;
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
        profile.provider = Some(provider.trim().to_owned()).filter(|p| !p.is_empty());
    }
    apply_limits(&mut profile.limits, spec).map_err(|(field, m)| fail(field, m))?;
    if let Some(depth) = spec.max_depth {
        profile.max_depth = depth;
    }
    if let Some(approval) = spec.approval {
        profile.approval = approval;
    }
    profiles.insert(name.to_owned(), profile);
    Ok(())
}

/// Applies the tool fields of a spec to a filter.
fn apply_tools(filter: &mut ToolFilter, spec: &ProfileSpec) -> Result<(), (&'static str, String)> {
    if let Some(tools) = &spec.tools {
        let names = tool_names(tools, "tools")?;
        filter.allow = if names.iter().any(|n| n == "*" || n == "all") {
            None
        } else {
            Some(names.into_iter().collect())
        };
    }
    if let Some(deny) = &spec.deny_tools {
        filter.deny = tool_names(deny, "deny_tools")?.into_iter().collect();
    }
    if let Some(read_only) = spec.read_only {
        filter.risk = if read_only {
            RiskLimit::ReadOnly
        } else {
            RiskLimit::Any
        };
    }
    if let Some(servers) = &spec.mcp_servers {
        filter.mcp_servers = Some(servers.names().into_iter().collect());
    }
    Ok(())
}

/// Tool names with Claude Code's mapped to ours; checked for characters model APIs refuse.
fn tool_names(list: &NameList, field: &'static str) -> Result<Vec<String>, (&'static str, String)> {
    let mut names = Vec::new();
    for name in list.names() {
        if let Some((_, ours)) = CLAUDE_TOOLS.iter().find(|(claude, _)| *claude == name) {
            names.push((*ours).to_owned());
            continue;
        }
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            // Another Claude Code tool (WebFetch, TodoWrite, ...): no counterpart here.
            continue;
        }
        let plain = name.strip_suffix('*').unwrap_or(&name);
        let valid = plain
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid || name.len() > 64 {
            return Err((field, format!("{name:?} is not a tool name")));
        }
        names.push(name);
    }
    Ok(names)
}

/// Applies the limit fields of a spec.
fn apply_limits(limits: &mut RunLimits, spec: &ProfileSpec) -> Result<(), (&'static str, String)> {
    if let Some(max) = spec.max_iterations {
        if max == 0 {
            return Err(("max_iterations", "must be at least 1".into()));
        }
        limits.max_iterations = max;
    }
    if let Some(cost) = spec.max_cost {
        if !cost.is_finite() || cost < 0.0 {
            return Err(("max_cost", format!("{cost} is not an amount of dollars")));
        }
        limits.max_cost = Some(cost);
    }
    if let Some(secs) = spec.llm_timeout_secs {
        if secs == 0 {
            return Err(("llm_timeout_secs", "must be at least 1".into()));
        }
        limits.llm_timeout = std::time::Duration::from_secs(secs);
    }
    if let Some(max) = spec.max_tool_calls_per_turn {
        limits.max_tool_calls_per_turn = max;
    }
    if let Some(guard) = &spec.loop_guard {
        let LoopGuard {
            repeated_call,
            repeated_error,
            alternation,
            stop_after,
            max_warnings,
        } = &mut limits.loop_guard;
        let fields = [
            (repeated_call, guard.repeated_call),
            (repeated_error, guard.repeated_error),
            (alternation, guard.alternation),
            (stop_after, guard.stop_after),
            (max_warnings, guard.max_warnings),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
    }
    Ok(())
}

/// The values of a system prompt's template variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptVars {
    /// `{workspace}`: the folder the tools work in.
    pub workspace: String,
    /// `{date}`: today, `YYYY-MM-DD`.
    pub date: String,
    /// `{tools}`: the names of the tools, comma-separated.
    pub tools: String,
    /// `{agent}`: the profile's name.
    pub agent: String,
    /// `{model}`: the model.
    pub model: String,
}

/// Replaces `{workspace}`, `{date}`, `{tools}`, `{agent}` and `{model}` in a prompt; other
/// braces are left as they are.
pub fn render_prompt(template: &str, vars: &PromptVars) -> String {
    if !template.contains('{') {
        return template.to_owned();
    }
    [
        ("{workspace}", &vars.workspace),
        ("{date}", &vars.date),
        ("{tools}", &vars.tools),
        ("{agent}", &vars.agent),
        ("{model}", &vars.model),
    ]
    .into_iter()
    .fold(template.to_owned(), |text, (key, value)| {
        text.replace(key, value)
    })
}

impl RunnerOptions {
    /// These options running main traces as the profile `name` of `sub_agents.agent_types`:
    /// its limits and model become the options' (change them after this call to override
    /// them); its prompt, tools and approval policy apply when the runner is built, and each
    /// trace records the profile so that a resume runs it the same way.
    pub fn with_agent(mut self, name: &str) -> Result<Self, ProfileError> {
        let profile = self.sub_agents.agent_types.get(name).ok_or_else(|| {
            let known: Vec<&str> = self
                .sub_agents
                .agent_types
                .keys()
                .map(String::as_str)
                .collect();
            ProfileError::new(
                "--agent",
                None,
                format!(
                    "there is no agent profile {name:?}; the profiles are {}",
                    known.join(", ")
                ),
            )
        })?;
        self.limits = profile.limits.clone();
        if let Some(model) = &profile.model {
            self.model.clone_from(model);
        }
        self.agent = Some(name.to_owned());
        Ok(self)
    }
}

/// Makes `options` (a copy of the main runner's) those of traces of `profile`. The main
/// runner's own profile keeps the options' limits and model, which [`RunnerOptions::with_agent`]
/// took from it and the caller may have changed since.
pub(super) fn apply_profile(
    options: &mut RunnerOptions,
    name: &str,
    profile: &AgentTypeConfig,
    is_main: bool,
) {
    if !is_main {
        options.limits = profile.limits.clone();
        if let Some(model) = &profile.model {
            options.model.clone_from(model);
        }
    }
    if let Some(prompt) = &profile.system_prompt {
        options.system_prompt.clone_from(prompt);
    }
    match profile.approval {
        ApprovalPolicy::Inherit => {}
        ApprovalPolicy::Auto => options.approval = None,
        ApprovalPolicy::Deny => {
            options.approval = Some(Arc::new(RejectAll {
                reason: format!("the `{name}` agent may not run risky tools"),
            }));
        }
    }
}

/// The runner of a full compaction's summarising call: `runner` with the model and client of
/// the `compaction` profile, and its prompt (the request for the summary, [`COMPACTION_PROMPT`]
/// when the profile has none) as `options.system_prompt`.
pub(super) fn summariser(runner: &AgentRunner) -> AgentRunner {
    let mut summariser = runner.clone();
    let profile = runner.options.sub_agents.agent_types.get(COMPACTION);
    summariser.options.system_prompt = profile
        .and_then(|p| p.system_prompt.clone())
        .unwrap_or_else(|| COMPACTION_PROMPT.to_owned());
    if let Some(model) = profile.and_then(|p| p.model.clone()) {
        summariser.options.model = model;
    }
    if let Some(llm) = runner.options.clients.get(COMPACTION) {
        summariser.llm = llm.clone();
    }
    summariser
}

#[cfg(test)]
#[path = "profiles_tests.rs"]
mod tests;
