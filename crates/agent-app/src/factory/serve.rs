//! The factory as [`RunnerFactory`] for the runs of `agent serve` and `agent worker`: started
//! over HTTP or claimed from the run queue, they get the same settings as `agent run` (the
//! profiles, limits, prices, reasoning settings, instructions, approval rules, checkpoints,
//! tools and sandbox of [`AppFactory`]), a request's stricter sandbox or whole answers when it
//! asks, and never a looser sandbox. The worker reaches it without going through the server.

use std::path::PathBuf;
use std::sync::Arc;

use agent_execution::TraceStore;
use agent_llm::{ChatRequest, ChatStream, LlmClient, LlmError};
use agent_runner::agents::DEFAULT;
use agent_runner::{AgentRunner, RunnerOptions};
use agent_worker::{BuildChoices, FactoryError, RunnerFactory, WorkspaceError, WorkspaceRoots};

use super::{AppFactory, Parts};
use crate::app::App;
use crate::error::{Error, Result};

impl AppFactory {
    /// The profile the runs of a server or a worker run as: the overrides', else `default`.
    fn served_profile(&self) -> String {
        self.app.profile_name(None).to_owned()
    }
}

impl RunnerFactory for AppFactory {
    fn options(&self) -> RunnerOptions {
        match self.settings(&self.served_profile(), &self.workspace, false) {
            Ok(resolved) => {
                for notice in &resolved.notices {
                    tracing::warn!("{notice}");
                }
                resolved.options
            }
            Err(error) => {
                tracing::warn!("the runs' settings cannot be resolved: {error}");
                RunnerOptions::new(DEFAULT, self.workspace.clone())
            }
        }
    }

    fn task(&self, task: &str, workspace: &std::path::Path) -> Result<String, FactoryError> {
        self.expand(task, Some(workspace))
            .map_err(|error| FactoryError::Rejected(error.to_string()))
    }

    fn run_ended(&self, trace_id: &str) {
        if let Some(run_ended) = &self.run_ended {
            run_ended(trace_id);
        }
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        self.build_with(store, options, &BuildChoices::default())
    }

    fn build_with(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
        choices: &BuildChoices,
    ) -> Result<AgentRunner, FactoryError> {
        let Some(sandbox) = self.sandbox.tightened(choices.sandbox) else {
            let own = self.sandbox.mode();
            let asked = choices.sandbox.unwrap_or(own);
            return Err(FactoryError::Rejected(format!(
                "this node's sandbox is `{own}`: a run may ask for a stricter one, not `{asked}`"
            )));
        };
        if !options.workspace.is_dir() {
            return Err(FactoryError::Rejected(format!(
                "the workspace {} is not a folder on the server",
                options.workspace.display()
            )));
        }
        let resolved = self
            .settings(&self.served_profile(), &self.workspace, false)
            .map_err(|error| FactoryError::Rejected(error.to_string()))?;
        let parts = Parts {
            sandbox,
            stream: choices.stream,
            rerun: None,
            confirm: None,
            rollback: resolved.rollback,
            tools: Vec::new(),
            custom_endpoint: resolved.provider.base_url.is_some(),
        };
        let mut notices = resolved.notices;
        let runner = self
            .build_runner(store, options, resolved.client, parts, &mut notices)
            .map_err(|error| match error {
                Error::Usage(message) => FactoryError::Rejected(message),
                other => FactoryError::Failed(other.to_string()),
            })?;
        for notice in notices {
            tracing::warn!("{notice}");
        }
        Ok(runner)
    }
}

/// A client that asks for whole answers, never streams: a run started with `stream: false`.
#[derive(Clone)]
pub struct WholeAnswers(pub Arc<dyn LlmClient>);

impl std::fmt::Debug for WholeAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WholeAnswers(..)")
    }
}

#[async_trait::async_trait]
impl LlmClient for WholeAnswers {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let mut request = request;
        request.stream = Some(false);
        self.0.stream(request).await
    }

    fn model_info(&self, model: &str) -> agent_llm::ModelInfo {
        self.0.model_info(model)
    }

    async fn learn_window(&self, model: &str) -> Option<agent_llm::ContextWindow> {
        self.0.learn_window(model).await
    }

    fn known_window(&self, model: &str) -> Option<agent_llm::ContextWindow> {
        self.0.known_window(model)
    }

    fn offers_web_search(&self) -> bool {
        self.0.offers_web_search()
    }

    async fn web_search(
        &self,
        model: &str,
        query: &str,
        options: &agent_llm::WebSearchOptions,
    ) -> Result<agent_llm::WebSearchAnswer, LlmError> {
        self.0.web_search(model, query, options).await
    }
}

/// The server's own workspace (canonical) and the workspace roots. `--workspace` (else
/// agent.toml's, else the current folder) must be an existing folder (a usage error, exit code 2,
/// otherwise); the roots are the `--workspace-root` folders, under one of which it must then lie,
/// or, when none is given, that workspace itself (so the default is the folder `agent serve` was
/// started in, and naming a workspace never opens more than that folder to requests).
pub fn workspace_roots(app: &App, root_flags: &[PathBuf]) -> Result<(PathBuf, WorkspaceRoots)> {
    let (workspace, flag) = match (&app.overrides().workspace, &app.file().workspace) {
        (Some(dir), _) => (dir.clone(), "--workspace"),
        (None, Some(dir)) => (dir.clone(), "agent.toml's `workspace`"),
        (None, None) => (
            std::env::current_dir()
                .map_err(|error| Error::io("cannot read the current folder", error))?,
            "the current folder",
        ),
    };
    let shown = workspace.display().to_string();
    let usage = |error: WorkspaceError| format!("{flag}: {error}");
    // Itself first: a missing or non-folder workspace is said as such.
    let own = WorkspaceRoots::new(std::slice::from_ref(&workspace)).map_err(|_| {
        Error::usage(usage(if workspace.is_file() {
            WorkspaceError::NotAFolder(shown.clone())
        } else {
            WorkspaceError::Missing(shown.clone())
        }))
    })?;
    if root_flags.is_empty() {
        let workspace = own.roots().first().cloned().unwrap_or(workspace);
        return Ok((workspace, own));
    }
    let roots = WorkspaceRoots::new(root_flags)
        .map_err(|error| Error::usage(format!("--workspace-root: {error}")))?;
    let workspace = roots.check(&workspace, &shown).map_err(|error| {
        let outside = matches!(error, WorkspaceError::Outside(_));
        let mut message = usage(error);
        if outside {
            message.push_str(&format!(
                " ({}); add `--workspace-root {shown}` to let runs work there",
                roots_text(&roots)
            ));
        }
        Error::Usage(message)
    })?;
    Ok((workspace, roots))
}

/// The roots, for messages.
pub fn roots_text(roots: &WorkspaceRoots) -> String {
    let names: Vec<String> = roots
        .roots()
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    format!("workspace roots {}", names.join(", "))
}
