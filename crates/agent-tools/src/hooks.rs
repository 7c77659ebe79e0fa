//! Lifecycle hooks as the runner sees them: an event ([`HookInput`], which becomes the JSON a
//! hook command reads on stdin, in Claude Code's shape) handed to the embedder's [`Hooks`],
//! which may block it with a reason. What a hook is — a command, a matcher, a timeout — is the
//! embedder's (`agent-app` runs configured commands); the runner only says when.
//!
//! Events and what a block means: `SessionStart` (nothing), `UserPromptSubmit` (the prompt is
//! refused; a message sent to a working run is left out), `PreToolUse` (the call is refused,
//! the reason goes to the model), `PostToolUse` (the reason is added to the call's result),
//! `Stop` and `SubagentStop` (the model is sent back to work with the reason, once per run),
//! `PreCompact`, `PostCompact` and `Notification` (nothing: they are told). The runner fires
//! them for one trace's run through a [`HookSite`].
//!
//! ```
//! use agent_tools::hooks::HookInput;
//! use serde_json::json;
//!
//! let input = HookInput::new("PreToolUse", "t-1", "/work")
//!     .tool("write_file", &json!({"path": "a.txt", "content": "x"}).to_string());
//! let json = input.to_json();
//! assert_eq!(json["hook_event_name"], "PreToolUse");
//! assert_eq!(json["session_id"], "t-1");
//! // Claude Code's field names are there too.
//! assert_eq!(json["tool_input"]["file_path"], "a.txt");
//! ```

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use crate::ToolContext;

/// Claude Code's tool names and ours, so that hooks written for it match here.
pub const CLAUDE_TOOL_NAMES: &[(&str, &str)] = &[
    ("Bash", "bash"),
    ("Write", "write_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Read", "read_file"),
    ("Glob", "glob_files"),
    ("Grep", "grep"),
    ("Task", "delegate"),
];

/// Claude Code's name for our tool `name`, if it has one.
pub fn claude_name(name: &str) -> Option<&'static str> {
    CLAUDE_TOOL_NAMES
        .iter()
        .find(|(_, ours)| *ours == name)
        .map(|(claude, _)| *claude)
}

/// One event for the hooks.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    /// The event's name, e.g. `PreToolUse`.
    pub event: &'static str,
    /// The trace (the hook's `session_id`).
    pub trace_id: String,
    /// The run's workspace (the hook's `cwd`).
    pub cwd: PathBuf,
    /// The tool of a tool event.
    pub tool_name: Option<String>,
    /// The event's other fields (`tool_input`, `tool_response`, `prompt`, ...).
    pub fields: Map<String, Value>,
}

impl HookInput {
    /// The event `event` of trace `trace_id` working in `cwd`.
    pub fn new(event: &'static str, trace_id: &str, cwd: impl AsRef<Path>) -> Self {
        Self {
            event,
            trace_id: trace_id.to_owned(),
            cwd: cwd.as_ref().to_path_buf(),
            tool_name: None,
            fields: Map::new(),
        }
    }

    /// The event with the field `key` set to `value`.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }

    /// The event about a call of `name` with `args` (the call's JSON, kept as text when it
    /// is not JSON).
    #[must_use]
    pub fn tool(mut self, name: &str, args: &str) -> Self {
        self.tool_name = Some(name.to_owned());
        let input = serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.to_owned()));
        self.with("tool_input", input)
    }

    /// The JSON a hook command reads: `hook_event_name`, `session_id`, `cwd`, `tool_name` for
    /// tool events, and the fields; `tool_input` also carries Claude Code's names of our
    /// arguments (`file_path` for `path`, `old_string`/`new_string` for `old`/`new`).
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("hook_event_name".into(), json!(self.event));
        object.insert("session_id".into(), json!(self.trace_id));
        object.insert("cwd".into(), json!(self.cwd.display().to_string()));
        if let Some(name) = &self.tool_name {
            object.insert("tool_name".into(), json!(name));
        }
        for (key, value) in &self.fields {
            object.insert(key.clone(), value.clone());
        }
        if let Some(Value::Object(input)) = object.get_mut("tool_input") {
            for (ours, claude) in [
                ("path", "file_path"),
                ("old", "old_string"),
                ("new", "new_string"),
            ] {
                if let Some(value) = input.get(ours).cloned() {
                    input.entry(claude).or_insert(value);
                }
            }
        }
        Value::Object(object)
    }
}

