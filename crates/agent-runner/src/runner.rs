//! [`AgentRunner`]: the face of the crate — runs and resumes traces in the background — and
//! the [`Driver`] through which sub-traces run the same loop.

use std::sync::Arc;

use agent_execution::{Event, EventKind, EventStream, TraceOutcome, TraceStore, watch};
use agent_llm::LlmClient;
use agent_llm::notice::SourcedNotice;
use agent_tools::ToolRegistry;
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::engine::{Driver, Engine, Start};
use crate::error::RunError;
use crate::late::run_answering_late;
use crate::new_trace::create_trace;
use crate::options::RunnerOptions;
use crate::resume::{prepare_continue, prepare_resume};
use crate::spec::AgentSpec;
use crate::step::run_loop;
use agent_execution::message::UserInput;
use agent_execution::model_choice::record_model;
use agent_execution::outcome::RunOutcome;
use agent_execution::recorded_agents;

/// A run going on in the background.
pub struct RunHandle {
    /// The trace that records it.
    pub trace_id: String,
    cancel: CancellationToken,
    join: tokio::task::JoinHandle<Result<RunOutcome, RunError>>,
    store: Arc<dyn TraceStore>,
    since_event_id: u64,
    engine: Arc<Engine>,
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

    /// Sends the run a message: the model sees it, as the newest user message, before its next
    /// call — or, when the run is about to end, answers it before the run ends. False when the
    /// run has ended (continue the trace with the message instead).
    pub fn send(&self, message: &str) -> bool {
        self.engine.inbox.send(&self.trace_id, message)
    }

    /// A sender of messages to this run, to keep where the handle cannot go.
    pub fn sender(&self) -> RunSender {
        RunSender {
            trace_id: self.trace_id.clone(),
            engine: self.engine.clone(),
        }
    }

    /// Waits for the run to end.
    pub async fn wait(self) -> Result<RunOutcome, RunError> {
        match self.join.await {
            Ok(result) => result,
            Err(join_error) => Err(RunError::Panicked {
                message: join_error.to_string(),
            }),
        }
    }
}

/// Sends messages to a run going on (see [`RunHandle::send`]); cheap to clone.
#[derive(Clone)]
pub struct RunSender {
    trace_id: String,
    engine: Arc<Engine>,
}

impl RunSender {
    /// Queues `message` for the run's next model call; false when the run has ended.
    pub fn send(&self, message: &str) -> bool {
        self.engine.inbox.send(&self.trace_id, message)
    }
}

impl std::fmt::Debug for RunSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSender")
            .field("trace_id", &self.trace_id)
            .finish()
    }
}

/// Runs tasks: one loop per trace over a store, a model and tools.
#[derive(Clone)]
pub struct AgentRunner {
    engine: Arc<Engine>,
    /// The agent of main traces; rebuilt when the tools or the model are replaced (clones
    /// share it).
    agent: Arc<std::sync::RwLock<Agent>>,
}

impl AgentRunner {
    /// A runner for main traces. The `goal` and `read_progress` tools are added to `tools`
    /// when missing, and so are `explore` and `delegate` when sub-agents are enabled
    /// (`options.sub_agents`) and their agent types configured; a tool of `tools` with one of
    /// these names is used instead. With `options.agent`, the runner is that profile's: its
    /// tools, prompt and approval policy. Risky tools run only as `options.approval` says.
    pub fn new(
        store: Arc<dyn TraceStore>,
        llm: Arc<dyn LlmClient>,
        tools: ToolRegistry,
        options: RunnerOptions,
    ) -> Self {
        let lineage = options.agent.iter().cloned().collect();
        let engine = Arc::new(Engine::new(
            store,
            llm,
            Arc::new(tools),
            options,
            Arc::new(LoopDriver),
        ));
        let agent = Arc::new(std::sync::RwLock::new(Agent::new(engine.clone(), lineage)));
        Self { engine, agent }
    }

