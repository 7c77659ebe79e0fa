//! The agent runner: the think–act–observe loop over a trace store, a model and a tool registry.
//!
//! [`AgentRunner::run`] creates a trace for a task and loops — build the context, call the
//! model with the tool specs, record the assistant message (tied to the current goal), run its
//! tool calls, record their results — until the model answers without tool calls, a limit is
//! hit, the run is cancelled or an unrecoverable error happens. Every step is recorded in the
//! store, so [`AgentRunner::resume`] continues a stopped trace from where it was.
//!
//! # Sub-agents
//!
//! `explore(branches, background?)` runs one sub-trace per branch side by side and merges what
//! they found into one report; `delegate(task)` runs one sub-trace to completion. Sub-traces are
//! traces of their own (`{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}`, sibling folders on
//! disk) run by the same loop with the tools, limits and depth limit of their agent type
//! ([`SubAgentOptions`], [`AgentTypeConfig`], [`ToolFilter`]): by default explore branches get
//! read-only tools and cannot explore again, delegates get every tool.
//!
//! - **Statistics.** A trace's totals (`total_messages`, `total_tokens`, `total_cost`) count its
//!   own messages only, so adding up traces never counts anything twice, and `max_cost` limits
//!   each trace's own spending (a sub-trace is bounded by its agent type's limits). The work of
//!   sub-traces is visible on the parent in three places: each `sub_trace_completed` event
//!   carries the sub-trace's totals; the tool message of the `explore` / `delegate` call has
//!   metadata `sub_traces` (`[{trace_id, status, stats}]`) and `sub_trace_stats` (their sum),
//!   and its text states them; [`stats_with_sub_traces`] adds a trace and all its descendants up.
//! - **Cancel.** Sub-traces run under child tokens of the run's token: cancelling the run
//!   cancels them, and each records `cancelled`.
//! - **Resume.** A crash or a cancel in the middle of an `explore` or `delegate` call leaves the
//!   call without a result. Resuming the trace finishes the call before the next model call:
//!   branches that completed or failed keep their outcome, unfinished ones resume where they
//!   stopped, missing ones are created, and the merge is recorded as if nothing had happened.
//!   Other interrupted calls get an "interrupted" result as before.

mod act;
pub mod agents;
pub mod approval;
pub mod context;
mod delegate;
mod explore;
mod goal_tools;
pub mod guard;
mod outcome;
pub mod plan;
pub mod profiles;
mod resume;
mod step;
mod stuck;
mod subagent_tools;
mod subagents;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_llm::{LlmClient, LlmError, PriceTable};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

pub use agents::{
    AgentTypeConfig, ApprovalPolicy, ProfileOrigin, RiskLimit, SubAgentOptions, ToolFilter,
};
pub use approval::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
pub use context::{CompactionStrategy, ContextBudget};
pub use goal_tools::{
    GoalTool, MAX_GOAL_TEXT_CHARS, MAX_GOALS_PER_CALL, MAX_PLAN_GOALS, ReadProgressTool,
};
pub use guard::LoopGuard;
pub use outcome::stats_with_sub_traces;
pub use plan::{PlanError, PlanOutcome};
pub use profiles::UnknownProfile;
pub use step::{COMPACTION_PROMPT, USAGE_KEY};

use agent_execution::event::{Event, EventKind};
use agent_execution::feed::{EventStream, watch};
use agent_execution::store::{StoreError, TraceStore};
use agent_execution::trace::{TraceStats, TraceStatus};
use agent_tools::{ToolLimits, ToolRegistry};
use subagent_tools::{DelegateTool, ExploreTool};
use subagents::{Access, SubAgents};

/// The system prompt used when none is configured. The plan is appended after it.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a capable software agent working in a \
workspace through tools. Keep a plan with the `goal` tool: add goals (`add`), focus one \
(`focus`) before working on it, finish it with a summary (`done`) or give it up with a reason \
(`abandon`). When a goal is finished its messages leave your context and only its summary \
stays, so write summaries that carry what later goals need (file names, decisions, results). \
Use the file and shell tools to do the work. When the task is complete, answer with a final \
message and no tool calls.";

/// Limits that end a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    /// Model calls per run (per `run` or `resume` invocation).
    pub max_iterations: u32,
    /// Total cost of the trace in US dollars; the run stops once it is reached.
    pub max_cost: Option<f64>,
    /// How long one model call may take, retries included.
    pub llm_timeout: Duration,
    /// Tool calls run per model turn: the calls of a turn past this many are answered with an
    /// error without running, so one runaway turn cannot start hundreds of commands.
    pub max_tool_calls_per_turn: usize,
    /// When a repeating agent is warned and stopped (see [`guard`]).
    pub loop_guard: LoopGuard,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            max_cost: None,
            llm_timeout: Duration::from_secs(600),
            max_tool_calls_per_turn: 64,
            loop_guard: LoopGuard::default(),
        }
    }
}

