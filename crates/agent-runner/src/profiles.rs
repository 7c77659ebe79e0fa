//! Agent profiles as data: the built-in agent types, how a profile shapes a runner's options,
//! and the system-prompt template.
//!
//! A profile ([`AgentTypeConfig`]) names an agent type: a description, a system prompt, a tool
//! set, a model, limits (the loop guard's thresholds among them), a depth limit and an approval
//! policy. The built-ins are `default` (the main run), `explore` (read-only branches),
//! `delegate`, `compaction` (the summariser of full compactions: its prompt is the request for
//! the summary) and `plan` (plan mode: the goal tools only). Reading profiles from files is the
//! caller's business (the `agent` binary reads `agent.toml` and `.agent/agents/*.md`); the
//! runner takes them as data in [`SubAgentOptions::agent_types`](crate::SubAgentOptions).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::agents::{
    AgentTypeConfig, ApprovalPolicy, COMPACTION, DEFAULT, DELEGATE, EXPLORE, PLAN, ToolFilter,
};
use super::approval::RejectAll;
use super::step::COMPACTION_PROMPT;
use super::{AgentRunner, RunnerOptions};

/// The system prompt of plan mode.
pub const PLAN_PROMPT: &str = "You are in plan mode: write a plan for the task, do not carry it \
out. Use the `goal` tool only: `add` the top-level goals (comma-separated), and to break a goal \
into sub-goals, `focus` it and `add` under it. Make goals concrete and checkable, in the order \
they should be done. When the plan is complete, answer with a one-paragraph summary of it and no \
tool calls.";

/// The built-in profiles by name.
pub fn builtin_profiles() -> BTreeMap<String, AgentTypeConfig> {
    let compaction = AgentTypeConfig {
        description: "The summariser of full compactions; its prompt asks for the summary.".into(),
        tools: ToolFilter::all().allowing(Vec::<String>::new()),
        system_prompt: Some(COMPACTION_PROMPT.to_owned()),
        ..AgentTypeConfig::general()
    };
    let plan = AgentTypeConfig {
        description: "Plan mode: writes the plan with the goal tools and does nothing else.".into(),
        tools: ToolFilter::all().allowing(Vec::<String>::new()),
        system_prompt: Some(PLAN_PROMPT.to_owned()),
        ..AgentTypeConfig::general()
    };
    [
        (DEFAULT, AgentTypeConfig::general()),
        (EXPLORE, AgentTypeConfig::explore()),
        (DELEGATE, AgentTypeConfig::delegate()),
        (COMPACTION, compaction),
        (PLAN, plan),
    ]
    .into_iter()
    .map(|(name, config)| (name.to_owned(), config))
    .collect()
}

/// A profile name that names none of the configured profiles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("there is no agent profile {name:?}; the profiles are {}", known.join(", "))]
pub struct UnknownProfile {
    /// The name asked for.
    pub name: String,
    /// The names of the profiles there are, sorted.
    pub known: Vec<String>,
}

/// The values of a system prompt's template variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptVars {
    /// `{workspace}`: the folder the tools work in.
    pub workspace: String,
    /// `{date}`: today, `YYYY-MM-DD`.
    pub date: String,
    /// `{tools}`: the names of the tools, comma-separated.
    pub tools: String,
    /// `{agent}`: the profile's name.
    pub agent: String,
    /// `{model}`: the model.
    pub model: String,
}

/// Replaces `{workspace}`, `{date}`, `{tools}`, `{agent}` and `{model}` in a prompt; other
/// braces are left as they are.
pub fn render_prompt(template: &str, vars: &PromptVars) -> String {
    if !template.contains('{') {
        return template.to_owned();
    }
    [
        ("{workspace}", &vars.workspace),
        ("{date}", &vars.date),
        ("{tools}", &vars.tools),
        ("{agent}", &vars.agent),
        ("{model}", &vars.model),
    ]
    .into_iter()
    .fold(template.to_owned(), |text, (key, value)| {
        text.replace(key, value)
    })
}

impl RunnerOptions {
    /// These options running main traces as the profile `name` of `sub_agents.agent_types`:
    /// its limits and model become the options' (change them after this call to override
    /// them); its prompt, tools and approval policy apply when the runner is built, and each
    /// trace records the profile so that a resume runs it the same way.
    pub fn with_agent(mut self, name: &str) -> Result<Self, UnknownProfile> {
        let profile = self
            .sub_agents
            .agent_types
            .get(name)
            .ok_or_else(|| UnknownProfile {
                name: name.to_owned(),
                known: self.sub_agents.agent_types.keys().cloned().collect(),
            })?;
        self.limits = profile.limits.clone();
        if let Some(model) = &profile.model {
            self.model.clone_from(model);
        }
        self.agent = Some(name.to_owned());
        Ok(self)
    }
}

/// Makes `options` (a copy of the main runner's) those of traces of `profile`. The main
/// runner's own profile keeps the options' limits and model, which [`RunnerOptions::with_agent`]
/// took from it and the caller may have changed since.
pub(super) fn apply_profile(
    options: &mut RunnerOptions,
    name: &str,
    profile: &AgentTypeConfig,
    is_main: bool,
) {
    if !is_main {
        options.limits = profile.limits.clone();
        if let Some(model) = &profile.model {
            options.model.clone_from(model);
        }
    }
    if let Some(prompt) = &profile.system_prompt {
        options.system_prompt.clone_from(prompt);
    }
    match profile.approval {
        ApprovalPolicy::Inherit => {}
        ApprovalPolicy::Auto => options.approval = None,
        ApprovalPolicy::Deny => {
            options.approval = Some(Arc::new(RejectAll {
                reason: format!("the `{name}` agent may not run risky tools"),
            }));
        }
    }
}

/// The runner of a full compaction's summarising call: `runner` with the model and client of
/// the `compaction` profile, and its prompt (the request for the summary, [`COMPACTION_PROMPT`]
/// when the profile has none) as `options.system_prompt`.
pub(super) fn summariser(runner: &AgentRunner) -> AgentRunner {
    let mut summariser = runner.clone();
    let profile = runner.options.sub_agents.agent_types.get(COMPACTION);
    summariser.options.system_prompt = profile
        .and_then(|p| p.system_prompt.clone())
        .unwrap_or_else(|| COMPACTION_PROMPT.to_owned());
    if let Some(model) = profile.and_then(|p| p.model.clone()) {
        summariser.options.model = model;
    }
    if let Some(llm) = runner.options.clients.get(COMPACTION) {
        summariser.llm = llm.clone();
    }
    summariser
}
