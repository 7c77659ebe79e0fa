//! Tools the model can call: the [`Tool`] trait, the [`ToolRegistry`] and the built-in file and
//! shell tools.
//!
//! A tool is a name, a description, a JSON schema of its parameters and an async call. Most tools
//! implement [`TypedTool`], which parses the model's arguments into a serde type and turns a
//! malformed argument into a precise message; [`TypedTool::into_tool`] erases the type so the
//! registry can hold every tool as an `Arc<dyn Tool>`.
//!
//! [`ToolRegistry::execute`] is the one entry point of the runner: it turns everything that can go
//! wrong (unknown tool, malformed JSON, wrong argument types, tool errors, panics, timeouts,
//! cancellation) into a [`ToolResult`] the model sees, and never panics or hangs.
//!
//! The built-in tools (`read_file`, `write_file`, `edit_file`, `glob_files`, `grep`, `bash`) are
//! confined to the workspace root by [`resolve_in_workspace`]; `bash` commands also run in a
//! kernel sandbox ([`sandbox`]: Landlock and seccomp on Linux), `workspace-write` unless the
//! caller says otherwise, with secrets left out of their environment. Who may run a risky call
//! is said here too: [`ApprovalRules`] ([`rules`]) allow or deny calls before anyone is asked,
//! reading a `bash` script's commands without running it, and an [`Approval`] ([`approval`])
//! refuses the rest, runs them, or asks an [`ApprovalHandler`]. The names in
//! [`RESERVED_TOOL_NAMES`] belong to tools the runner registers itself.
//!
//! This crate owns tools and their confinement; it must not depend on any other workspace crate
//! (the runner, stores and providers build on it, never the other way round).
//!
//! ```
//! use agent_tools::{SandboxConfig, SandboxMode, ToolRegistry};
//!
//! // Commands may read anywhere but write only to the run's temporary folder.
//! let registry = ToolRegistry::with_builtins_in(SandboxConfig::new(SandboxMode::ReadOnly));
//! assert!(registry.names().iter().any(|name| name == "bash"));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod approval;
mod bash;
mod beneath;
pub mod filter;
mod fs;
mod guard;
pub mod hooks;
pub mod interaction;
mod output;
mod path;
mod picture;
mod process;
mod registry;
pub mod rules;
pub mod sandbox;
mod search;
pub mod shells;
mod tool_usage;
mod typed;
#[cfg(feature = "web")]
pub mod web;
mod write_guard;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use approval::{
    Approval, ApprovalDecision, ApprovalHandler, ApprovalRequest, RerunApprover, RerunRequest,
};
/// The attribute [`Tool`] and [`TypedTool`] implementations need.
pub use async_trait::async_trait;
pub use bash::{BashArgs, BashTool};
pub use filter::{RiskLimit, ToolFilter};
pub use fs::{
    EditFileArgs, EditFileTool, ReadFileArgs, ReadFileTool, WriteFileArgs, WriteFileTool,
};
pub use output::{Keep, truncate_output};
pub use path::{canonical_workspace, resolve_in_workspace};
pub use picture::{PICTURE_EXTENSIONS, mentioned_pictures, picture_mentions};
pub use registry::{RegisterError, ToolRegistry, ToolResult};
pub use rules::{ApprovalRules, RuleError, RuleVerdict};
pub use sandbox::{SandboxConfig, SandboxMode};
pub use search::{GlobFilesArgs, GlobFilesTool, GrepArgs, GrepTool};
pub use shells::{ShellKillTool, ShellOutputTool};
/// The cancellation token of [`ToolContext::cancel`].
pub use tokio_util::sync::CancellationToken;
pub use tool_usage::{TOOL_USAGE, take_usage};
pub use typed::TypedTool;
pub use typed::check_arguments;
pub use write_guard::WriteGuard;

/// Names of tools the runner registers itself (`goal`, `read_progress`, `explore`, `delegate`).
///
/// No built-in tool of this module uses them; the registry accepts them like any other name.
pub const RESERVED_TOOL_NAMES: [&str; 4] = ["goal", "read_progress", "explore", "delegate"];

/// Limits every tool call runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// The largest tool result, in bytes, the model is shown; longer output is truncated with a
    /// note saying how much was cut.
    pub max_output_bytes: usize,
    /// How long a tool call may run when it asks for nothing else; also the default timeout of
    /// `bash`.
    pub default_timeout: Duration,
    /// The longest timeout a call may ask for (the upper bound of `bash`'s `timeout_secs`).
    pub max_timeout: Duration,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            max_output_bytes: 50_000,
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
        }
    }
}

