//! Why a template cannot be named, read, written or rendered.

use std::path::PathBuf;

use agent_goal::PlanParseError;

/// Why a template cannot be named, read, written or rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The name is not a template name.
    #[error("invalid template name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No template has this name.
    #[error("there is no plan template {name:?} (looked for {})", path.display())]
    NotFound {
        /// The name.
        name: String,
        /// The file that does not exist.
        path: PathBuf,
    },
    /// Saving would replace a template.
    #[error("the plan template {name:?} exists already ({}); pass --force to replace it", path.display())]
    Exists {
        /// The name.
        name: String,
        /// Its file.
        path: PathBuf,
    },
    /// A file cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The template's front matter or placeholders are wrong.
    #[error("plan template {template:?}: {message}")]
    Invalid {
        /// The template.
        template: String,
        /// What is wrong.
        message: String,
    },
    /// The template's plan text cannot be read.
    #[error("plan template {template:?}: {source}")]
    Plan {
        /// The template.
        template: String,
        /// What is wrong, with the line of the file.
        source: PlanParseError,
    },
    /// A value was given for a parameter the template does not have.
    #[error(
        "plan template {template:?} has no parameter {name:?} (its parameters: {})",
        list_or_none(known)
    )]
    UnknownVar {
        /// The template.
        template: String,
        /// The name given.
        name: String,
        /// The template's parameters.
        known: Vec<String>,
    },
    /// Parameters without a default were given no value.
    #[error(
        "plan template {template:?} needs a value for {}: pass --var NAME=VALUE",
        names(missing)
    )]
    MissingVar {
        /// The template.
        template: String,
        /// The parameters without a value.
        missing: Vec<String>,
    },
    /// A value cannot go into a plan (it spans lines).
    #[error("the value of {name:?} must be one line of text")]
    InvalidValue {
        /// The parameter.
        name: String,
    },
}

impl TemplateError {
    /// Whether the error is about what was asked (a name, a value), not a file or the system:
    /// a usage error on the command line, 400 over HTTP.
    pub fn is_request_error(&self) -> bool {
        matches!(
            self,
            Self::InvalidName { .. }
                | Self::UnknownVar { .. }
                | Self::MissingVar { .. }
                | Self::InvalidValue { .. }
        )
    }
}

pub(super) fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

pub(super) fn names(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
