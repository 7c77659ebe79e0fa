//! The runner options of a run as a profile, in a workspace, resolved once for every door: the
//! profile and its model, limits, prices, reasoning settings, approval rules, closing reports,
//! sub-agents and the clients of profiles on other providers. Overrides win over the
//! environment, which wins over agent.toml; a profile's own values hold for its sub-traces and
//! fill in what the main trace leaves unset.

use std::path::Path;
use std::sync::Arc;

use agent_checkpoint::AbandonRollback;
use agent_llm::{LlmClient, ReasoningEffort};
use agent_runner::RunnerOptions;

use super::AppFactory;
use crate::error::{Error, Result};
use crate::profiles;
use crate::provider::ProviderConfig;

/// A run's options, resolved and checked, with its model and what to tell the person.
pub(super) struct Resolved {
    pub(super) options: RunnerOptions,
    pub(super) client: Arc<dyn LlmClient>,
    pub(super) provider: ProviderConfig,
    /// The profile's `abandon_rollback`, over agent.toml's top-level one.
    pub(super) rollback: Option<AbandonRollback>,
    pub(super) notices: Vec<String>,
}

impl AppFactory {
    /// The options of a run as the profile `name` in `workspace`. `recorded`: the name is the
    /// profile a resumed trace ran as, which may have been removed since.
    pub(super) fn settings(
        &self,
        name: &str,
        workspace: &Path,
        recorded: bool,
    ) -> Result<Resolved> {
        let app = &self.app;
        let (file, env, overrides) = (app.file(), app.config().env(), app.overrides());
        let user_dir = app.config().user_dir();
        let mut profiles = profiles::load(file, workspace, user_dir.as_deref())?;
        if recorded && !profiles.contains_key(name) {
            return Err(Error::usage(format!(
                "the trace ran as the agent profile {name:?}, which is not defined any more; \
                 pass --agent NAME to continue it as another (see `agent agents`)"
            )));
        }
        let profile = profiles::get(&profiles, name)?;
        let rollback = profiles::abandon_rollback(file, workspace, user_dir.as_deref(), name)?;
        let flags = profiles::provider_overrides(&overrides.provider, profile);
        let provider = self.provider(&flags)?;
        let client = self.client(&provider)?;
        super::web::check_search(file, &provider, client.as_ref())?;
        let mut notices = crate::sandbox::looser_profiles(&profiles, self.sandbox.mode());
        let mut options = RunnerOptions::new(provider.model.clone(), workspace);
        let (clients, unreachable) =
            profiles::clients(&mut profiles, Some(name), &provider, file, env);
        notices.extend(unreachable);
        options.clients = clients;
        options.sub_agents.agent_types = profiles;
        // The profile's limits are the defaults; the overrides override them and the limits a
        // resumed trace stored.
        let mut options = options
            .with_agent(name)
            .map_err(|error| Error::usage(format!("--agent: {error}")))?;
        options.model = provider.model.clone();
        // Recorded with each new trace, so that a resume reaches the same model.
        options.provider = Some(provider.kind);
        options.base_url = provider.base_url.clone();
        if let Some(max) = overrides.max_iterations {
            if max == 0 {
                return Err(Error::usage("--max-iterations must be at least 1"));
            }
            options = options.with_max_iterations(max);
        }
        if let Some(cost) = overrides.max_cost {
            if !cost.is_finite() || cost < 0.0 {
                return Err(Error::usage(format!(
                    "--max-cost {cost} is not an amount of dollars"
                )));
            }
            options = options.with_max_cost(cost);
        }
        options.prices = Arc::new(file.prices()?);
        options.vision = file.vision();
        options.context_window = provider.context_window;
        (options.max_tokens, options.temperature) = (provider.max_tokens, provider.temperature);
        options.reasoning_effort =
            match overrides.reasoning_effort {
                Some(effort) => Some(effort),
                None => match env.get("AGENT_REASONING_EFFORT") {
                    Some(text) => Some(text.parse::<ReasoningEffort>().map_err(|error| {
                        Error::usage(format!("AGENT_REASONING_EFFORT: {error}"))
                    })?),
                    None => file.reasoning_effort,
                },
            };
        options.thinking_budget = match overrides.thinking_budget {
            Some(budget) => Some(budget),
            None => match env.get("AGENT_THINKING_BUDGET") {
                Some(text) => Some(text.trim().parse::<u32>().map_err(|_| {
                    Error::usage(format!(
                        "AGENT_THINKING_BUDGET: {text:?} is not a number of tokens"
                    ))
                })?),
                None => file.thinking_budget,
            },
        };
        if options.thinking_budget.is_some_and(|budget| budget < 1024) {
            return Err(Error::usage(
                "thinking_budget: must be at least 1024 tokens",
            ));
        }
        options.approval_rules = file.approval_rules()?;
        options.closing_report =
            overrides.closing_report != Some(false) && file.report != Some(false);
        options.sub_agents.enabled = true;
        if let Some(depth) = file.max_agent_depth {
            options.sub_agents.max_agent_depth = depth;
        }
        Ok(Resolved {
            options,
            client,
            provider,
            rollback,
            notices,
        })
    }
}