/// What a tool call can see of the run it belongs to.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The canonical workspace root; file tools never leave it.
    pub workspace: PathBuf,
    /// The trace the call belongs to.
    pub trace_id: String,
    /// The goal that was current when the model made the call, if any.
    pub goal_id: Option<String>,
    /// The id of the call, as the model gave it, when the runner runs one call in this context
    /// (a context shared by a turn's calls has none).
    pub call_id: Option<String>,
    /// Cancelled when the run is cancelled; long-running tools stop early when it fires.
    pub cancel: CancellationToken,
    /// Output and time limits of the call.
    pub limits: ToolLimits,
}

impl ToolContext {
    /// A context for `workspace` (canonicalized here) and `trace_id`, with no goal, a fresh
    /// cancellation token and default limits.
    ///
    /// # Errors
    ///
    /// Fails when the workspace does not exist or cannot be canonicalized.
    pub fn new(
        workspace: impl Into<PathBuf>,
        trace_id: impl Into<String>,
    ) -> std::io::Result<Self> {
        Ok(Self {
            workspace: std::fs::canonicalize(workspace.into())?,
            trace_id: trace_id.into(),
            goal_id: None,
            call_id: None,
            cancel: CancellationToken::new(),
            limits: ToolLimits::default(),
        })
    }
}

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// The JSON schema of the arguments, always of `"type": "object"`.
    pub parameters: serde_json::Value,
}

/// Whether a tool call may change anything; risky calls wait for approval in approval mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// The tool only reads.
    ReadOnly,
    /// The tool writes files, runs commands or otherwise has effects.
    Risky,
}

/// How a call ended, where a tool (or the runner) can say more than success or failure: a
/// command's exit status, a refusal, a timeout, a cancellation. The runner records it with the
/// call's result, as its JSON (`{"kind": "exited", "code": 1}`, which
/// `agent_execution::meta::ToolOutcome` reads), so that people are shown a failed command as
/// failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolOutcome {
    /// A command ran to its end and exited with this code (0: success).
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal ended the command.
    Killed {
        /// The signal's number.
        signal: i32,
    },
    /// The call was not run (a person, an approval rule, the approval policy or a limit said
    /// no), or the sandbox refused what its command tried.
    Refused,
    /// The call ran out of time and was stopped.
    TimedOut,
    /// The run was cancelled while the call ran, or before it started.
    Cancelled,
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The text the model sees.
    pub content: String,
    /// Whether the call did not achieve what was asked (for example a command that timed out),
    /// even though the tool itself worked and has output to show.
    pub is_error: bool,
    /// How the call ended, when the tool says (`bash` does).
    pub outcome: Option<ToolOutcome>,
    /// Pictures the call returns (`read_file` of a PNG), shown to a model that takes images.
    pub images: Vec<ToolImage>,
    /// Annotations stored on the call's tool message (e.g. a background shell's state, under
    /// [`shells::SHELLS_META`]); the model does not see them.
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

impl ToolOutput {
    /// A successful output.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            outcome: None,
            images: Vec::new(),
            metadata: serde_json::Map::new(),
        }
    }

    /// An output that reports a failure but still carries content (for example partial output).
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(content)
        }
    }

    /// The same output, saying how the call ended.
    #[must_use]
    pub fn with_outcome(mut self, outcome: ToolOutcome) -> Self {
        self.outcome = Some(outcome);
        self
    }

    /// The same output with `image` attached.
    #[must_use]
    pub fn with_image(mut self, image: ToolImage) -> Self {
        self.images.push(image);
        self
    }
}

/// A picture a tool returns: its bytes and their media type (`image/png`, `image/jpeg`,
/// `image/gif` or `image/webp`, see [`image_media_type`]).
#[derive(Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// The media type.
    pub media_type: String,
    /// The encoded picture, as read.
    pub data: Vec<u8>,
}

