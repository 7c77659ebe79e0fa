//! The one runner factory ([`AppFactory`]) every door builds its runners with: `agent run`, the
//! chat's line mode and full-screen UI, plan mode, the demo, each ACP session, and the runs of
//! `agent serve` and `agent worker` (through [`RunnerFactory`](agent_worker::RunnerFactory),
//! `serve.rs`). A door says only what is its own ([`RunRequest`]: who answers approvals, who is
//! asked about reruns and rollbacks, an editor's tools, a session's folder); the model, the
//! profiles, limits, reasoning settings, instructions, approval rules, checkpoints, tools and
//! their sandbox come from here, the same for all.
//!
//! What is added to every runner is added in one place: [`Extension`]s register tools and
//! give parts of the system prompt (the MCP servers are one, the skills ([`crate::skills`])
//! another, the web tools of `[web]` a third).

mod extension;
mod serve;
mod settings;
mod web;
#[cfg(feature = "web")]
mod web_search;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agent_execution::TraceStore;
use agent_llm::LlmClient;
use agent_mcp::McpServers;
use agent_runner::{AgentRunner, Approval, RerunApprover, RollbackConfirm, RunnerOptions};
use agent_tools::sandbox::SandboxConfig;
use agent_tools::{BashTool, Tool, ToolRegistry, TypedTool};

pub use extension::{Extension, MainModel, McpExtension, Scope};
pub use serve::{WholeAnswers, roots_text, workspace_roots};

use crate::app::App;
use crate::config::ProviderOverrides;
use crate::error::{Error, Result};
use crate::provider::{self, ProviderConfig};
use crate::sandbox::Sandbox;
use crate::skills::SkillsExtension;
use crate::store::{Location, Opened};

/// What is called with a trace's id when a run a server or a worker tracked has ended.
pub type RunEnded = Arc<dyn Fn(&str) + Send + Sync>;

/// What a door asks for one runner; everything else is the factory's.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RunRequest {
    /// The profile a resumed trace ran as; the overrides' `agent` wins, `default` otherwise.
    pub profile: Option<String>,
    /// The folder the runner works in (an editor's session); the factory's workspace otherwise.
    pub workspace: Option<PathBuf>,
    /// Who decides on risky calls; refused without asking when `None` (fail closed).
    pub approval: Option<Approval>,
    /// Who is asked whether a command the sandbox refused runs again without it; never asked
    /// when `None`.
    pub rerun: Option<Arc<dyn RerunApprover>>,
    /// Who is asked whether an abandoned goal's changes are rolled back; nobody when `None`
    /// (under `abandon_rollback = "ask"` the changes stay).
    pub confirm: Option<Arc<dyn RollbackConfirm>>,
    /// Tools that take the place of the built-in tools of the same name (an editor's file
    /// tools), or come in addition (an editor's MCP servers).
    pub tools: Vec<Arc<dyn Tool>>,
}

impl RunRequest {
    /// A request for the default profile in the factory's workspace, risky calls refused.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs as `profile` (a resumed trace's) unless the overrides name another.
    #[must_use]
    pub fn profile(mut self, profile: Option<&str>) -> Self {
        self.profile = profile.map(str::to_owned);
        self
    }

    /// Works in `workspace`.
    #[must_use]
    pub fn workspace(mut self, workspace: impl Into<PathBuf>) -> Self {
        self.workspace = Some(workspace.into());
        self
    }

    /// Decides risky calls with `approval`.
    #[must_use]
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = Some(approval);
        self
    }

    /// Asks `rerun` whether a command the sandbox refused runs again without it.
    #[must_use]
    pub fn rerun(mut self, rerun: Arc<dyn RerunApprover>) -> Self {
        self.rerun = Some(rerun);
        self
    }

    /// Asks `confirm` whether an abandoned goal's changes are rolled back.
    #[must_use]
    pub fn confirm(mut self, confirm: Arc<dyn RollbackConfirm>) -> Self {
        self.confirm = Some(confirm);
        self
    }

    /// Uses `tools` in the place of (or beside) the built-in ones.
    #[must_use]
    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Self {
        self.tools = tools;
        self
    }
}

impl std::fmt::Debug for RunRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("profile", &self.profile)
            .field("workspace", &self.workspace)
            .field("approval", &self.approval)
            .field("rerun", &self.rerun.is_some())
            .field("confirm", &self.confirm.is_some())
            .field("tools", &self.tools.len())
            .finish()
    }
}

