//! Sub-agents: how `explore` and `delegate` run sub-traces with the same loop.
//!
//! Each agent has a [`SubAgents`]: the engine and the agent's own settings, whose *lineage* (the
//! agent types between the main trace and its own traces) a sub-trace extends. The engine
//! resolves a sub-trace's settings from its agent type (tools by its
//! [`ToolFilter`](crate::ToolFilter), limits, system prompt, and `explore` / `delegate` only
//! where the depth limits allow them) and runs it through its driver.
//!
//! Sub-traces run in tasks of their own with child cancellation tokens of the calling run, so
//! cancelling the run cancels them, and a sub-trace always records how it ended even when the
//! call that waited for it is dropped.

use std::collections::HashSet;
use std::sync::Arc;

use agent_execution::message::NewMessage;
use agent_execution::store::{StoreError, TraceStore};
use agent_execution::trace::{NewTrace, TraceStatus};
use agent_llm::LlmClient;
use agent_tools::{Keep, truncate_output};
use tokio_util::sync::CancellationToken;

use crate::agents::AgentTypeConfig;
use crate::engine::{Engine, Start};
use crate::options::SubAgentOptions;
use crate::spec::AgentSpec;
use agent_execution::sub_trace_report::SubTraceReport;

/// What an agent needs to run sub-traces: the engine and its own settings.
pub(crate) struct SubAgents {
    pub(crate) engine: Arc<Engine>,
    /// The calling agent's settings.
    pub(crate) spec: Arc<AgentSpec>,
    /// The store, as the engine has it.
    pub(crate) store: Arc<dyn TraceStore>,
    /// The calling agent's model client.
    pub(crate) llm: Arc<dyn LlmClient>,
}

impl SubAgents {
    /// The sub-agents of the agent `spec`, whose client is `llm`.
    pub(crate) fn new(engine: Arc<Engine>, spec: Arc<AgentSpec>, llm: Arc<dyn LlmClient>) -> Self {
        Self {
            store: engine.store.clone(),
            engine,
            spec,
            llm,
        }
    }

    /// The sub-agent settings of the main runner.
    pub(crate) fn root_sub_agents(&self) -> &SubAgentOptions {
        &self.engine.root.sub_agents
    }

    /// The configuration of `agent_type`.
    pub(crate) fn config(&self, agent_type: &str) -> Option<&AgentTypeConfig> {
        self.engine.config(agent_type)
    }

    /// The profiles an `explore` or `delegate` call may name, with their configurations.
    pub(crate) fn selectable(&self) -> Vec<(&str, &AgentTypeConfig)> {
        self.engine
            .root
            .sub_agents
            .agent_types
            .iter()
            .filter(|(name, _)| AgentTypeConfig::is_sub_agent(name))
            .map(|(name, config)| (name.as_str(), config))
            .collect()
    }

    /// The profile a call of `tool` (`explore` or `delegate`) runs its sub-traces as: the one
    /// it names, or the tool's own. An error says why the named one cannot run here.
    pub(crate) fn profile_for(&self, tool: &str, named: Option<&str>) -> Result<String, String> {
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
        let depth = self.spec.lineage.iter().filter(|t| *t == name).count();
        if depth >= config.max_depth {
            return Err(format!(
                "the `{name}` profile is refused here: its depth limit is {}, and this trace is \
                 already {depth} deep in it. Use another profile or do the work yourself.",
                config.max_depth
            ));
        }
        Ok(name.to_owned())
    }

    /// Creates a sub-trace and records its first message; returns its id.
    pub(crate) async fn create_sub_trace(
        &self,
        new: NewTrace,
        first_message: String,
    ) -> Result<String, StoreError> {
        let model = new
            .parent
            .as_ref()
            .and_then(|link| self.config(&link.agent_type))
            .and_then(|config| config.model.clone())
            .unwrap_or_else(|| self.engine.root.model.clone());
        let trace = self.store.create_trace(new.with_model(model)).await?;
        self.store
            .add_message(&trace.trace_id, NewMessage::user(first_message))
            .await?;
        Ok(trace.trace_id)
    }

    /// How an existing sub-trace continues: finished ones keep their outcome, others resume
    /// (after their first message is recorded, if a crash came before it).
    pub(crate) async fn continue_sub_trace(
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
    pub(crate) fn spawn(
        &self,
        agent_type: &str,
        trace_id: String,
        start: Start,
        cancel: CancellationToken,
        permits: Option<Arc<tokio::sync::Semaphore>>,
    ) -> tokio::task::JoinHandle<()> {
        let mut lineage = self.spec.lineage.clone();
        lineage.push(agent_type.to_owned());
        self.engine.spawn(lineage, trace_id, start, cancel, permits)
    }

    /// What a finished (or stopped) sub-trace reports.
    pub(crate) async fn report(&self, trace_id: &str) -> Result<SubTraceReport, StoreError> {
        let trace = self
            .store
            .get_trace(trace_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })?;
        let tree = self.store.get_goal_tree(trace_id).await?;
        Ok(SubTraceReport {
            plan: tree.map(|t| t.summary_lines()).unwrap_or_default(),
            stats: trace.stats(),
            trace_id: trace.trace_id,
            status: trace.status,
            summary: trace.summary,
            error: trace.error,
        })
    }

    /// Truncates a report to what the model is shown of one tool result.
    pub(crate) fn bounded(&self, text: &str) -> String {
        truncate_output(
            text,
            self.spec.tool_limits.max_output_bytes,
            Keep::HeadAndTail,
        )
    }
}

/// Work of an interrupted call that its resumed run takes over: explorations and delegates
/// started after the interrupted turn, each taken by at most one call.
#[derive(Debug, Default)]
pub(crate) struct Adoption {
    /// The interrupted turn's time; only work started at or after it is taken over.
    pub(crate) since: String,
    /// Goal and trace ids already taken by an earlier call of the turn.
    pub(crate) claimed: HashSet<String>,
}

impl Adoption {
    /// Takes over work started at or after `created_at`.
    pub(crate) fn since(created_at: &str) -> Self {
        Self {
            since: created_at.to_owned(),
            claimed: HashSet::new(),
        }
    }
}
