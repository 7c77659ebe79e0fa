//! The environment variables that change what a run does, read once with the configuration so
//! that a setting resolves the same way wherever it is asked for (and tests can give their own).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The variables the application reads: the providers' keys and base URLs, the `AGENT_*`
/// settings and the folders of the user's files.
pub const VARIABLES: [&str; 14] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AGENT_MODEL",
    "AGENT_SANDBOX",
    "AGENT_TRACE_DIR",
    "AGENT_STORE",
    "AGENT_REASONING_EFFORT",
    "AGENT_THINKING_BUDGET",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "HOME",
    "BROWSER",
];

/// A snapshot of [`VARIABLES`]; an empty (or all-blank) variable counts as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: BTreeMap<String, String>,
}

impl Environment {
    /// This process's environment.
    pub fn from_process() -> Self {
        Self::from_pairs(
            VARIABLES
                .iter()
                .filter_map(|name| Some((*name, std::env::var(name).ok()?))),
        )
    }

    /// An environment of these variables (names outside [`VARIABLES`] are kept too).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let vars = pairs
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .filter(|(_, value)| !value.trim().is_empty())
            .collect();
        Self { vars }
    }

    /// The variable's value, when it is set and not blank.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The user's own folder of agent files: `$XDG_CONFIG_HOME/agent`, else `~/.config/agent`.
    pub fn user_dir(&self) -> Option<PathBuf> {
        self.get("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                self.get("HOME")
                    .map(|home| PathBuf::from(home).join(".config"))
            })
            .map(|dir| dir.join("agent"))
    }

    /// The user's data folder of agent: `$XDG_DATA_HOME/agent`, else `~/.local/share/agent`
    /// (only from absolute paths).
    pub fn data_dir(&self) -> Option<PathBuf> {
        let absolute = |var: &str| {
            self.get(var)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        absolute("XDG_DATA_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".local").join("share")))
            .map(|dir| dir.join("agent"))
    }
}
