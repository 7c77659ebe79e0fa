//! The `bash` tool running a command for the runner rather than the model (a goal's check):
//! in the same sandbox as the model's commands, never offered to run again without it, its exit
//! code given back as a number.

use std::time::Duration;

use async_trait::async_trait;

use super::{
    BashTool, Confinement, Outcome, canonical_workspace, describe_status, execute, sandbox_note,
};
use crate::{CommandRun, CommandRunner, ToolContext, ToolError};

#[async_trait]
impl CommandRunner for BashTool {
    async fn run_command(
        &self,
        command: &str,
        timeout: Option<Duration>,
        ctx: &ToolContext,
    ) -> Result<CommandRun, ToolError> {
        let root = canonical_workspace(&ctx.workspace)?;
        let timeout = timeout
            .unwrap_or(ctx.limits.default_timeout)
            .min(ctx.limits.max_timeout);
        let confinement = Confinement::prepare(&self.sandbox, &root, &ctx.trace_id)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let ran = execute(&confinement, command, &root, timeout, ctx).await?;
        let (exit_code, status) = match &ran.outcome {
            Outcome::Exited(Ok(status)) => (status.code(), describe_status(*status)),
            Outcome::Exited(Err(e)) => (None, format!("waiting for the command failed: {e}")),
            Outcome::TimedOut => (None, format!("timed out after {} s", timeout.as_secs())),
            Outcome::Cancelled => (None, "cancelled".to_owned()),
        };
        let mut output = ran.streams.clone();
        output.push_str(&sandbox_note(&confinement, &ran.streams));
        Ok(CommandRun {
            exit_code,
            status,
            output,
        })
    }
}
