//! Sub-agents: how `explore` and `delegate` run sub-traces with the same loop.
//!
//! Each runner has a [`SubAgents`]: what it needs to build the runner of a sub-trace (the store,
//! the model, the tool registry as the caller gave it, the main runner's options) and its
//! *lineage*, the agent types between the main trace and its own traces. A sub-trace's runner
//! gets the tools its agent type's [`ToolFilter`](super::ToolFilter) admits, that type's limits
//! and system prompt, and `explore` / `delegate` only where the depth limits allow them; a call
//! to one that is refused gets an error saying why.
//!
//! Sub-traces run in tasks of their own with child cancellation tokens of the calling run, so
//! cancelling the run cancels them, and a sub-trace always records how it ended even when the
//! call that waited for it is dropped.

use std::collections::HashSet;
use std::sync::Arc;

use agent_llm::{LlmClient, ToolCall};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::agents::{AgentTypeConfig, DELEGATE, EXPLORE};
use super::outcome::{CallOutcome, SubTraceReport, plan_lines};
use super::{AgentRunner, RunError, RunnerOptions, delegate, explore, resume};
use agent_execution::message::NewMessage;
use agent_execution::store::{StoreError, TraceStore};
use agent_execution::trace::{NewTrace, TraceOutcome, TraceStatus};
use agent_tools::{Keep, Risk, ToolContext, ToolRegistry, truncate_output};

/// Whether a runner offers one of the sub-agent tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Access {
    /// The runner's own tool is registered.
    Own,
    /// The tool is not offered; a call gets this reason as its error.
    Refused(String),
    /// The caller registered a tool of that name, which runs like any other tool.
    Foreign,
}

/// What a runner needs to run sub-traces, and which sub-agent tools it offers.
pub(super) struct SubAgents {
    pub(super) store: Arc<dyn TraceStore>,
    pub(super) llm: Arc<dyn LlmClient>,
    /// The tools as the caller gave them, before filters and the runner's own tools.
    base_tools: Arc<ToolRegistry>,
    /// The main runner's options; a sub-trace's runner derives its options from them.
    root: RunnerOptions,
    /// This runner's options.
    pub(super) options: RunnerOptions,
    /// The agent types from the main trace down to this runner's traces.
    lineage: Vec<String>,
    explore: Access,
    delegate: Access,
}

impl SubAgents {
    /// Decides which sub-agent tools a runner of `lineage` offers, given the tools it has.
    pub(super) fn new(
        runner: (Arc<dyn TraceStore>, Arc<dyn LlmClient>),
        base_tools: Arc<ToolRegistry>,
        root: RunnerOptions,
        options: RunnerOptions,
        lineage: Vec<String>,
        tools: &ToolRegistry,
    ) -> Self {
        let access = |name: &str| access(name, &root, &lineage, tools);
        let explore = access(EXPLORE);
        let delegate = access(DELEGATE);
        let (store, llm) = runner;
        Self {
            store,
            llm,
            base_tools,
            root,
            options,
            lineage,
            explore,
            delegate,
        }
    }

    /// The tools as the caller gave them.
    pub(super) fn base_tools(&self) -> Arc<ToolRegistry> {
        self.base_tools.clone()
    }

    /// The main runner's options.
    pub(super) fn root(&self) -> &RunnerOptions {
        &self.root
    }

    /// The sub-agent settings of the main runner.
    pub(super) fn root_sub_agents(&self) -> &super::SubAgentOptions {
        &self.root.sub_agents
    }

    /// The access to the tool `name`, for a sub-agent tool.
    pub(super) fn access(&self, name: &str) -> Option<&Access> {
        match name {
            EXPLORE => Some(&self.explore),
            DELEGATE => Some(&self.delegate),
            _ => None,
        }
    }

    /// True when an unanswered call to `name` is finished on resume rather than answered
    /// "interrupted".
    pub(super) fn resumes(&self, name: &str) -> bool {
        self.access(name) == Some(&Access::Own)
    }

    /// The runner of a sub-trace of `agent_type` spawned by this runner's trace.
    pub(super) fn runner_for(&self, agent_type: &str) -> AgentRunner {
        let mut lineage = self.lineage.clone();
        lineage.push(agent_type.to_owned());
        AgentRunner::build(
            self.store.clone(),
            self.llm.clone(),
            self.base_tools.clone(),
            self.root.clone(),
            lineage,
        )
    }

