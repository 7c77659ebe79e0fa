//! Plan mode (JManus): the model writes only the goal tree, the plan is stored as a trace with
//! status `planned`, people read and change it as text, and running it continues that trace.
//!
//! - [`plan`] runs a task as the `plan` profile and stores the result as a plan: the planning
//!   goal first (completed, its reading kept under it), then the plan's goals, every one pending
//!   and nothing focused.
//! - [`edit`] replaces a plan's goals by a plan text, [`load_into`] gives a new trace the goals
//!   of a plan text (a saved template), [`text`] reads any trace's plan as text.
//! - [`prepare_run`] readies a plan to be carried out: the trace then runs like any stopped one
//!   ([`AgentRunner::resume_in_background`]).
//!
//! The text form and re-planning are `agent-goal`'s ([`GoalTree::plan_text`],
//! [`agent_goal::parse_plan`], [`GoalTree::replan`]); this module only reads and writes traces,
//! so the command line and the HTTP API add nothing but their own input and output.
//!
//! ```
//! use std::sync::Arc;
//!
//! use agent_execution::InMemoryTraceStore;
//! use agent_llm::{ScriptedClient, ScriptedTurn};
//! use agent_runner::agents::PLAN;
//! use agent_plan::plan::{self, PlanOutcome};
//! use agent_runner::{AgentRunner, RunnerOptions};
//! use agent_tools::ToolRegistry;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Arc::new(InMemoryTraceStore::new());
//! let model = ScriptedClient::new(vec![
//!     ScriptedTurn::tool_call("goal", json!({"add": "Read the code, Write the cache"})),
//!     ScriptedTurn::text("Two goals: read, then write."),
//! ]);
//! let options = RunnerOptions::new("scripted", std::env::temp_dir()).with_agent(PLAN)?;
//! let runner = AgentRunner::new(store.clone(), Arc::new(model), ToolRegistry::new(), options);
//! let PlanOutcome::Planned { trace_id, .. } = plan::plan(&runner, "Add a cache").await? else {
//!     panic!("the planning run stopped");
//! };
//! // The planning goal stays first (goal 1); the plan text leaves it out.
//! let text = "Read the code\nWrite the cache\n  Test it\n";
//! let tree = plan::edit(store.as_ref(), &trace_id, text).await?;
//! assert_eq!(tree.find_by_display("3.1").map(|g| g.description.as_str()), Some("Test it"));
//! assert!(plan::text(store.as_ref(), &trace_id).await?.ends_with(text));
//! # Ok(())
//! # }
//! ```

use agent_execution::{
    NewMessage, StoreError, Trace, TraceStatus, TraceStore, TraceUpdate, WriteOp,
};
use agent_goal::{
    GoalCommand, GoalError, GoalTree, PLANNING_AGENT, PlanParseError, now_rfc3339, parse_plan,
};

use agent_runner::agents::DEFAULT;
use agent_runner::{AgentRunner, RunError, RunOutcome};

/// The user message that starts carrying out a reviewed plan (see [`prepare_run`]).
pub const EXECUTE_PLAN: &str = "The plan above has been reviewed. Carry it out now: focus the \
first goal, work through the goals in order, and finish each with a summary.";

/// What planning a task came to.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanOutcome {
    /// The plan is stored: the trace has status `planned` and this goal tree.
    Planned {
        /// The trace that holds the plan.
        trace_id: String,
        /// The plan: every goal pending, nothing focused.
        goal_tree: GoalTree,
    },
    /// The planning run did not complete (a limit, a cancel, a model failure); the trace was
    /// left as the run ended it.
    Stopped(RunOutcome),
}

