//! A server's resources attached with `@server:uri` and its prompts as slash commands, in line
//! mode and in the full-screen UI, against a real server (`tests/mcp/catalog.mjs`, on the
//! official TypeScript SDK): what reaches the model is the message with the resource's
//! contents, or the prompt filled in.

use std::path::Path;
use std::time::Duration;

use agent_test_support::cli::{CliEnv, stderr};
use agent_test_support::pty::Terminal;
use serde_json::json;

use crate::mcp_oauth::all_text;

fn site() -> CliEnv {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/catalog.mjs");
    let env = crate::agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.catalog]\ncommand = \"node\"\nargs = [{:?}]\n",
            server.to_string_lossy()
        ),
    );
    env.write(
        "script.json",
        &json!([{"text": "Read it."}, {"text": "Greeted."}]).to_string(),
    );
    env
}

#[tokio::test]
async fn a_mention_attaches_the_resource_in_line_mode() {
    let env = site();
    let work = env.work();
    let mut child = env
        .agent(&[
            "chat",
            "--no-tui",
            "--script",
            "script.json",
            "--workspace",
            &work,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = "Look at @catalog:notes://missing please\nSummarise @catalog:notes://readme.\n";
    tokio::io::AsyncWriteExt::write_all(&mut stdin, lines.as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the chat ended within a minute")
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("cannot attach @catalog:notes://missing"),
        "{said}"
    );
    let traces = all_text(&env.traces());
    assert!(
        traces.contains("<resource server=\\\"catalog\\\" uri=\\\"notes://readme\\\">"),
        "{traces}"
    );
    assert!(
        traces.contains("The notes of the catalog server."),
        "{traces}"
    );
    assert!(
        !traces.contains("notes://missing"),
        "nothing was sent for it"
    );
}

#[test]
fn prompts_complete_and_mentions_attach_in_the_full_screen_ui() {
    let env = site();
    let args = [
        "chat",
        "--script",
        "script.json",
        "--workspace",
        &env.work(),
    ];
    let mut terminal = Terminal::spawn(env.command(&args));
    terminal.wait_for("Type a message and Enter");
    terminal.send("Summarise @catalog:notes://rea");
    terminal.wait_for("@catalog:notes://readme");
    terminal.send("\t");
    terminal.send("\r");
    terminal.wait_for("Read it.");
    // The turn is over (the status line's mark turns hollow) before the next message is typed:
    // one sent in the instant a turn ends is kept in the trace but left for the next turn.
    terminal.wait_until("the turn to end", |screen| screen.contains("○ scripted"));
    terminal.send("/mcp__catalog__gr");
    terminal.wait_for("/mcp__catalog__greet");
    terminal.send("\tname=Ada\r");
    terminal.wait_for("Greeted.");
    let traces = all_text(&env.traces());
    assert!(
        traces.contains("The notes of the catalog server."),
        "{traces}"
    );
    assert!(traces.contains("Say hello to Ada in French."), "{traces}");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
}