/// A runner, the model it reaches, and what the person should be told about it.
#[non_exhaustive]
pub struct Built {
    /// The runner.
    pub runner: AgentRunner,
    /// The model of its main traces.
    pub provider: ProviderConfig,
    /// What to tell the person (profiles that ask for a looser sandbox, a profile's provider
    /// that cannot be reached, instruction files cut short).
    pub notices: Vec<String>,
}

/// Builds every runner of a front end (see the module documentation).
pub struct AppFactory {
    app: App,
    store: Arc<dyn TraceStore>,
    location: Location,
    sandbox: Sandbox,
    /// The workspace of runs that name none.
    workspace: PathBuf,
    extensions: Vec<Arc<dyn Extension>>,
    /// The model clients built so far, by provider configuration.
    clients: Mutex<Vec<(ProviderConfig, Arc<dyn LlmClient>)>>,
    /// The provider configurations resolved so far, by overrides (a local server is asked for
    /// its model once, not at every run).
    providers: Mutex<Vec<(ProviderOverrides, ProviderConfig)>>,
    /// Called when a run tracked by a server or a worker ends.
    run_ended: Option<RunEnded>,
}

impl std::fmt::Debug for AppFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppFactory")
            .field("location", &self.location)
            .field("sandbox", &self.sandbox.config.mode)
            .field("workspace", &self.workspace)
            .field("extensions", &self.extensions.len())
            .finish_non_exhaustive()
    }
}

impl AppFactory {
    /// A factory for `app`'s runs recording into `store`, confined by `sandbox`, with the tools
    /// of `mcp`. Checks the workspace, the limits of agent.toml and that a model is configured.
    pub fn new(app: App, store: Opened, sandbox: Sandbox, mcp: Arc<McpServers>) -> Result<Self> {
        crate::profiles::check_limits(app.file())?;
        crate::hooks::check(&app.file().hooks)?;
        let workspace = app.workspace()?;
        let mut extensions: Vec<Arc<dyn Extension>> = vec![
            Arc::new(McpExtension::new(mcp)),
            Arc::new(SkillsExtension::new(app.config().user_dir())),
        ];
        extensions.extend(web::extension(app.file())?);
        // The questions of the servers started on this app notify the same hooks as its runs
        // (what the hooks' notices say, each runner's building says again).
        let mut said = Vec::new();
        if let Some(hooks) = crate::hooks::for_config(app.config(), store.store.clone(), &mut said)?
        {
            app.elicit_hooks().set(hooks);
        }
        let factory = Self {
            store: store.store,
            location: store.location,
            sandbox,
            workspace,
            extensions,
            clients: Mutex::new(Vec::new()),
            providers: Mutex::new(Vec::new()),
            run_ended: None,
            app,
        };
        Ok(factory)
    }

    /// Adds `extension` to every runner built from now on.
    #[must_use]
    pub fn with_extension(mut self, extension: Arc<dyn Extension>) -> Self {
        self.extensions.push(extension);
        self
    }

    /// Calls `run_ended` when a run a server or a worker tracked ends (to send its spans).
    #[must_use]
    pub fn on_run_ended(mut self, run_ended: RunEnded) -> Self {
        self.run_ended = Some(run_ended);
        self
    }

    /// The application the factory builds for.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The store runs record into.
    pub fn store(&self) -> &Arc<dyn TraceStore> {
        &self.store
    }

    /// Where that store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The sandbox of the runs.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The workspace of runs that name none (canonical when it can be).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The custom commands of runs in `workspace` (the factory's when `None`) and of the user.
    pub fn commands(&self, workspace: Option<&Path>) -> crate::commands::Found {
        let workspace = workspace.unwrap_or(&self.workspace);
        crate::commands::discover(workspace, self.app.config().user_dir().as_deref())
    }

    /// `text` as the task of a run in `workspace`: a custom command (`/name args`) expanded,
    /// any other text as it is. Every door sends its tasks and messages through here. A command
    /// whose file cannot be read is a usage error.
    pub fn expand(&self, text: &str, workspace: Option<&Path>) -> Result<String> {
        match self.commands(workspace).expand(text) {
            None => Ok(text.to_owned()),
            Some(Ok(expanded)) => Ok(expanded.task),
            Some(Err(error)) => Err(Error::usage(error)),
        }
    }

