//! Agent profiles in real runs with the scripted model: a delegate and explore branches run as
//! a profile given as data (its prompt, tools, model and sub-trace ids), a main run as a
//! profile and its resume, an unknown profile, the approval policy, and the compaction profile.

use std::sync::Arc;

use crate::support::{call, tool_names, tool_results};
use agent_execution::{EventKind, InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ChatMessage, ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, AgentTypeConfig, RunLimits, RunnerOptions, ToolFilter};
use agent_tools::ToolRegistry;
use serde_json::json;

const REVIEWER_PROMPT: &str =
    "You review code in {workspace} as `{agent}` on {model}. Your tools: {tools}.";

/// The `reviewer` profile as data: read-only search tools, a model and a limit of its own.
fn reviewer() -> AgentTypeConfig {
    AgentTypeConfig {
        description: "Reviews a change and reports problems; never edits.".into(),
        tools: ToolFilter::all().allowing(["read_file", "grep", "glob_files"]),
        limits: RunLimits {
            max_iterations: 5,
            ..RunLimits::default()
        },
        system_prompt: Some(REVIEWER_PROMPT.to_owned()),
        model: Some("review-model".to_owned()),
        ..AgentTypeConfig::general()
    }
}

/// Options whose profiles are the built-ins and `reviewer`.
fn with_reviewer(workspace: &std::path::Path) -> RunnerOptions {
    let mut options = RunnerOptions::new("main-model", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options
        .sub_agents
        .agent_types
        .insert("reviewer".to_owned(), reviewer());
    options
}

const TASK: &str = "Review src/lib.rs for panics";

struct Fixture {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    runner: AgentRunner,
    workspace: tempfile::TempDir,
}

/// A runner whose profiles are the built-ins and the project's `.agent/agents/reviewer.md`.
fn fixture(llm: ScriptedClient, configure: impl FnOnce(RunnerOptions) -> RunnerOptions) -> Fixture {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join("src")).unwrap();
    std::fs::write(
        workspace.path().join("src/lib.rs"),
        "fn f() { x.unwrap() }\n",
    )
    .unwrap();
    let options = configure(with_reviewer(workspace.path()));
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(llm);
    let runner = AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    Fixture {
        store,
        llm,
        runner,
        workspace,
    }
}

/// The system prompt of a request (the plan follows in a system message of its own).
fn system_prompt(request: &agent_llm::ChatRequest) -> String {
    request.messages[0].text().to_owned()
}

#[tokio::test]
async fn a_delegate_runs_as_the_profile_it_names() {
    let llm = ScriptedClient::new(vec![
        call("delegate", json!({"task": TASK, "agent": "reviewer"})),
        ScriptedTurn::text("The reviewer found one unwrap."),
    ])
    .with_route(
        TASK,
        vec![
            call("read_file", json!({"path": "src/lib.rs"})),
            call("write_file", json!({"path": "src/lib.rs", "content": ""})),
            ScriptedTurn::text("src/lib.rs:1 calls unwrap on x."),
        ],
    );
    let f = fixture(llm, |o| o);
    let outcome = f.runner.run("Get src/lib.rs reviewed").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let subs = f.store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(subs.len(), 1);
    let sub = &subs[0];
    assert!(
        sub.trace_id
            .starts_with(&format!("{}@reviewer-", outcome.trace_id)),
        "{}",
        sub.trace_id
    );
    assert_eq!(sub.agent_type.as_deref(), Some("reviewer"));
    assert_eq!(sub.model.as_deref(), Some("review-model"));
    assert_eq!(sub.status, TraceStatus::Completed);

    // The reviewer saw its own prompt, rendered, and only its tools, on its model.
    let requests = f.llm.route_requests(0);
    let expected_tools = ["glob_files", "goal", "grep", "read_file", "read_progress"];
    for request in &requests {
        assert_eq!(request.model, "review-model");
        assert_eq!(tool_names(request), expected_tools);
        assert_eq!(
            system_prompt(request),
            format!(
                "You review code in {} as `reviewer` on review-model. Your tools: {}.",
                f.workspace.path().display(),
                expected_tools.join(", ")
            )
        );
    }
    let results = tool_results(f.store.as_ref(), &sub.trace_id).await;
    assert!(results[0].contains("x.unwrap()"), "{results:?}");
    assert!(
        results[1].starts_with("error: unknown tool \"write_file\""),
        "{results:?}"
    );
    let parent = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    assert!(
        parent[0].contains("src/lib.rs:1 calls unwrap on x."),
        "{parent:?}"
    );

    // The main model saw the profiles it may choose in the delegate tool.
    let main = &f.llm.requests()[0];
    let delegate = main.tools.iter().find(|t| t.name == "delegate").unwrap();
    let agent = &delegate.parameters["properties"]["agent"];
    assert_eq!(
        agent["enum"],
        json!(["default", "delegate", "explore", "plan", "reviewer"])
    );
    assert!(
        agent["description"]
            .as_str()
            .unwrap()
            .contains("`reviewer`: Reviews a change and reports problems; never edits.")
    );
    let events = f.store.get_events(&outcome.trace_id, 0).await.unwrap();
    assert!(events.iter().any(|e| matches!(
        &e.kind,
        EventKind::SubTraceStarted { agent_type, .. } if agent_type == "reviewer"
    )));
}

