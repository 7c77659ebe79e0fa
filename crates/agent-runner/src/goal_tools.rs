//! The `goal` and `read_progress` tools: the model's hands on its own plan, stored through the
//! trace store so every change is recorded and emitted as events before the next model call.

use std::sync::Arc;

use agent_goal::{GOAL_TOOL_DESCRIPTION, GOAL_TOOL_PARAMETERS, GoalCommand};
/// The limits of a plan, which live with the goal tool's rules.
pub use agent_goal::{MAX_GOAL_TEXT_CHARS, MAX_GOALS_PER_CALL, MAX_PLAN_GOALS};
use async_trait::async_trait;
use serde_json::{Value, json};

use agent_execution::store::{StoreError, TraceStore, WriteOp, WriteOutput};
use agent_tools::{
    Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, check_arguments,
};

/// `goal(add?, done?, abandon?, focus?, reason?, edit?, delete?, agent?, select?, check?, judge?,
/// budget?, evidence?)`: edits the plan.
///
/// `done` on a goal with a check is refused here: the loop runs the check first (see
/// `goal_checks.rs`) and applies the call itself when the check passes.
pub struct GoalTool {
    store: Arc<dyn TraceStore>,
}

impl GoalTool {
    /// The tool, writing to `store`.
    pub fn new(store: Arc<dyn TraceStore>) -> Self {
        Self { store }
    }
}

/// The model's arguments of a `goal` call as a command: checked against the schema (a misspelt
/// field must not be dropped while the rest applies) and for size.
pub(crate) async fn read_command(
    store: &dyn TraceStore,
    args: Value,
    trace_id: &str,
) -> Result<GoalCommand, ToolError> {
    check_arguments(&definition().parameters, &args)
        .map_err(|e| ToolError::failed(format!("invalid goal arguments: {e}")))?;
    let command: GoalCommand = serde_json::from_value(args)
        .map_err(|e| ToolError::failed(format!("invalid goal arguments: {e}")))?;
    let existing = match store.get_goal_tree(trace_id).await {
        Ok(tree) => tree.map_or(0, |t| t.goals().len()),
        Err(error) => {
            return Err(ToolError::failed(format!(
                "could not read the plan: {error}"
            )));
        }
    };
    match command.size_error(existing) {
        Some(error) => Err(ToolError::failed(error)),
        None => Ok(command),
    }
}

/// Applies `command` to the plan of `trace_id`, with `also` recorded in the same commit (the
/// event of a check that ran); the tool's result.
pub(crate) async fn apply_command(
    store: &dyn TraceStore,
    trace_id: &str,
    command: GoalCommand,
    also: Vec<WriteOp>,
) -> Result<ToolOutput, ToolError> {
    let mut ops = also;
    ops.push(WriteOp::Goal(command));
    match store.batch(trace_id, ops).await.map(|mut out| out.pop()) {
        Ok(Some(WriteOutput::GoalOutcome(outcome))) => Ok(ToolOutput::text(outcome.message)),
        Ok(_) => Err(ToolError::failed("could not record the plan")),
        Err(StoreError::Goal(error)) => Ok(ToolOutput::error(format!("error: {error}"))),
        Err(other) => Err(ToolError::failed(format!(
            "could not record the plan: {other}"
        ))),
    }
}

/// The `goal` tool's name, description and parameters.
fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "goal".into(),
        description: GOAL_TOOL_DESCRIPTION.into(),
        parameters: serde_json::from_str(GOAL_TOOL_PARAMETERS).unwrap_or_default(),
    }
}

#[async_trait]
impl Tool for GoalTool {
    fn definition(&self) -> ToolDefinition {
        definition()
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = self.store.as_ref();
        let command = read_command(store, args, &ctx.trace_id).await?;
        apply_command(store, &ctx.trace_id, command, Vec::new()).await
    }
}

/// `read_progress()`: the plan as a compact checklist.
pub struct ReadProgressTool {
    store: Arc<dyn TraceStore>,
}

impl ReadProgressTool {
    /// The tool, reading from `store`.
    pub fn new(store: Arc<dyn TraceStore>) -> Self {
        Self { store }
    }
}

#[async_trait]
impl Tool for ReadProgressTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "read_progress".into(),
            description: "Show the plan as a checklist: [✓] done, [→] in progress, [ ] pending."
                .into(),
            parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, _args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match self.store.get_goal_tree(&ctx.trace_id).await {
            Ok(Some(tree)) => Ok(ToolOutput::text(tree.to_todo_string())),
            Ok(None) => Err(ToolError::failed(format!(
                "trace {} has no plan",
                ctx.trace_id
            ))),
            Err(error) => Err(ToolError::failed(format!(
                "could not read the plan: {error}"
            ))),
        }
    }
}
