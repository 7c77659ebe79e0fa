//! `shell_output(id?, wait_secs?)` and `shell_kill(id)`: the model's side of background shells.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::shell::Read;
use super::{SHELLS_META, ShellStatus, of_trace};
use crate::{Risk, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutput, TypedTool};

/// The longest `wait_secs` a call may ask for.
const MAX_WAIT: u64 = 120;
/// How often a waiting `shell_output` looks at its shells.
const POLL: Duration = Duration::from_millis(50);

/// `shell_output(id?, wait_secs?)`: what background shells printed since the last read, and
/// whether they ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellOutputTool;

/// Arguments of `shell_output`.
#[derive(Debug, Deserialize)]
pub struct ShellOutputArgs {
    /// The shell; every shell of the run when absent.
    pub id: Option<String>,
    /// Seconds to wait for the shell to print something or end, when it has nothing new.
    pub wait_secs: Option<u64>,
}

/// `shell_kill(id)`: stops a background shell and everything it started.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellKillTool;

/// Arguments of `shell_kill`.
#[derive(Debug, Deserialize)]
pub struct ShellKillArgs {
    /// The shell.
    pub id: String,
}

#[async_trait]
impl TypedTool for ShellOutputTool {
    type Args = ShellOutputArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "shell_output".to_owned(),
            description: "Read what a background shell (started with bash and \"background\": \
                          true) printed since the last read, stdout and stderr together, and \
                          whether it is still running or how it ended. Without an id, every \
                          background shell of this run."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The shell's id (sh-…); every shell when omitted." },
                    "wait_secs": { "type": "integer", "minimum": 0, "description": "Wait up to this many seconds (at most 120) for new output or the end, when there is nothing new yet." }
                },
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    fn timeout(&self, args: &ShellOutputArgs, limits: &ToolLimits) -> Duration {
        let wait = Duration::from_secs(args.wait_secs.unwrap_or(0).min(MAX_WAIT));
        limits.default_timeout.max(wait + Duration::from_secs(5))
    }

    async fn run(&self, args: ShellOutputArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let shells = of_trace(&ctx.trace_id);
        let chosen: Vec<_> = match &args.id {
            Some(id) => match shells.iter().find(|shell| shell.id == id.trim()) {
                Some(shell) => vec![shell.clone()],
                None => return Err(unknown(id, &shells)),
            },
            None => shells,
        };
        if chosen.is_empty() {
            return Ok(ToolOutput::text(
                "No background shell was started in this run.",
            ));
        }
        if let Some(wait) = args.wait_secs.filter(|secs| *secs > 0) {
            // Until one of them printed something or ended, the time is up, or the run stops.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(wait.min(MAX_WAIT));
            while !chosen.iter().any(|shell| shell.has_news())
                && tokio::time::Instant::now() < deadline
                && !ctx.cancel.is_cancelled()
            {
                tokio::time::sleep(POLL).await;
            }
        }
        let reads: Vec<Read> = chosen.iter().map(|shell| shell.read()).collect();
        let mut text = String::new();
        for read in &reads {
            text.push_str(&describe(read));
        }
        let statuses: Vec<&ShellStatus> = reads.iter().map(|read| &read.status).collect();
        Ok(annotated(ToolOutput::text(text), &statuses))
    }
}

#[async_trait]
impl TypedTool for ShellKillTool {
    type Args = ShellKillArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "shell_kill".to_owned(),
            description: "Stop a background shell and everything it started; returns what it \
                          printed since the last read."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The shell's id (sh-…)." }
                },
                "required": ["id"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        // It stops only what the model started itself.
        Risk::ReadOnly
    }

    async fn run(&self, args: ShellKillArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let shells = of_trace(&ctx.trace_id);
        let Some(shell) = shells.iter().find(|shell| shell.id == args.id.trim()) else {
            return Err(unknown(&args.id, &shells));
        };
        let was = shell.status().state;
        shell.kill();
        shell.ended().await;
        let read = shell.read();
        let said = if was.ended() {
            format!("Shell {} had already ended.\n", shell.id)
        } else {
            format!("Shell {} was stopped.\n", shell.id)
        };
        let text = format!("{said}{}", describe(&read));
        Ok(annotated(ToolOutput::text(text), &[&read.status]))
    }
}

/// One shell's part of a result: a line saying what it is and how it is, then its new output.
fn describe(read: &Read) -> String {
    let status = &read.status;
    let mut text = format!(
        "shell {} (`{}`): {}\n",
        status.id, status.command, status.state
    );
    if read.dropped > 0 {
        text.push_str(&format!(
            "[... {} bytes printed before this were not read in time and are gone ...]\n",
            read.dropped
        ));
    }
    if read.text.is_empty() {
        text.push_str("(no new output)\n");
    } else {
        text.push_str(&read.text);
        if !read.text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// `output` with the shells' statuses in its metadata.
pub(crate) fn annotated(mut output: ToolOutput, statuses: &[&ShellStatus]) -> ToolOutput {
    output
        .metadata
        .insert(SHELLS_META.to_owned(), json!(statuses));
    output
}

fn unknown(id: &str, shells: &[std::sync::Arc<super::Shell>]) -> ToolError {
    let ids: Vec<&str> = shells.iter().map(|shell| shell.id.as_str()).collect();
    if ids.is_empty() {
        ToolError::failed(format!(
            "there is no background shell {id:?}: none was started in this run"
        ))
    } else {
        ToolError::failed(format!(
            "there is no background shell {id:?}; this run's are {}",
            ids.join(", ")
        ))
    }
}