    /// `text` [expanded](Self::expand), with the pictures of `files` (`--image`) attached
    /// ([`crate::images::attach`]).
    pub fn prompt(
        &self,
        text: &str,
        files: &[PathBuf],
        workspace: Option<&Path>,
    ) -> Result<crate::images::Prompt> {
        crate::images::attach(&self.expand(text, workspace)?, files)
    }

    /// Resolves the settings of the runs that name no profile (the overrides', else `default`)
    /// in the factory's workspace, so that a mistake in agent.toml or a profile file shows
    /// before the first run (a server checks at start); the notices of that resolution.
    pub fn check(&self) -> Result<Vec<String>> {
        let name = self.app.profile_name(None).to_owned();
        Ok(self.settings(&name, &self.workspace, false)?.notices)
    }

    /// A runner as `request` asks.
    pub fn runner(&self, request: RunRequest) -> Result<Built> {
        let workspace = match &request.workspace {
            Some(dir) => {
                crate::app::check_workspace(dir)?;
                dir.clone()
            }
            None => self.workspace.clone(),
        };
        let recorded = self.app.overrides().agent.is_none() && request.profile.is_some();
        let name = self.app.profile_name(request.profile.as_deref()).to_owned();
        let mut resolved = self.settings(&name, &workspace, recorded)?;
        resolved.options.approval = request.approval.clone().unwrap_or_default();
        let parts = Parts {
            sandbox: self.sandbox.config.clone(),
            stream: None,
            rerun: request.rerun.clone(),
            confirm: request.confirm.clone(),
            rollback: resolved.rollback,
            tools: request.tools.clone(),
            custom_endpoint: resolved.provider.base_url.is_some(),
        };
        let runner = self.build_runner(
            self.store.clone(),
            resolved.options,
            resolved.client,
            parts,
            &mut resolved.notices,
        )?;
        Ok(Built {
            runner,
            provider: resolved.provider,
            notices: resolved.notices,
        })
    }

    /// The tools of a runner as `request` asks, for a runner whose tools changed (an MCP server
    /// said so): the built-ins in the sandbox, the extensions' tools and the request's.
    pub fn registry(&self, request: &RunRequest) -> ToolRegistry {
        let workspace = request.workspace.as_deref().unwrap_or(&self.workspace);
        let profile = self.app.profile_name(request.profile.as_deref()).to_owned();
        // The runner was built from the same files, so they read.
        let skills = self.skills_of(Some(&profile), workspace).ok().flatten();
        let resolved = self.settings(&profile, workspace, false).ok();
        let mut scope = Scope::new(workspace).with_skills(skills.as_deref());
        if let Some(resolved) = &resolved {
            scope = scope
                .with_model(&resolved.client, &resolved.provider.model)
                .with_prices(&resolved.options.prices)
                .with_custom_endpoint(resolved.provider.base_url.is_some());
        }
        self.tools(
            &self.sandbox.config,
            request.rerun.clone(),
            &request.tools,
            &scope,
        )
    }

    /// The skills a run as `profile` (`default` when `None`) in `workspace` offers; every skill
    /// when `None`.
    fn skills_of(&self, profile: Option<&str>, workspace: &Path) -> Result<Option<Vec<String>>> {
        let profile = profile.unwrap_or(agent_runner::agents::DEFAULT);
        let user_dir = self.app.config().user_dir();
        crate::profiles::skills(self.app.file(), workspace, user_dir.as_deref(), profile)
    }

