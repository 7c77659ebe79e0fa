//! Lifecycle hooks with Claude Code's conventions, so that scripts written for it work here:
//! commands configured in agent.toml per event, run when the runner says the event happens
//! (`agent_tools::hooks`), the same at every door.
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "Bash"              # a regex on the tool's name; Claude Code's names work too
//! command = "./hooks/no-rm.sh"
//! timeout = 10                  # seconds; 60 when left out
//!
//! [[hooks.Stop]]
//! command = "./hooks/tests-pass.sh"
//! ```
//!
//! A hook reads one JSON object on stdin: `hook_event_name`, `session_id` (the trace id),
//! `cwd`, and per event `tool_name`, `tool_input` (with Claude Code's `file_path`,
//! `old_string`, `new_string` beside our argument names), `tool_response`, `prompt`,
//! `stop_hook_active`, `trigger` / `custom_instructions` / `tokens_before` / `tokens_after` for
//! a compaction, `notification_type` / `message` for a notification, or the goal's
//! `goal_number`, `goal_title`, `summary` / `reason`. It runs as `sh -c COMMAND` in the
//! workspace, with `AGENT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` set.
//! Exit 0 goes on (stdout JSON `{"decision": "block", "reason": ...}` blocks); exit 2 blocks
//! with stderr as the reason; other codes, and a hook killed at its timeout, warn and go on.
//! What a block does is the event's ([`agent_tools::hooks`]); a `Stop` hook sends the model
//! back once a run. Every run of a hook is recorded in the trace as a `hook_ran` event. Hooks
//! of a project's `agent.toml` run only once the user accepted that file ([`crate::trust`]).
//!
//! Events: `SessionStart`, `UserPromptSubmit` (every user message that starts or continues a
//! run: a task, a chat's next turn, `agent run -c`, a message sent while the run works — a
//! refused one is left out), `PreToolUse`, `PostToolUse`, `Stop`, `SubagentStop`,
//! `PreCompact` and `PostCompact` (around a summary of the conversation, `trigger` `auto` when
//! the context neared the window, `manual` for `/compact`; what they block is not followed),
//! `Notification` (when a run waits for the user: `permission_prompt` before an approval
//! question, `elicitation_dialog` before an MCP server's question, [`notify`]), and, for the goal tree, `GoalStart`, `GoalDone` and `GoalAbandoned`.
//! A goal compaction (a finished goal's messages folded into its summary) is no event: it
//! changes the view of each request and loses nothing. A table may also take Claude Code's own
//! shape, `hooks = [{ type = "command", command = "...", timeout = 10 }]`, beside its
//! `matcher`. The user's enabled plugins bring hooks too ([`crate::plugins`]): they run after
//! agent.toml's, with `CLAUDE_PLUGIN_ROOT` set to the plugin's folder.

mod command;
mod goals;
pub mod notify;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_execution::TraceStore;
use agent_execution::event::EventKind;
use agent_execution::store::WriteOp;
use agent_goal::GoalTree;
use agent_tools::hooks::{HookInput, Hooks, claude_name};
use async_trait::async_trait;
use regex::Regex;

use self::command::Verdict;
pub use crate::config::{HookCommand, HookSpec};
use crate::error::{Error, Result};

/// The events a hook may be configured for.
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Notification",
    "GoalStart",
    "GoalDone",
    "GoalAbandoned",
];

/// How long a hook may run when its table says nothing.
const DEFAULT_TIMEOUT: u64 = 60;

/// The most of a hook's output recorded in the trace.
const RECORDED_OUTPUT: usize = 4096;

/// One hook, checked: the event, what it matches, the command and its timeout.
#[derive(Debug, Clone)]
struct Hook {
    event: String,
    matcher: Option<Regex>,
    command: String,
    timeout: Duration,
    /// The folder of the plugin it comes from (its `CLAUDE_PLUGIN_ROOT`).
    plugin: Option<PathBuf>,
}

/// The hooks of a configuration, checked: an unknown event, a bad matcher or a table without a
/// command is an error naming it.
pub fn check(config: &std::collections::BTreeMap<String, Vec<HookSpec>>) -> Result<()> {
    compile(config).map(drop)
}

/// The hooks of `config`, checked.
fn compile(config: &std::collections::BTreeMap<String, Vec<HookSpec>>) -> Result<Vec<Hook>> {
    compile_from(config, None)
}

