//! The model's reasoning as the `agent` binary shows it: a one-line summary in the progress
//! output by default, the whole text with `--show-reasoning`, the same in `agent show`; and the
//! reasoning flags reaching the requests.

use agent_test_support::cli::{code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::{Value, json};

use crate::agent_env;

const THOUGHT: &str = "The notes file should be read first, then summarised.";

/// Runs one task against a DeepSeek-style server with these extra flags; returns stderr, the
/// trace id, the environment and the server.
async fn run_with(
    flags: &[&str],
) -> (
    String,
    String,
    agent_test_support::cli::CliEnv,
    MockModelServer,
) {
    let env = agent_env();
    let server = MockModelServer::deepseek_thinking().await;
    server.push(
        Turn::tool_call("c1", "read_file", json!({"path": "notes.txt"})).with_reasoning(THOUGHT),
    );
    server.push(Turn::text("The notes say hello.").with_reasoning("Done reading."));
    let work = env.work();
    std::fs::write(env.path("work/notes.txt"), "hello\n").unwrap();
    let base = server.openai_base();
    let mut args = vec![
        "run",
        "--provider",
        "openai",
        "--base-url",
        &base,
        "--api-key",
        "sk-test",
        "--model",
        "deepseek-reasoner",
        "--workspace",
        &work,
        "--yes",
    ];
    args.extend_from_slice(flags);
    args.push("Summarise the notes");
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "The notes say hello.");
    let err = stderr(&output);
    let trace_id = err
        .split_whitespace()
        .skip_while(|w| *w != "trace")
        .nth(1)
        .unwrap()
        .to_owned();
    (err, trace_id, env, server)
}

#[tokio::test]
async fn progress_summarises_reasoning_unless_asked_to_show_it() {
    let (err, trace_id, env, server) = run_with(&[]).await;
    assert!(err.contains("thinking… (9 words)"), "{err}");
    assert!(!err.contains(THOUGHT), "{err}");
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert!(bodies[0].get("reasoning_effort").is_none());

    let shown = env.run(&["show", &trace_id, "--show-reasoning"]).await;
    assert!(
        stdout(&shown).contains(&format!("thinking: {THOUGHT}")),
        "{}",
        stdout(&shown)
    );
    let summary = env.run(&["show", &trace_id]).await;
    assert!(stdout(&summary).contains("thinking… (9 words)"));
    assert!(!stdout(&summary).contains(THOUGHT));

    let (err, _, _, server) = run_with(&["--show-reasoning", "--reasoning-effort", "high"]).await;
    assert!(err.contains(&format!("thinking: {THOUGHT}")), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "no escape codes off a terminal: {err:?}"
    );
    assert_eq!(server.requests()[0].body["reasoning_effort"], "high");
}
