//! Project instructions as data: the blocks an embedder gives in `RunnerOptions::instructions`
//! follow the system prompt in the first, static system message of every call — unchanged
//! while the plan in the second message changes — and reach delegated sub-traces too.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, TraceStatus};
use agent_llm::{ChatMessage, ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, Approval, Instruction, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::json;

/// The text of a system message.
fn system_text(message: &ChatMessage) -> &str {
    match message {
        ChatMessage::System(text) => text,
        other => panic!("not a system message: {other:?}"),
    }
}

/// Options carrying a project file's rules and an environment block.
fn options(workspace: &std::path::Path) -> RunnerOptions {
    let mut options = RunnerOptions::new("scripted", workspace).with_approval(Approval::Allow);
    options.system_prompt = "You are a careful agent working in {workspace}.".into();
    options.instructions = vec![
        Instruction::new(
            "Instructions from /repo/AGENTS.md",
            "Run `make check` before finishing. Keep {braces} as written.",
        ),
        Instruction::new("Environment", "- OS: linux\n- Date: 2030-01-02"),
    ];
    options
}

#[tokio::test]
async fn the_instructions_stay_in_the_static_system_message_while_the_plan_changes() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![
        ScriptedTurn::tool_call("goal", json!({"add": "Read, Report", "focus": "1"})),
        ScriptedTurn::tool_call("read_file", json!({"path": "missing.txt"})),
        ScriptedTurn::tool_call("goal", json!({"done": "nothing to read", "focus": "2"})),
        ScriptedTurn::tool_call("goal", json!({"done": "reported"})),
        ScriptedTurn::text("Done."),
    ]));
    let store = Arc::new(InMemoryTraceStore::new());
    let runner = AgentRunner::new(
        store,
        llm.clone(),
        ToolRegistry::with_builtins(),
        options(workspace.path()),
    );
    let outcome = runner.run("Read and report").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let requests = llm.requests();
    assert_eq!(requests.len(), 5);
    let first = system_text(&requests[0].messages[0]);
    assert_eq!(
        first,
        format!(
            "You are a careful agent working in {}.\n\n\
             ## Instructions from /repo/AGENTS.md\n\n\
             Run `make check` before finishing. Keep {{braces}} as written.\n\n\
             ## Environment\n\n- OS: linux\n- Date: 2030-01-02",
            workspace.path().display()
        )
    );
    let plans: Vec<&str> = requests
        .iter()
        .map(|r| system_text(&r.messages[1]))
        .collect();
    for request in &requests {
        assert_eq!(
            system_text(&request.messages[0]),
            first,
            "byte-identical on every call"
        );
    }
    assert_ne!(plans[0], plans[1], "the plan message changes: {plans:?}");
    assert_ne!(plans[2], plans[3], "the plan message changes: {plans:?}");
    assert!(!plans.iter().any(|p| p.contains("make check")));
}

#[tokio::test]
async fn delegated_sub_traces_get_the_instructions_too() {
    let workspace = tempfile::tempdir().unwrap();
    let task = "Look at the files";
    let llm = Arc::new(
        ScriptedClient::new(vec![
            ScriptedTurn::tool_call("delegate", json!({"task": task})),
            ScriptedTurn::text("Delegated."),
        ])
        .with_route(task, vec![ScriptedTurn::text("There are none.")]),
    );
    let store = Arc::new(InMemoryTraceStore::new());
    let runner = AgentRunner::new(
        store,
        llm.clone(),
        ToolRegistry::with_builtins(),
        options(workspace.path()).with_sub_agents(),
    );
    let outcome = runner.run("Delegate a look").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let sub = llm.route_requests(0);
    assert_eq!(sub.len(), 1);
    let prompt = system_text(&sub[0].messages[0]);
    assert!(
        prompt.contains("## Instructions from /repo/AGENTS.md\n\nRun `make check`"),
        "{prompt}"
    );
    assert!(prompt.ends_with("- Date: 2030-01-02"), "{prompt}");
}

#[tokio::test]
async fn without_instructions_the_prompt_is_the_system_prompt_alone() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text("Done.")]));
    let mut options = options(workspace.path());
    options.instructions.clear();
    let runner = AgentRunner::new(
        Arc::new(InMemoryTraceStore::new()),
        llm.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    runner.run("Nothing").await.unwrap();
    assert_eq!(
        system_text(&llm.requests()[0].messages[0]),
        format!(
            "You are a careful agent working in {}.",
            workspace.path().display()
        )
    );
}