    /// The agent of main traces, as it is now.
    fn agent(&self) -> Agent {
        self.agent
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the tools the runner was given (e.g. after an MCP server said its tool list
    /// changed): runs started from now on — the next turn of a trace included — offer the new
    /// ones; a run going on keeps the tools it started with.
    pub fn replace_tools(&self, tools: ToolRegistry) {
        self.engine.set_base_tools(tools);
        self.rebuild_agent();
    }

    /// Has the next runs ask `model` (main traces, and profiles naming no model of their own;
    /// a run going on keeps its model), and records it for the later runs of `trace_id`.
    ///
    /// # Errors
    ///
    /// The store could not record it.
    pub async fn switch_model(&self, model: &str, trace_id: Option<&str>) -> Result<(), RunError> {
        self.engine.set_model(model);
        self.rebuild_agent();
        if let Some(trace_id) = trace_id {
            record_model(self.engine.store.as_ref(), trace_id, model).await?;
        }
        Ok(())
    }

    fn rebuild_agent(&self) {
        let lineage = self.engine.root.agent.iter().cloned().collect();
        *self
            .agent
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Agent::new(self.engine.clone(), lineage);
    }

    /// The agent of an existing trace. A main trace runs as this runner's profile
    /// (`options.agent`), or when it has none as the profile the trace recorded, under the limits
    /// it stored ([`RunLimits::for_trace`](crate::RunLimits::for_trace)); a sub-trace runs as its
    /// agent type, at its depth, under that main profile. Every later run of a trace gets its
    /// agent here.
    async fn agent_for_trace(&self, trace_id: &str) -> Result<Agent, RunError> {
        let recorded = recorded_agents(self.engine.store.as_ref(), trace_id).await?;
        let mut lineage = recorded.sub_traces;
        let own = self.engine.root.agent.clone();
        let main = own.clone().or(recorded.main);
        if lineage.is_empty() {
            // A main trace runs under the limits it stored unless the caller overrode them.
            let root = &self.engine.root;
            let limits = root
                .limits
                .for_trace(recorded.main_limits.as_ref(), &root.overrides);
            let agent = if main == own {
                self.agent()
            } else {
                Agent::new(self.engine.clone(), main.into_iter().collect())
            };
            return Ok(agent.with_limits(limits));
        }
        lineage.extend(main);
        lineage.reverse();
        Ok(Agent::new(self.engine.clone(), lineage))
    }

    /// The names of the tools this runner offers the model, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.agent().spec.tools.clone()
    }

    /// The notices of the model calls of this runner's runs from now on (a retry, a rate
    /// limit), each with the trace whose call it was as its source.
    pub fn notices(&self) -> tokio::sync::broadcast::Receiver<SourcedNotice> {
        self.engine.notices.subscribe()
    }

    /// The store this runner records into.
    pub fn store(&self) -> &Arc<dyn TraceStore> {
        &self.engine.store
    }

    /// The options this runner was built with.
    pub fn options(&self) -> &RunnerOptions {
        &self.engine.root
    }

    /// The settings main traces run with: the options with the runner's profile applied.
    pub fn spec(&self) -> Arc<AgentSpec> {
        self.agent().spec
    }

    /// Runs `task` in a new trace until it ends.
    pub async fn run(&self, task: &str) -> Result<RunOutcome, RunError> {
        self.start(task).await?.wait().await
    }

    /// Creates the trace for `task` and runs it in the background.
    pub async fn start(&self, task: impl Into<UserInput<'_>>) -> Result<RunHandle, RunError> {
        let agent = self.agent();
        let trace_id = create_trace(&agent, task.into(), None).await?;
        Ok(self.spawn(agent, trace_id, CancellationToken::new(), 0))
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
    /// `explore` or `delegate` call is finished first (see the crate docs).
    pub async fn resume_in_background(
        &self,
        trace_id: &str,
        cancel: CancellationToken,
    ) -> Result<RunHandle, RunError> {
        let since = self
            .engine
            .store
            .get_events(trace_id, 0)
            .await?
            .last()
            .map_or(0, |e| e.event_id);
        let agent = self.agent_for_trace(trace_id).await?;
        prepare_resume(&agent, trace_id).await?;
        Ok(self.spawn(agent, trace_id.to_owned(), cancel, since))
    }

    /// Continues an ended trace (completed, failed, stopped by a limit or cancelled) with a new
    /// user message, under the same id: the goal tree, its summaries and the compacted history
    /// carry over, and `message` is the newest user message of the next model call.
    pub async fn continue_trace(
        &self,
        trace_id: &str,
        message: &str,
    ) -> Result<RunOutcome, RunError> {
        self.continue_in_background(trace_id, message, CancellationToken::new())
            .await?
            .wait()
            .await
    }

    /// Like [`continue_trace`](Self::continue_trace), but returns at once with a handle to the
    /// run. A trace whose run is going on in this process is refused ([`RunError::Running`]):
    /// [`send`](Self::send) the message to it instead.
    pub async fn continue_in_background(
        &self,
        trace_id: &str,
        message: impl Into<UserInput<'_>>,
        cancel: CancellationToken,
    ) -> Result<RunHandle, RunError> {
        let message = message.into();
        if message.text.trim().is_empty() {
            return Err(RunError::EmptyMessage);
        }
        if self.is_running(trace_id) {
            return Err(RunError::Running {
                trace_id: trace_id.to_owned(),
            });
        }
        let since = self
            .engine
            .store
            .get_events(trace_id, 0)
            .await?
            .last()
            .map_or(0, |e| e.event_id);
        let agent = self.agent_for_trace(trace_id).await?;
        prepare_continue(&agent, trace_id, message).await?;
        Ok(self.spawn(agent, trace_id.to_owned(), cancel, since))
    }

    /// Summarises the conversation of an idle trace now, as the loop does when the context
    /// nears the model's window: the summary is stored as a message that the next turn's view
    /// starts from (the goal tree and the messages stay in the trace). Returns whether a summary
    /// was stored. A trace running in this process is refused ([`RunError::Running`]).
    pub async fn compact(
        &self,
        trace_id: &str,
        cancel: &CancellationToken,
    ) -> Result<bool, RunError> {
        if self.is_running(trace_id) {
            return Err(RunError::Running {
                trace_id: trace_id.to_owned(),
            });
        }
        let agent = self.agent_for_trace(trace_id).await?;
        crate::compact_now::compact_now(&agent, trace_id, cancel).await
    }

    /// Sends a message to the run of `trace_id` going on in this process (see
    /// [`RunHandle::send`]); false when there is none.
    pub fn send(&self, trace_id: &str, message: &str) -> bool {
        self.engine.inbox.send(trace_id, message)
    }

    /// Whether a run of `trace_id` started by this runner is going on.
    pub fn is_running(&self, trace_id: &str) -> bool {
        self.engine.inbox.is_open(trace_id)
    }

    /// Runs an existing trace (created by [`create`](Self::create) or prepared for resume) with a
    /// given cancellation token, in the calling task.
    pub async fn drive(
        &self,
        trace_id: &str,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        run_loop(&self.agent(), trace_id, cancel).await
    }

    /// Creates a trace for `task` without running it; [`drive`](Self::drive) runs it.
    /// Its pictures are refused ([`RunError::NoVision`]) for a model that takes none, before
    /// anything is stored.
    pub async fn create(&self, task: impl Into<UserInput<'_>>) -> Result<String, RunError> {
        create_trace(&self.agent(), task.into(), None).await
    }

    /// Like [`create`](Self::create), under an id chosen beforehand (e.g. from
    /// [`agent_execution::ids::new_trace_id`] when a session is named before its first message).
    /// The store refuses an id that is malformed or taken.
    pub async fn create_as(
        &self,
        trace_id: &str,
        task: impl Into<UserInput<'_>>,
    ) -> Result<String, RunError> {
        create_trace(&self.agent(), task.into(), Some(trace_id)).await
    }

    fn spawn(
        &self,
        agent: Agent,
        trace_id: String,
        cancel: CancellationToken,
        since_event_id: u64,
    ) -> RunHandle {
        let id = trace_id.clone();
        let token = cancel.clone();
        let owned = self.engine.inbox.open(&trace_id);
        let notices = self.engine.notices.sink(&trace_id);
        let join = tokio::spawn(agent_llm::notice::watching(notices, async move {
            if owned {
                run_answering_late(&agent, &id, token).await
            } else {
                run_loop(&agent, &id, token).await
            }
        }));
        RunHandle {
            trace_id,
            cancel,
            join,
            store: self.engine.store.clone(),
            since_event_id,
            engine: self.engine.clone(),
        }
    }
}

/// Events of a trace as they are recorded; re-exported for callers of the runner.
pub type RunEvent = Event;

/// Runs sub-traces with the loop, for the engine.
struct LoopDriver;

impl Driver for LoopDriver {
    fn spawn(
        &self,
        engine: Arc<Engine>,
        lineage: Vec<String>,
        trace_id: String,
        start: Start,
        cancel: CancellationToken,
        permits: Option<Arc<Semaphore>>,
    ) -> JoinHandle<()> {
        let notices = engine.notices.sink(&trace_id);
        let agent = Agent::for_trace(engine, lineage, &trace_id);
        tokio::spawn(agent_llm::notice::watching(notices, async move {
            let _permit = match permits {
                Some(permits) => tokio::select! {
                    permit = permits.acquire_owned() => permit.ok(),
                    () = cancel.cancelled() => None,
                },
                None => None,
            };
            let result = match start {
                Start::Finished => return,
                Start::Fresh => run_loop(&agent, &trace_id, cancel).await,
                Start::Resume => match prepare_resume(&agent, &trace_id).await {
                    Ok(()) => run_loop(&agent, &trace_id, cancel).await,
                    Err(error) => Err(error),
                },
            };
            if let Err(error) = result {
                record_failure(agent.store(), &trace_id, &error).await;
            }
        }))
    }
}

/// Marks a sub-trace whose run could not go on as failed, unless it already ended.
async fn record_failure(store: &dyn TraceStore, trace_id: &str, error: &RunError) {
    let finished = store
        .get_trace(trace_id)
        .await
        .ok()
        .flatten()
        .is_some_and(|trace| trace.status.is_finished());
    if !finished {
        // The store may be what failed; the report then shows the trace as it was left.
        let _ = store
            .finish_trace(trace_id, TraceOutcome::failed(error.to_string()))
            .await;
    }
}
