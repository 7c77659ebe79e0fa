//! The integration tests of `agent-cli`, in one test binary: the `agent` binary as a user runs
//! it, in a temporary environment with an isolated home, against the scripted provider, the
//! workspace's mock model server or the reference MCP servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod agent_depth;
mod agents;
mod approvals;
mod background_shells;
mod bare;
mod budgets;
mod chat;
mod chat_errors;
mod chat_rewind;
mod chat_turns;
mod cli;
mod confinement;
mod continue_run;
mod custom_commands;
mod fork;
mod goals;
mod habits;
mod hooks;
mod hooks_turns;
mod images;
mod instructions;
mod interrupted;
mod limits;
mod line_mode;
mod local_servers;
mod mcp;
mod mcp_catalog;
mod mcp_client_credentials;
mod mcp_elicit_http;
mod mcp_elicit_tui;
mod mcp_mentions;
mod mcp_oauth;
mod mcp_sandbox;
mod otel;
mod parity;
mod plan_edit;
mod plan_templates;
mod plugins;
mod reasoning;
mod responses;
mod rewind;
mod run_serve;
mod sandbox_profiles;
mod sandbox_rerun;
mod seams;
mod serve;
mod skills;
mod store_pg;
mod streaming;
mod terminal_output;
mod trace_protection;
mod truncated;
mod tui;
mod tui_rewind;
mod tui_session;
mod tui_terminal;
mod unverifiable;
mod usage_errors;
mod web_search;
mod web_tools;

use agent_test_support::cli::CliEnv;
use agent_test_support::mock_model::MockModelServer;

/// Answers the question of the full-screen UI's modal with `keys` (a pick, then `\r`), as a
/// person does: after looking at it for a moment, since keys that follow typing are the
/// message's, not the question's.
fn answer_question(terminal: &mut agent_test_support::pty::Terminal, keys: &str) {
    std::thread::sleep(std::time::Duration::from_millis(900));
    terminal.send(keys);
}

/// A fresh environment for this crate's `agent` binary.
fn agent_env() -> CliEnv {
    CliEnv::new(env!("CARGO_BIN_EXE_agent"))
}

/// The model options of a command that talks to `server` (OpenAI's wire format), working in
/// the environment's workspace.
fn on_server(env: &CliEnv, server: &MockModelServer) -> Vec<String> {
    on_provider(env, server, "openai", "gpt-4o-mini")
}

/// The model options of a command that talks to `server` in `provider`'s wire format
/// (`anthropic`, or one of OpenAI's) with `model`, working in the environment's workspace.
fn on_provider(env: &CliEnv, server: &MockModelServer, provider: &str, model: &str) -> Vec<String> {
    let base = match provider {
        "anthropic" => server.anthropic_base(),
        _ => server.openai_base(),
    };
    [
        "--provider",
        provider,
        "--base-url",
        &base,
        "--api-key",
        "sk-test",
        "--model",
        model,
        "--workspace",
        &env.work(),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The events of the one trace of the environment, as its `events.jsonl` holds them.
fn logged_events(env: &CliEnv) -> Vec<serde_json::Value> {
    let trace = (std::fs::read_dir(env.traces()).unwrap())
        .map(|entry| entry.unwrap().path())
        .find(|path| path.join("events.jsonl").is_file())
        .expect("a trace");
    let log = std::fs::read_to_string(trace.join("events.jsonl")).unwrap();
    log.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