#[tokio::test]
async fn explore_branches_run_as_the_profile_it_names() {
    const A: &str = "Look for unwrap";
    const B: &str = "Look for expect";
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [A, B], "agent": "reviewer"})),
        ScriptedTurn::text("Both looked."),
    ])
    .with_route(A, vec![ScriptedTurn::text("one unwrap")])
    .with_route(B, vec![ScriptedTurn::text("no expect")]);
    let f = fixture(llm, |o| o);
    let outcome = f.runner.run("Find panics").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let subs = f.store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(subs.len(), 2);
    for sub in &subs {
        assert!(sub.trace_id.contains("@reviewer-"), "{}", sub.trace_id);
        assert_eq!(sub.agent_type.as_deref(), Some("reviewer"));
    }
    assert_eq!(f.llm.route_requests(0)[0].model, "review-model");
}

#[tokio::test]
async fn an_unknown_or_refused_profile_is_an_error_the_model_sees() {
    let llm = ScriptedClient::new(vec![
        call("delegate", json!({"task": "x", "agent": "nobody"})),
        call("delegate", json!({"task": "y", "agent": "compaction"})),
        ScriptedTurn::text("No such agents."),
    ]);
    let f = fixture(llm, |o| o);
    let outcome = f.runner.run("Delegate").await.unwrap();
    let results = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    assert!(
        results[0].contains(
            "there is no agent profile \"nobody\" for delegate; choose one of: default, \
             delegate, explore, plan, reviewer"
        ),
        "{results:?}"
    );
    assert!(
        results[1].contains("no agent profile \"compaction\""),
        "{results:?}"
    );
    assert!(
        f.store
            .get_sub_traces(&outcome.trace_id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_main_run_as_a_profile_is_recorded_and_resumed_as_it() {
    let llm = ScriptedClient::new(vec![call("read_file", json!({"path": "src/lib.rs"}))]);
    let f = fixture(llm, |o| {
        let mut o = o.with_agent("reviewer").unwrap();
        o.limits.max_iterations = 1;
        o
    });
    let outcome = f.runner.run("Review it").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert!(outcome.error.unwrap().starts_with("max_iterations"));
    let trace = f.store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.agent_type.as_deref(), Some("reviewer"));
    assert_eq!(trace.model.as_deref(), Some("review-model"));
    assert_eq!(trace.parent_trace_id, None);
    let first = &f.llm.requests()[0];
    assert_eq!(first.model, "review-model");
    assert!(!tool_names(first).contains(&"bash".to_owned()));
    assert!(system_prompt(first).starts_with("You review code in"));

    // Resumed by a runner that names no profile: the trace's profile applies.
    let again = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text("Reviewed.")]));
    let options = with_reviewer(f.workspace.path());
    let runner = AgentRunner::new(
        f.store.clone(),
        again.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    let resumed = runner.resume(&outcome.trace_id).await.unwrap();
    assert_eq!(resumed.status, TraceStatus::Completed, "{resumed:?}");
    let request = &again.requests()[0];
    assert_eq!(request.model, "review-model");
    assert!(!tool_names(request).contains(&"bash".to_owned()));
}