    /// The configuration of `agent_type`.
    pub(super) fn config(&self, agent_type: &str) -> Option<&AgentTypeConfig> {
        self.root.sub_agents.agent_types.get(agent_type)
    }

    /// The profiles an `explore` or `delegate` call may name, with their configurations.
    pub(super) fn selectable(&self) -> Vec<(&str, &AgentTypeConfig)> {
        self.root
            .sub_agents
            .agent_types
            .iter()
            .filter(|(name, _)| AgentTypeConfig::is_sub_agent(name))
            .map(|(name, config)| (name.as_str(), config))
            .collect()
    }

    /// The profile a call of `tool` (`explore` or `delegate`) runs its sub-traces as: the one
    /// it names, or the tool's own. An error says why the named one cannot run here.
    pub(super) fn profile_for(&self, tool: &str, named: Option<&str>) -> Result<String, String> {
        let Some(name) = named.map(str::trim).filter(|n| !n.is_empty() && *n != tool) else {
            return Ok(tool.to_owned());
        };
        let Some(config) = self
            .config(name)
            .filter(|_| AgentTypeConfig::is_sub_agent(name))
        else {
            let known: Vec<&str> = self.selectable().into_iter().map(|(n, _)| n).collect();
            return Err(format!(
                "there is no agent profile {name:?} for {tool}; choose one of: {}",
                known.join(", ")
            ));
        };
        let depth = self.lineage.iter().filter(|t| *t == name).count();
        if depth >= config.max_depth {
            return Err(format!(
                "the `{name}` profile is refused here: its depth limit is {}, and this trace is \
                 already {depth} deep in it. Use another profile or do the work yourself.",
                config.max_depth
            ));
        }
        Ok(name.to_owned())
    }

    /// Runs `call` if it is a sub-agent call this runner handles; `None` for any other call.
    /// With `adoption`, work a previous run of the call left behind is taken over (resume).
    /// A call made after the run was cancelled does not start; it is left for the resume.
    pub(super) async fn run_call(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        adoption: Option<&mut Adoption>,
    ) -> Option<CallOutcome> {
        match self.access(&call.name)? {
            Access::Foreign => None,
            Access::Refused(reason) => Some(CallOutcome::error(reason.clone())),
            Access::Own if ctx.cancel.is_cancelled() => Some(CallOutcome::interrupted(format!(
                "{} was not started because the run was cancelled",
                call.name
            ))),
            Access::Own => {
                let args = match parse_arguments(&call.name, &call.arguments) {
                    Ok(args) => args,
                    Err(outcome) => return Some(outcome),
                };
                Some(match call.name.as_str() {
                    EXPLORE => explore::run(self, args, ctx, adoption).await,
                    _ => delegate::run(self, args, ctx, adoption).await,
                })
            }
        }
    }

    /// Creates a sub-trace and records its first message; returns its id.
    pub(super) async fn create_sub_trace(
        &self,
        new: NewTrace,
        first_message: String,
    ) -> Result<String, StoreError> {
        let model = new
            .parent
            .as_ref()
            .and_then(|link| self.config(&link.agent_type))
            .and_then(|config| config.model.clone())
            .unwrap_or_else(|| self.root.model.clone());
        let trace = self.store.create_trace(new.with_model(model)).await?;
        self.store
            .add_message(&trace.trace_id, NewMessage::user(first_message))
            .await?;
        Ok(trace.trace_id)
    }