/// What runs on lifecycle events; the runner calls it and acts on a block.
#[async_trait]
pub trait Hooks: Send + Sync {
    /// Runs the hooks of `input`'s event; `Some(reason)` when one blocked it.
    async fn fire(&self, input: HookInput) -> Option<String>;
}

/// Fires `input` at `hooks`, if there are any.
pub async fn fire(hooks: Option<&dyn Hooks>, input: impl FnOnce() -> HookInput) -> Option<String> {
    match hooks {
        Some(hooks) => hooks.fire(input()).await,
        None => None,
    }
}

/// Runs a call of `name` with `args` from `tools` between its `PreToolUse` hooks (a block is
/// an error result the model sees, and the tool does not run) and its `PostToolUse` hooks (a
/// block's reason is added to the result).
pub async fn execute(
    hooks: Option<&dyn Hooks>,
    tools: &crate::ToolRegistry,
    name: &str,
    args: &str,
    ctx: &ToolContext,
) -> crate::ToolResult {
    let input = |event| HookInput::new(event, &ctx.trace_id, &ctx.workspace).tool(name, args);
    if let Some(reason) = fire(hooks, || input("PreToolUse")).await {
        let refused = format!("error: {name} was not run: a PreToolUse hook blocked it: {reason}");
        return crate::ToolResult::new(refused, true).with_outcome(crate::ToolOutcome::Refused);
    }
    let mut result = tools.execute(name, args, ctx).await;
    let after = || input("PostToolUse").with("tool_response", result.content.clone());
    if let Some(reason) = fire(hooks, after).await {
        result
            .content
            .push_str(&format!("\n\nPostToolUse hook: {reason}"));
    }
    result
}

/// `UserPromptSubmit` for the first message of trace `trace_id`: the error to refuse it with
/// when a hook blocked it.
pub async fn prompt_refused(
    hooks: Option<&dyn Hooks>,
    trace_id: &str,
    cwd: &Path,
    prompt: &str,
) -> Option<String> {
    let input = || HookInput::new("UserPromptSubmit", trace_id, cwd).with("prompt", prompt);
    let reason = fire(hooks, input).await?;
    Some(format!(
        "a UserPromptSubmit hook refused the prompt: {reason}"
    ))
}

/// `SessionStart` when a run of trace `trace_id` starts (a new trace, a resume, a continued
/// conversation).
pub async fn session_start(hooks: Option<&dyn Hooks>, trace_id: &str, cwd: &Path) {
    let input = || HookInput::new("SessionStart", trace_id, cwd).with("source", "startup");
    fire(hooks, input).await;
}

/// `Stop` (`SubagentStop` for a sub-trace) when the model answered without tool calls: the
/// message that sends it back to work when a hook blocked the stop. The hooks decide how often
/// they may (Claude Code's `stop_hook_active`: once a run).
pub async fn stop(hooks: Option<&dyn Hooks>, trace_id: &str, cwd: &Path) -> Option<String> {
    let event = if trace_id.contains('@') {
        "SubagentStop"
    } else {
        "Stop"
    };
    let reason = fire(hooks, || HookInput::new(event, trace_id, cwd)).await?;
    Some(format!("A {event} hook sent you back to work: {reason}"))
}

/// Where the runner fires the events of one trace's run: its hooks, the trace, its workspace.
#[derive(Clone, Copy)]
pub struct HookSite<'a> {
    hooks: Option<&'a dyn Hooks>,
    trace_id: &'a str,
    cwd: &'a Path,
}

impl std::fmt::Debug for HookSite<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookSite")
            .field("hooks", &self.hooks.is_some())
            .field("trace_id", &self.trace_id)
            .field("cwd", &self.cwd)
            .finish()
    }
}