/// How a runner behaves: model, prompt, workspace, limits, compaction and approvals.
#[derive(Clone)]
pub struct RunnerOptions {
    /// The model name sent to the provider.
    pub model: String,
    /// The system prompt; the plan is appended to it on every call.
    pub system_prompt: String,
    /// The folder the tools work in.
    pub workspace: PathBuf,
    /// Limits that end a run.
    pub limits: RunLimits,
    /// Output caps and the per-tool timeout.
    pub tool_limits: ToolLimits,
    /// The model's context window; `None` asks the client ([`LlmClient::model_info`]).
    pub context_window: Option<usize>,
    /// Which compaction steps build the context.
    pub strategy: CompactionStrategy,
    /// Prices used to cost each model call.
    pub prices: Arc<PriceTable>,
    /// Who approves risky tool calls; `None` runs them without asking.
    pub approval: Option<Arc<dyn ApprovalHandler>>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Completion token cap per call.
    pub max_tokens: Option<u32>,
    /// How `explore` and `delegate` run their sub-traces, and every agent profile.
    pub sub_agents: SubAgentOptions,
    /// The profile main traces run as (see [`RunnerOptions::with_agent`]); `None` runs these
    /// options as they are.
    pub agent: Option<String>,
    /// Model clients by profile name, for profiles whose provider is not the runner's; the
    /// others use the runner's client.
    pub clients: BTreeMap<String, Arc<dyn LlmClient>>,
}

