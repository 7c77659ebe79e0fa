//! The command line's flags as the application's typed overrides (`agent_app::Overrides`), and
//! the application of a command: its configuration read once, with this binary as the sandbox
//! helper of `workspace-write` commands.

use agent_app::config::{ProviderOverrides, StoreOverrides};
use agent_app::{App, Overrides};
use agent_tools::SandboxMode;

use crate::cli::{ModelArgs, ProviderArgs, ServeModelArgs, TraceDirArg};

/// The provider flags as overrides.
pub(crate) fn provider(args: &ProviderArgs) -> ProviderOverrides {
    let mut overrides = ProviderOverrides::default();
    overrides.kind = args.provider.map(Into::into);
    overrides.model.clone_from(&args.model);
    overrides.base_url.clone_from(&args.base_url);
    overrides.api_key.clone_from(&args.api_key);
    overrides.script.clone_from(&args.script);
    overrides.context_window = args.context_window;
    overrides.no_stream = args.no_stream;
    overrides
}

/// `--trace-dir` and `--store` as overrides.
pub(crate) fn store(arg: &TraceDirArg) -> StoreOverrides {
    let mut overrides = StoreOverrides::default();
    overrides.trace_dir.clone_from(&arg.trace_dir);
    overrides.store.clone_from(&arg.store);
    overrides
}

/// The flags of a command that runs the model, with the global `--sandbox`.
pub(crate) fn overrides(args: &ModelArgs, sandbox: Option<SandboxMode>) -> Overrides {
    let mut overrides = Overrides::default();
    overrides.provider = provider(&args.llm);
    overrides.workspace.clone_from(&args.workspace);
    overrides.agent.clone_from(&args.agent);
    overrides.max_iterations = args.max_iterations;
    overrides.max_cost = args.max_cost;
    overrides.reasoning_effort = args.reasoning_effort.map(Into::into);
    overrides.thinking_budget = args.thinking_budget;
    overrides.instructions = args.no_instructions.then_some(false);
    overrides.closing_report = args.no_report.then_some(false);
    overrides.show_reasoning = args.show_reasoning.then_some(true);
    overrides.mcp.clone_from(&args.mcp);
    overrides.sandbox = sandbox;
    overrides.store = store(&args.trace_dir);
    overrides
}

/// The flags of `agent serve` and `agent worker`, with the global `--sandbox`.
pub(crate) fn served(
    args: &ServeModelArgs,
    trace_dir: &TraceDirArg,
    sandbox: Option<SandboxMode>,
) -> Overrides {
    let mut overrides = Overrides::default();
    overrides.provider = provider(&args.llm);
    overrides.workspace.clone_from(&args.workspace);
    overrides.instructions = args.no_instructions.then_some(false);
    overrides.closing_report = args.no_report.then_some(false);
    overrides.sandbox = sandbox;
    overrides.store = store(trace_dir);
    overrides
}

/// The overrides of a command that only names where traces are.
pub(crate) fn traces(trace_dir: &TraceDirArg) -> Overrides {
    let mut overrides = Overrides::default();
    overrides.store = store(trace_dir);
    overrides
}

/// The application of this command: agent.toml and the environment read once, `overrides` on
/// top, this binary as the sandbox helper.
pub(crate) fn app(overrides: Overrides) -> anyhow::Result<App> {
    let app = App::load(overrides)?;
    Ok(match std::env::current_exe() {
        Ok(exe) => app.with_sandbox_helper(exe),
        Err(_) => app,
    })
}

/// Says each notice on stderr.
pub(crate) fn say(notices: impl IntoIterator<Item = String>) {
    for notice in notices {
        crate::output::note(&notice);
    }
}

/// For commands that only read traces (or change existing ones): the store the flags, the
/// environment and agent.toml name. A trace folder that does not exist is not created: it reads
/// as an empty store.
pub(crate) async fn store_for(
    arg: &TraceDirArg,
) -> anyhow::Result<std::sync::Arc<dyn agent_execution::TraceStore>> {
    let app = app(traces(arg))?;
    say(app.store_notice());
    Ok(agent_app::store::open_to_read(app.store_location().0).await?)
}
