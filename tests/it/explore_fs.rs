//! Sub-agents end to end on the filesystem store: three explore branches that overlap in time
//! (one hits its iteration limit) merged into the main trace, sibling trace folders on disk,
//! listing by parent, the parent's events; a delegate; and a process killed in the middle of an
//! exploration, resumed by another process.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::{EventKind, Role, TraceFilter, TraceStatus, TraceStore};
use agent_goal::{GoalStatus, GoalType};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_store_fs::FileSystemTraceStore;
use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolRegistry};
use async_trait::async_trait;
use serde_json::{Value, json};

const ALPHA: &str = "Approach alpha: cache the parsed config";
const BETA: &str = "Approach beta: parse lazily on first use";
const GAMMA: &str = "Approach gamma: precompute at build time";

/// Set in the process the crash test starts (and kills): the trace folder and the workspace.
const CHILD_DIR: &str = "EXPLORE_FS_CHILD_DIR";
const CHILD_WORKSPACE: &str = "EXPLORE_FS_CHILD_WORKSPACE";

/// A read-only tool that returns only once three calls are inside it at the same time.
struct Barrier(tokio::sync::Barrier);

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
        match tokio::time::timeout(Duration::from_secs(10), self.0.wait()).await {
            Ok(_) => Ok(ToolOutput::text("all three inside at once")),
            Err(_) => Ok(ToolOutput::error("the others never came")),
        }
    }
}

