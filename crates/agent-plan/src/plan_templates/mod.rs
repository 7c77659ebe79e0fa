//! Plan templates: a plan saved under a name, with a mission and parameters, to start new runs
//! from (`agent plan save`, `agent run --plan NAME`, `POST /api/plan_templates/{name}/runs`).
//!
//! A template is a Markdown file `.agent/plans/<name>.md` in the workspace ([`TEMPLATES_DIR`]):
//! a front matter ([`crate::front_matter`]) with `description`, `mission` (the task of the runs
//! it starts) and `params`, then the plan text (`agent_goal::parse_plan`: one goal a line, two
//! spaces of indent per level, `@profile` at the end of a goal that names its agent, `#` lines
//! ignored). `{{name}}` in the mission and the goals is a parameter; under `params:` each
//! parameter is a line `name: default`, or `name:` alone when it has no default and must be
//! given:
//!
//! ```text
//! ---
//! description: "Add a cache in front of a module"
//! mission: "Add a cache to {{module}}"
//! params:
//!   module: "src/store.rs"
//!   reviewer:
//! ---
//! Read {{module}} and its callers
//! Implement the cache
//!   Design the interface
//!   Write it with tests
//! Review the change @{{reviewer}}
//! ```
//!
//! [`PlanTemplate::render`] fills the placeholders from the defaults and the values given
//! (a value given for no parameter, or a parameter with neither, is refused by name), and
//! [`crate::plan::load_into`] gives a new trace the rendered goals. A file without front
//! matter is a template too: its whole text is the plan, with no mission and no parameters.
//!
//! ```
//! use std::collections::BTreeMap;
//! use agent_plan::plan_templates::PlanTemplate;
//!
//! let file = "---\nmission: Cache {{module}}\nparams:\n  module: src/store.rs\n---\nRead {{module}}\nReview @reviewer\n";
//! let template = PlanTemplate::parse("cache", file)?;
//! let vars = BTreeMap::from([("module".to_owned(), "src/db.rs".to_owned())]);
//! let plan = template.render(&vars)?;
//! assert_eq!(plan.mission.as_deref(), Some("Cache src/db.rs"));
//! assert_eq!(plan.text, "Read src/db.rs\nReview @reviewer\n");
//! assert_eq!(PlanTemplate::parse("cache", &template.to_file_text())?, template);
//! # Ok::<(), agent_plan::plan_templates::TemplateError>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_goal::parse_plan;
use serde::Serialize;
use serde_json::Value;

use crate::front_matter::{self, FrontMatterError, Syntax};

mod error;
mod text;

pub use error::TemplateError;
pub use text::placeholders;
use text::{check_param_name, fill, quote};

/// Where templates live, relative to the workspace.
pub const TEMPLATES_DIR: &str = ".agent/plans";

/// The longest template name.
pub const MAX_NAME_LEN: usize = 64;

/// The front-matter fields of a template.
const FIELDS: &[&str] = &["description", "mission", "params"];

/// The comment written above `params:`, for people who edit the file.
const PARAMS_HINT: &str = "# params: one `name: default` line each (`name:` alone: no default, \
it must be given); {{name}} in the mission and the goals is replaced.";

/// A parameter of a template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateParam {
    /// Its name, as in `{{name}}`: ASCII letters, digits and `_`, not starting with a digit.
    pub name: String,
    /// Its value when none is given; `None`: a value must be given.
    pub default: Option<String>,
}

/// A plan template: what a template file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanTemplate {
    /// Its name: the file's name without `.md`.
    pub name: String,
    /// What it is for, for people choosing one ("" when not given).
    pub description: String,
    /// The task of the runs it starts, with placeholders; `None`: each run names its task.
    pub mission: Option<String>,
    /// Its parameters, by name.
    pub params: Vec<TemplateParam>,
    /// The plan text, with placeholders.
    pub text: String,
}

/// A template with its placeholders filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedPlan {
    /// The mission, if the template has one.
    pub mission: Option<String>,
    /// The plan text, ready for [`crate::plan::load_into`].
    pub text: String,
}