/// The hooks of `config`, from the plugin in `plugin` when it is one's, checked.
fn compile_from(
    config: &std::collections::BTreeMap<String, Vec<HookSpec>>,
    plugin: Option<&Path>,
) -> Result<Vec<Hook>> {
    let mut hooks = Vec::new();
    for (event, specs) in config {
        if !EVENTS.contains(&event.as_str()) {
            return Err(Error::usage(format!(
                "agent.toml: `hooks.{event}` is not a hook event (known: {})",
                EVENTS.join(", ")
            )));
        }
        for spec in specs {
            let matcher = match spec.matcher.as_deref().map(str::trim) {
                None | Some("" | "*") => None,
                Some(pattern) => Some(Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
                    Error::usage(format!("agent.toml: a `hooks.{event}` matcher: {e}"))
                })?),
            };
            let mut commands: Vec<(String, Option<u64>)> = spec
                .command
                .iter()
                .map(|command| (command.clone(), spec.timeout))
                .collect();
            for inner in &spec.hooks {
                if inner.kind.as_deref().is_some_and(|kind| kind != "command") {
                    return Err(Error::usage(format!(
                        "agent.toml: a `hooks.{event}` hook of type {:?}: only `command` runs",
                        inner.kind.as_deref().unwrap_or_default()
                    )));
                }
                commands.push((inner.command.clone(), inner.timeout.or(spec.timeout)));
            }
            if commands
                .iter()
                .all(|(command, _)| command.trim().is_empty())
            {
                return Err(Error::usage(format!(
                    "agent.toml: a `hooks.{event}` table has no `command`"
                )));
            }
            for (command, timeout) in commands {
                hooks.push(Hook {
                    event: event.clone(),
                    matcher: matcher.clone(),
                    command,
                    timeout: Duration::from_secs(timeout.unwrap_or(DEFAULT_TIMEOUT).max(1)),
                    plugin: plugin.map(Path::to_path_buf),
                });
            }
        }
    }
    Ok(hooks)
}

/// The configured hook commands, as the runner's [`Hooks`]: each run is recorded in the trace.
pub struct CommandHooks {
    hooks: Vec<Hook>,
    store: Arc<dyn TraceStore>,
    /// The goal tree of each trace before its `goal` call, for the goal events.
    before_goals: Mutex<HashMap<String, GoalTree>>,
    /// The traces whose current run a Stop hook already sent back.
    sent_back: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for CommandHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandHooks")
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}

impl CommandHooks {
    /// The hooks of `config`, recording into `store`; `None` when there are none.
    pub fn new(
        config: &std::collections::BTreeMap<String, Vec<HookSpec>>,
        store: Arc<dyn TraceStore>,
    ) -> Result<Option<Self>> {
        Ok(Self::of(compile(config)?, store))
    }

    /// `hooks`, recording into `store`; `None` when there are none.
    fn of(hooks: Vec<Hook>, store: Arc<dyn TraceStore>) -> Option<Self> {
        (!hooks.is_empty()).then(|| Self {
            hooks,
            store,
            before_goals: Mutex::new(HashMap::new()),
            sent_back: Mutex::new(HashSet::new()),
        })
    }

    /// Whether a hook is configured for `event`.
    fn has(&self, event: &str) -> bool {
        self.hooks.iter().any(|hook| hook.event == event)
    }

    /// Runs the hooks of `input`'s event that match its tool, one after the other; the reasons
    /// of those that blocked.
    async fn run_all(&self, input: &HookInput) -> Option<String> {
        let json = input.to_json();
        let mut reasons = Vec::new();
        for hook in self.hooks.iter().filter(|hook| hook.event == input.event) {
            if !matches(hook.matcher.as_ref(), input.tool_name.as_deref()) {
                continue;
            }
            let at = (input.cwd.as_path(), hook.plugin.as_deref());
            let ran = command::run(&hook.command, &json, at, hook.timeout).await;
            let verdict = command::verdict(&ran);
            match &verdict {
                Verdict::Block(reason) => reasons.push(reason.clone()),
                Verdict::Warn(why) => {
                    tracing::warn!("the {} hook `{}` failed: {why}", input.event, hook.command)
                }
                Verdict::Continue => {}
            }
            self.record(input, hook, &ran, verdict.word(&ran)).await;
        }
        (!reasons.is_empty()).then(|| reasons.join("\n"))
    }

    /// Records a hook's run in its trace (a trace not created yet records nothing).
    async fn record(&self, input: &HookInput, hook: &Hook, ran: &command::Ran, outcome: &str) {
        let cut = |text: &str| text.chars().take(RECORDED_OUTPUT).collect::<String>();
        let event = EventKind::HookRan {
            hook_event: input.event.to_owned(),
            tool_name: input.tool_name.clone(),
            command: hook.command.clone(),
            exit_code: ran.exit_code,
            outcome: outcome.to_owned(),
            stdout: cut(&ran.stdout),
            stderr: cut(&ran.stderr),
            duration_ms: u64::try_from(ran.duration.as_millis()).unwrap_or(u64::MAX),
        };
        let op = vec![WriteOp::AppendEvent(event)];
        if let Err(error) = self.store.batch(&input.trace_id, op).await {
            tracing::debug!("a hook's run is not recorded: {error}");
        }
    }
}

