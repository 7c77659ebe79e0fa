//! `Notification`: the hooks of the event fire when a run waits for the user, so that a script
//! can ring a bell or send a message. An approval question is one (`permission_prompt`): the
//! door's handler is wrapped, whichever door it is, and the hooks run before it asks.

use std::path::PathBuf;
use std::sync::Arc;

use agent_runner::Approval;
use agent_tools::approval::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use agent_tools::hooks::{Hooks, notify};
use async_trait::async_trait;

/// An approval handler that fires `Notification` before the door's handler asks.
struct Notifying {
    inner: Arc<dyn ApprovalHandler>,
    hooks: Arc<dyn Hooks>,
    workspace: PathBuf,
}

#[async_trait]
impl ApprovalHandler for Notifying {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let message = format!("agent needs your permission to use {}", request.tool_name);
        let (trace_id, cwd) = (&request.trace_id, &self.workspace);
        notify(
            Some(&*self.hooks),
            trace_id,
            cwd,
            "permission_prompt",
            &message,
        )
        .await;
        self.inner.decide(request).await
    }
}

/// `approval` with the `Notification` hooks of `hooks` fired before each question (as it is
/// when nobody is asked, or there are no hooks).
pub fn approval(
    approval: Approval,
    hooks: Option<&Arc<dyn Hooks>>,
    workspace: PathBuf,
) -> Approval {
    match (approval, hooks) {
        (Approval::Ask(inner), Some(hooks)) => Approval::Ask(Arc::new(Notifying {
            inner,
            hooks: hooks.clone(),
            workspace,
        })),
        (approval, _) => approval,
    }
}
