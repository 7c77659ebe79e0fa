//! [`App`]: the configuration of a process (read once) with a front end's overrides on top, and
//! what it resolves: the workspace, the store, the sandbox, the main model, the MCP servers,
//! which the one [`AppFactory`](crate::AppFactory) every door builds its runners with is made
//! from.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_mcp::{ClientOptions, McpServers};
use agent_runner::agents::DEFAULT;

use crate::config::{Config, FileConfig, Overrides};
use crate::error::{Error, Result};
use crate::profiles::{self, Profiles};
use crate::provider::{self, NO_PROVIDER, ProviderConfig};
use crate::sandbox::Sandbox;
use crate::store::{Location, Opened, Origin};

/// The configuration of a process with one front end's overrides: everything a door needs to
/// resolve before it builds runners. Cheap to clone (the configuration is shared).
#[derive(Debug, Clone)]
pub struct App {
    config: Arc<Config>,
    overrides: Overrides,
    helper: Option<PathBuf>,
    /// The hooks the questions of the MCP servers it starts notify, once its factory exists.
    elicit_hooks: crate::hooks::notify::Later,
}

impl App {
    /// `config` with `overrides` on top.
    pub fn new(config: Config, overrides: Overrides) -> Self {
        Self {
            config: Arc::new(config),
            overrides,
            helper: None,
            elicit_hooks: crate::hooks::notify::Later::default(),
        }
    }

    /// Reads the configuration of this process ([`Config::load`]) and puts `overrides` on top.
    pub fn load(overrides: Overrides) -> Result<Self> {
        Ok(Self::new(Config::load()?, overrides))
    }

    /// The same configuration with other overrides (a resumed trace's settings filled in).
    #[must_use]
    pub fn with_overrides(&self, overrides: Overrides) -> Self {
        Self {
            overrides,
            ..self.clone()
        }
    }