/// Why a plan-mode operation failed; nothing was written unless said otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// No trace has this id.
    #[error("there is no trace {trace_id}")]
    NotFound {
        /// The id that was given.
        trace_id: String,
    },
    /// The trace is not a stored plan (its status is not `planned`), e.g. one that already
    /// runs or ran; such a trace is resumed, not planned again.
    #[error("trace {trace_id} is not a plan (its status is {status:?})")]
    NotAPlan {
        /// The trace.
        trace_id: String,
        /// Its status.
        status: TraceStatus,
    },
    /// The plan text cannot be read, or has no goal (a planning run that added none).
    #[error(transparent)]
    Parse(#[from] PlanParseError),
    /// A change of the goal tree was refused.
    #[error(transparent)]
    Goal(#[from] GoalError),
    /// The planning run could not start or record what it did.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The store refused or failed a read or write.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The description of the planning goal, the goal a planning run works under.
pub const PLANNING_GOAL: &str = "Plan the task";

/// Runs `task` in a new trace with `runner` ([`begin`], then the run, then [`finish`]) and,
/// when the run completes, stores its goal tree as a plan.
///
/// `runner` should run as the `plan` profile ([`agent_runner::agents::PLAN`], through
/// [`RunnerOptions::with_agent`](agent_runner::RunnerOptions::with_agent)) or another that only
/// plans: whatever its tools do happens. A run that ends otherwise is returned as
/// [`PlanOutcome::Stopped`]; a completed run whose tree has no goal is
/// [`PlanError::Parse`] ([`PlanParseError::NoGoals`]) and leaves the trace completed.
pub async fn plan(runner: &AgentRunner, task: &str) -> Result<PlanOutcome, PlanError> {
    let trace_id = begin(runner, task).await?;
    let outcome = runner
        .drive(&trace_id, agent_runner::CancellationToken::new())
        .await?;
    finish(runner.store().as_ref(), &outcome).await
}

/// Creates the trace of a planning run for `task` without running it: its goal tree holds the
/// planning goal ([`PLANNING_GOAL`], carried out by [`PLANNING_AGENT`]), focused, so the
/// planner's reading and the goals it adds are recorded under it. Run it with
/// [`AgentRunner::drive`] (or in the background), then [`finish`] it.
pub async fn begin(runner: &AgentRunner, task: &str) -> Result<String, PlanError> {
    let trace_id = runner.create(task).await?;
    let store = runner.store().as_ref();
    let mut tree = store.get_goal_tree(&trace_id).await?.unwrap_or_default();
    let planning = GoalCommand {
        add: Some(PLANNING_GOAL.to_owned()),
        agent: Some(PLANNING_AGENT.to_owned()),
        focus: Some("1".to_owned()),
        ..GoalCommand::default()
    };
    tree.apply(&planning)?;
    store.update_goal_tree(&trace_id, tree).await?;
    Ok(trace_id)
}

/// Stores the result of a planning run that ended with `outcome` as a plan: when the run
/// completed, the trace gets status `planned` and a fresh tree read back from the plan's text
/// (so what is stored is exactly what [`text`] shows and [`edit`] changes): the planning goal
/// first, completed with the planner's answer as its summary (its messages keep the plan's
/// reasons), then every planned goal pending, nothing focused, ids continuing after the run's
/// own. Both are one commit. A run that ended otherwise is [`PlanOutcome::Stopped`].
pub async fn finish(
    store: &dyn TraceStore,
    outcome: &RunOutcome,
) -> Result<PlanOutcome, PlanError> {
    if outcome.status != TraceStatus::Completed {
        return Ok(PlanOutcome::Stopped(outcome.clone()));
    }
    let tree = store
        .get_goal_tree(&outcome.trace_id)
        .await?
        .unwrap_or_default();
    let items = parse_plan(&tree.plan_text())?;
    let planning = tree
        .goals()
        .iter()
        .find(|goal| goal.agent.as_deref() == Some(PLANNING_AGENT) && goal.parent_id.is_none())
        .map(|goal| goal.id.clone());
    let summary = outcome
        .response
        .as_deref()
        .unwrap_or("The plan is written.");
    let fresh = match planning {
        Some(id) => tree.replan_keeping(&id, &items, summary, &now_rfc3339()),
        None => tree.replan(&items),
    };
    let planned = TraceUpdate {
        status: Some(TraceStatus::Planned),
        ..TraceUpdate::default()
    };
    let ops = vec![
        WriteOp::ReplaceGoalTree(fresh.clone()),
        WriteOp::UpdateTrace(planned),
    ];
    store.batch(&outcome.trace_id, ops).await?;
    Ok(PlanOutcome::Planned {
        trace_id: outcome.trace_id.clone(),
        goal_tree: fresh,
    })
}

/// The trace `trace_id` if it is a stored plan; [`PlanError::NotFound`] or
/// [`PlanError::NotAPlan`] otherwise.
pub async fn check_is_plan(store: &dyn TraceStore, trace_id: &str) -> Result<Trace, PlanError> {
    let trace = store
        .get_trace(trace_id)
        .await?
        .ok_or_else(|| PlanError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    if trace.status != TraceStatus::Planned {
        return Err(PlanError::NotAPlan {
            trace_id: trace_id.to_owned(),
            status: trace.status,
        });
    }
    Ok(trace)
}

/// Replaces the goals of the stored plan `trace_id` by the plan in `text` and returns the new
/// tree: fresh pending goals whose ids continue after the old ones. Refused, with nothing
/// written, when the trace is not a plan or the text cannot be read.
pub async fn edit(
    store: &dyn TraceStore,
    trace_id: &str,
    text: &str,
) -> Result<GoalTree, PlanError> {
    check_is_plan(store, trace_id).await?;
    replace(store, trace_id, text).await
}

/// Gives the trace `trace_id` (a new one, before it runs) the goals of the plan in `text`, a
/// saved template, and returns its new tree. Refused, with nothing written, when the text
/// cannot be read.
pub async fn load_into(
    store: &dyn TraceStore,
    trace_id: &str,
    text: &str,
) -> Result<GoalTree, PlanError> {
    replace(store, trace_id, text).await
}

/// The plan of the trace `trace_id` as text (see [`GoalTree::plan_text`]), whatever its
/// status: a finished trace's plan can be saved as a template too.
pub async fn text(store: &dyn TraceStore, trace_id: &str) -> Result<String, PlanError> {
    let tree = store
        .get_goal_tree(trace_id)
        .await?
        .ok_or_else(|| PlanError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    Ok(tree.plan_text())
}

/// Readies the stored plan `trace_id` to be carried out by `runner`: the trace records
/// `runner`'s profile (whichever wrote the plan; a resume then runs the same way) and gets the
/// user message [`EXECUTE_PLAN`], in one commit. [`AgentRunner::resume_in_background`] (or
/// [`AgentRunner::resume`]) then runs it. Refused when the trace is not a plan.
pub async fn prepare_run(runner: &AgentRunner, trace_id: &str) -> Result<(), PlanError> {
    let store = runner.store().as_ref();
    check_is_plan(store, trace_id).await?;
    let profile = runner.options().agent.clone();
    let executing = TraceUpdate {
        agent_type: Some(profile.filter(|name| name != DEFAULT)),
        // The plan is carried out under the executing runner's limits, not the planner's.
        limits: Some(Some(runner.spec().limits.stored())),
        ..TraceUpdate::default()
    };
    let ops = vec![
        WriteOp::UpdateTrace(executing),
        WriteOp::AddMessage(NewMessage::user(EXECUTE_PLAN)),
    ];
    store.batch(trace_id, ops).await?;
    Ok(())
}

/// Replaces the goal tree of `trace_id` by a fresh plan for `text`.
async fn replace(
    store: &dyn TraceStore,
    trace_id: &str,
    text: &str,
) -> Result<GoalTree, PlanError> {
    let items = parse_plan(text)?;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let fresh = replanned(&tree, &items, "The plan is written.");
    store.update_goal_tree(trace_id, fresh.clone()).await?;
    Ok(fresh)
}

/// A fresh plan of `items` for `tree`, keeping its planning goal first (completed with
/// `summary` if it is not yet).
fn replanned(tree: &GoalTree, items: &[agent_goal::PlanItem], summary: &str) -> GoalTree {
    let planning = tree
        .goals()
        .iter()
        .find(|goal| goal.agent.as_deref() == Some(PLANNING_AGENT) && goal.parent_id.is_none());
    match planning {
        Some(goal) => tree.replan_keeping(&goal.id, items, summary, &now_rfc3339()),
        None => tree.replan(items),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agent_execution::{InMemoryTraceStore, NewTrace, Role};
    use agent_goal::GoalStatus;
    use agent_llm::{ScriptedClient, ScriptedErrorKind, ScriptedTurn};
    use agent_tools::ToolRegistry;
    use serde_json::json;

    use super::*;
    use agent_runner::RunnerOptions;
    use agent_runner::agents::PLAN;

    /// A runner of `profile` on a new in-memory store, answering from `turns`.
    fn runner(profile: &str, turns: Vec<ScriptedTurn>) -> (Arc<InMemoryTraceStore>, AgentRunner) {
        let store = Arc::new(InMemoryTraceStore::new());
        let options = RunnerOptions::new("scripted", std::env::temp_dir())
            .with_agent(profile)
            .unwrap();
        let llm = Arc::new(ScriptedClient::new(turns));
        let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
        (store, runner)
    }

    /// A plan-mode runner whose model call fails.
    fn runner_failing() -> (Arc<InMemoryTraceStore>, AgentRunner) {
        let down = ScriptedTurn::error(ScriptedErrorKind::Server, "down");
        runner(PLAN, vec![down])
    }

    fn goal(args: serde_json::Value) -> ScriptedTurn {
        ScriptedTurn::tool_call("goal", args)
    }

    /// Plans "Make notes" from `turns`, which must end in a plan.
    async fn planned(turns: Vec<ScriptedTurn>) -> (Arc<InMemoryTraceStore>, String, GoalTree) {
        let (store, runner) = runner(PLAN, turns);
        match plan(&runner, "Make notes").await.unwrap() {
            PlanOutcome::Planned {
                trace_id,
                goal_tree,
            } => (store, trace_id, goal_tree),
            PlanOutcome::Stopped(outcome) => panic!("planning stopped: {outcome:?}"),
        }
    }

    #[tokio::test]
    async fn a_plan_is_stored_fresh_and_planned() {
        let (store, trace_id, tree) = planned(vec![
            goal(json!({"add": "Write notes, Check notes", "focus": "1.2"})),
            goal(json!({"add": "Read them back"})),
            ScriptedTurn::text("Two goals."),
        ])
        .await;
        let trace = check_is_plan(store.as_ref(), &trace_id).await.unwrap();
        assert_eq!(trace.status, TraceStatus::Planned);
        assert_eq!(trace.agent_type.as_deref(), Some(PLAN));
        assert_eq!(
            store.get_goal_tree(&trace_id).await.unwrap(),
            Some(tree.clone())
        );
        assert_eq!(tree.current_id(), None);
        let planning = &tree.goals()[0];
        assert_eq!(
            (planning.id.as_str(), planning.description.as_str()),
            ("1", PLANNING_GOAL)
        );
        assert_eq!(planning.status, GoalStatus::Completed);
        assert_eq!(planning.summary.as_deref(), Some("Two goals."));
        assert!(
            planning.self_stats.message_count > 0,
            "it holds the planning run"
        );
        let rest = &tree.goals()[1..];
        assert!(rest.iter().all(|g| g.status == GoalStatus::Pending));
        let ids: Vec<&str> = rest.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["5", "6", "7"], "the run's ids are not reused");
        assert!(
            text(store.as_ref(), &trace_id)
                .await
                .unwrap()
                .ends_with("\nWrite notes\nCheck notes\n  Read them back\n")
        );
    }

    #[tokio::test]
    async fn the_planner_reads_the_code_before_it_writes_the_plan() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(
            workspace.path().join("NOTES.md"),
            "The cache lives in src/cache.rs and has no tests.",
        )
        .unwrap();
        let store = Arc::new(InMemoryTraceStore::new());
        let options = RunnerOptions::new("scripted", workspace.path())
            .with_agent(PLAN)
            .unwrap();
        let llm = Arc::new(ScriptedClient::new(vec![
            ScriptedTurn::tool_call("read_file", json!({"path": "NOTES.md"})),
            goal(json!({"add": "Add tests to src/cache.rs, Review the tests @reviewer"})),
            ScriptedTurn::text("NOTES.md says src/cache.rs has no tests."),
        ]));
        let runner = AgentRunner::new(
            store.clone(),
            llm.clone(),
            ToolRegistry::with_builtins(),
            options,
        );
        let PlanOutcome::Planned {
            trace_id,
            goal_tree,
        } = plan(&runner, "Test the cache").await.unwrap()
        else {
            panic!("planning stopped");
        };
        let requests = llm.requests();
        let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
        assert!(
            offered.contains(&"read_file") && offered.contains(&"grep"),
            "{offered:?}"
        );
        assert!(
            !offered.contains(&"write_file") && !offered.contains(&"bash"),
            "{offered:?}"
        );
        let second = serde_json::to_string(&requests[1].messages).unwrap();
        assert!(
            second.contains("has no tests"),
            "the file reached the planner"
        );
        let text = text(store.as_ref(), &trace_id).await.unwrap();
        assert!(
            text.ends_with("\nAdd tests to src/cache.rs\nReview the tests @reviewer\n"),
            "{text}"
        );
        assert_eq!(goal_tree.goals()[2].agent.as_deref(), Some("reviewer"));
        // The reading stays in the trace, under the planning goal.
        let reading = store.get_messages_by_goal(&trace_id, "1").await.unwrap();
        assert!(
            reading
                .iter()
                .any(|m| m.content.text().contains("has no tests")),
            "{reading:?}"
        );
    }

    #[tokio::test]
    async fn a_plan_without_goals_is_refused_and_a_stopped_run_returned() {
        let (store, runner) = runner(PLAN, vec![ScriptedTurn::text("Nothing to plan.")]);
        let error = plan(&runner, "Make notes").await.unwrap_err();
        assert!(
            matches!(error, PlanError::Parse(PlanParseError::NoGoals)),
            "{error}"
        );
        let traces = store.list_traces(&Default::default()).await.unwrap();
        assert_eq!(traces[0].status, TraceStatus::Completed);

        let (_, runner) = runner_failing();
        let PlanOutcome::Stopped(outcome) = plan(&runner, "Make notes").await.unwrap() else {
            panic!("a failed planning run is not a plan");
        };
        assert_eq!(outcome.status, TraceStatus::Failed);
    }

    #[tokio::test]
    async fn edit_replaces_the_goals_of_a_plan_only() {
        let (store, trace_id, old) = planned(vec![
            goal(json!({"add": "Write notes"})),
            ScriptedTurn::text("One goal."),
        ])
        .await;
        let tree = edit(store.as_ref(), &trace_id, "Write\n  Draft\nReview\n")
            .await
            .unwrap();
        assert_eq!(tree.mission(), old.mission());
        assert_eq!(
            tree.goals()[0],
            old.goals()[0],
            "the planning goal stays as it was"
        );
        assert_eq!(tree.goals()[1].id, "4");
        assert_eq!(tree.display_number("5").as_deref(), Some("2.1"));
        assert_eq!(
            store.get_goal_tree(&trace_id).await.unwrap(),
            Some(tree.clone())
        );

        let bad = edit(store.as_ref(), &trace_id, "A\n    B")
            .await
            .unwrap_err();
        assert_eq!(
            bad.to_string(),
            "line 2: indented more than one level below the goal above it"
        );
        assert_eq!(store.get_goal_tree(&trace_id).await.unwrap(), Some(tree));

        let running = store.create_trace(NewTrace::agent("task")).await.unwrap();
        let refused = edit(store.as_ref(), &running.trace_id, "A")
            .await
            .unwrap_err();
        assert!(matches!(
            refused,
            PlanError::NotAPlan {
                status: TraceStatus::Running,
                ..
            }
        ));
        let missing = check_is_plan(store.as_ref(), "no-such-trace")
            .await
            .unwrap_err();
        assert_eq!(missing.to_string(), "there is no trace no-such-trace");
    }

    #[tokio::test]
    async fn a_template_loads_into_a_new_trace_and_a_plan_is_prepared_to_run() {
        let (store, runner) = runner(DEFAULT, Vec::new());
        let trace_id = runner.create("Make notes again").await.unwrap();
        let tree = load_into(store.as_ref(), &trace_id, "# Plan: x\nWrite\nCheck\n")
            .await
            .unwrap();
        assert_eq!(tree.mission(), "Make notes again");
        assert_eq!(tree.goals().len(), 2);

        let (store, trace_id, _) = planned(vec![
            goal(json!({"add": "Write notes"})),
            ScriptedTurn::text("One goal."),
        ])
        .await;
        let executor = AgentRunner::new(
            store.clone(),
            Arc::new(ScriptedClient::new(Vec::new())),
            ToolRegistry::new(),
            RunnerOptions::new("scripted", std::env::temp_dir()),
        );
        prepare_run(&executor, &trace_id).await.unwrap();
        let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
        assert_eq!(trace.agent_type, None, "the default profile runs it now");
        let last = store.get_trace_messages(&trace_id).await.unwrap();
        let last = last.last().unwrap();
        assert_eq!((last.role, last.content.text()), (Role::User, EXECUTE_PLAN));
    }
}