fn runner(
    dir: &Path,
    workspace: &Path,
    llm: ScriptedClient,
    configure: impl FnOnce(&mut RunnerOptions),
) -> (AgentRunner, Arc<ScriptedClient>, Arc<FileSystemTraceStore>) {
    let store = Arc::new(FileSystemTraceStore::open(dir).unwrap());
    let llm = Arc::new(llm);
    let mut tools = ToolRegistry::with_builtins();
    tools
        .register(Arc::new(Barrier(tokio::sync::Barrier::new(3))))
        .unwrap();
    let mut options = RunnerOptions::new("scripted", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    configure(&mut options);
    let runner = AgentRunner::new(store.clone(), llm.clone(), tools, options);
    (runner, llm, store)
}

fn call(name: &str, arguments: Value) -> ScriptedTurn {
    ScriptedTurn::tool_call(name, arguments)
}

#[tokio::test]
async fn three_concurrent_branches_land_as_sibling_traces_and_merge_into_the_main_one() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("config.toml"), "keys = 12\n").unwrap();
    let reads = || call("read_file", json!({"path": "config.toml"}));
    let llm = ScriptedClient::new(vec![
        call("goal", json!({"add": "Choose an approach", "focus": "1"})),
        call("explore", json!({"branches": [ALPHA, BETA, GAMMA]})),
        call("goal", json!({"done": "alpha it is"})),
        ScriptedTurn::text("Going with alpha."),
    ])
    .with_route(
        ALPHA,
        vec![
            call("barrier", json!({})),
            ScriptedTurn::text("Alpha: 3 ms per load."),
        ],
    )
    .with_route(
        BETA,
        vec![
            call("barrier", json!({})),
            ScriptedTurn::text("Beta: slow first load."),
        ],
    )
    .with_route(
        GAMMA,
        vec![call("barrier", json!({})), reads(), reads(), reads()],
    );
    let (runner, _llm, store) = runner(dir.path(), workspace.path(), llm, |options| {
        let explore = options.sub_agents.agent_types.get_mut("explore").unwrap();
        explore.limits.max_iterations = 3;
    });
    let outcome = runner.run("Make config loading fast").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let main = outcome.trace_id.clone();
    drop(runner);
    drop(store);

    // Sibling folders: the main trace and its three branches, side by side in the base folder.
    let mut folders: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|name| !name.starts_with('.'))
        .collect();
    folders.sort();
    assert_eq!(folders.len(), 4, "{folders:?}");
    assert_eq!(folders[0], main);
    for (index, folder) in folders[1..].iter().enumerate() {
        let seq = format!("-{:03}", index + 1);
        assert!(
            folder.starts_with(&format!("{main}@explore-")) && folder.ends_with(&seq),
            "{folder}"
        );
        for file in ["meta.json", "goal.json", "events.jsonl"] {
            assert!(
                dir.path().join(folder).join(file).is_file(),
                "{folder}/{file}"
            );
        }
    }

    // A fresh store reads it all back.
    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let filter = TraceFilter {
        parent_trace_id: Some(main.clone()),
        ..TraceFilter::default()
    };
    let mut subs = store.list_traces(&filter).await.unwrap();
    subs.sort_by(|a, b| a.trace_id.cmp(&b.trace_id));
    assert_eq!(
        subs.iter().map(|t| t.trace_id.as_str()).collect::<Vec<_>>(),
        folders[1..].iter().map(String::as_str).collect::<Vec<_>>()
    );
    let statuses: Vec<TraceStatus> = subs.iter().map(|t| t.status).collect();
    assert_eq!(
        statuses,
        [
            TraceStatus::Completed,
            TraceStatus::Completed,
            TraceStatus::Failed
        ]
    );
    assert!(
        subs[2]
            .error
            .as_deref()
            .unwrap()
            .starts_with("max_iterations: reached the limit of 3 model calls")
    );

    // The branches overlapped: each made its barrier call before any got the result back.
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for sub in &subs {
        let messages = store.get_trace_messages(&sub.trace_id).await.unwrap();
        let call = messages.iter().find(|m| m.role == Role::Assistant).unwrap();
        let result = messages.iter().find(|m| m.role == Role::Tool).unwrap();
        assert_eq!(result.content.text(), "all three inside at once");
        calls.push(call.created_at.clone());
        results.push(result.created_at.clone());
    }
    assert!(
        calls.iter().max() < results.iter().min(),
        "calls {calls:?} results {results:?}"
    );

    // The main goal tree: 1 → explore_start (the branch ids) → explore_merge (the report).
    let tree = store.get_goal_tree(&main).await.unwrap().unwrap();
    let start = tree
        .goals()
        .iter()
        .find(|g| g.goal_type == GoalType::ExploreStart)
        .unwrap();
    let merge = tree
        .goals()
        .iter()
        .find(|g| g.goal_type == GoalType::ExploreMerge)
        .unwrap();
    assert_eq!(start.parent_id.as_deref(), Some("1"));
    assert_eq!(merge.parent_id.as_deref(), Some("1"));
    assert_eq!(
        start.branch_ids.as_deref().unwrap(),
        &folders[1..].to_vec()[..]
    );
    assert_eq!(merge.explore_start_id.as_deref(), Some(start.id.as_str()));
    assert_eq!(tree.goals()[0].status, GoalStatus::Completed);
    for sub in &subs {
        assert_eq!(sub.parent_goal_id.as_deref(), Some(start.id.as_str()));
    }
    let report = merge.merge_summary.as_deref().unwrap();
    for needle in [
        &format!("### Branch A: {ALPHA}\nStatus: completed") as &str,
        "Alpha: 3 ms per load.",
        &format!("### Branch B: {BETA}\nStatus: completed"),
        "Beta: slow first load.",
        &format!("### Branch C: {GAMMA}\nStatus: failed: max_iterations"),
        "2 of 3 branches completed, 1 did not",
    ] {
        assert!(report.contains(needle), "missing {needle:?} in\n{report}");
    }
    let goal_json: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(&main).join("goal.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(goal_json["goals"][1]["type"], "explore_start");
    assert_eq!(goal_json["goals"][2]["type"], "explore_merge");

    // The parent's events: three started, three completed with their totals.
    let events = store.get_events(&main, 0).await.unwrap();
    let started = events
        .iter()
        .filter(|e| {
            matches!(&e.kind, EventKind::SubTraceStarted { parent_goal_id, agent_type, .. }
                if parent_goal_id.as_deref() == Some(start.id.as_str()) && agent_type == "explore")
        })
        .count();
    assert_eq!(started, 3);
    let completed: Vec<(String, TraceStatus)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubTraceCompleted {
                trace_id, status, ..
            } => Some((trace_id.clone(), *status)),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 3);
    let raw_events = std::fs::read_to_string(dir.path().join(&main).join("events.jsonl")).unwrap();
    assert_eq!(raw_events.matches("\"sub_trace_started\"").count(), 3);
    assert_eq!(raw_events.matches("\"sub_trace_completed\"").count(), 3);
}

