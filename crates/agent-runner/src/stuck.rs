//! Acting on the loop guard after each turn: a warning the model reads, or the end of the run.

use std::sync::Arc;

use agent_execution::event::EventKind;
use agent_execution::message::{Message, NewMessage};
use agent_execution::store::WriteOp;
use agent_execution::trace::TraceOutcome;
use serde_json::json;

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;
use agent_execution::LoopAction;
use agent_execution::loop_guard::{self, GuardVerdict, LoopDetection, stop_error, warning_text};
use agent_execution::meta::LOOP_GUARD;

/// Checks the newest turn of `messages` for a loop. A warning is recorded (the message and a
/// `loop_detected` event, in one commit) and added to `messages`; a stop records its event and
/// returns how the run ends.
pub(crate) async fn after_turn(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    goal_id: Option<String>,
) -> Result<Option<TraceOutcome>, StepError> {
    match loop_guard::check(messages, &agent.spec.limits.loop_guard) {
        GuardVerdict::Continue => Ok(None),
        GuardVerdict::Warn(detection) => {
            let mut warning = NewMessage::user(warning_text(&detection));
            warning.goal_id = goal_id;
            warning
                .metadata
                .insert(LOOP_GUARD.into(), json!(detection.pattern.name()));
            let ops = vec![
                WriteOp::AddMessage(warning),
                WriteOp::AppendEvent(event(&detection, LoopAction::Warned)),
            ];
            let recorded = record(agent.store(), trace_id, ops).await?;
            messages.extend(recorded);
            Ok(None)
        }
        GuardVerdict::Stop(detection) => {
            let ops = vec![WriteOp::AppendEvent(event(&detection, LoopAction::Stopped))];
            record(agent.store(), trace_id, ops).await?;
            Ok(Some(TraceOutcome::failed(stop_error(&detection))))
        }
    }
}

fn event(detection: &LoopDetection, action: LoopAction) -> EventKind {
    EventKind::LoopDetected {
        pattern: detection.pattern,
        detail: detection.detail.clone(),
        action,
    }
}
