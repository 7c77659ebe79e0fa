//! Checks that gate `done` (their rules are [`agent_goal::gate`]'s): when the model marks a goal
//! with a check done, the check runs first. A command runs in the agent's `bash` tool's sandbox
//! (its profile's stricter one included) with the check's timeout; a model's check runs only as
//! its `bash` call would be approved (asking with a note saying it is the goal's check), a
//! person's without asking. A judge is one model call (`judge.rs`). A failure refuses `done`,
//! the model gets the exit code and the tail of the output (or the judge's reason); a pass
//! applies the call. Either way the result is recorded with a `goal_checked` event and on the
//! goal (`check_result`). A call the plan would refuse anyway is refused without running it.

use std::time::Duration;

use agent_execution::store::WriteOp;
use agent_goal::{
    CheckAuthor, CheckKind, CheckResult, GoalCheck, GoalCommand, JudgeClaim, Verified, failed_note,
    passed_note,
};
use agent_llm::ToolCall;
use agent_tools::{ToolContext, ToolResult};
use serde_json::{Value, json};

use crate::agent::Agent;
use crate::approve::{approve, error_result};
use crate::error::StepError;
use crate::goal_tools;
use crate::judge;
use crate::record::{Answer, record};

/// When `call` is a `goal` call marking a goal with a check done, runs the check and answers the
/// call: refused with the check's result, or applied after a pass. `None` for every other call,
/// which runs as it is.
pub(crate) async fn before_goal_call(
    agent: &Agent,
    call: &ToolCall,
    ctx: &ToolContext,
) -> Result<Option<Answer>, StepError> {
    if call.name != "goal" || !agent.spec.own_goal_tool {
        return Ok(None);
    }
    let Ok(args) = serde_json::from_str::<Value>(&call.arguments) else {
        return Ok(None);
    };
    let store = agent.store();
    // A call the tool cannot read is the tool's to answer.
    let Ok(command) = goal_tools::read_command(store, args, &ctx.trace_id).await else {
        return Ok(None);
    };
    let Some(summary) = command.done.clone() else {
        return Ok(None);
    };
    let tree = store.get_goal_tree(&ctx.trace_id).await?;
    let tree = tree.unwrap_or_default();
    // Whatever else the call does must hold before the check is worth running.
    let (goal, check) = match tree.check_before(&command) {
        Ok(Some((goal, check))) => (goal.clone(), check.clone()),
        Ok(None) => return Ok(None),
        Err(error) => return Ok(Some(error_result(error.to_string()))),
    };
    let number = tree.display_number(&goal.id).unwrap_or_default();
    let label = format!("goal {number} \"{}\"", goal.description);
    let claim = JudgeClaim {
        criteria: "",
        summary: &summary,
        evidence: command.evidence.as_deref(),
    };
    let (result, usage) = match &check.kind {
        CheckKind::Command(line) => {
            match run_command(agent, call, ctx, &check, line, &label).await? {
                Ok(result) => (result, None),
                Err(refused) => return Ok(Some(refused)),
            }
        }
        CheckKind::Judge(criteria) => {
            let claim = JudgeClaim { criteria, ..claim };
            let (result, usage) = judge::judge(agent, &goal, &claim, &ctx.cancel).await?;
            (result, Some(usage))
        }
    };
    let ops = WriteOp::checked(&goal.id, check.clone(), result.clone());
    let mut answer = if result.passed {
        let verified = Some(Verified {
            goal_id: goal.id.clone(),
            result: result.clone(),
        });
        let command = GoalCommand {
            verified,
            ..command
        };
        match goal_tools::apply_command(store, &ctx.trace_id, command, ops).await {
            Ok(done) => Answer::from(ToolResult::new(
                format!("{}\n{}", done.content, passed_note(&check, &result)),
                done.is_error,
            )),
            Err(error) => error_result(error.to_string()),
        }
    } else {
        record(store, &ctx.trace_id, ops).await?;
        error_result(failed_note(&label, &check, &result))
    };
    answer.usage = usage;
    Ok(Some(answer))
}

/// Runs a command check as the agent's `bash` would; the answer to give instead when it may not
/// or cannot run.
async fn run_command(
    agent: &Agent,
    call: &ToolCall,
    ctx: &ToolContext,
    check: &GoalCheck,
    line: &str,
    label: &str,
) -> Result<Result<CheckResult, Answer>, StepError> {
    let Some(runner) = agent
        .tools
        .get("bash")
        .and_then(|tool| tool.command_runner())
    else {
        return Ok(Err(error_result(format!(
            "the check of {label} is a command, and this agent has no bash tool to run \
             it; abandon the goal with the reason, or leave it for a run that can"
        ))));
    };
    if check.set_by != CheckAuthor::Person {
        let mut args = json!({"command": line});
        if let Some(secs) = check.timeout_secs {
            args["timeout_secs"] = json!(secs);
        }
        let as_bash = ToolCall::new(call.id.clone(), "bash", args.to_string());
        let note = format!("the check of {label}, run before it is marked done");
        if let Some(mut refused) = approve(agent, &as_bash, ctx, Some(note)).await? {
            let said = format!(" (the check of {label}: the goal stays in progress)");
            refused.result.content.push_str(&said);
            return Ok(Err(refused));
        }
    }
    let started = std::time::Instant::now();
    let timeout = check.timeout_secs.map(Duration::from_secs);
    let ran = match runner.run_command(line, timeout, ctx).await {
        Ok(ran) => ran,
        Err(error) => {
            return Ok(Err(error_result(format!(
                "the check of {label} could not start: {error}"
            ))));
        }
    };
    if ctx.cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    let took = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let result = CheckResult::of_command(ran.exit_code, &ran.status, &ran.output, took);
    Ok(Ok(result))
}
