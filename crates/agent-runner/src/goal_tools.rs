//! The `goal` and `read_progress` tools: the model's hands on its own plan, stored through the
//! trace store so every change is recorded and emitted as events before the next model call.

use std::sync::Arc;

use agent_goal::GoalCommand;
use async_trait::async_trait;
use serde_json::{Value, json};

use agent_execution::store::{StoreError, TraceStore, WriteOp, WriteOutput};
use agent_tools::{
    Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, check_arguments,
};

/// Goals one call may add. The plan is sent with every model call, so a runaway call must not
/// be able to make it huge.
pub const MAX_GOALS_PER_CALL: usize = 50;
/// Goals a plan may hold, abandoned ones included.
pub const MAX_PLAN_GOALS: usize = 1000;
/// Characters of one text field of a goal call (a description, a summary, a reason).
pub const MAX_GOAL_TEXT_CHARS: usize = 4000;

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
    check_size(store, &command, trace_id).await?;
    Ok(command)
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

/// Refuses a call that would make the plan too big: too many goals at once or in all, or a
/// text too long to repeat on every model call.
async fn check_size(
    store: &dyn TraceStore,
    command: &GoalCommand,
    trace_id: &str,
) -> Result<(), ToolError> {
    let texts = [
        ("add", &command.add),
        ("done", &command.done),
        ("abandon", &command.abandon),
        ("reason", &command.reason),
        ("edit", &command.edit),
        ("select", &command.select),
        ("agent", &command.agent),
        ("check", &command.check),
        ("judge", &command.judge),
        ("evidence", &command.evidence),
    ];
    for (field, text) in texts {
        let Some(text) = text else { continue };
        // `add` is a list: each goal's description is held to the limit.
        let longest = match field {
            "add" => text.split(',').map(|d| d.trim().chars().count()).max(),
            _ => Some(text.trim().chars().count()),
        };
        if longest.unwrap_or(0) > MAX_GOAL_TEXT_CHARS {
            return Err(ToolError::failed(format!(
                "`{field}` is too long: at most {MAX_GOAL_TEXT_CHARS} characters per text; \
                 keep plan texts short and put details in files"
            )));
        }
    }
    let Some(add) = &command.add else {
        return Ok(());
    };
    let adding = add.split(',').filter(|d| !d.trim().is_empty()).count();
    if adding > MAX_GOALS_PER_CALL {
        return Err(ToolError::failed(format!(
            "`add` lists {adding} goals; at most {MAX_GOALS_PER_CALL} can be added per call"
        )));
    }
    let existing = match store.get_goal_tree(trace_id).await {
        Ok(tree) => tree.map_or(0, |t| t.goals().len()),
        Err(error) => {
            return Err(ToolError::failed(format!(
                "could not read the plan: {error}"
            )));
        }
    };
    if existing + adding > MAX_PLAN_GOALS {
        return Err(ToolError::failed(format!(
            "the plan holds {existing} goals and may hold at most {MAX_PLAN_GOALS}; finish \
             or abandon goals instead of adding more"
        )));
    }
    Ok(())
}

/// The `goal` tool's name, description and parameters.
fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "goal".into(),
        description: "Edit your plan. Fields can be combined in one call and apply in the \
            order abandon/done, edit/delete, add, focus. `add`: comma-separated new goals, \
            children of the focused goal (top level when none). `focus`: a goal's number \
            (e.g. \"2.1\") to work on. `done`: finish the focused goal with a summary of \
            what later goals need to know. `abandon`: give the focused goal up, with the \
            reason. `edit`: \"<number>: <new description>\" for a goal not started yet. \
            `delete`: numbers of goals not started yet to remove. `agent`: the profile that \
            carries out the added goals (or end a goal with `@<profile>`). `select`: the \
            branch (A, B, ...) of the latest exploration whose approach you chose. With `add`: \
            `check`, a shell command that must exit 0 before an added goal can be done (it runs \
            when you call done; a failure keeps the goal in progress and shows you the \
            output), or `judge`, what a reviewer must see for it to be met; `budget`, what each \
            added goal may spend. With `done`: `evidence` a judge reads (test output, files). \
            Every goal must end done or abandoned before the task is finished."
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
                "delete": {"type": "string", "description": "Comma-separated numbers of pending goals to remove."},
                "agent": {"type": "string", "description": "The agent profile that carries out the added goals."},
                "select": {"type": "string", "description": "The chosen branch of the latest exploration, e.g. \"A\"."},
                "check": {"type": "string", "description": "With add: a shell command that must exit 0 before the added goals can be done, e.g. \"python3 -m unittest -q\"."},
                "judge": {"type": "string", "description": "With add, instead of check: what a judge must find for the added goals to be met."},
                "budget": {
                    "type": "object",
                    "description": "With add: what each added goal may spend before you are told to finish or abandon it.",
                    "properties": {
                        "iterations": {"type": "integer", "minimum": 1, "description": "Model calls."},
                        "tokens": {"type": "integer", "minimum": 1, "description": "Tokens."},
                        "seconds": {"type": "integer", "minimum": 1, "description": "Seconds of model and tool time."}
                    },
                    "additionalProperties": false
                },
                "evidence": {"type": "string", "description": "With done: what shows the goal is met, for its judge."}
            },
            "additionalProperties": false
        }),
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