    /// How an existing sub-trace continues: finished ones keep their outcome, others resume
    /// (after their first message is recorded, if a crash came before it).
    pub(super) async fn continue_sub_trace(
        &self,
        trace_id: &str,
        first_message: impl FnOnce() -> String,
    ) -> Result<Start, StoreError> {
        let trace = self
            .store
            .get_trace(trace_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })?;
        if matches!(trace.status, TraceStatus::Completed | TraceStatus::Failed) {
            return Ok(Start::Finished);
        }
        if trace.total_messages == 0 {
            self.store
                .add_message(trace_id, NewMessage::user(first_message()))
                .await?;
        }
        Ok(Start::Resume)
    }

    /// Runs a sub-trace of `agent_type` to its end in a task of its own, so it records how it
    /// ended even if the caller stops waiting. `permits`, when given, bounds how many run at
    /// once; a cancel while waiting for a permit still ends the trace `cancelled`.
    pub(super) fn spawn(
        &self,
        agent_type: &str,
        trace_id: String,
        start: Start,
        cancel: CancellationToken,
        permits: Option<Arc<tokio::sync::Semaphore>>,
    ) -> tokio::task::JoinHandle<()> {
        let runner = self.runner_for(agent_type);
        tokio::spawn(async move {
            let _permit = match permits {
                Some(permits) => tokio::select! {
                    permit = permits.acquire_owned() => permit.ok(),
                    () = cancel.cancelled() => None,
                },
                None => None,
            };
            let result = match start {
                Start::Finished => return,
                Start::Fresh => runner.drive(&trace_id, cancel).await,
                Start::Resume => match resume::prepare_resume(&runner, &trace_id).await {
                    Ok(()) => runner.drive(&trace_id, cancel).await,
                    Err(error) => Err(error),
                },
            };
            if let Err(error) = result {
                record_failure(&runner, &trace_id, &error).await;
            }
        })
    }

    /// What a finished (or stopped) sub-trace reports.
    pub(super) async fn report(&self, trace_id: &str) -> Result<SubTraceReport, StoreError> {
        let trace = self
            .store
            .get_trace(trace_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })?;
        let tree = self.store.get_goal_tree(trace_id).await?;
        Ok(SubTraceReport {
            plan: tree.map(|t| plan_lines(&t)).unwrap_or_default(),
            stats: trace.stats(),
            trace_id: trace.trace_id,
            status: trace.status,
            summary: trace.summary,
            error: trace.error,
        })
    }

    /// Truncates a report to what the model is shown of one tool result.
    pub(super) fn bounded(&self, text: &str) -> String {
        truncate_output(
            text,
            self.options.tool_limits.max_output_bytes,
            Keep::HeadAndTail,
        )
    }
}

/// Marks a sub-trace whose run could not go on as failed, unless it already ended.
async fn record_failure(runner: &AgentRunner, trace_id: &str, error: &RunError) {
    let store = runner.store();
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

/// Which sub-agent tool a runner offers, and why not when it does not.
fn access(name: &str, root: &RunnerOptions, lineage: &[String], tools: &ToolRegistry) -> Access {
    if tools.get(name).is_some() {
        return Access::Foreign;
    }
    let Some(config) = root.sub_agents.agent_types.get(name) else {
        return Access::Refused(format!(
            "{name} is disabled: no `{name}` agent type is configured for this runner"
        ));
    };
    if let Some(own_type) = lineage.last() {
        let admitted = root
            .sub_agents
            .agent_types
            .get(own_type)
            .is_none_or(|own| own.tools.admits(name, risk_of(config)));
        if !admitted {
            return Access::Refused(format!(
                "{name} is not available here: the tool set of `{own_type}` sub-traces does not \
                 include it. Do the work with the tools you have."
            ));
        }
    }
    let depth = lineage.iter().filter(|t| *t == name).count();
    if depth >= config.max_depth {
        let path = if lineage.is_empty() {
            "the main trace".to_owned()
        } else {
            format!("main → {}", lineage.join(" → "))
        };
        return Access::Refused(format!(
            "{name} is refused here: the depth limit of `{name}` sub-traces is {}, and this \
             trace ({path}) is already {depth} deep in them. Do the work yourself, one step \
             after another.",
            config.max_depth
        ));
    }
    Access::Own
}

/// The risk of a sub-agent tool: read-only when every tool its sub-traces get is read-only.
pub(super) fn risk_of(config: &AgentTypeConfig) -> Risk {
    if config.tools.is_read_only() {
        Risk::ReadOnly
    } else {
        Risk::Risky
    }
}

fn parse_arguments(name: &str, raw: &str) -> Result<Value, CallOutcome> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| {
        CallOutcome::error(format!(
            "the arguments for {name} are not valid JSON ({e}); send a JSON object"
        ))
    })
}

/// How a sub-trace starts running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// Just created: run it.
    Fresh,
    /// Stopped before it finished: resume it.
    Resume,
    /// Completed or failed already: keep its outcome.
    Finished,
}

/// Work of an interrupted call that its resumed run takes over: explorations and delegates
/// started after the interrupted turn, each taken by at most one call.
#[derive(Debug, Default)]
pub(super) struct Adoption {
    /// The interrupted turn's time; only work started at or after it is taken over.
    pub(super) since: String,
    /// Goal and trace ids already taken by an earlier call of the turn.
    pub(super) claimed: HashSet<String>,
}

impl Adoption {
    /// Takes over work started at or after `created_at`.
    pub(super) fn since(created_at: &str) -> Self {
        Self {
            since: created_at.to_owned(),
            claimed: HashSet::new(),
        }
    }
}
