//! Helpers shared by the sub-agent tests: scripted calls, a barrier that proves branches overlap,
//! a gauge that measures how many run at once, and readers of what a trace recorded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_execution::{Role, TraceStore};
use agent_llm::{ChatRequest, ScriptedTurn};
use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{Value, json};

/// A turn making one call.
pub(crate) fn call(name: &str, arguments: Value) -> ScriptedTurn {
    ScriptedTurn::tool_call(name, arguments)
}

/// The names of the tools a request offered, sorted.
pub(crate) fn tool_names(request: &ChatRequest) -> Vec<String> {
    let mut names: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
    names.sort();
    names
}

/// The text of every tool message of a trace, in order.
pub(crate) async fn tool_results(store: &dyn TraceStore, trace_id: &str) -> Vec<String> {
    store
        .get_trace_messages(trace_id)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.text().to_owned())
        .collect()
}

/// A read-only tool that returns only once `parties` calls are inside it at the same time (or
/// fails after five seconds): a call that returned proves the callers overlapped in time.
pub(crate) struct Barrier {
    parties: usize,
    barrier: tokio::sync::Barrier,
}

impl Barrier {
    /// A barrier for `parties` callers.
    pub(crate) fn new(parties: usize) -> Self {
        Self {
            parties,
            barrier: tokio::sync::Barrier::new(parties),
        }
    }
}

#[async_trait]
impl Tool for Barrier {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "barrier".into(),
            description: "Waits until every branch is inside.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match tokio::time::timeout(Duration::from_secs(5), self.barrier.wait()).await {
            Ok(_) => Ok(ToolOutput::text(format!(
                "{} callers were inside at once",
                self.parties
            ))),
            Err(_) => Ok(ToolOutput::error("the others never came")),
        }
    }
}

/// A read-only tool that stays busy for a moment and records the most calls inside at once.
#[derive(Default)]
pub(crate) struct Gauge {
    inside: AtomicUsize,
    max_inside: AtomicUsize,
    calls: AtomicUsize,
}

impl Gauge {
    /// The most calls that were inside at the same time.
    pub(crate) fn max_inside(&self) -> usize {
        self.max_inside.load(Ordering::SeqCst)
    }

    /// How many calls were made.
    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for Gauge {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "gauge".into(),
            description: "Takes a while.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_inside.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(150)).await;
        self.inside.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text("busy"))
    }
}