#[tokio::test]
async fn a_delegate_runs_end_to_end_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let task = "Write VERSION containing 1.2.3";
    let llm = ScriptedClient::new(vec![
        call("delegate", json!({"task": task})),
        ScriptedTurn::text("VERSION is written."),
    ])
    .with_route(
        task,
        vec![
            call("goal", json!({"add": "Write VERSION", "focus": "1"})),
            call(
                "write_file",
                json!({"path": "VERSION", "content": "1.2.3\n"}),
            ),
            call("goal", json!({"done": "VERSION holds 1.2.3"})),
            ScriptedTurn::text("Wrote VERSION."),
        ],
    );
    let (runner, _llm, store) = runner(dir.path(), workspace.path(), llm, |_| {});
    let outcome = runner.run("Set the version").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("VERSION")).unwrap(),
        "1.2.3\n"
    );
    let subs = store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(subs.len(), 1);
    let sub = &subs[0];
    assert_eq!(sub.agent_type.as_deref(), Some("delegate"));
    assert_eq!(sub.status, TraceStatus::Completed);
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(&sub.trace_id).join("meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["parent_trace_id"], outcome.trace_id.as_str());
    assert_eq!(meta["agent_type"], "delegate");
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let result = messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("delegate"))
        .unwrap();
    let text = result.content.text();
    assert!(text.contains("Wrote VERSION."), "{text}");
    assert!(text.contains("VERSION holds 1.2.3"), "{text}");
    assert_eq!(
        result.metadata["sub_traces"][0]["trace_id"],
        sub.trace_id.as_str()
    );
}

/// Kills the child process when dropped, so a failing test leaves nothing running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The status in a trace folder's `meta.json`, if it can be read.
fn status_on_disk(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join("meta.json")).ok()?;
    let meta: Value = serde_json::from_str(&text).ok()?;
    meta["status"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn a_process_killed_mid_exploration_is_finished_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let child = Command::new(exe)
        .args([
            "--exact",
            "explore_fs::explore_child_process",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_DIR, dir.path())
        .env(CHILD_WORKSPACE, workspace.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);

    // Kill it once alpha has finished while beta and gamma wait for their model.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (main, branches) = loop {
        assert!(Instant::now() < deadline, "the child never got there");
        std::thread::sleep(Duration::from_millis(20));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.'))
            .collect();
        names.sort();
        let branches: Vec<String> = names.iter().filter(|n| n.contains('@')).cloned().collect();
        let ready = branches.len() == 3
            && status_on_disk(&dir.path().join(&branches[0])).as_deref() == Some("completed")
            && branches[1..].iter().all(|b| {
                std::fs::read_to_string(dir.path().join(b).join("events.jsonl"))
                    .is_ok_and(|events| events.contains("\"message_added\""))
            });
        if ready {
            break (names[0].clone(), branches);
        }
    };
    child.0.kill().unwrap();
    child.0.wait().unwrap();

    let llm = ScriptedClient::new(vec![ScriptedTurn::text("Compared all three.")])
        .with_route(ALPHA, Vec::new())
        .with_route(BETA, vec![ScriptedTurn::text("beta, after the crash")])
        .with_route(GAMMA, vec![ScriptedTurn::text("gamma, after the crash")]);
    let (runner, llm, store) = runner(dir.path(), workspace.path(), llm, |_| {});
    let before = store.get_trace(&main).await.unwrap().unwrap();
    assert_eq!(before.status, TraceStatus::Running, "killed, not finished");
    let outcome = runner.resume(&main).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("Compared all three."));
    assert!(llm.route_requests(0).is_empty(), "alpha was not run again");

    let subs = store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs.len(), 3);
    assert!(subs.iter().all(|s| s.status == TraceStatus::Completed));
    let tree = store.get_goal_tree(&main).await.unwrap().unwrap();
    let start = &tree.goals()[0];
    assert_eq!(start.branch_ids.as_deref().unwrap(), &branches[..]);
    let merge = &tree.goals()[1];
    assert_eq!(merge.goal_type, GoalType::ExploreMerge);
    let report = merge.merge_summary.as_deref().unwrap();
    for answer in [
        "alpha, before the crash",
        "beta, after the crash",
        "gamma, after the crash",
    ] {
        assert!(report.contains(answer), "{report}");
    }
    let messages = store.get_trace_messages(&main).await.unwrap();
    let results: Vec<_> = messages.iter().filter(|m| m.role == Role::Tool).collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].content.text(), report);
}

/// The process the crash test kills: an exploration whose beta and gamma branches wait a minute
/// for their model. Does nothing unless started by that test.
#[tokio::test]
#[ignore = "started and killed by a_process_killed_mid_exploration_is_finished_by_the_next_one"]
async fn explore_child_process() {
    let (Ok(dir), Ok(workspace)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_WORKSPACE))
    else {
        return;
    };
    let slow = || ScriptedTurn::text("never").with_delay(Duration::from_secs(60));
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA, BETA, GAMMA]})),
        ScriptedTurn::text("unreachable"),
    ])
    .with_route(ALPHA, vec![ScriptedTurn::text("alpha, before the crash")])
    .with_route(BETA, vec![slow()])
    .with_route(GAMMA, vec![slow()]);
    let (runner, _, _) = runner(Path::new(&dir), Path::new(&workspace), llm, |_| {});
    let _ = runner.run("Compare three approaches").await;
}
