//! A run that the crash test kills: it prints its trace id, then works through a scripted task
//! whose last tool call sleeps until the process is killed.
//!
//! Usage: `e2e-child <trace_dir> <workspace>`.

use std::sync::Arc;

use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_store_fs::FileSystemTraceStore;
use agent_tools::ToolRegistry;
use anyhow::Context;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let trace_dir = args.next().context("missing trace dir")?;
    let workspace = args.next().context("missing workspace")?;
    let store = Arc::new(FileSystemTraceStore::open(&trace_dir)?);
    let llm = Arc::new(ScriptedClient::new(vec![
        ScriptedTurn::tool_call("goal", json!({"add": "Prepare, Wait", "focus": "1"})),
        ScriptedTurn::tool_call("write_file", json!({"path": "a.txt", "content": "a"})),
        ScriptedTurn::tool_call("goal", json!({"done": "a.txt written", "focus": "2"})),
        ScriptedTurn::tool_call("bash", json!({"command": "sleep 60"})),
        ScriptedTurn::text("unreachable"),
    ]));
    let options = RunnerOptions::new("scripted", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    let runner = AgentRunner::new(store, llm, ToolRegistry::with_builtins(), options);
    let trace_id = runner.create("Prepare and wait").await?;
    #[allow(clippy::print_stdout)]
    {
        println!("{trace_id}");
    }
    runner.drive(&trace_id, CancellationToken::new()).await?;
    Ok(())
}