/// Checks a template name: 1 to [`MAX_NAME_LEN`] ASCII letters, digits, `-`, `_` and `.`,
/// starting with a letter or a digit, without `..`, so it never leaves [`TEMPLATES_DIR`].
pub fn check_name(name: &str) -> Result<(), TemplateError> {
    let fail = |reason: &str| {
        Err(TemplateError::InvalidName {
            name: name.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if name.is_empty() {
        return fail("it is empty");
    }
    if name.chars().any(std::path::is_separator) || name.contains('/') {
        return fail("a name has no path separator");
    }
    if name.contains("..") {
        return fail("a name has no \"..\"");
    }
    if name.len() > MAX_NAME_LEN {
        return fail(&format!("a name has at most {MAX_NAME_LEN} characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return fail(&format!(
            "{c:?} is not allowed (letters, digits, '-', '_' and '.' are)"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return fail("a name starts with a letter or a digit");
    }
    Ok(())
}

/// The file of the template `name` in `workspace`, once the name is checked.
pub fn path(workspace: &Path, name: &str) -> Result<PathBuf, TemplateError> {
    check_name(name)?;
    Ok(workspace.join(TEMPLATES_DIR).join(format!("{name}.md")))
}

/// The templates of `workspace`, by name: every `.md` file of its [`TEMPLATES_DIR`] (none
/// when the folder does not exist). A file that cannot be read fails the listing, named.
pub fn list(workspace: &Path) -> Result<Vec<PlanTemplate>, TemplateError> {
    let dir = workspace.join(TEMPLATES_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(TemplateError::Io { path: dir, source }),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| TemplateError::Io {
            path: dir.clone(),
            source,
        })?;
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "md") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(|path| load_file(path)).collect()
}

/// The template `name` of `workspace`.
pub fn load(workspace: &Path, name: &str) -> Result<PlanTemplate, TemplateError> {
    let path = path(workspace, name)?;
    if !path.is_file() {
        return Err(TemplateError::NotFound {
            name: name.to_owned(),
            path,
        });
    }
    load_file(&path)
}

/// The template in the file `path`, named after the file.
pub fn load_file(path: &Path) -> Result<PlanTemplate, TemplateError> {
    let text = std::fs::read_to_string(path).map_err(|source| TemplateError::Io {
        path: path.to_owned(),
        source,
    })?;
    let name = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    PlanTemplate::parse(&name, &text)
}

/// Writes `template` as `.agent/plans/<name>.md` in `workspace` and returns the file; an
/// existing template is replaced only when `force` is set.
pub fn save(
    workspace: &Path,
    template: &PlanTemplate,
    force: bool,
) -> Result<PathBuf, TemplateError> {
    let path = path(workspace, &template.name)?;
    if !force && path.exists() {
        return Err(TemplateError::Exists {
            name: template.name.clone(),
            path,
        });
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| TemplateError::Io { path, source }
    };
    let dir = workspace.join(TEMPLATES_DIR);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    // A whole file or none: a template being written is never read half-way.
    let temp = dir.join(format!(".{}.md.tmp", template.name));
    std::fs::write(&temp, template.to_file_text()).map_err(io(&temp))?;
    std::fs::rename(&temp, &path).map_err(io(&path))?;
    Ok(path)
}

impl PlanTemplate {
    /// A template of the plan text `text` (as [`crate::plan::text`] gives it; its
    /// `# Plan: ...` line is left out, the mission has its own field) whose parameters are the
    /// placeholders it and `mission` already hold, without defaults. The name is checked when
    /// the template is saved ([`save`]).
    pub fn from_plan(
        name: &str,
        description: &str,
        mission: &str,
        text: &str,
    ) -> Result<Self, TemplateError> {
        let text: String = text
            .lines()
            .filter(|line| !line.starts_with("# Plan:"))
            .map(|line| format!("{line}\n"))
            .collect();
        let mut used = placeholders(mission);
        used.extend(placeholders(&text));
        let template = Self {
            name: name.to_owned(),
            description: description.to_owned(),
            mission: Some(mission.to_owned()),
            params: used
                .into_iter()
                .map(|name| TemplateParam {
                    name,
                    default: None,
                })
                .collect(),
            text,
        };
        template.check_plan(&template.text, 0)?;
        Ok(template)
    }

    /// Reads the template file `text` of the template `name`: its front matter (optional) and
    /// its plan. Refused: unknown fields, parameters that are not names or whose default is
    /// not text, placeholders that are not parameters, and a plan that cannot be read (the
    /// error names the line of the file).
    pub fn parse(name: &str, text: &str) -> Result<Self, TemplateError> {
        let invalid = |message: String| TemplateError::Invalid {
            template: name.to_owned(),
            message,
        };
        if !front_matter::has_front_matter(text) {
            let template = Self {
                name: name.to_owned(),
                description: String::new(),
                mission: None,
                params: Vec::new(),
                text: text.to_owned(),
            };
            template.check(0)?;
            return Ok(template);
        }
        let syntax = Syntax {
            all_text: true,
            keep_empty: true,
            ..Syntax::default()
        };
        let (fields, body) = front_matter::parse(text, &syntax).map_err(|error| match error {
            FrontMatterError::Invalid {
                field: Some(field),
                message,
            } => invalid(format!("`{field}`: {message}")),
            other => invalid(other.to_string()),
        })?;
        let body_line = text[..text.len() - body.len()].lines().count();
        let mut template = Self {
            name: name.to_owned(),
            description: String::new(),
            mission: None,
            params: Vec::new(),
            text: body.to_owned(),
        };
        for (key, value) in fields {
            if !FIELDS.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "unknown field `{key}` (the fields are {})",
                    FIELDS.join(", ")
                )));
            }
            match (key.as_str(), value) {
                (_, Value::Null) => {}
                ("description", Value::String(text)) => template.description = text,
                ("mission", Value::String(text)) => template.mission = Some(text),
                ("params", Value::Object(params)) => {
                    for (param, value) in params {
                        check_param_name(&param).map_err(invalid)?;
                        let default = match value {
                            Value::Null => None,
                            Value::String(text) => Some(text),
                            _ => {
                                return Err(invalid(format!(
                                    "`params.{param}`: a default is one line of text"
                                )));
                            }
                        };
                        template.params.push(TemplateParam {
                            name: param,
                            default,
                        });
                    }
                }
                ("params", _) => {
                    return Err(invalid(
                        "`params`: indented `name: default` lines under it".into(),
                    ));
                }
                (field, _) => return Err(invalid(format!("`{field}`: text is expected"))),
            }
        }
        template.params.sort_by(|a, b| a.name.cmp(&b.name));
        template.check(body_line)?;
        Ok(template)
    }

    /// Checks that every placeholder is a parameter and the plan can be read (`body_line`:
    /// the lines of the file before the plan, so errors name the file's line).
    fn check(&self, body_line: usize) -> Result<(), TemplateError> {
        let mut used = placeholders(&self.text);
        used.extend(
            self.mission
                .as_deref()
                .map(placeholders)
                .unwrap_or_default(),
        );
        if let Some(unknown) = used.iter().find(|used| !self.has_param(used)) {
            return Err(TemplateError::Invalid {
                template: self.name.clone(),
                message: format!(
                    "{{{{{unknown}}}}} is used but is not a parameter; declare it under \
                     `params:` (`{unknown}: default`, or `{unknown}:` for one without a default)"
                ),
            });
        }
        self.check_plan(&self.text, body_line)
    }

    /// Checks that `text` is a plan with goals.
    fn check_plan(&self, text: &str, body_line: usize) -> Result<(), TemplateError> {
        let padded = format!("{}{text}", "\n".repeat(body_line));
        parse_plan(&padded)
            .map(|_| ())
            .map_err(|source| TemplateError::Plan {
                template: self.name.clone(),
                source,
            })
    }

    fn has_param(&self, name: &str) -> bool {
        self.params.iter().any(|param| param.name == name)
    }

    /// The mission and plan with every `{{name}}` replaced by the value in `vars`, else the
    /// parameter's default. Refused, naming them: a value for no parameter
    /// ([`TemplateError::UnknownVar`]), parameters with neither a value nor a default
    /// ([`TemplateError::MissingVar`]), a value over several lines.
    pub fn render(&self, vars: &BTreeMap<String, String>) -> Result<RenderedPlan, TemplateError> {
        if let Some(unknown) = vars.keys().find(|name| !self.has_param(name)) {
            return Err(TemplateError::UnknownVar {
                template: self.name.clone(),
                name: unknown.clone(),
                known: self.params.iter().map(|p| p.name.clone()).collect(),
            });
        }
        let mut values = BTreeMap::new();
        let mut missing = Vec::new();
        for param in &self.params {
            match vars.get(&param.name).or(param.default.as_ref()) {
                Some(value) if value.contains(['\n', '\r']) => {
                    return Err(TemplateError::InvalidValue {
                        name: param.name.clone(),
                    });
                }
                Some(value) => {
                    values.insert(param.name.as_str(), value.as_str());
                }
                None => missing.push(param.name.clone()),
            }
        }
        if !missing.is_empty() {
            return Err(TemplateError::MissingVar {
                template: self.name.clone(),
                missing,
            });
        }
        let text = fill(&self.text, &values);
        self.check_plan(&text, 0)?;
        Ok(RenderedPlan {
            mission: self.mission.as_deref().map(|m| fill(m, &values)),
            text,
        })
    }

    /// The template as a file that [`PlanTemplate::parse`] reads back as it is.
    pub fn to_file_text(&self) -> String {
        let mut out = String::from("---\n");
        out.push_str(&format!("description: {}\n", quote(&self.description)));
        if let Some(mission) = &self.mission {
            out.push_str(&format!("mission: {}\n", quote(mission)));
        }
        out.push_str(PARAMS_HINT);
        out.push_str("\nparams:\n");
        for param in &self.params {
            match &param.default {
                Some(default) => out.push_str(&format!("  {}: {}\n", param.name, quote(default))),
                None => out.push_str(&format!("  {}:\n", param.name)),
            }
        }
        out.push_str("---\n");
        out.push_str(&self.text);
        out
    }
}

#[cfg(test)]
mod tests;
