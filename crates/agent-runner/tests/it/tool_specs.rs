//! The tool list a run sends the model: built once per run when every definition is fixed, and
//! at every turn, changes included, when one is not.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_execution::{InMemoryTraceStore, TraceStatus};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, Approval, RunnerOptions};
use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolRegistry};
use serde_json::{Value, json};

/// A tool that counts how often its definition is asked for; when it is not fixed, its
/// description names that count, so it changes at every call.
struct Counted {
    fixed: bool,
    asked: AtomicUsize,
}

#[async_trait::async_trait]
impl Tool for Counted {
    fn definition(&self) -> ToolDefinition {
        let asked = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        let description = if self.fixed {
            "Echo.".to_owned()
        } else {
            format!("Echo (definition #{asked}).")
        };
        ToolDefinition {
            name: "echo".into(),
            description,
            parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        self.fixed
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args["n"].to_string()))
    }
}

/// Runs `steps` calls of `echo` and an answer; the tool and the model's requests' `echo`
/// descriptions, in order.
async fn run(fixed: bool, steps: i64) -> (Arc<Counted>, Vec<String>) {
    let workspace = tempfile::tempdir().unwrap();
    let mut turns: Vec<_> = (0..steps)
        .map(|n| ScriptedTurn::tool_call("echo", json!({ "n": n })))
        .collect();
    turns.push(ScriptedTurn::text("done"));
    let llm = Arc::new(ScriptedClient::new(turns));
    let tool = Arc::new(Counted {
        fixed,
        asked: AtomicUsize::new(0),
    });
    let mut tools = ToolRegistry::with_builtins();
    tools.register(tool.clone()).unwrap();
    let options = RunnerOptions::new("scripted", workspace.path()).with_approval(Approval::Allow);
    let runner = AgentRunner::new(
        Arc::new(InMemoryTraceStore::new()),
        llm.clone(),
        tools,
        options,
    );
    let outcome = runner.run("Echo a few numbers").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let descriptions = llm
        .requests()
        .iter()
        .map(|request| {
            let echo = request.tools.iter().find(|spec| spec.name == "echo");
            echo.expect("every request offers echo").description.clone()
        })
        .collect();
    (tool, descriptions)
}

#[tokio::test]
async fn fixed_definitions_are_built_once_per_run_however_many_turns() {
    let (short, requests) = run(true, 1).await;
    assert_eq!(requests.len(), 2);
    let (long, requests) = run(true, 8).await;
    assert_eq!(requests.len(), 9);
    assert!(requests.iter().all(|d| d == "Echo."), "{requests:?}");
    // Registering asks once; the run asks once more, whether it takes two turns or nine.
    let asked = long.asked.load(Ordering::SeqCst);
    assert_eq!(asked, short.asked.load(Ordering::SeqCst));
    assert!(asked <= 2, "asked {asked} times");
}

#[tokio::test]
async fn a_definition_that_is_not_fixed_is_asked_for_at_every_turn_and_its_changes_are_sent() {
    let (tool, requests) = run(false, 4).await;
    assert_eq!(requests.len(), 5);
    // Every turn's request carries the definition as it was at that turn.
    let mut distinct = requests.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), requests.len(), "{requests:?}");
    assert!(tool.asked.load(Ordering::SeqCst) >= requests.len());
}
