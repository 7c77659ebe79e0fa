//! The [`Engine`]: a runner's services — the store, the model clients, the tools as the embedder
//! gave them, the options with every profile — and the resolution of an agent's settings
//! ([`AgentSpec`]) from them.
//!
//! Running a sub-trace needs the loop, which sits above every module that starts one; the engine
//! reaches it through the [`Driver`] its owner installs, so no module calls back into its caller.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_execution::TraceStore;
use agent_llm::LlmClient;
use agent_tools::ToolRegistry;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agents::{AgentTypeConfig, ApprovalPolicy, DEFAULT, DELEGATE, EXPLORE};
use crate::goal_tools::{GoalTool, ReadProgressTool};
use crate::inbox::Inbox;
use crate::options::{RunnerOptions, render_instructions};
use crate::profiles::{PromptVars, render_prompt};
use crate::spec::{Access, AgentSpec};
use agent_execution::budget::Budgets;
use agent_tools::Approval;

/// How a sub-trace starts running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Just created: run it.
    Fresh,
    /// Stopped before it finished: resume it.
    Resume,
    /// Completed or failed already: keep its outcome.
    Finished,
}

/// Runs traces with the loop, on behalf of the modules below it.
pub(crate) trait Driver: Send + Sync {
    /// Runs `trace_id` as the agent at the end of `lineage` to its end, in a task of its own,
    /// recording how it ended even if nobody waits for it. `permits`, when given, bounds how
    /// many run at once.
    fn spawn(
        &self,
        engine: Arc<Engine>,
        lineage: Vec<String>,
        trace_id: String,
        start: Start,
        cancel: CancellationToken,
        permits: Option<Arc<Semaphore>>,
    ) -> JoinHandle<()>;
}

/// The services of a runner and the options every agent is resolved from.
pub(crate) struct Engine {
    /// Where every trace is recorded.
    pub(crate) store: Arc<dyn TraceStore>,
    /// The runner's model client.
    llm: Arc<dyn LlmClient>,
    /// The tools as the embedder gave them, before profiles filter them; replaced when the
    /// embedder's tools change ([`crate::AgentRunner::replace_tools`]).
    base_tools: std::sync::RwLock<Arc<ToolRegistry>>,
    /// The options of the main runner, with every profile.
    pub(crate) root: RunnerOptions,
    /// The spending of the traces being run.
    pub(crate) budgets: Budgets,
    /// The main runs going on, with the messages sent to them.
    pub(crate) inbox: Inbox,
    /// The sub-traces running in the background of the traces that started them.
    pub(crate) background: agent_execution::background::Background,
    /// The private workspaces of sub-traces that work apart (explore branches in copies of
    /// the workspace), by trace id.
    copies: Mutex<HashMap<String, PathBuf>>,
    driver: Arc<dyn Driver>,
    /// The model agents ask unless their profile names one: the options', until a session
    /// chooses another ([`crate::AgentRunner::switch_model`]).
    model: std::sync::RwLock<String>,
    /// The notices of the runs' model calls, by trace ([`crate::AgentRunner::notices`]).
    pub(crate) notices: agent_llm::notice::NoticeHub,
}

impl Engine {
    /// An engine over these services.
    pub(crate) fn new(
        store: Arc<dyn TraceStore>,
        llm: Arc<dyn LlmClient>,
        base_tools: Arc<ToolRegistry>,
        root: RunnerOptions,
        driver: Arc<dyn Driver>,
    ) -> Self {
        Self {
            store,
            llm,
            base_tools: std::sync::RwLock::new(base_tools),
            model: std::sync::RwLock::new(root.model.clone()),
            root,
            budgets: Budgets::default(),
            inbox: Inbox::default(),
            background: Default::default(),
            copies: Mutex::new(HashMap::new()),
            driver,
            notices: agent_llm::notice::NoticeHub::default(),
        }
    }

