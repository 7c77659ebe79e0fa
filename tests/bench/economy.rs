//! Context economy: one long scripted task (goals of many ~2 KB tool outputs, one goal abandoned
//! and redone, one exploration with two branches) run once per compaction strategy, measuring
//! the estimated prompt tokens of every model call, and checking that the last request still
//! carries the summary of every goal that finished.

use std::sync::Arc;

use agent_e2e::{EmitTool, long_task};
use agent_execution::{InMemoryTraceStore, TraceStore};
use agent_goal::{GoalStatus, GoalType};
use agent_llm::LlmClient;
use agent_runner::context::render_transcript;
use agent_runner::{AgentRunner, CompactionStrategy, RunnerOptions};
use agent_tools::ToolRegistry;
use anyhow::{Context, Result};

use crate::check_completed;

/// Bytes of each `emit` output.
pub(crate) const OUTPUT_BYTES: usize = 2_000;

/// The task of the long task's main line (its branches have tasks of their own).
pub(crate) const LONG_TASK: &str = "A long task in many parts";

/// Runs the long task's main line on `llm` (its scripted model, or a wrapper of it) with the
/// `emit` tool, an in-memory store and the options `configure` sets; fails unless the run
/// completes. Returns the store and the trace id.
pub(crate) async fn run_long_task(
    llm: Arc<dyn LlmClient>,
    configure: impl FnOnce(&mut RunnerOptions),
) -> Result<(Arc<InMemoryTraceStore>, String)> {
    let workspace = tempfile::tempdir()?;
    let mut tools = ToolRegistry::new();
    // The registry is new, so the name cannot clash.
    let _ = tools.register(Arc::new(EmitTool {
        bytes: OUTPUT_BYTES,
    }));
    let mut options = RunnerOptions::new("bench", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.max_iterations = 10_000;
    configure(&mut options);
    let store = Arc::new(InMemoryTraceStore::new());
    let runner = AgentRunner::new(store.clone(), llm, tools, options);
    let outcome = runner.run(LONG_TASK).await?;
    check_completed(outcome.status)?;
    Ok((store, outcome.trace_id))
}

/// The strategies compared, with their names in the report.
pub(crate) const STRATEGIES: [(&str, CompactionStrategy); 3] = [
    (
        "goal compaction + prune (ours)",
        CompactionStrategy::GoalsAndPrune,
    ),
    (
        "prune only (OpenCode's method)",
        CompactionStrategy::PruneOnly,
    ),
    ("no compaction", CompactionStrategy::Nothing),
];

/// What one strategy cost on the task.
pub(crate) struct EconomyRow {
    /// The strategy's name.
    pub(crate) name: &'static str,
    /// Estimated prompt tokens of each main-line model call, in order.
    pub(crate) main: Vec<usize>,
    /// Estimated prompt tokens of each explore branch's model calls.
    pub(crate) branches: Vec<Vec<usize>>,
    /// Goals of the plan that finished (completed or abandoned) with a summary.
    pub(crate) finished: usize,
    /// The summaries of finished goals the last request does not contain.
    pub(crate) missing: Vec<String>,
}

impl EconomyRow {
    /// Total prompt tokens of the main line.
    pub(crate) fn total(&self) -> usize {
        self.main.iter().sum()
    }

    /// The largest prompt of the main line.
    pub(crate) fn peak(&self) -> usize {
        self.main.iter().copied().max().unwrap_or(0)
    }

    /// Total prompt tokens of the explore branches.
    pub(crate) fn branch_total(&self) -> usize {
        self.branches.iter().flatten().sum()
    }
}

/// Runs the task with every strategy.
pub(crate) async fn measure(goals: usize, calls: usize) -> Result<Vec<EconomyRow>> {
    let mut rows = Vec::new();
    for (name, strategy) in STRATEGIES {
        eprintln!("agent-bench: context economy, {name}");
        rows.push(run(name, strategy, goals, calls).await?);
    }
    Ok(rows)
}

async fn run(
    name: &'static str,
    strategy: CompactionStrategy,
    goals: usize,
    calls: usize,
) -> Result<EconomyRow> {
    let task = long_task(goals, calls);
    let llm = Arc::new(task.model(1_000_000_000));
    let (store, trace_id) =
        run_long_task(llm.clone(), |options| options.strategy = strategy).await?;

    // Retention: the summary of every finished goal of the plan is in the last request.
    let tree = store
        .get_goal_tree(&trace_id)
        .await?
        .context("the long task left no goal tree")?;
    let last = llm
        .last_request()
        .context("the model recorded no request")?;
    let seen = render_transcript(&last.messages);
    let finished: Vec<String> = tree
        .goals()
        .iter()
        .filter(|g| g.goal_type == GoalType::Normal)
        .filter(|g| matches!(g.status, GoalStatus::Completed | GoalStatus::Abandoned))
        .filter_map(|g| g.summary.clone())
        .collect();
    let missing: Vec<String> = finished
        .iter()
        .filter(|summary| !seen.contains(summary.as_str()))
        .cloned()
        .collect();
    let mut expected = task.summaries.clone();
    expected.sort();
    let mut got = finished.clone();
    got.sort();
    anyhow::ensure!(
        expected == got,
        "the long task finished other goals than scripted: {got:?} instead of {expected:?}"
    );
    Ok(EconomyRow {
        name,
        main: llm.prompt_tokens(),
        branches: (0..task.branches.len())
            .map(|i| llm.route_prompt_tokens(i))
            .collect(),
        finished: finished.len(),
        missing,
    })
}
