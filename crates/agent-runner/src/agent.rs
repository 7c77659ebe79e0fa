//! [`Agent`]: one agent at work — the engine's services, its resolved settings, its tools and
//! its model client — which the loop and the sub-agents take.

use std::sync::Arc;

use agent_llm::LlmClient;
use agent_tools::ToolRegistry;

use crate::engine::Engine;
use crate::spec::{Access, AgentSpec};
use crate::subagent_tools::{DelegateTool, ExploreTool};
use crate::subagents::SubAgents;
use agent_execution::run_limits::RunLimits;

/// An agent: what one loop over one trace runs with.
#[derive(Clone)]
pub(crate) struct Agent {
    /// The runner's services.
    pub(crate) engine: Arc<Engine>,
    /// Its settings.
    pub(crate) spec: Arc<AgentSpec>,
    /// The tools offered to the model, `explore` and `delegate` included where they are its own.
    pub(crate) tools: Arc<ToolRegistry>,
    /// Its model client.
    pub(crate) llm: Arc<dyn LlmClient>,
    /// How it runs sub-traces.
    pub(crate) sub_agents: Arc<SubAgents>,
}

impl Agent {
    /// The agent at the end of `lineage` (agent types from the main trace down).
    pub(crate) fn new(engine: Arc<Engine>, lineage: Vec<String>) -> Self {
        Self::working_in(engine, lineage, None)
    }

    /// The agent at the end of `lineage` working on `trace_id`, in the workspace of its own
    /// when it works apart.
    pub(crate) fn for_trace(engine: Arc<Engine>, lineage: Vec<String>, trace_id: &str) -> Self {
        let workspace = engine.workspace_of(trace_id);
        Self::working_in(engine, lineage, workspace)
    }

    fn working_in(
        engine: Arc<Engine>,
        lineage: Vec<String>,
        workspace: Option<std::path::PathBuf>,
    ) -> Self {
        let llm = engine.client(lineage.last().map(String::as_str));
        let (spec, mut tools) = engine.resolve(lineage, workspace);
        let spec = Arc::new(spec);
        let sub_agents = Arc::new(SubAgents::new(engine.clone(), spec.clone(), llm.clone()));
        if spec.explore == Access::Own {
            // The name is free: the spec says no tool of the registry has it.
            let _ = tools.register(Arc::new(ExploreTool {
                agents: sub_agents.clone(),
            }));
        }
        if spec.delegate == Access::Own {
            let _ = tools.register(Arc::new(DelegateTool {
                agents: sub_agents.clone(),
            }));
        }
        Self {
            engine,
            spec,
            tools: Arc::new(tools),
            llm,
            sub_agents,
        }
    }

    /// Where the events of its run of `trace_id` are fired at the hooks.
    pub(crate) fn hooks<'a>(&'a self, trace_id: &'a str) -> agent_tools::hooks::HookSite<'a> {
        let hooks = self.engine.root.hooks.as_deref();
        agent_tools::hooks::HookSite::new(hooks, trace_id, &self.spec.workspace)
    }

    /// The same agent running under `limits`.
    pub(crate) fn with_limits(mut self, limits: RunLimits) -> Self {
        if self.spec.limits != limits {
            let mut spec = (*self.spec).clone();
            spec.limits = limits;
            self.spec = Arc::new(spec);
        }
        self
    }

    /// The store the agent records into.
    pub(crate) fn store(&self) -> &dyn agent_execution::TraceStore {
        self.engine.store.as_ref()
    }
}