impl<'a> HookSite<'a> {
    /// The events of trace `trace_id` working in `cwd`, fired at `hooks`.
    pub fn new(hooks: Option<&'a dyn Hooks>, trace_id: &'a str, cwd: &'a Path) -> Self {
        Self {
            hooks,
            trace_id,
            cwd,
        }
    }

    /// `UserPromptSubmit` for a user message that starts or continues a run: the error to
    /// refuse it with when a hook blocked it.
    pub async fn prompt(self, prompt: &str) -> Result<(), String> {
        match prompt_refused(self.hooks, self.trace_id, self.cwd, prompt).await {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The messages sent to a run while it works that no `UserPromptSubmit` hook refused, in
    /// their order; a refused one is left out (the hook's `hook_ran` event records why).
    pub async fn admitted(self, messages: Vec<String>) -> Vec<String> {
        if self.hooks.is_none() {
            return messages;
        }
        let mut admitted = Vec::with_capacity(messages.len());
        for message in messages {
            if self.prompt(&message).await.is_ok() {
                admitted.push(message);
            }
        }
        admitted
    }

    /// A compaction of the conversation (a summary that hides what came before it), asked for
    /// when `manual` (`/compact`), else because the context neared the window; `tokens_before`
    /// is what the conversation weighed.
    /// Fires `PreCompact` (what it blocks is not followed: the context must shrink).
    pub async fn compacting(self, manual: bool, tokens_before: usize) -> Compacting<'a> {
        let compacting = Compacting {
            site: self,
            manual,
            tokens_before,
        };
        fire(self.hooks, || compacting.input("PreCompact")).await;
        compacting
    }

    /// `SessionStart` when a run starts (a new trace, a resume, a continued conversation).
    pub async fn session_start(self) {
        session_start(self.hooks, self.trace_id, self.cwd).await;
    }

    /// `Stop` (`SubagentStop` for a sub-trace) when the model answered without tool calls:
    /// the message that sends it back to work when a hook blocked the stop.
    pub async fn stop(self) -> Option<String> {
        stop(self.hooks, self.trace_id, self.cwd).await
    }

    /// `Notification` (`idle_prompt`, as Claude Code names it) when the run of a main trace
    /// ended: the person's turn. A sub-trace's end notifies nobody.
    pub async fn run_ended(self) {
        if !self.trace_id.contains('@') {
            let message = "agent finished its turn and waits for your input";
            notify(self.hooks, self.trace_id, self.cwd, "idle_prompt", message).await;
        }
    }

    fn input(&self, event: &'static str) -> HookInput {
        HookInput::new(event, self.trace_id, self.cwd)
    }
}

/// The hooks of one compaction, `PreCompact` fired before the summary is asked for:
/// `PostCompact` once it is stored, with Claude Code's `trigger` (`manual` or `auto`) and
/// `custom_instructions`, and the tokens before (and after).
#[derive(Debug, Clone, Copy)]
pub struct Compacting<'a> {
    site: HookSite<'a>,
    manual: bool,
    tokens_before: usize,
}

impl Compacting<'_> {
    /// `PostCompact`, the summary weighing `tokens_after`.
    pub async fn after(&self, tokens_after: usize) {
        let input = || self.input("PostCompact").with("tokens_after", tokens_after);
        fire(self.site.hooks, input).await;
    }

    fn input(&self, event: &'static str) -> HookInput {
        let trigger = if self.manual { "manual" } else { "auto" };
        self.site
            .input(event)
            .with("trigger", trigger)
            .with("custom_instructions", "")
            .with("tokens_before", self.tokens_before)
    }
}

/// `Notification` when a run waits for the user: `notification_type` says for what (Claude
/// Code's `permission_prompt` for an approval, `elicitation_dialog` for an MCP server's
/// question, `idle_prompt` when a main trace's run ended), `message` says it in words.
pub async fn notify(
    hooks: Option<&dyn Hooks>,
    trace_id: &str,
    cwd: &Path,
    kind: &str,
    message: &str,
) {
    let input = || {
        HookInput::new("Notification", trace_id, cwd)
            .with("notification_type", kind)
            .with("message", message)
    };
    fire(hooks, input).await;
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
