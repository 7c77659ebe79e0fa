//! The sandbox of the model's commands, resolved as a value ([`resolve`]): the mode an override
//! names, else `AGENT_SANDBOX`, else agent.toml's `sandbox = "MODE"` or `[sandbox]` table,
//! `workspace-write` by default; the network, writable roots and environment of the table; and
//! the paths no command may write, among them the trace folder of the store the run actually
//! opened, whatever named it (an override, the environment, agent.toml, the project's default
//! folder, a legacy `.trace`). A mode the kernel cannot enforce is refused here.
//!
//! The value goes to every tool registry the factory builds ([`crate::factory`]): `bash` runs
//! its commands in it, and the file tools refuse to write under `read-only`. An agent profile's
//! `sandbox` can only tighten it; [`looser_profiles`] says which profiles ask for more.

use std::path::PathBuf;

use agent_runner::AgentTypeConfig;
use agent_tools::sandbox::{SandboxConfig, SandboxMode, check_support, probe_helper};

use crate::config::{Environment, FileConfig};
use crate::error::{Error, Result};
use crate::store::Location;

/// A resolved sandbox, with what the person should be told about it.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    /// The settings every command of the process's runs gets.
    pub config: SandboxConfig,
    /// What to tell the person (the sandbox is off; commands cannot create top-level entries).
    pub notices: Vec<String>,
}

impl Sandbox {
    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.config.mode
    }

    /// The settings with a stricter mode when `asked` is stricter than this one (a run that
    /// asked for more confinement); `None` for a looser one, which is not this sandbox's to
    /// give.
    pub fn tightened(&self, asked: Option<SandboxMode>) -> Option<SandboxConfig> {
        match asked {
            None => Some(self.config.clone()),
            Some(mode) if mode <= self.config.mode => Some(SandboxConfig {
                mode,
                ..self.config.clone()
            }),
            Some(_) => None,
        }
    }
}

/// The mode an override, the environment (`AGENT_SANDBOX`) and the file name, in that order;
/// `workspace-write` when none does.
pub fn mode(
    flag: Option<SandboxMode>,
    env: &Environment,
    file: &FileConfig,
) -> Result<SandboxMode> {
    if let Some(mode) = flag {
        return Ok(mode);
    }
    if let Some(text) = env.get("AGENT_SANDBOX") {
        return text
            .parse::<SandboxMode>()
            .map_err(|error| Error::usage(format!("AGENT_SANDBOX: {error}")));
    }
    Ok(file.sandbox_table().mode.unwrap_or_default())
}

/// Resolves the sandbox of runs recording into the store at `location`: the mode (`flag` over
/// the environment over the file), the table's settings, the store's trace folder protected,
/// and `helper` (a program that calls
/// [`run_helper_if_requested`](agent_tools::sandbox::run_helper_if_requested) first thing)
/// for confined commands, with namespaces of their own when it can give them here.
///
/// # Errors
///
/// A usage error when the kernel cannot enforce the mode, or the environment names no mode.
pub fn resolve(
    flag: Option<SandboxMode>,
    env: &Environment,
    file: &FileConfig,
    location: &Location,
    helper: Option<PathBuf>,
) -> Result<Sandbox> {
    let table = file.sandbox_table();
    let mut config = SandboxConfig::new(mode(flag, env, file)?);
    config.network = table.network.unwrap_or(false);
    config.writable_roots = table.writable_roots;
    config.env_keep = table.env_keep;
    config.env_set = table.env_set;
    config.unix_sockets = table.unix_sockets;
    config.protected = protected(location);
    check_support(&config).map_err(|error| Error::usage(error.to_string()))?;
    let mut notices = Vec::new();
    if config.mode != SandboxMode::Off {
        (config.helper, config.namespaces) = sandbox_helper(helper, &mut notices);
    }
    if config.mode == SandboxMode::Off {
        notices.push(
            "agent: the sandbox is off: the model's commands read and write anything you can, \
             reach the network and see your environment"
                .into(),
        );
    }
    Ok(Sandbox { config, notices })
}

