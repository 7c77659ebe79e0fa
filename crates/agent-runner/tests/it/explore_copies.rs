//! Explore branches that write, with checkpoints on: each works in a private copy of the
//! workspace (two branches editing the same file do not see each other's change), the merged
//! report lists what each changed, the workspace is untouched until the model chooses a
//! branch, and then exactly the chosen branch's changes land.

use std::sync::Arc;

use crate::support::{Barrier, call, tool_results};
use agent_checkpoint::{FolderCheckpoints, Limits};
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, CheckpointOptions, RunnerOptions, ToolFilter};
use agent_tools::ToolRegistry;
use serde_json::json;

const ALPHA: &str = "Approach alpha: say hello in English";
const BETA: &str = "Approach beta: say hello in French";

/// A branch that waits for the other, reads the shared file, then writes its own version.
fn branch(text: &str) -> Vec<ScriptedTurn> {
    vec![
        call("barrier", json!({})),
        call(
            "write_file",
            json!({"path": "greeting.txt", "content": text}),
        ),
        call("barrier", json!({})),
        call("read_file", json!({"path": "greeting.txt"})),
        ScriptedTurn::text(format!("Wrote {text}")),
    ]
}

#[tokio::test]
async fn writing_branches_work_apart_and_only_the_chosen_one_lands() {
    let workspace = tempfile::tempdir().unwrap();
    let traces = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("greeting.txt"), "base").unwrap();
    std::fs::write(workspace.path().join("keep.txt"), "untouched").unwrap();
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA, BETA]})),
        call("goal", json!({"select": "B"})),
        ScriptedTurn::text("Going with French."),
    ])
    .with_route(ALPHA, branch("hello"))
    .with_route(BETA, branch("bonjour"));
    let llm = Arc::new(llm);
    let store = Arc::new(InMemoryTraceStore::new());
    let checkpoints = FolderCheckpoints::new(traces.path(), workspace.path(), Limits::default());
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents()
        .with_checkpoints(CheckpointOptions::new(Arc::new(checkpoints)));
    let explore = options.sub_agents.agent_types.get_mut("explore").unwrap();
    explore.tools = ToolFilter::all();
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(Barrier::new(2))).unwrap();
    let runner = AgentRunner::new(store.clone(), llm.clone(), tools, options);

    let outcome = runner.run("Greet the user").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let main = outcome.trace_id.clone();

    // Each branch read back its own text, though both had written before either read.
    let mut subs = store.get_sub_traces(&main).await.unwrap();
    subs.sort_by(|a, b| a.task.cmp(&b.task));
    for (sub, text) in subs.iter().zip(["hello", "bonjour"]) {
        let results = tool_results(store.as_ref(), &sub.trace_id).await;
        assert!(results[3].contains(text), "{}: {results:?}", sub.task);
    }

    let results = tool_results(store.as_ref(), &main).await;
    // The report names what each changed, and the workspace was left alone until the choice.
    assert!(
        results[0].contains("Branch A: Files changed in its copy: modified greeting.txt.")
            && results[0].contains("Branch B: Files changed in its copy: modified greeting.txt.")
            && results[0].contains("goal(select="),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains(
            "The file changes of branch B were applied to the workspace: modified greeting.txt."
        ),
        "{}",
        results[1]
    );
    let read = |name: &str| std::fs::read_to_string(workspace.path().join(name)).unwrap();
    assert_eq!(read("greeting.txt"), "bonjour");
    assert_eq!(read("keep.txt"), "untouched");
    for sub in subs {
        let _ = std::fs::remove_dir_all(agent_checkpoint::branch_copy_dir(&sub.trace_id));
    }
}

#[tokio::test]
async fn without_checkpoints_writing_branches_share_the_workspace_as_before() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA]})),
        ScriptedTurn::text("Done."),
    ])
    .with_route(
        ALPHA,
        vec![
            call(
                "write_file",
                json!({"path": "greeting.txt", "content": "hello"}),
            ),
            ScriptedTurn::text("Wrote hello"),
        ],
    );
    let store = Arc::new(InMemoryTraceStore::new());
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options
        .sub_agents
        .agent_types
        .get_mut("explore")
        .unwrap()
        .tools = ToolFilter::all();
    let runner = AgentRunner::new(store, Arc::new(llm), ToolRegistry::with_builtins(), options);
    let outcome = runner.run("Greet").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let written = std::fs::read_to_string(workspace.path().join("greeting.txt")).unwrap();
    assert_eq!(written, "hello");
}