    /// The model agents ask unless their profile names one.
    pub(crate) fn model(&self) -> String {
        let model = self.model.read();
        model.unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Has agents made from now on ask `model`.
    pub(crate) fn set_model(&self, model: &str) {
        *self.model.write().unwrap_or_else(PoisonError::into_inner) = model.to_owned();
    }

    /// Has `trace_id`, and the sub-traces it starts, work in `workspace`.
    pub(crate) fn work_apart(&self, trace_id: &str, workspace: PathBuf) {
        let mut copies = self.copies.lock().unwrap_or_else(PoisonError::into_inner);
        copies.insert(trace_id.to_owned(), workspace);
    }

    /// The workspace of `trace_id` when it, or a trace that started it (whose id its own
    /// begins with), works apart.
    pub(crate) fn workspace_of(&self, trace_id: &str) -> Option<PathBuf> {
        let copies = self.copies.lock().unwrap_or_else(PoisonError::into_inner);
        copies
            .iter()
            .filter(|(id, _)| {
                trace_id
                    .strip_prefix(id.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('@'))
            })
            .max_by_key(|(id, _)| id.len())
            .map(|(_, path)| path.clone())
    }

    /// The tools as the embedder gave them last.
    pub(crate) fn base_tools(&self) -> Arc<ToolRegistry> {
        self.base_tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Gives agents made from now on these tools.
    pub(crate) fn set_base_tools(&self, tools: ToolRegistry) {
        *self
            .base_tools
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(tools);
    }

    /// The client of the profile `name`: its own when the options give one, else the runner's.
    pub(crate) fn client(&self, name: Option<&str>) -> Arc<dyn LlmClient> {
        name.and_then(|name| self.root.clients.get(name))
            .cloned()
            .unwrap_or_else(|| self.llm.clone())
    }

    /// The profile `agent_type`.
    pub(crate) fn config(&self, agent_type: &str) -> Option<&AgentTypeConfig> {
        self.root.sub_agents.agent_types.get(agent_type)
    }

    /// Runs a trace with the loop (see [`Driver::spawn`]).
    pub(crate) fn spawn(
        self: &Arc<Self>,
        lineage: Vec<String>,
        trace_id: String,
        start: Start,
        cancel: CancellationToken,
        permits: Option<Arc<Semaphore>>,
    ) -> JoinHandle<()> {
        self.driver
            .spawn(self.clone(), lineage, trace_id, start, cancel, permits)
    }

    /// The settings and tools of the agent at the end of `lineage` (agent types from the main
    /// trace down), working in `workspace` when it works apart: the tools its profile admits plus the goal tools, its limits, prompt, model
    /// and approval policy, and the sub-agent tools its depth allows. The registry holds neither
    /// `explore` nor `delegate`; the caller registers them where the spec says [`Access::Own`].
    pub(crate) fn resolve(
        &self,
        lineage: Vec<String>,
        workspace: Option<PathBuf>,
    ) -> (AgentSpec, ToolRegistry) {
        let root = &self.root;
        let own_name = lineage.last().cloned();
        let own = own_name.as_deref().and_then(|t| self.config(t));
        let is_main = lineage.len() == 1 && root.agent == own_name;
        let name = own_name.unwrap_or_else(|| DEFAULT.to_owned());
        let mut spec = AgentSpec {
            name: name.clone(),
            lineage: lineage.clone(),
            model: self.model(),
            system_prompt: root.system_prompt.clone(),
            workspace: workspace.unwrap_or_else(|| root.workspace.clone()),
            limits: root.limits.with_overrides(&root.overrides),
            tool_limits: root.tool_limits.clone(),
            context_window: root.context_window,
            strategy: root.strategy,
            temperature: root.temperature,
            max_tokens: root.max_tokens,
            reasoning_effort: root.reasoning_effort,
            thinking_budget: root.thinking_budget,
            approval: root.approval.clone(),
            tools: Vec::new(),
            explore: Access::Foreign,
            delegate: Access::Foreign,
            own_goal_tool: false,
            closing_report: root.closing_report
                && lineage.len() <= 1
                && own.is_none_or(|config| config.closing_report),
            vision: root.vision.clone(),
        };
        let mut tools = ToolRegistry::new();
        let base_tools = self.base_tools();
        match own {
            Some(config) => {
                apply_profile(&mut spec, config, is_main);
                for tool_name in base_tools.names() {
                    if let Some(tool) = base_tools.get(&tool_name)
                        && config.tools.admits(&tool_name, tool.risk())
                    {
                        // Names come from a registry, so they are valid and unique.
                        let _ = tools.register(tool.clone());
                    }
                }
            }
            None => tools = (*base_tools).clone(),
        }
        // The strictest sandbox a profile of the lineage asks for holds below it too, so a
        // read-only agent cannot write through a sub-agent of another profile.
        let sandbox = lineage
            .iter()
            .filter_map(|agent_type| self.config(agent_type)?.sandbox)
            .min();
        if let Some(mode) = sandbox {
            for tool_name in tools.names() {
                if let Some(confined) = tools.get(&tool_name).and_then(|t| t.confined_to(mode)) {
                    // The name is the one just read from the registry.
                    let _ = tools.replace(confined);
                }
            }
        }
        if tools.get("goal").is_none() {
            // Registration only fails for a duplicate name, which was just ruled out.
            let _ = tools.register(Arc::new(GoalTool::new(self.store.clone())));
            spec.own_goal_tool = true;
        }
        if tools.get("read_progress").is_none() {
            let _ = tools.register(Arc::new(ReadProgressTool::new(self.store.clone())));
        }
        spec.explore = self.access(EXPLORE, &lineage, &tools);
        spec.delegate = self.access(DELEGATE, &lineage, &tools);
        let mut names = tools.names();
        for tool in [EXPLORE, DELEGATE] {
            if spec.access(tool) == Some(&Access::Own) {
                names.push(tool.to_owned());
            }
        }
        names.sort();
        let vars = PromptVars {
            workspace: spec.workspace.display().to_string(),
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            tools: names.join(", "),
            agent: name,
            model: spec.model.clone(),
        };
        spec.system_prompt = render_prompt(&spec.system_prompt, &vars);
        let instructions = render_instructions(&root.instructions);
        if !instructions.is_empty() {
            let prompt = spec.system_prompt.trim_end();
            spec.system_prompt = if prompt.is_empty() {
                instructions
            } else {
                format!("{prompt}\n\n{instructions}")
            };
        }
        spec.tools = names;
        (spec, tools)
    }

    /// Whether the agent of `lineage`, with `tools`, offers the sub-agent tool `name`, and why
    /// not when it does not.
    fn access(&self, name: &str, lineage: &[String], tools: &ToolRegistry) -> Access {
        if tools.get(name).is_some() {
            return Access::Foreign;
        }
        if !self.root.sub_agents.enabled {
            return Access::Refused(format!(
                "{name} is not enabled for this runner; do the work with the tools you have"
            ));
        }
        let Some(config) = self.config(name) else {
            return Access::Refused(format!(
                "{name} is disabled: no `{name}` agent type is configured for this runner"
            ));
        };
        if let Some(own_type) = lineage.last() {
            let admitted = self
                .config(own_type)
                .is_none_or(|own| own.tools.admits(name, config.risk()));
            if !admitted {
                return Access::Refused(format!(
                    "{name} is not available here: the tool set of `{own_type}` sub-traces does \
                     not include it. Do the work with the tools you have."
                ));
            }
        }
        match agent_execution::lineage::profile_depth_refusal(name, lineage, config.max_depth) {
            Some(reason) => Access::Refused(reason),
            None => Access::Own,
        }
    }
}

/// Makes `spec` (a copy of the main runner's settings) that of traces of `profile`. The main
/// runner's own profile keeps the options' limits and model, which
/// [`RunnerOptions::with_agent`] took from it and the caller may have changed since.
fn apply_profile(spec: &mut AgentSpec, profile: &AgentTypeConfig, is_main: bool) {
    if !is_main {
        spec.limits = profile.limits.clone();
        if let Some(model) = &profile.model {
            spec.model.clone_from(model);
        }
    }
    if let Some(prompt) = &profile.system_prompt {
        spec.system_prompt.clone_from(prompt);
    }
    // A profile's reasoning settings are its sub-traces' own; on the main trace they fill in
    // what the run's options leave unset.
    if let Some(effort) = profile.reasoning_effort
        && (!is_main || spec.reasoning_effort.is_none())
    {
        spec.reasoning_effort = Some(effort);
    }
    if let Some(budget) = profile.thinking_budget
        && (!is_main || spec.thinking_budget.is_none())
    {
        spec.thinking_budget = Some(budget);
    }
    match profile.approval {
        ApprovalPolicy::Inherit => {}
        ApprovalPolicy::Auto => spec.approval = Approval::Allow,
        ApprovalPolicy::Deny => {
            spec.approval =
                Approval::Refuse(format!("the `{}` agent may not run risky tools", spec.name));
        }
    }
}
