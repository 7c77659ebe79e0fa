//! The defaults an embedder gets without asking: risky tools refused (fail closed), no
//! sub-agent tools, and a run whose task panics reported as such.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ChatRequest, ChatStream, LlmClient, LlmError, ScriptedClient, ScriptedTurn};
use agent_runner::approval::NO_POLICY;
use agent_runner::{AgentRunner, Approval, RunError, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::json;

use crate::support::tool_results;

fn runner_with(
    turns: Vec<ScriptedTurn>,
    options: RunnerOptions,
) -> (AgentRunner, Arc<InMemoryTraceStore>) {
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(turns));
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    (runner, store)
}

#[tokio::test]
async fn without_an_approval_policy_risky_tools_are_refused_and_the_model_is_told() {
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::tool_call("write_file", json!({"path": "x.txt", "content": "x"})),
        ScriptedTurn::tool_call("bash", json!({"command": "touch y.txt"})),
        ScriptedTurn::tool_call("read_file", json!({"path": "x.txt"})),
        ScriptedTurn::text("Nothing was written."),
    ];
    let (runner, store) = runner_with(turns, RunnerOptions::new("scripted", workspace.path()));
    let outcome = runner.run("Write x").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let results = tool_results(store.as_ref(), &outcome.trace_id).await;
    assert_eq!(
        results[0],
        format!("error: write_file was not run: {NO_POLICY}")
    );
    assert_eq!(results[1], format!("error: bash was not run: {NO_POLICY}"));
    // Read-only tools still run.
    assert!(results[2].contains("does not exist"), "{results:?}");
    assert!(!workspace.path().join("x.txt").exists());
    assert!(!workspace.path().join("y.txt").exists());
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let refused = messages.iter().filter(|m| m.content.is_error()).count();
    assert_eq!(refused, 3, "two refusals and the missing file are errors");

    // The embedder's explicit choice lets them run.
    let turns = vec![
        ScriptedTurn::tool_call("write_file", json!({"path": "x.txt", "content": "x"})),
        ScriptedTurn::text("Written."),
    ];
    let options = RunnerOptions::new("scripted", workspace.path()).with_approval(Approval::Allow);
    let (runner, _) = runner_with(turns, options);
    runner.run("Write x").await.unwrap();
    assert!(workspace.path().join("x.txt").exists());
}

#[tokio::test]
async fn sub_agent_tools_are_offered_only_when_enabled() {
    let workspace = tempfile::tempdir().unwrap();
    let options = RunnerOptions::new("scripted", workspace.path());
    let (plain, _) = runner_with(Vec::new(), options.clone());
    let names = plain.tool_names();
    assert!(!names.contains(&"explore".to_owned()), "{names:?}");
    assert!(!names.contains(&"delegate".to_owned()), "{names:?}");
    assert!(names.contains(&"goal".to_owned()), "{names:?}");

    let turns = vec![
        ScriptedTurn::tool_call("delegate", json!({"task": "Do it"})),
        ScriptedTurn::text("Fine."),
    ];
    let (runner, store) = runner_with(turns, options.clone());
    let outcome = runner.run("Delegate").await.unwrap();
    let results = tool_results(store.as_ref(), &outcome.trace_id).await;
    assert!(
        results[0].contains("delegate is not enabled for this runner"),
        "{results:?}"
    );
    assert!(
        store
            .get_sub_traces(&outcome.trace_id)
            .await
            .unwrap()
            .is_empty()
    );

    let (enabled, _) = runner_with(Vec::new(), options.with_sub_agents());
    let names = enabled.tool_names();
    assert!(names.contains(&"explore".to_owned()), "{names:?}");
    assert!(names.contains(&"delegate".to_owned()), "{names:?}");
}

/// A model client whose every call panics.
struct Panicking;

#[async_trait::async_trait]
impl LlmClient for Panicking {
    async fn stream(&self, _request: ChatRequest) -> Result<ChatStream, LlmError> {
        panic!("the client broke");
    }
}

