//! What a request may choose about how its run is built, beyond the runner's options: whether
//! the model is asked for streamed answers, and the sandbox of the model's commands
//! ([`BuildChoices`]). The sandbox is named by [`SandboxMode`], the one type of the mode from
//! `--sandbox` to the HTTP API; a node's own mode is the loosest a request may ask for. The
//! factory applies them ([`RunnerFactory::build_with`](crate::RunnerFactory::build_with)).

use agent_tools::SandboxMode;
use serde::{Deserialize, Serialize};

/// What a request chose about how its run is built; `None` keeps the node's own setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildChoices {
    /// `Some(false)`: ask the model for whole answers, never streams (servers that cannot
    /// stream, or not with tools); `Some(true)`: the node's own setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// The sandbox of the run's commands: the node's own, or a stricter one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
}

impl BuildChoices {
    /// Whether nothing was chosen.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
