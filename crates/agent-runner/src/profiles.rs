//! The built-in agent profiles and the system-prompt template.
//!
//! A profile ([`AgentTypeConfig`]) names an agent type: a description, a system prompt, a tool
//! set, a model, limits (the loop guard's thresholds among them), a depth limit and an approval
//! policy. The built-ins are `default` (the main run), `explore` (read-only branches),
//! `delegate`, `compaction` (the summariser of full compactions: its prompt is the request for
//! the summary) and `plan` (plan mode: read-only tools and the goal tools). Reading profiles from files is the
//! caller's business (the `agent` binary reads `agent.toml` and `.agent/agents/*.md`); the
//! runner takes them as data in [`SubAgentOptions::agent_types`](crate::SubAgentOptions).

use std::collections::BTreeMap;

use crate::agents::{AgentTypeConfig, COMPACTION, DEFAULT, DELEGATE, EXPLORE, PLAN, ToolFilter};
use crate::compaction::COMPACTION_PROMPT;
use agent_execution::run_limits::RunLimits;
/// The system prompt of plan mode.
pub use agent_goal::PLAN_PROMPT;

/// The limits of a planning run: enough model calls to read the code and write the plan.
pub fn plan_limits() -> RunLimits {
    RunLimits {
        max_iterations: 40,
        ..RunLimits::default()
    }
}

/// The built-in profiles by name.
pub fn builtin_profiles() -> BTreeMap<String, AgentTypeConfig> {
    let compaction = AgentTypeConfig {
        description: "The summariser of full compactions; its prompt asks for the summary.".into(),
        tools: ToolFilter::all().allowing(Vec::<String>::new()),
        system_prompt: Some(COMPACTION_PROMPT.to_owned()),
        closing_report: false,
        ..AgentTypeConfig::general()
    };
    let plan = AgentTypeConfig {
        description: "Plan mode: reads the code with read-only tools and writes the plan with \
            the goal tools; 40 model calls."
            .into(),
        // Read-only tools (MCP tools marked read-only among them), but no sub-agents: a plan
        // is written by one reader.
        tools: ToolFilter::read_only().denying(["explore", "delegate"]),
        limits: plan_limits(),
        system_prompt: Some(PLAN_PROMPT.to_owned()),
        closing_report: false,
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