#[tokio::test]
async fn a_panicking_run_is_reported_as_panicked() {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let options = RunnerOptions::new("scripted", workspace.path());
    let runner = AgentRunner::new(store, Arc::new(Panicking), ToolRegistry::new(), options);
    let error = runner.run("Anything").await.unwrap_err();
    assert!(matches!(error, RunError::Panicked { .. }), "{error:?}");
    assert!(error.to_string().contains("ended abnormally"), "{error}");
}

#[tokio::test]
async fn approval_rules_run_allowed_calls_without_asking_and_refuse_denied_ones() {
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::tool_call("bash", json!({"command": "echo allowed > a.txt"})),
        ScriptedTurn::tool_call("bash", json!({"command": "touch b.txt"})),
        ScriptedTurn::tool_call("write_file", json!({"path": "notes/c.md", "content": "c"})),
        ScriptedTurn::tool_call("read_file", json!({"path": ".env"})),
        ScriptedTurn::text("Done."),
    ];
    let mut options = RunnerOptions::new("scripted", workspace.path());
    // No approval policy: only what the rules allow runs.
    options.approval_rules = agent_runner::ApprovalRules::parse(
        &["bash(echo)", "write_file(notes/**)"],
        &["read_file(.env)"],
    )
    .unwrap();
    std::fs::write(workspace.path().join(".env"), "SECRET=1").unwrap();
    let (runner, store) = runner_with(turns, options);
    let outcome = runner.run("Try things").await.unwrap();
    let results = tool_results(store.as_ref(), &outcome.trace_id).await;
    // `echo ... > a.txt` redirects: a prefix never allows it, so the policy refuses it.
    assert_eq!(results[0], format!("error: bash was not run: {NO_POLICY}"));
    assert_eq!(results[1], format!("error: bash was not run: {NO_POLICY}"));
    assert!(results[2].starts_with("wrote 1 bytes"), "{results:?}");
    assert_eq!(
        results[3],
        "error: read_file was not run: the approval rule `read_file(.env)` denies it"
    );
    assert!(workspace.path().join("notes/c.md").is_file());
    assert!(!workspace.path().join("a.txt").exists());
}

/// Approves every call and keeps the requests it saw.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<agent_runner::ApprovalRequest>>);

#[async_trait::async_trait]
impl agent_runner::ApprovalHandler for Recording {
    async fn decide(
        &self,
        request: agent_runner::ApprovalRequest,
    ) -> agent_runner::ApprovalDecision {
        self.0.lock().unwrap().push(request);
        agent_runner::ApprovalDecision::Approve
    }
}

#[tokio::test]
async fn a_script_a_deny_rule_cannot_read_is_asked_about_never_run_on_a_blanket_approval() {
    let command = "$(echo touch) sub/made.txt";
    for asking in [false, true] {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir(workspace.path().join("sub")).unwrap();
        let turns = vec![
            ScriptedTurn::tool_call("bash", json!({ "command": command })),
            ScriptedTurn::text("Done."),
        ];
        let mut options = RunnerOptions::new("scripted", workspace.path());
        options.approval_rules =
            agent_runner::ApprovalRules::parse(&[], &["bash(rm -rf)"]).unwrap();
        let recording = Arc::new(Recording::default());
        options.approval = if asking {
            Approval::Ask(recording.clone())
        } else {
            Approval::Allow
        };
        let (runner, store) = runner_with(turns, options);
        let outcome = runner.run("Make a file").await.unwrap();
        let results = tool_results(store.as_ref(), &outcome.trace_id).await;
        let made = workspace.path().join("sub/made.txt").exists();
        if asking {
            let seen = recording.0.lock().unwrap();
            assert_eq!(seen.len(), 1);
            let note = seen[0].note.as_deref().unwrap_or_default();
            assert!(note.contains("`bash(rm -rf)` cannot check"), "{note}");
            assert!(made, "{results:?}");
        } else {
            assert!(
                results[0].contains("cannot check it") && results[0].contains("nobody was asked"),
                "{results:?}"
            );
            assert!(!made);
        }
    }
}
