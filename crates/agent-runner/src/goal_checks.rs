//! Checks that gate `done`: when the model marks a goal that carries a check done, the check
//! runs first, and only a pass completes the goal.
//!
//! - A **command** runs in the run's sandbox — the confinement of the agent's `bash` tool, its
//!   profile's stricter sandbox included — with the check's timeout (the tool timeout when it has
//!   none), killed with everything it started when it ends. A check the model set runs only as
//!   a `bash` call of the model would: the approval rules and the agent's approval policy decide
//!   (asking, when they ask, with a note saying it is the goal's check); a person's check runs
//!   without asking. An agent without a `bash` tool cannot run one, and says so.
//! - A **judge** is one model call ([`crate::judge`]).
//!
//! A failure refuses `done`: the goal stays in progress and the model gets the exit code and the
//! tail of the output (or the judge's reason). A pass completes the goal with the rest of the
//! call, in one commit with the `goal_checked` event; the result stays on the goal
//! (`check_result`). A failure is recorded the same way, the goal's `check_result` and the
//! event, so viewers show the latest result beside the goal. The rest of the call is checked
//! before anything runs: a call the plan would refuse anyway is refused without running the
//! check.

use std::time::Duration;

use agent_execution::event::EventKind;
use agent_execution::store::WriteOp;
use agent_goal::now_rfc3339;
use agent_goal::{CheckAuthor, CheckKind, CheckResult, GoalCheck, GoalCommand, Verified};
use agent_llm::ToolCall;
use agent_tools::{ToolContext, ToolResult};
use serde_json::{Map, Value, json};

use crate::act::{approve, error_result};
use crate::agent::Agent;
use crate::error::StepError;
use crate::goal_tools;
use crate::judge::{self, Claim};
use crate::record::{Answer, record};

/// How much of a failed command's output the model is shown: its last lines, at most this many
/// characters.
const TAIL_CHARS: usize = 4_000;
/// ... and at most this many lines.
const TAIL_LINES: usize = 60;

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
    let tree = store
        .get_goal_tree(&ctx.trace_id)
        .await?
        .unwrap_or_default();
    let Some(goal) = tree.current().filter(|goal| goal.check.is_some()).cloned() else {
        return Ok(None);
    };
    let Some(check) = goal.check.clone() else {
        return Ok(None);
    };
    // Whatever else the call does must hold before the check is worth running.
    let probe = GoalCommand {
        verified: Some(Verified {
            goal_id: goal.id.clone(),
            result: CheckResult {
                passed: true,
                exit_code: Some(0),
                output: String::new(),
                duration_ms: 0,
                checked_at: String::new(),
            },
        }),
        ..command.clone()
    };
    if let Err(error) = tree.clone().apply(&probe) {
        return Ok(Some(refusal(error.to_string())));
    }
    let label = match tree.display_number(&goal.id) {
        Some(number) => format!("goal {number} \"{}\"", goal.description),
        None => format!("goal \"{}\"", goal.description),
    };
    let claim = Claim {
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
            let claim = Claim { criteria, ..claim };
            let judged = judge::judge(agent, &goal, &claim, &ctx.cancel).await?;
            (judged.result, Some(judged.usage))
        }
    };
    let event = WriteOp::AppendEvent(EventKind::GoalChecked {
        goal_id: goal.id.clone(),
        check: check.clone(),
        result: result.clone(),
    });
    let mut answer = if result.passed {
        let command = GoalCommand {
            verified: Some(Verified {
                goal_id: goal.id.clone(),
                result: result.clone(),
            }),
            ..command
        };
        let applied = goal_tools::apply_command(store, &ctx.trace_id, command, vec![event]).await;
        match applied {
            Ok(output) => Answer::from(ToolResult {
                content: format!("{}\n{}", output.content, passed_note(&check, &result)),
                is_error: output.is_error,
            }),
            Err(error) => refusal(error.to_string()),
        }
    } else {
        let mut updates = Map::new();
        updates.insert("check_result".to_owned(), json!(result));
        let ops = vec![
            WriteOp::UpdateGoal {
                goal_id: goal.id.clone(),
                updates,
            },
            event,
        ];
        record(store, &ctx.trace_id, ops).await?;
        refusal(failed_note(&label, &check, &result))
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
        return Ok(Err(refusal(format!(
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
        if let Some(refused) = approve(agent, &as_bash, ctx, Some(note)).await? {
            let why = refused.result.content;
            let why = why.strip_prefix("error: ").unwrap_or(&why);
            return Ok(Err(refusal(format!(
                "the check of {label} did not run ({why}), so the goal stays in \
                 progress; abandon it with the reason if it cannot be checked"
            ))));
        }
    }
    let started = std::time::Instant::now();
    let timeout = check.timeout_secs.map(Duration::from_secs);
    let ran = match runner.run_command(line, timeout, ctx).await {
        Ok(ran) => ran,
        Err(error) => {
            return Ok(Err(refusal(format!(
                "the check of {label} could not start: {error}"
            ))));
        }
    };
    if ctx.cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    let mut output = tail(&ran.output);
    if ran.exit_code.is_none() {
        output = format!("{}\n{output}", ran.status);
    }
    Ok(Ok(CheckResult {
        passed: ran.succeeded(),
        exit_code: ran.exit_code,
        output,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        checked_at: now_rfc3339(),
    }))
}

/// The end of `output`: its last [`TAIL_LINES`] lines, at most [`TAIL_CHARS`] characters, with
/// a line saying so when something was cut.
fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    let mut kept = lines[from..].join("\n");
    let chars = kept.chars().count();
    if chars > TAIL_CHARS {
        kept = kept.chars().skip(chars - TAIL_CHARS).collect();
    }
    if from > 0 || chars > TAIL_CHARS {
        kept = format!("[… the start of the output was cut]\n{kept}");
    }
    kept
}

/// What the model is told of a failed check.
fn failed_note(label: &str, check: &GoalCheck, result: &CheckResult) -> String {
    let what = match (&check.kind, result.exit_code) {
        (CheckKind::Judge(_), _) => format!("The judge found it not met: {}", result.output),
        (CheckKind::Command(_), Some(code)) => format!(
            "{} exited with code {code}. The end of its output:\n{}",
            check.describe(),
            result.output
        ),
        (CheckKind::Command(_), None) => format!(
            "{} did not finish. The end of its output:\n{}",
            check.describe(),
            result.output
        ),
    };
    format!(
        "the check of {label} failed, so it is not done and stays in progress.\n{what}\n\
         Fix what the check reports and call done again, or abandon the goal with the reason."
    )
}

/// What the model is told of a passed check, after what the call did.
fn passed_note(check: &GoalCheck, result: &CheckResult) -> String {
    match &check.kind {
        CheckKind::Command(_) => format!("Its check {} passed (exit code 0).", check.describe()),
        CheckKind::Judge(_) => format!("The judge found it met: {}", result.output),
    }
}

/// An error answer: `error: <message>`, as the tools' errors read.
fn refusal(message: String) -> Answer {
    error_result(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_end_of_long_output() {
        let long: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let kept = tail(&long);
        assert!(kept.starts_with("[… the start of the output was cut]\nline 41\n"));
        assert!(kept.ends_with("line 100"));
        assert_eq!(tail("short\n"), "short");
        let wide = "x".repeat(10_000);
        assert_eq!(tail(&wide).chars().count(), TAIL_CHARS + 36);
    }
}
