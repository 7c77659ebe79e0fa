//! The tool registry: tools by name, their definitions for the model, and [`ToolRegistry::execute`],
//! which turns every way a call can go wrong into a result the model sees.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::Value;

use super::output::{Keep, truncate_output};
use super::{
    Risk, SandboxConfig, Tool, ToolContext, ToolDefinition, ToolError, ToolImage, ToolOutcome,
    ToolOutput, builtin_tools_with,
};

/// How long a tool may take to finish on its own after the run was cancelled, before its task is
/// aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// How many characters of an unknown tool's name its error shows.
const MAX_SHOWN_NAME: usize = 100;

/// The result of a tool call as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The text of the tool message; errors start with `error: `.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// How the call ended, when the tool or the registry says: a command's exit status, a
    /// refusal, the timeout, a cancellation.
    pub outcome: Option<ToolOutcome>,
    /// Pictures the call returned ([`ToolOutput::images`]).
    pub images: Vec<ToolImage>,
    /// Annotations for the tool message ([`ToolOutput::metadata`]).
    pub metadata: serde_json::Map<String, Value>,
}

impl ToolResult {
    /// A result of this text, failed or not, that says nothing more of how the call ended.
    pub fn new(content: impl Into<String>, is_error: bool) -> Self {
        Self {
            content: content.into(),
            is_error,
            outcome: None,
            images: Vec::new(),
            metadata: serde_json::Map::new(),
        }
    }

    fn error(message: impl fmt::Display) -> Self {
        Self::new(format!("error: {message}"), true)
    }

    /// The same result, saying how the call ended.
    #[must_use]
    pub fn with_outcome(mut self, outcome: ToolOutcome) -> Self {
        self.outcome = Some(outcome);
        self
    }
}

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// A tool with this name is already registered.
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    /// The name is not 1 to 64 ASCII letters, digits, `_` or `-`, as model APIs require.
    #[error("invalid tool name {0:?}: use 1 to 64 ASCII letters, digits, '_' or '-'")]
    InvalidName(String),
}