    /// Names the program that serves as the sandbox helper of `workspace-write` commands: one
    /// that calls [`run_helper_if_requested`](agent_tools::sandbox::run_helper_if_requested)
    /// first thing in its `main` (the `agent` binary names itself). Without one, commands are
    /// confined from a thread of this process and cannot create entries at the top of the
    /// workspace.
    #[must_use]
    pub fn with_sandbox_helper(mut self, program: PathBuf) -> Self {
        self.helper = Some(program);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The `agent.toml` in effect.
    pub fn file(&self) -> &FileConfig {
        self.config.file()
    }

    /// The overrides.
    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// The folder runs work in as named (the override, else agent.toml's), unchecked.
    pub fn named_workspace(&self) -> Option<PathBuf> {
        self.overrides
            .workspace
            .clone()
            .or_else(|| self.file().workspace.clone())
    }

    /// The folder runs work in: the override, else agent.toml's, else the current folder. A
    /// workspace that is missing or not a folder is a usage error that says which.
    pub fn workspace(&self) -> Result<PathBuf> {
        let workspace = match self.named_workspace() {
            Some(dir) => dir,
            None => std::env::current_dir()
                .map_err(|error| Error::io("cannot read the current folder", error))?,
        };
        check_workspace(&workspace)?;
        Ok(workspace)
    }

    /// Where traces are kept, and what named it: the overrides, the environment, agent.toml,
    /// else the default folder of the workspace's project (the current folder's when no
    /// workspace is named).
    pub fn store_location(&self) -> (Location, Origin) {
        let project = self.named_workspace().unwrap_or_else(|| PathBuf::from("."));
        Location::resolve(
            &self.overrides.store,
            self.file(),
            self.config.env(),
            &project,
        )
    }

    /// Opens the store [`App::store_location`] names (a folder is created).
    pub async fn open_store(&self) -> Result<Opened> {
        crate::store::open(self.store_location().0).await
    }

    /// The notice a front end says once when the store is a project's old `.trace` folder.
    pub fn store_notice(&self) -> Option<String> {
        match self.store_location() {
            (Location::Folder(dir), Origin::Project(crate::store::project::Found::Legacy)) => Some(
                crate::store::project::legacy_notice(&dir, self.config.env().data_dir().as_deref()),
            ),
            _ => None,
        }
    }

    /// The sandbox of runs recording into the store at `location` (whose trace folder it
    /// protects).
    pub fn sandbox(&self, location: &Location) -> Result<Sandbox> {
        crate::sandbox::resolve(
            self.overrides.sandbox,
            self.config.env(),
            self.file(),
            location,
            self.helper.clone(),
        )
    }

    /// The profile main traces run as: the override, else `recorded` (the profile a resumed
    /// trace ran as), else `default`.
    pub fn profile_name<'a>(&'a self, recorded: Option<&'a str>) -> &'a str {
        self.overrides
            .agent
            .as_deref()
            .or(recorded)
            .unwrap_or(DEFAULT)
    }

    /// Every profile, for runs in `workspace`.
    pub fn profiles(&self, workspace: &Path) -> Result<Profiles> {
        profiles::load(self.file(), workspace, self.config.user_dir().as_deref())
    }

    /// The model of runs as the profile `profile` (`None`: the overrides' or `default`), in
    /// `workspace`: the overrides, then the profile, then the environment and the file.
    pub fn provider_for(&self, profile: Option<&str>, workspace: &Path) -> Result<ProviderConfig> {
        let profiles = self.profiles(workspace)?;
        let profile = profiles::get(&profiles, self.profile_name(profile))?;
        let overrides = profiles::provider_overrides(&self.overrides.provider, profile);
        provider::resolve(&overrides, self.file(), self.config.env())
            .ok_or_else(|| Error::usage(NO_PROVIDER))
    }

    /// The model of runs as the overrides' profile (else `default`), without reading profile
    /// files: for a front end that only needs to know whether a model is configured.
    pub fn provider(&self) -> Option<ProviderConfig> {
        provider::resolve(&self.overrides.provider, self.file(), self.config.env())
    }

    /// Whether front ends show the model's reasoning in full.
    pub fn show_reasoning(&self) -> bool {
        self.overrides
            .show_reasoning
            .or(self.file().show_reasoning)
            .unwrap_or(false)
    }

    /// How the full-screen UI notifies the person (`[tui] notify`, read once here).
    pub fn terminal_notify(&self) -> agent_tools::interaction::TerminalNotify {
        let tui = self.file().tui.as_ref();
        tui.and_then(|tui| tui.notify).unwrap_or_default()
    }

    /// The hooks the questions of the MCP servers this app starts notify, once set.
    pub(crate) fn elicit_hooks(&self) -> &crate::hooks::notify::Later {
        &self.elicit_hooks
    }

    /// Starts the MCP servers of runs (the enabled ones and those the overrides name), their
    /// stdio servers in `sandbox`, offered what `client` says (roots, who answers questions;
    /// each question fires the `Notification` hooks of the factory built on this app first).
    pub async fn start_mcp(
        &self,
        mut client: ClientOptions,
        sandbox: &Sandbox,
    ) -> Result<(McpServers, Vec<String>)> {
        // Their questions fire the `Notification` hooks of the factory built on this app.
        client.elicitor = Arc::new(crate::hooks::notify::NotifyingElicitor {
            inner: client.elicitor,
            hooks: self.elicit_hooks.clone(),
            workspace: self.workspace().unwrap_or_default(),
        });
        let user_dir = self.config.user_dir();
        let named = &self.overrides.mcp;
        crate::mcp::start(self.file(), user_dir.as_deref(), named, client, sandbox).await
    }
}

/// A workspace that is missing or not a folder is a usage error that says which.
pub fn check_workspace(workspace: &Path) -> Result<()> {
    match std::fs::metadata(workspace) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(Error::usage(format!(
            "the workspace {} is not a folder",
            workspace.display()
        ))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(Error::usage(format!(
            "the workspace {} does not exist",
            workspace.display()
        ))),
        Err(error) => Err(Error::usage(format!(
            "the workspace {} cannot be read: {error}",
            workspace.display()
        ))),
    }
}
