//! The `goal` and `read_progress` tools: the model's hands on its own plan, stored through the
//! trace store so every change is recorded and emitted as events before the next model call.

use std::sync::Arc;

use agent_goal::GoalCommand;
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::store::{StoreError, TraceStore};
use crate::tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// `goal(add?, done?, abandon?, focus?, reason?, edit?, delete?)`: edits the plan.
pub struct GoalTool {
    store: Arc<dyn TraceStore>,
}

impl GoalTool {
    /// The tool, writing to `store`.
    pub fn new(store: Arc<dyn TraceStore>) -> Self {
        Self { store }
    }
}

#[async_trait]
impl Tool for GoalTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "goal".into(),
            description: "Edit your plan. Fields can be combined in one call and apply in the \
                order abandon/done, edit/delete, add, focus. `add`: comma-separated new goals, \
                children of the focused goal (top level when none). `focus`: a goal's number \
                (e.g. \"2.1\") to work on. `done`: finish the focused goal with a summary of \
                what later goals need to know. `abandon`: give the focused goal up, with the \
                reason. `edit`: \"<number>: <new description>\" for a goal not started yet. \
                `delete`: numbers of goals not started yet to remove."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "add": {"type": "string", "description": "Comma-separated new goals."},
                    "done": {"type": "string", "description": "Summary of the finished focused goal."},
                    "abandon": {"type": "string", "description": "Why the focused goal is given up."},
                    "focus": {"type": "string", "description": "Number of the goal to work on, e.g. \"2.1\"."},
                    "reason": {"type": "string", "description": "Why the added goals are needed."},
                    "edit": {"type": "string", "description": "\"<number>: <new description>\" of a pending goal."},
                    "delete": {"type": "string", "description": "Comma-separated numbers of pending goals to remove."}
                },
                "additionalProperties": false
            }),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command: GoalCommand = serde_json::from_value(args)
            .map_err(|e| ToolError::failed(format!("invalid goal arguments: {e}")))?;
        match self.store.apply_goal_command(&ctx.trace_id, command).await {
            Ok(outcome) => Ok(ToolOutput::text(outcome.message)),
            Err(StoreError::Goal(error)) => Ok(ToolOutput::error(format!("error: {error}"))),
            Err(other) => Err(ToolError::failed(format!(
                "could not record the plan: {other}"
            ))),
        }
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