/// The tools available to a run, by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the built-in file, search and shell tools, `bash` in the default
    /// (`workspace-write`) sandbox.
    pub fn with_builtins() -> Self {
        Self::with_builtins_in(SandboxConfig::default())
    }

    /// A registry of the built-in tools, `bash` running its commands in `sandbox`.
    pub fn with_builtins_in(sandbox: SandboxConfig) -> Self {
        let mut registry = Self::new();
        for tool in builtin_tools_with(sandbox) {
            let name = tool.definition().name;
            registry.tools.insert(name, tool);
        }
        registry
    }

    /// Adds a tool under the name in its definition.
    ///
    /// # Errors
    ///
    /// Fails when the name is taken or is not a valid tool name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegisterError> {
        let name = tool.definition().name;
        let valid = (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(RegisterError::InvalidName(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegisterError::Duplicate(name));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Adds a tool, or puts it in the place of the tool of the same name (e.g. `read_file`
    /// reading through an editor); returns the tool it replaced.
    ///
    /// # Errors
    ///
    /// Fails when the name is not a valid tool name.
    pub fn replace(&mut self, tool: Arc<dyn Tool>) -> Result<Option<Arc<dyn Tool>>, RegisterError> {
        let name = tool.definition().name;
        let previous = self.tools.remove(&name);
        match self.register(tool) {
            Ok(()) => Ok(previous),
            Err(error) => {
                if let Some(previous) = previous {
                    self.tools.insert(name, previous);
                }
                Err(error)
            }
        }
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// The risk of the tool named `name`.
    pub fn risk(&self, name: &str) -> Option<Risk> {
        self.tools.get(name).map(|tool| tool.risk())
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// The definitions of all tools, sorted by name.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.values().map(|tool| tool.definition()).collect()
    }

    /// Whether every tool's definition is fixed ([`Tool::definition_is_fixed`]): then
    /// [`definitions`](Self::definitions) returns the same list for as long as the registry is
    /// not changed, and a caller may keep it.
    pub fn definitions_are_fixed(&self) -> bool {
        self.tools.values().all(|tool| tool.definition_is_fixed())
    }

    /// Runs the tool `name` with the model's raw JSON arguments (`""` counts as `{}`).
    ///
    /// Never fails, panics or hangs: an unknown tool, malformed JSON, invalid arguments, a tool
    /// error, a panic in the tool, the tool's timeout and cancellation through `ctx.cancel` all
    /// become error results. Content longer than `ctx.limits.max_output_bytes` is truncated.
    pub async fn execute(&self, name: &str, raw_arguments: &str, ctx: &ToolContext) -> ToolResult {
        let Some(tool) = self.tools.get(name) else {
            // The name comes from the model: show only its start, however long it is.
            let shown: String = name.chars().take(MAX_SHOWN_NAME).collect();
            let cut = if shown.len() < name.len() { "…" } else { "" };
            return ToolResult::error(format!(
                "unknown tool {shown:?}{cut}; available tools: {}",
                self.names().join(", ")
            ));
        };
        let args = if raw_arguments.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str::<Value>(raw_arguments) {
                Ok(args) => args,
                Err(e) => {
                    return ToolResult::error(format!(
                        "the arguments for {name} are not valid JSON ({e}); send a JSON object"
                    ));
                }
            }
        };
        if ctx.cancel.is_cancelled() {
            return ToolResult::error(format!("{name} was not run because the run was cancelled"))
                .with_outcome(ToolOutcome::Cancelled);
        }
        let timeout = tool.timeout(&args, &ctx.limits);
        let mut result = run_guarded(name, Arc::clone(tool), args, ctx, timeout).await;
        result.content = truncate_output(
            &result.content,
            ctx.limits.max_output_bytes,
            Keep::HeadAndTail,
        );
        result
    }
}

/// Runs one call, so that a panic is caught, bounded by `timeout` and `ctx.cancel`.
///
/// The call is polled once where it was made: a tool that answers at once (the goal tools,
/// work done in process) costs no task and no timer, so the step goes on on the same thread. A
/// call that has to wait (file tools, commands, MCP servers) moves to a task of its own, where
/// the timeout and the cancellation watch it.
async fn run_guarded(
    name: &str,
    tool: Arc<dyn Tool>,
    args: Value,
    ctx: &ToolContext,
    timeout: Duration,
) -> ToolResult {
    let task_ctx = ctx.clone();
    let mut call: CallFuture = Box::pin(async move { tool.call(args, &task_ctx).await });
    let first = std::future::poll_fn(|cx| {
        Poll::Ready(panic::catch_unwind(AssertUnwindSafe(|| {
            call.as_mut().poll(cx)
        })))
    })
    .await;
    let joined = match first {
        Ok(Poll::Ready(output)) => Ok(output),
        Err(payload) => return crashed(name, payload.as_ref()),
        Ok(Poll::Pending) => {
            // Polled again in its task, with that task's waker, before anything else.
            let mut task = AbortOnDrop(tokio::spawn(call));
            let task = &mut task.0;
            tokio::select! {
                joined = &mut *task => joined,
                () = tokio::time::sleep(timeout) => {
                    task.abort();
                    return ToolResult::error(format!(
                        "{name} timed out after {} s and was stopped",
                        timeout.as_secs_f64()
                    ))
                    .with_outcome(ToolOutcome::TimedOut);
                }
                () = ctx.cancel.cancelled() => {
                    // A tool that watches the token reports what it got done; give it a
                    // moment to.
                    match tokio::time::timeout(CANCEL_GRACE, &mut *task).await {
                        Ok(joined) => joined,
                        Err(_) => {
                            task.abort();
                            return ToolResult::error(format!("{name} was cancelled"))
                                .with_outcome(ToolOutcome::Cancelled);
                        }
                    }
                }
            }
        }
    };
    match joined {
        Ok(Ok(output)) => ToolResult {
            content: output.content,
            is_error: output.is_error,
            outcome: output.outcome,
            images: output.images,
            metadata: output.metadata,
        },
        Ok(Err(error)) => ToolResult::error(error),
        Err(e) if e.is_panic() => crashed(name, e.into_panic().as_ref()),
        Err(_) => {
            ToolResult::error(format!("{name} was cancelled")).with_outcome(ToolOutcome::Cancelled)
        }
    }
}

/// Aborts a tool task when the call is abandoned, so a dropped `execute` future leaves nothing
/// running (an aborted `bash` call kills its process group).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A tool call in flight.
type CallFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

/// The result of a call whose tool panicked.
fn crashed(name: &str, payload: &(dyn Any + Send)) -> ToolResult {
    ToolResult::error(format!("{name} crashed: {}", panic_message(payload)))
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("the tool panicked")
}