impl RunnerOptions {
    /// Options with defaults for `model`, working in `workspace`.
    pub fn new(model: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            workspace: workspace.into(),
            limits: RunLimits::default(),
            tool_limits: ToolLimits::default(),
            context_window: None,
            strategy: CompactionStrategy::default(),
            prices: Arc::new(PriceTable::default()),
            approval: None,
            temperature: None,
            max_tokens: None,
            sub_agents: SubAgentOptions::default(),
            agent: None,
            clients: BTreeMap::new(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The trace that recorded it.
    pub trace_id: String,
    /// The trace's final status.
    pub status: TraceStatus,
    /// The model's final answer, when it gave one.
    pub response: Option<String>,
    /// Why it stopped, when it did not complete: `max_iterations: …`, `max_cost: …`,
    /// `cancelled: …`, or the error.
    pub error: Option<String>,
    /// Model calls made by this invocation.
    pub iterations: u32,
    /// The trace's totals.
    pub stats: TraceStats,
}

/// Errors that keep a run from starting or from recording what it did.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store refused or failed a read or write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The workspace folder is missing or unreadable.
    #[error("workspace {path}: {message}")]
    Workspace {
        /// The configured workspace.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The trace has already completed; there is nothing to resume.
    #[error("trace {trace_id} has already completed; start a new run instead")]
    AlreadyCompleted {
        /// The trace.
        trace_id: String,
    },
    /// The model failed in a way the loop could not recover from.
    #[error("model error: {0}")]
    Llm(#[from] LlmError),
}

/// A run going on in the background.
pub struct RunHandle {
    /// The trace that records it.
    pub trace_id: String,
    cancel: CancellationToken,
    join: tokio::task::JoinHandle<Result<RunOutcome, RunError>>,
    store: Arc<dyn TraceStore>,
    since_event_id: u64,
}

impl RunHandle {
    /// Asks the run to stop: the model call or tools in flight are cancelled and the trace ends
    /// `cancelled`.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The run's cancellation token, to cancel it from elsewhere.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The events of this run as they are recorded, ending with its `trace_completed`: for a
    /// new trace every event from the first, for a resumed one those after the resume began.
    pub fn events(&self) -> EventStream {
        let events = watch(self.store.clone(), &self.trace_id, self.since_event_id);
        // Ends right after `trace_completed`, without waiting for an event that will not come.
        futures::stream::unfold((events, false), |(mut events, finished)| async move {
            if finished {
                return None;
            }
            let item = events.next().await?;
            let completed =
                matches!(&item, Ok(e) if matches!(e.kind, EventKind::TraceCompleted { .. }));
            Some((item, (events, completed)))
        })
        .boxed()
    }

    /// Waits for the run to end.
    pub async fn wait(self) -> Result<RunOutcome, RunError> {
        match self.join.await {
            Ok(result) => result,
            Err(join_error) => Err(RunError::Workspace {
                path: PathBuf::new(),
                message: format!("the run's task ended abnormally: {join_error}"),
            }),
        }
    }
}

/// The most sub-trace levels followed up from a trace to find its main trace.
const MAX_LINEAGE: usize = 64;

/// The agent types a trace runs under, read from the store by following parent links up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedAgents {
    /// The agent types of the sub-traces from the trace itself up to the main trace's child
    /// (nearest first); empty for a main trace.
    pub sub_traces: Vec<String>,
    /// The profile the main trace recorded (`None`: the default one, or no main trace found).
    pub main: Option<String>,
}

/// The agent types `trace_id` runs under: its own and its ancestors' up to the main trace, and
/// the main trace's recorded profile. Bounded, so that damaged parent links cannot loop
/// forever; a missing trace ends the walk.
pub async fn recorded_agents(
    store: &dyn TraceStore,
    trace_id: &str,
) -> Result<RecordedAgents, StoreError> {
    let mut recorded = RecordedAgents::default();
    let mut next = Some(trace_id.to_owned());
    for _ in 0..MAX_LINEAGE {
        let Some(id) = next.take() else {
            break;
        };
        let Some(trace) = store.get_trace(&id).await? else {
            break;
        };
        match trace.parent_trace_id {
            None => recorded.main = trace.agent_type,
            Some(parent) => {
                recorded.sub_traces.extend(trace.agent_type);
                next = Some(parent);
            }
        }
    }
    Ok(recorded)
}

/// Runs tasks: one loop per trace over a store, a model and tools.
#[derive(Clone)]
pub struct AgentRunner {
    store: Arc<dyn TraceStore>,
    llm: Arc<dyn LlmClient>,
    tools: Arc<ToolRegistry>,
    options: RunnerOptions,
    agents: Arc<SubAgents>,
}

impl AgentRunner {
    /// A runner for main traces. The `goal` and `read_progress` tools are added to `tools`
    /// when missing, and so are `explore` and `delegate` when their agent types are configured
    /// (`options.sub_agents`). A tool of `tools` with one of these names is used instead. With
    /// `options.agent`, the runner is that profile's: its tools, prompt and approval policy.
    pub fn new(
        store: Arc<dyn TraceStore>,
        llm: Arc<dyn LlmClient>,
        tools: ToolRegistry,
        options: RunnerOptions,
    ) -> Self {
        let lineage = options.agent.iter().cloned().collect();
        Self::build(store, llm, Arc::new(tools), options, lineage)
    }

    /// The runner of traces at the end of `lineage` (agent types from the main trace down):
    /// the tools its agent type admits, its limits, prompt, model and approval policy, and the
    /// sub-agent tools its depth allows. `llm` is the main runner's client.
    fn build(
        store: Arc<dyn TraceStore>,
        llm: Arc<dyn LlmClient>,
        base_tools: Arc<ToolRegistry>,
        root: RunnerOptions,
        lineage: Vec<String>,
    ) -> Self {
        let own_name = lineage.last().cloned();
        let own = own_name
            .as_ref()
            .and_then(|t| root.sub_agents.agent_types.get(t))
            .cloned();
        let is_main = lineage.len() == 1 && root.agent == own_name;
        let own_llm = own_name
            .as_ref()
            .and_then(|name| root.clients.get(name))
            .cloned()
            .unwrap_or_else(|| llm.clone());
        let agent_name = own_name.unwrap_or_else(|| agents::DEFAULT.to_owned());
        let mut options = root.clone();
        let mut tools = ToolRegistry::new();
        match &own {
            Some(config) => {
                profiles::apply_profile(&mut options, &agent_name, config, is_main);
                for name in base_tools.names() {
                    if let Some(tool) = base_tools.get(&name)
                        && config.tools.admits(&name, tool.risk())
                    {
                        // Names come from a registry, so they are valid and unique.
                        let _ = tools.register(tool.clone());
                    }
                }
            }
            None => tools = (*base_tools).clone(),
        }
        if tools.get("goal").is_none() {
            // Registration only fails for a duplicate name, which was just ruled out.
            let _ = tools.register(Arc::new(GoalTool::new(store.clone())));
        }
        if tools.get("read_progress").is_none() {
            let _ = tools.register(Arc::new(ReadProgressTool::new(store.clone())));
        }
        let agents = Arc::new(SubAgents::new(
            (store.clone(), llm.clone()),
            base_tools,
            root,
            options.clone(),
            lineage,
            &tools,
        ));
        if agents.access(agents::EXPLORE) == Some(&Access::Own) {
            let _ = tools.register(Arc::new(ExploreTool {
                agents: agents.clone(),
            }));
        }
        if agents.access(agents::DELEGATE) == Some(&Access::Own) {
            let _ = tools.register(Arc::new(DelegateTool {
                agents: agents.clone(),
            }));
        }
        let vars = profiles::PromptVars {
            workspace: options.workspace.display().to_string(),
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            tools: tools.names().join(", "),
            agent: agent_name,
            model: options.model.clone(),
        };
        options.system_prompt = profiles::render_prompt(&options.system_prompt, &vars);
        Self {
            store,
            llm: own_llm,
            tools: Arc::new(tools),
            options,
            agents,
        }
    }

    /// The runner for an existing trace. A main trace runs as this runner's profile
    /// (`options.agent`), or when it has none as the profile the trace recorded; a sub-trace runs
    /// as its agent type, at its depth, under that main profile.
    async fn runner_for_trace(&self, trace_id: &str) -> Result<Self, RunError> {
        let recorded = recorded_agents(self.store.as_ref(), trace_id).await?;
        let mut lineage = recorded.sub_traces;
        let main = self.options.agent.clone().or(recorded.main);
        if lineage.is_empty() && main == self.options.agent {
            return Ok(self.clone());
        }
        lineage.extend(main);
        lineage.reverse();
        Ok(Self::build(
            self.store.clone(),
            self.agents.llm.clone(),
            self.agents.base_tools(),
            self.agents.root().clone(),
            lineage,
        ))
    }

    /// The names of the tools this runner offers the model, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.names()
    }

    /// The store this runner records into.
    pub fn store(&self) -> &Arc<dyn TraceStore> {
        &self.store
    }

    /// The options this runner was built with.
    pub fn options(&self) -> &RunnerOptions {
        &self.options
    }

    /// Runs `task` in a new trace until it ends.
    pub async fn run(&self, task: &str) -> Result<RunOutcome, RunError> {
        self.start(task).await?.wait().await
    }

    /// Creates the trace for `task` and runs it in the background.
    pub async fn start(&self, task: &str) -> Result<RunHandle, RunError> {
        let trace_id = step::create_trace(self, task).await?;
        Ok(self.spawn(trace_id, CancellationToken::new(), 0))
    }

    /// Continues a stopped trace (crash, limit, cancel, failure) under the same id: calls left
    /// without a result get an "interrupted" result first, then the loop goes on.
    pub async fn resume(&self, trace_id: &str) -> Result<RunOutcome, RunError> {
        self.resume_in_background(trace_id, CancellationToken::new())
            .await?
            .wait()
            .await
    }

    /// Like [`resume`](Self::resume), but returns at once with a handle to the run.
    ///
    /// A sub-trace resumes with the tools and limits of its agent type; an interrupted
    /// `explore` or `delegate` call is finished first (see the module docs).
    pub async fn resume_in_background(
        &self,
        trace_id: &str,
        cancel: CancellationToken,
    ) -> Result<RunHandle, RunError> {
        let since = self
            .store
            .get_events(trace_id, 0)
            .await?
            .last()
            .map_or(0, |e| e.event_id);
        let runner = self.runner_for_trace(trace_id).await?;
        resume::prepare_resume(&runner, trace_id).await?;
        Ok(runner.spawn(trace_id.to_owned(), cancel, since))
    }

    /// Runs an existing trace (created by [`create`](Self::create) or prepared for resume) with a
    /// given cancellation token, in the calling task.
    pub async fn drive(
        &self,
        trace_id: &str,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        step::run_loop(self, trace_id, cancel).await
    }

    /// Creates a trace for `task` without running it; [`drive`](Self::drive) runs it.
    pub async fn create(&self, task: &str) -> Result<String, RunError> {
        step::create_trace(self, task).await
    }

    fn spawn(&self, trace_id: String, cancel: CancellationToken, since_event_id: u64) -> RunHandle {
        let runner = self.clone();
        let id = trace_id.clone();
        let token = cancel.clone();
        let join = tokio::spawn(async move { runner.drive(&id, token).await });
        RunHandle {
            trace_id,
            cancel,
            join,
            store: self.store.clone(),
            since_event_id,
        }
    }
}

/// Events of a trace as they are recorded; re-exported for callers of the runner.
pub type RunEvent = Event;
