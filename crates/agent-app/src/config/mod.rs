//! Configuration as layers: the user's `agent.toml`, the project's, the environment and what a
//! front end overrides, each kept with where it came from ([`Source`]), read once per process
//! ([`Config::load`]).
//!
//! The user's file is `$XDG_CONFIG_HOME/agent/agent.toml` (else `~/.config/agent/agent.toml`),
//! the project's `agent.toml` in the current folder. The file in effect ([`Config::file`]) is
//! the project's when there is one, else the user's: a project file replaces the user's as a
//! whole, it is not merged into it. Settings then go flags ([`Overrides`]) > environment
//! ([`Environment`]) > that file > defaults, resolved by [`crate::App`].
//!
//! ```
//! use agent_app::config::{Config, Environment, Source};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("agent.toml"), "model = \"gpt-4.1\"\n")?;
//! let config = Config::load_from(dir.path(), None, Environment::default())?;
//! let project = config.project().expect("the project's file");
//! assert_eq!(project.source, Source::ProjectFile(dir.path().join("agent.toml")));
//! assert_eq!(config.file().model.as_deref(), Some("gpt-4.1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod environment;
mod file;
mod hooks;
mod overrides;
mod profile;
mod web;

use std::path::{Path, PathBuf};

pub use environment::{Environment, VARIABLES};
pub use file::{
    ApprovalsConfig, CheckpointsConfig, FILE_NAME, FileConfig, ModelConfig, SandboxFile,
    SandboxTable, ServeConfig, TuiFile,
};
pub use hooks::{HookCommand, HookSpec};
pub use overrides::{Overrides, ProviderOverrides, StoreOverrides};
pub use profile::{LoopGuardSpec, NameList, ProfileSpec};
pub use web::{SearchChoice, WebFile};

use crate::error::Result;

/// Where a setting was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// The user's own `agent.toml`.
    UserFile(PathBuf),
    /// The project's `agent.toml` (in the current folder).
    ProjectFile(PathBuf),
    /// An environment variable.
    Environment(&'static str),
    /// What the front end was given (a flag, a request's field).
    Override,
    /// Nothing set it.
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UserFile(path) | Self::ProjectFile(path) => write!(f, "{}", path.display()),
            Self::Environment(name) => write!(f, "environment {name}"),
            Self::Override => f.write_str("flag"),
            Self::Default => f.write_str("default"),
        }
    }
}

/// One `agent.toml` and where it was read.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The file's place: [`Source::UserFile`] or [`Source::ProjectFile`].
    pub source: Source,
    /// What it says.
    pub file: FileConfig,
}

/// The configuration layers of a process.
#[derive(Debug, Clone, Default)]
pub struct Config {
    user: Option<Layer>,
    project: Option<Layer>,
    env: Environment,
    /// The file in effect.
    effective: FileConfig,
}

impl Config {
    /// Reads the user's and the project's `agent.toml` (the current folder's) and this
    /// process's environment. Call it once per process; a file that does not parse is an
    /// [`Error::Usage`](crate::Error::Usage) naming it.
    pub fn load() -> Result<Self> {
        let env = Environment::from_process();
        let current = std::env::current_dir()
            .map_err(|error| crate::Error::io("cannot read the current folder", error))?;
        let user = env.user_dir();
        Self::load_from(&current, user.as_deref(), env)
    }

    /// Reads `agent.toml` in `project_dir` and in `user_dir` (the user's agent folder), with
    /// `env` as the environment.
    pub fn load_from(
        project_dir: &Path,
        user_dir: Option<&Path>,
        env: Environment,
    ) -> Result<Self> {
        let read = |path: PathBuf, source: fn(PathBuf) -> Source| -> Result<Option<Layer>> {
            if !path.is_file() {
                return Ok(None);
            }
            Ok(Some(Layer {
                file: FileConfig::read(&path)?,
                source: source(path),
            }))
        };
        let project = read(project_dir.join(FILE_NAME), Source::ProjectFile)?;
        let user = match user_dir {
            Some(dir) => read(dir.join(FILE_NAME), Source::UserFile)?,
            None => None,
        };
        Ok(Self::from_layers(user, project, env))
    }

    /// A configuration of these layers (for embedders that keep their settings elsewhere).
    pub fn from_layers(user: Option<Layer>, project: Option<Layer>, env: Environment) -> Self {
        let effective = project
            .as_ref()
            .or(user.as_ref())
            .map(|layer| layer.file.clone())
            .unwrap_or_default();
        Self {
            user,
            project,
            env,
            effective,
        }
    }

    /// The file in effect: the project's when there is one, else the user's, else the
    /// defaults.
    pub fn file(&self) -> &FileConfig {
        &self.effective
    }

    /// The user's `agent.toml`, when there is one.
    pub fn user(&self) -> Option<&Layer> {
        self.user.as_ref()
    }

    /// The project's `agent.toml`, when there is one.
    pub fn project(&self) -> Option<&Layer> {
        self.project.as_ref()
    }

    /// The files, the user's first.
    pub fn layers(&self) -> impl Iterator<Item = &Layer> {
        self.user.iter().chain(self.project.iter())
    }

    /// The environment read with the files.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The user's own folder of agent files (`$XDG_CONFIG_HOME/agent`, else
    /// `~/.config/agent`): its `AGENTS.md`, `agents/` and `mcp-tokens/`.
    pub fn user_dir(&self) -> Option<PathBuf> {
        self.env.user_dir()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_file_replaces_the_user_file_and_both_stay_visible() {
        let dir = tempfile::tempdir().unwrap();
        let (project, user) = (dir.path().join("p"), dir.path().join("u"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(
            user.join(FILE_NAME),
            "model = \"user-model\"\nmax_cost = 1.0\n",
        )
        .unwrap();
        let config = Config::load_from(&project, Some(&user), Environment::default()).unwrap();
        assert_eq!(config.file().model.as_deref(), Some("user-model"));
        assert!(config.project().is_none());
        std::fs::write(project.join(FILE_NAME), "model = \"project-model\"\n").unwrap();
        let config = Config::load_from(&project, Some(&user), Environment::default()).unwrap();
        assert_eq!(config.file().model.as_deref(), Some("project-model"));
        assert_eq!(config.file().max_cost, None, "not merged");
        let sources: Vec<&Source> = config.layers().map(|layer| &layer.source).collect();
        assert_eq!(
            sources,
            [
                &Source::UserFile(user.join(FILE_NAME)),
                &Source::ProjectFile(project.join(FILE_NAME))
            ]
        );
    }
}
