//! The `explore` and `delegate` tools as the model sees them: definitions, risks, and calls
//! through the registry. The loop calls [`run_call`] directly (see `act.rs`), so that an
//! interrupted call can be left for a resume; both paths run the same code.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::lineage::agent_depth_refusal;
use agent_execution::sub_agent_tools as tools;
use agent_llm::ToolCall;
use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutput};
use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::agents::{DELEGATE, EXPLORE};
use crate::report::CallOutcome;
use crate::spec::Access;
use crate::subagents::{Adoption, SubAgents};
use crate::{delegate, explore};

/// How long the registry lets an `explore` or `delegate` call run: their sub-traces have limits
/// of their own, so the per-tool timeout does not apply.
const SUB_AGENT_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// `explore(branches, background?, agent?)`: runs one sub-trace per branch, side by side.
pub(crate) struct ExploreTool {
    pub(crate) agents: Arc<SubAgents>,
}

/// `delegate(task, agent?, background?)`: runs one sub-trace to completion, or in the background.
pub(crate) struct DelegateTool {
    pub(crate) agents: Arc<SubAgents>,
}

#[async_trait]
impl Tool for ExploreTool {
    fn definition(&self) -> ToolDefinition {
        let read_only = self
            .agents
            .config(EXPLORE)
            .is_some_and(|c| c.tools.is_read_only());
        ToolDefinition {
            name: EXPLORE.into(),
            description: tools::explore_description(read_only),
            parameters: tools::explore_parameters(agent_property(&self.agents, EXPLORE)),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        self.agents
            .config(EXPLORE)
            .map_or(Risk::Risky, |c| c.risk())
    }

    fn timeout(&self, _args: &Value, _limits: &ToolLimits) -> Duration {
        SUB_AGENT_TIMEOUT
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(output(explore::run(&self.agents, args, ctx, None).await))
    }
}

#[async_trait]
impl Tool for DelegateTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: DELEGATE.into(),
            description: tools::DELEGATE_DESCRIPTION.into(),
            parameters: tools::delegate_parameters(agent_property(&self.agents, DELEGATE)),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        self.agents
            .config(DELEGATE)
            .map_or(Risk::Risky, |c| c.risk())
    }

    fn timeout(&self, _args: &Value, _limits: &ToolLimits) -> Duration {
        SUB_AGENT_TIMEOUT
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(output(delegate::run(&self.agents, args, ctx, None).await))
    }
}

/// The optional `agent` parameter: the profiles a call may name, with what each is for.
fn agent_property(agents: &SubAgents, tool: &str) -> Value {
    let profiles = agents.selectable();
    let listed: Vec<(&str, &str)> = profiles
        .iter()
        .map(|(name, config)| (*name, config.description.as_str()))
        .collect();
    tools::agent_parameter(tool, &listed)
}

fn output(outcome: CallOutcome) -> ToolOutput {
    let mut output = ToolOutput::text(outcome.result.content);
    output.is_error = outcome.result.is_error;
    output.outcome = outcome.result.outcome;
    output.metadata = outcome.metadata;
    output
}

/// Runs `call` if it is a sub-agent call the agent handles itself; `None` for any other call.
/// With `adoption`, work a previous run of the call left behind is taken over (resume). A call
/// made after the run was cancelled does not start; it is left for the resume.
pub(crate) async fn run_call(
    agents: &SubAgents,
    call: &ToolCall,
    ctx: &ToolContext,
    adoption: Option<&mut Adoption>,
) -> Option<CallOutcome> {
    match agents.spec.access(&call.name)? {
        Access::Foreign => None,
        Access::Refused(reason) => Some(CallOutcome::error(reason.clone())),
        Access::Own if ctx.cancel.is_cancelled() => Some(CallOutcome::interrupted(format!(
            "{} was not started because the run was cancelled",
            call.name
        ))),
        Access::Own => {
            let max = agents.root_sub_agents().max_agent_depth;
            if let Some(reason) = agent_depth_refusal(&call.name, &ctx.trace_id, max) {
                return Some(CallOutcome::error(reason));
            }
            let args = match parse_arguments(&call.name, &call.arguments) {
                Ok(args) => args,
                Err(why) => return Some(CallOutcome::error(why)),
            };
            Some(match call.name.as_str() {
                EXPLORE => explore::run(agents, args, ctx, adoption).await,
                _ => delegate::run(agents, args, ctx, adoption).await,
            })
        }
    }
}

/// The arguments of a sub-agent call, or what is wrong with them.
fn parse_arguments(name: &str, raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| {
        format!("the arguments for {name} are not valid JSON ({e}); send a JSON object")
    })
}