    /// The provider `overrides` reach, resolved once per overrides.
    fn provider(&self, overrides: &ProviderOverrides) -> Result<ProviderConfig> {
        let mut providers = self
            .providers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, config)) = providers.iter().find(|(given, _)| given == overrides) {
            return Ok(config.clone());
        }
        let config = provider::resolve(overrides, self.app.file(), self.app.config().env())
            .ok_or_else(|| Error::usage(provider::NO_PROVIDER))?;
        providers.push((overrides.clone(), config.clone()));
        Ok(config)
    }

    /// The client of `provider`, built once per configuration.
    fn client(&self, provider: &ProviderConfig) -> Result<Arc<dyn LlmClient>> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, client)) = clients.iter().find(|(config, _)| config == provider) {
            return Ok(client.clone());
        }
        let client = provider::client(provider)?;
        clients.push((provider.clone(), client.clone()));
        Ok(client)
    }

    /// Builds a runner from resolved options and what the door chose.
    fn build_runner(
        &self,
        store: Arc<dyn TraceStore>,
        mut options: RunnerOptions,
        client: Arc<dyn LlmClient>,
        parts: Parts,
        notices: &mut Vec<String>,
    ) -> Result<AgentRunner> {
        let workspace = options.workspace.clone();
        if !workspace.is_dir() {
            return Err(Error::usage(format!(
                "the workspace {} is not a folder",
                workspace.display()
            )));
        }
        if self.instructions_on() && options.instructions.is_empty() {
            let today = chrono::Local::now().format("%Y-%m-%d").to_string();
            let block = crate::instructions::EnvironmentBlock {
                date: &today,
                sandbox: Some(parts.sandbox.mode),
            };
            let user_dir = self.app.config().user_dir();
            let found = crate::instructions::gather(&workspace, user_dir.as_deref(), block)?;
            notices.extend(found.warning);
            options.instructions = found.instructions;
        }
        // What the extensions (the MCP servers among them) say about their tools goes with the
        // tools, whatever the instruction files' setting.
        let skills = self.skills_of(options.agent.as_deref(), &workspace)?;
        let (model, prices) = (options.model.clone(), options.prices.clone());
        let main = client.clone();
        let scope = Scope::new(&workspace)
            .with_skills(skills.as_deref())
            .with_model(&main, &model)
            .with_prices(&prices)
            .with_custom_endpoint(parts.custom_endpoint);
        for extension in &self.extensions {
            options.instructions.extend(extension.instructions(&scope));
        }
        if options.checkpoints.is_none() {
            options.checkpoints = crate::checkpoints::options(
                &self.location,
                &workspace,
                self.app.file(),
                parts.rollback,
                parts.confirm,
            );
        }
        let client: Arc<dyn LlmClient> = match parts.stream {
            Some(false) => {
                options.clients = whole_answers(std::mem::take(&mut options.clients));
                Arc::new(WholeAnswers(client))
            }
            _ => client,
        };
        if options.hooks.is_none() {
            options.hooks = crate::hooks::for_config(self.app.config(), store.clone(), notices)?;
        }
        let approval = std::mem::take(&mut options.approval);
        options.approval =
            crate::hooks::notify::approval(approval, options.hooks.as_ref(), workspace.clone());
        let registry = self.tools(&parts.sandbox, parts.rerun, &parts.tools, &scope);
        Ok(AgentRunner::new(store, client, registry, options))
    }

    /// The tools of the runner of `scope`: the built-ins with `bash` in `sandbox` (asking
    /// `rerun` about commands the sandbox refused), the extensions' tools, then `extra` in the
    /// place of the tools of the same name, each confined to the sandbox's mode.
    fn tools(
        &self,
        sandbox: &SandboxConfig,
        rerun: Option<Arc<dyn RerunApprover>>,
        extra: &[Arc<dyn Tool>],
        scope: &Scope<'_>,
    ) -> ToolRegistry {
        let mut registry = ToolRegistry::with_builtins_in(sandbox.clone());
        if let Some(rerun) = rerun {
            // `bash` is a valid name.
            let _ = registry.replace(BashTool::new(sandbox.clone()).with_rerun(rerun).into_tool());
        }
        for extension in &self.extensions {
            extension.register(&mut registry, scope);
        }
        for tool in extra {
            let tool = tool
                .confined_to(sandbox.mode)
                .unwrap_or_else(|| tool.clone());
            if let Err(error) = registry.replace(tool) {
                tracing::warn!("a tool is not used: {error}");
            }
        }
        registry
    }

    /// Whether runs carry the instruction files and the environment block.
    fn instructions_on(&self) -> bool {
        self.app.overrides().instructions != Some(false)
            && self.app.file().instructions != Some(false)
    }
}

/// What a door chose about how its runner is built, beyond the options.
struct Parts {
    sandbox: SandboxConfig,
    stream: Option<bool>,
    rerun: Option<Arc<dyn RerunApprover>>,
    confirm: Option<Arc<dyn RollbackConfirm>>,
    rollback: Option<agent_checkpoint::AbandonRollback>,
    tools: Vec<Arc<dyn Tool>>,
    /// Whether the provider is reached at a base URL that was configured.
    custom_endpoint: bool,
}

/// Every client asked for whole answers.
fn whole_answers(
    clients: BTreeMap<String, Arc<dyn LlmClient>>,
) -> BTreeMap<String, Arc<dyn LlmClient>> {
    clients
        .into_iter()
        .map(|(name, client)| {
            let whole: Arc<dyn LlmClient> = Arc::new(WholeAnswers(client));
            (name, whole)
        })
        .collect()
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