#[tokio::test]
async fn a_deny_policy_refuses_risky_calls_without_asking() {
    let llm = ScriptedClient::new(vec![
        call("write_file", json!({"path": "notes.txt", "content": "x"})),
        ScriptedTurn::text("Could not write."),
    ]);
    let f = fixture(llm, |mut o| {
        let default = o.sub_agents.agent_types.get_mut("default").unwrap();
        default.approval = agent_runner::ApprovalPolicy::Deny;
        o.with_agent("default").unwrap()
    });
    let outcome = f.runner.run("Write notes").await.unwrap();
    let results = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    assert_eq!(
        results[0],
        "error: write_file was not run: the `default` agent may not run risky tools"
    );
    assert!(!f.workspace.path().join("notes.txt").exists());
    let trace = f.store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.agent_type, None, "`default` is not recorded");
}

#[tokio::test]
async fn full_compaction_uses_the_compaction_profile() {
    let big = "one two three four five six seven eight nine ten\n".repeat(600);
    let llm = ScriptedClient::new(vec![
        call("read_file", json!({"path": "big.txt"})),
        ScriptedTurn::text("The summary."),
        ScriptedTurn::text("Done."),
    ]);
    let f = fixture(llm, |mut o| {
        o.context_window = Some(4000);
        let compaction = o.sub_agents.agent_types.get_mut("compaction").unwrap();
        compaction.model = Some("summary-model".into());
        compaction.system_prompt = Some("Summarise everything so far.".into());
        o
    });
    std::fs::write(f.workspace.path().join("big.txt"), &big).unwrap();
    let outcome = f.runner.run("Read big.txt").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let requests = f.llm.requests();
    let summarising = &requests[1];
    assert_eq!(summarising.model, "summary-model");
    // The summariser is offered no tool: the conversation is a transcript.
    assert!(summarising.tools.is_empty());
    let Some(ChatMessage::User(ask)) = summarising.messages.last() else {
        panic!("the summary request ends with the request")
    };
    assert!(ask.ends_with("\nSummarise everything so far."), "{ask}");
    assert_eq!(requests[2].model, "main-model");
}

#[tokio::test]
async fn a_goal_that_names_an_agent_is_carried_out_by_a_sub_trace_of_that_profile() {
    const GOAL: &str = "Review src/lib.rs";
    let llm = ScriptedClient::new(vec![
        call(
            "goal",
            json!({"add": "Write the fix, Review src/lib.rs @reviewer", "focus": "1"}),
        ),
        call("goal", json!({"done": "fixed", "focus": "2"})),
        // The runner hands goal 2 to the reviewer; the model goes on after it.
        ScriptedTurn::text("Fixed and reviewed."),
    ])
    .with_route(
        GOAL,
        vec![
            call("read_file", json!({"path": "src/lib.rs"})),
            call("write_file", json!({"path": "src/lib.rs", "content": ""})),
            ScriptedTurn::text("src/lib.rs:1 still calls unwrap on x."),
        ],
    );
    let f = fixture(llm, |o| o);
    let outcome = f.runner.run("Fix and review src/lib.rs").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let subs = f.store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(subs.len(), 1, "handed over once");
    let sub = &subs[0];
    assert_eq!(sub.agent_type.as_deref(), Some("reviewer"));
    assert_eq!(sub.parent_goal_id.as_deref(), Some("2"));
    // The reviewer ran with its own prompt and tools: the write was not its to make.
    let requests = f.llm.route_requests(0);
    assert!(system_prompt(&requests[0]).contains("as `reviewer`"));
    assert!(!tool_names(&requests[0]).contains(&"write_file".to_owned()));
    assert!(
        requests[0]
            .messages
            .iter()
            .any(|m| m.text().contains("Fix and review src/lib.rs"))
    );

    // The goal is completed with the reviewer's answer as its summary.
    let tree = f
        .store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    let review = tree.get("2").unwrap();
    assert_eq!(review.status, agent_goal::GoalStatus::Completed);
    assert_eq!(
        review.summary.as_deref(),
        Some("src/lib.rs:1 still calls unwrap on x.")
    );
    // Every call of the main trace has exactly one result, the handoff's included.
    let results = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    assert_eq!(results.len(), 4, "{results:?}");
    // The model saw the review before its last answer.
    let last = f.llm.requests().last().unwrap().clone();
    assert!(
        last.messages
            .iter()
            .any(|m| m.text().contains("still calls unwrap")),
        "{last:?}"
    );
}