/// The paths of a store no command may write: its trace folder, as the path it was opened at
/// and as the folder it resolves to (a symbolic link's target included).
pub fn protected(location: &Location) -> Vec<PathBuf> {
    let Some(folder) = location.folder() else {
        return Vec::new();
    };
    let absolute = std::path::absolute(folder).unwrap_or_else(|_| folder.clone());
    let mut paths = vec![absolute.clone()];
    if let Ok(canonical) = std::fs::canonicalize(folder)
        && canonical != absolute
    {
        paths.push(canonical);
    }
    paths
}

/// `helper` as the sandbox helper of confined commands, and whether it can give them namespaces
/// of their own here; a notice says what is lost when it cannot.
fn sandbox_helper(helper: Option<PathBuf>, notices: &mut Vec<String>) -> (Option<PathBuf>, bool) {
    let Some(exe) = helper else {
        notices.push(
            "agent: no sandbox helper: commands are confined from this process and stay in its \
             terminal's session"
                .into(),
        );
        return (None, false);
    };
    match probe_helper(&exe) {
        Ok(()) => (Some(exe), true),
        Err(reason) => {
            notices.push(format!(
                "agent: the sandbox cannot use user namespaces here ({reason}): .git, agent.toml, \
                 .agent/ and the trace folder stay read-only, but commands cannot create new \
                 entries at the top of the workspace, see other processes' /proc, or be kept \
                 from local services by their Unix sockets"
            ));
            (Some(exe), false)
        }
    }
}

/// What to say about the profiles that ask for a looser sandbox than `own`: a profile can only
/// tighten the run's sandbox, so their commands run under `own`.
pub fn looser_profiles<'a>(
    profiles: impl IntoIterator<Item = (&'a String, &'a AgentTypeConfig)>,
    own: SandboxMode,
) -> Vec<String> {
    profiles
        .into_iter()
        .filter_map(|(name, profile)| {
            let asked = profile.sandbox.filter(|asked| *asked > own)?;
            Some(format!(
                "agent: the agent profile {name} asks for the `{asked}` sandbox, looser than \
                 this run's `{own}`: its commands run under `{own}` (a profile can only tighten \
                 the run's sandbox; pass --sandbox {asked} to allow it)"
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_environment_over_the_file() {
        let file = FileConfig::parse(
            "[sandbox]\nmode = \"read-only\"\nnetwork = true\n",
            std::path::Path::new("agent.toml"),
        )
        .unwrap();
        let env = Environment::from_pairs([("AGENT_SANDBOX", "off")]);
        let none = Environment::default();
        assert_eq!(mode(None, &none, &file).unwrap(), SandboxMode::ReadOnly);
        assert_eq!(mode(None, &env, &file).unwrap(), SandboxMode::Off);
        let flag = Some(SandboxMode::WorkspaceWrite);
        assert_eq!(
            mode(flag, &env, &file).unwrap(),
            SandboxMode::WorkspaceWrite
        );
        let bad = Environment::from_pairs([("AGENT_SANDBOX", "none")]);
        assert!(mode(None, &bad, &file).unwrap_err().is_usage());
    }

    #[test]
    fn the_opened_folder_is_protected_as_named_and_as_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let paths = protected(&Location::Folder(link.clone()));
        assert_eq!(paths[0], link);
        assert_eq!(paths[1], std::fs::canonicalize(&real).unwrap());
        assert!(protected(&Location::Postgres("postgres://h/db".into())).is_empty());
    }

    #[test]
    fn a_stricter_mode_is_given_and_a_looser_one_refused() {
        let sandbox = Sandbox {
            config: SandboxConfig::new(SandboxMode::WorkspaceWrite),
            notices: Vec::new(),
        };
        let stricter = sandbox.tightened(Some(SandboxMode::ReadOnly)).unwrap();
        assert_eq!(stricter.mode, SandboxMode::ReadOnly);
        assert!(sandbox.tightened(Some(SandboxMode::Off)).is_none());
    }
}