impl std::fmt::Debug for ToolImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolImage")
            .field("media_type", &self.media_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// The media type of a picture a model can be shown, from its first bytes: PNG, JPEG, GIF or
/// WebP; `None` for anything else.
///
/// ```
/// assert_eq!(agent_tools::image_media_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
/// assert_eq!(agent_tools::image_media_type(b"GIF89a"), Some("image/gif"));
/// assert_eq!(agent_tools::image_media_type(b"hello"), None);
/// ```
pub fn image_media_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

/// Why a tool call failed; the registry shows it to the model as `error: <message>`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments did not match the tool's parameters.
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments {
        /// The tool that was called.
        tool: String,
        /// Which argument was wrong and what was expected.
        message: String,
    },
    /// A path resolved to somewhere outside the workspace.
    #[error("path {path:?} is outside the workspace")]
    OutsideWorkspace {
        /// The path as the model gave it.
        path: String,
    },
    /// A path does not exist.
    #[error("{path:?} does not exist")]
    NotFound {
        /// The path as the model gave it.
        path: String,
    },
    /// An I/O operation failed.
    #[error("cannot {action} {path:?}: {source}")]
    Io {
        /// What was being done, for example "read".
        action: &'static str,
        /// The path as the model gave it.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The tool could not do what was asked; the message says why and what to do instead.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// A [`ToolError::Failed`] with `message`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// An I/O error while doing `action` on `path`; a missing file becomes
    /// [`ToolError::NotFound`].
    pub fn io(action: &'static str, path: &str, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            Self::NotFound {
                path: path.to_owned(),
            }
        } else {
            Self::Io {
                action,
                path: path.to_owned(),
                source,
            }
        }
    }
}

/// A tool the model can call.
///
/// The trait is object safe; the registry holds tools as `Arc<dyn Tool>`. Most tools implement
/// [`TypedTool`] instead and are erased with [`TypedTool::into_tool`].
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool's name, description and parameter schema.
    fn definition(&self) -> ToolDefinition;

    /// Whether [`definition`](Tool::definition) returns the same definition at every call, so
    /// that a caller may ask once and keep it: the runner then builds the tool list it sends
    /// the model once per run instead of at every turn. `false` (the default) for a tool whose
    /// description or schema may change while it is registered.
    fn definition_is_fixed(&self) -> bool {
        false
    }

    /// Whether calls need approval in approval mode.
    fn risk(&self) -> Risk;

    /// How long the registry lets a call with `args` run before it is abandoned.
    ///
    /// The default is `limits.default_timeout`; a tool that takes its own timeout argument
    /// returns a little more than that, so its own timeout fires first.
    fn timeout(&self, args: &serde_json::Value, limits: &ToolLimits) -> Duration {
        let _ = args;
        limits.default_timeout
    }

    /// Runs the tool with the model's arguments (a JSON object).
    async fn call(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;

    /// The same tool with the commands it runs confined at most as `mode` allows (the stricter
    /// of its own sandbox and `mode`), for an agent whose profile asks for a stricter sandbox;
    /// `None` for a tool that runs no commands (the default), which stays as it is.
    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        let _ = mode;
        None
    }

    /// How to run a shell command as this tool runs the model's, in its sandbox, for a caller
    /// that is not the model (a goal's check); `None` for a tool that runs no commands (the
    /// default).
    fn command_runner(&self) -> Option<Arc<dyn CommandRunner>> {
        None
    }
}

/// What one command run by a [`CommandRunner`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRun {
    /// Its exit code; `None` when it was killed (a signal, its timeout, a cancel) or could not
    /// be waited for.
    pub exit_code: Option<i32>,
    /// How it ended, in words: `exit code: 1`, `timed out after 120 s`, ...
    pub status: String,
    /// Its standard output and error, as the `bash` tool shows them (long output cut in the
    /// middle).
    pub output: String,
}

impl CommandRun {
    /// True when the command exited with code 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Runs a shell command in the workspace the way a tool runs the model's: confined, in its own
/// process group, killed with everything it started when it ends, times out or is cancelled.
#[async_trait]
pub trait CommandRunner: Send + Sync {
    /// Runs `command` in `ctx`'s workspace with `timeout` (the tool's default when `None`,
    /// bounded by `ctx.limits`).
    async fn run_command(
        &self,
        command: &str,
        timeout: Option<Duration>,
        ctx: &ToolContext,
    ) -> Result<CommandRun, ToolError>;
}

/// The built-in file, search and shell tools, in a stable order; `bash` in the default
/// (`workspace-write`) sandbox.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    builtin_tools_with(SandboxConfig::default())
}

/// The built-in tools, `bash` running its commands in `sandbox`, and the file tools writing
/// within it ([`WriteGuard`]: nothing under `read-only`, never a protected path).
pub fn builtin_tools_with(sandbox: SandboxConfig) -> Vec<Arc<dyn Tool>> {
    vec![
        ReadFileTool.into_tool(),
        WriteFileTool::guarded(WriteGuard::new(&sandbox)).into_tool(),
        EditFileTool::guarded(WriteGuard::new(&sandbox)).into_tool(),
        GlobFilesTool.into_tool(),
        GrepTool.into_tool(),
        BashTool::new(sandbox).into_tool(),
        ShellOutputTool.into_tool(),
        ShellKillTool.into_tool(),
    ]
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