/// Whether `matcher` takes the tool `name`, by our name or Claude Code's (events without a
/// tool match every hook).
fn matches(matcher: Option<&Regex>, name: Option<&str>) -> bool {
    match (matcher, name) {
        (None, _) | (_, None) => true,
        (Some(regex), Some(name)) => {
            regex.is_match(name) || claude_name(name).is_some_and(|claude| regex.is_match(claude))
        }
    }
}

#[async_trait]
impl Hooks for CommandHooks {
    async fn fire(&self, input: HookInput) -> Option<String> {
        let is_goal_call = input.tool_name.as_deref() == Some("goal");
        if is_goal_call && input.event == "PreToolUse" && goals::wanted(self) {
            goals::before(self, &input.trace_id).await;
        }
        let input = match input.event {
            "SessionStart" => {
                self.sent_back_set().remove(&input.trace_id);
                input
            }
            "Stop" | "SubagentStop" => {
                let active = self.sent_back_set().contains(&input.trace_id);
                input.with("stop_hook_active", active)
            }
            _ => input,
        };
        if !self.has(input.event) && !is_goal_call {
            return None;
        }
        let blocked = if self.has(input.event) {
            self.run_all(&input).await
        } else {
            None
        };
        if is_goal_call && input.event == "PostToolUse" {
            goals::after(self, &input).await;
        }
        match input.event {
            // Once a run: a second block of the same run is recorded and not followed.
            "Stop" | "SubagentStop" => {
                let reason = blocked?;
                self.sent_back_set()
                    .insert(input.trace_id.clone())
                    .then_some(reason)
            }
            _ => blocked,
        }
    }
}

impl CommandHooks {
    /// The traces a Stop hook sent back in their current run.
    fn sent_back_set(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.sent_back
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The hooks of `config` for a runner recording into `store` (none when none are configured),
/// checked.
pub fn for_runner(
    config: &std::collections::BTreeMap<String, Vec<HookSpec>>,
    store: Arc<dyn TraceStore>,
) -> Result<Option<Arc<dyn Hooks>>> {
    Ok(CommandHooks::new(config, store)?.map(|hooks| Arc::new(hooks) as Arc<dyn Hooks>))
}

/// The hooks in effect for a runner recording into `store`: those of `config`'s file — a
/// project file's only once the user accepted it ([`crate::trust`]; otherwise none, and a
/// notice says why) — then those of the user's enabled plugins, which installing them accepted
/// ([`crate::plugins`]; a plugin whose hooks cannot be read is a notice, and the run goes on).
pub fn for_config(
    config: &crate::Config,
    store: Arc<dyn TraceStore>,
    notices: &mut Vec<String>,
) -> Result<Option<Arc<dyn Hooks>>> {
    let mut hooks = Vec::new();
    if !config.file().hooks.is_empty() && file_accepted(config, notices) {
        hooks = compile(&config.file().hooks)?;
    }
    if let Some(user_dir) = config.user_dir() {
        for (name, dir) in crate::plugins::enabled(&user_dir) {
            match crate::plugins::hooks(&dir).and_then(|specs| plugin_hooks(&specs, &dir)) {
                Ok(found) => hooks.extend(found),
                Err(error) => notices.push(format!(
                    "the hooks of the plugin {name} do not run: {error}"
                )),
            }
        }
    }
    Ok(CommandHooks::of(hooks, store).map(|hooks| Arc::new(hooks) as Arc<dyn Hooks>))
}

/// The hooks of the plugin in `dir`: those of the events known here (Claude Code has a few
/// more, which never fire here), checked.
fn plugin_hooks(
    specs: &std::collections::BTreeMap<String, Vec<HookSpec>>,
    dir: &Path,
) -> Result<Vec<Hook>> {
    let mut known = specs.clone();
    known.retain(|event, _| EVENTS.contains(&event.as_str()));
    compile_from(&known, Some(dir))
}

/// Whether the hooks of `config`'s file may run: a project file's only once the user accepted
/// it; a notice says why not.
fn file_accepted(config: &crate::Config, notices: &mut Vec<String>) -> bool {
    let Some(project) = config.project() else {
        return true;
    };
    let crate::config::Source::ProjectFile(path) = &project.source else {
        return false;
    };
    let data_dir = config.env().data_dir();
    let accepted = data_dir
        .as_deref()
        .is_some_and(|dir| crate::trust::accepted(dir, path));
    if !accepted {
        notices.push(format!(
            "the hooks of {} do not run: it comes with the project, and you have not \
             accepted it as it is (run `agent trust` in {} to accept it)",
            path.display(),
            path.parent().unwrap_or(path).display()
        ));
    }
    accepted
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
