//! `Notification`: the hooks of the event fire when a run waits for the user, so that a script
//! can ring a bell or send a message. An approval question is one (`permission_prompt`): the
//! door's handler is wrapped, whichever door it is, and the hooks run before it asks. An MCP
//! server's question during a run's tool call is another (`elicitation_dialog`): the elicitor of
//! the servers [`App::start_mcp`](crate::App::start_mcp) starts is wrapped the same way.

use std::path::PathBuf;
use std::sync::Arc;

use agent_mcp::{ElicitationAnswer, ElicitationRequest, Elicitor};
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

/// The hooks an MCP server's question notifies, set once the door's factory (and its store)
/// exists: the servers start before it.
#[derive(Clone, Default)]
pub(crate) struct Later(Arc<std::sync::OnceLock<Arc<dyn Hooks>>>);

impl Later {
    /// Sets the hooks (the first setting holds).
    pub(crate) fn set(&self, hooks: Arc<dyn Hooks>) {
        let _ = self.0.set(hooks);
    }

    /// The hooks, once set.
    fn get(&self) -> Option<&Arc<dyn Hooks>> {
        self.0.get()
    }
}

impl std::fmt::Debug for Later {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Later").field(&self.get().is_some()).finish()
    }
}

/// An MCP client's elicitor that fires `Notification` (`elicitation_dialog`) before the door's
/// elicitor asks the person.
#[derive(Debug)]
pub(crate) struct NotifyingElicitor {
    pub(crate) inner: Arc<dyn Elicitor>,
    pub(crate) hooks: Later,
    pub(crate) workspace: PathBuf,
}

#[async_trait]
impl Elicitor for NotifyingElicitor {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        if let (Some(hooks), Some(trace_id)) = (self.hooks.get(), &request.trace_id) {
            let message = format!(
                "the MCP server {} asks: {}",
                request.server, request.message
            );
            let (hooks, cwd) = (Some(&**hooks), &self.workspace);
            notify(hooks, trace_id, cwd, "elicitation_dialog", &message).await;
        }
        self.inner.elicit(request).await
    }
}
