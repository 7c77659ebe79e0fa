//! The model's context window for a run: the configured one, else what the model's server
//! said of itself ([`LlmClient::learn_window`], asked once when the run starts), else the
//! client's table; a refusal that states a smaller window wins over all of them for the rest of
//! the run (a server cannot take more than it says, whatever the configuration claims). What
//! every request carries against it, and the words of its errors, are `agent-context`'s
//! ([`agent_context::window`]).

use agent_llm::{ContextWindow, LlmClient};

use crate::spec::AgentSpec;

pub(crate) use agent_context::window::{
    Floor, RunWindows as Windows, as_estimated, compaction_due, not_smaller, pruning_only,
    pruning_only_notice, summary_cap,
};

/// The window the agent's requests are built for: the configured one, else the one the
/// client learned from its server, else the client's table; a smaller `refused` (stated by a
/// refusal during the run) wins.
pub(crate) fn current(
    spec: &AgentSpec,
    llm: &dyn LlmClient,
    model: &str,
    refused: Option<ContextWindow>,
) -> ContextWindow {
    let window = spec.context_window.map(ContextWindow::configured);
    let window = window.or_else(|| llm.known_window(model));
    let window = window.unwrap_or_else(|| ContextWindow::of_info(model, llm.model_info(model)));
    refused
        .filter(|r| r.tokens < window.tokens)
        .unwrap_or(window)
}
