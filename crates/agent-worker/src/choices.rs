//! What a request may choose about how its run is built, beyond the runner's options: whether
//! the model is asked for streamed answers, and the sandbox of the model's commands
//! ([`BuildChoices`], [`SandboxChoice`]). The factory applies them
//! ([`RunnerFactory::build_with`](crate::RunnerFactory::build_with)).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The sandbox of a run's commands as a request names it, from the loosest to the strictest. A
/// node's own sandbox is the loosest a request may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SandboxChoice {
    /// No confinement: full access to files, network and environment.
    Off,
    /// Reads anywhere; writes inside the workspace (protected entries aside) and the run's
    /// private temporary folder; no network.
    #[default]
    WorkspaceWrite,
    /// Reads anywhere; writes only to the run's private temporary folder; no network.
    ReadOnly,
}

impl SandboxChoice {
    /// The mode's name, as `--sandbox` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
        }
    }
}

impl fmt::Display for SandboxChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a request chose about how its run is built; `None` keeps the node's own setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildChoices {
    /// `Some(false)`: ask the model for whole answers, never streams (servers that cannot
    /// stream, or not with tools); `Some(true)`: the node's own setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// The sandbox of the run's commands: the node's own, or a stricter one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxChoice>,
}

impl BuildChoices {
    /// Whether nothing was chosen.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
