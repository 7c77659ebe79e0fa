//! `agent chat` turn by turn: the answer on the screen while the model is still sending it,
//! `/help` listing the commands, `/fork` moving the conversation to a fork of its trace, and
//! `--continue` taking an existing trace further under the same id.

use std::process::Stdio;
use std::time::Duration;

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::{agent_env, on_server};

/// `agent chat <extra>` with the lines of `input` piped in; returns what it printed.
async fn piped_chat(
    env: &CliEnv,
    server: &MockModelServer,
    extra: &[&str],
    input: &str,
) -> std::process::Output {
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(env, server));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env
        .agent(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

/// The role and text of each message of a recorded request.
fn conversation(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The ids of the traces in the environment's trace folder.
fn trace_ids(env: &CliEnv) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(env.traces())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_words_are_on_the_screen_before_the_model_has_sent_the_rest() {
    let env = agent_env();
    // Three pieces of twelve characters, 400 ms apart, so that a loaded machine still draws them one at a time.
    let (first, middle, last) = ("Early words ", "middle words", " final words");
    let answer = format!("{first}{middle}{last}");
    let server = MockModelServer::with_replies([
        Reply::from(Turn::text(answer.clone())).with_pause(Duration::from_millis(400))
    ])
    .await;
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(&env, &server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The line mode; the full-screen UI is tested in tui.rs.
    let mut command = env.command(&args);
    command.env("AGENT_TUI", "0");
    let mut terminal = Terminal::spawn(command);
    terminal.wait_until("the first prompt", |_| {
        terminal.cursor_row().trim_end() == "›"
    });

    terminal.send("Say something slowly\r");
    let screen = terminal.wait_for("Early words");
    assert!(!screen.contains("final words"), "{screen}");
    assert_eq!(server.request_count(), 1);
    // Then the whole answer, as a line of its own once the turn is over.
    let screen = terminal.wait_for("this turn");
    assert!(screen.lines().any(|l| l == answer), "{screen}");
    terminal.send("/quit\r");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[tokio::test]
async fn help_lists_the_commands_and_asks_the_model_nothing() {
    let env = agent_env();
    let server = MockModelServer::start().await;
    let output = piped_chat(&env, &server, &[], "/help\n").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let help = stderr(&output);
    for command in [
        "/plan", "/cost", "/compact", "/fork N", "/trace", "/new", "/help", "/quit",
    ] {
        assert!(
            help.lines().any(|l| l.starts_with(command)),
            "{command}: {help}"
        );
    }
    assert_eq!(stdout(&output), "");
    assert_eq!(server.request_count(), 0);
    assert!(trace_ids(&env).is_empty(), "no message, no trace");
}

#[tokio::test]
async fn fork_moves_the_conversation_to_a_fork_from_just_before_the_goal() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "goal", json!({"add": "Draft, Polish", "focus": "1"})),
        Turn::tool_call("c2", "goal", json!({"done": "drafted", "focus": "2"})),
        Turn::tool_call("c3", "goal", json!({"done": "polished"})),
        Turn::text("Finished."),
        // A finished plan of two goals ends with a report the model writes.
        Turn::text("Drafted and polished."),
        Turn::text("Polished another way."),
    ])
    .await;
    server.when_empty(|_| Reply::from(Turn::text("Done.")));
    let output = piped_chat(
        &env,
        &server,
        &[],
        "Write it\n/trace\n/fork 2\n/trace\nPolish it another way\n",
    )
    .await;
    let log = stderr(&output);
    assert_eq!(code(&output), 0, "{log}");
    // The final answer; a pipe does not get the closing report.
    assert!(stdout(&output).starts_with("Finished.\n"), "{log}");

    let ids = trace_ids(&env);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let original = ids
        .iter()
        .find(|id| log.contains(&format!("forked {id} into ")))
        .expect("the fork is announced")
        .clone();
    let forked = ids.iter().find(|id| **id != original).unwrap().clone();
    // `/trace` names the original before the fork and the fork after it.
    let traced: Vec<&str> = log
        .lines()
        .filter(|l| ids.iter().any(|id| l.trim() == id))
        .map(str::trim)
        .collect();
    assert_eq!(traced, [original.as_str(), forked.as_str()], "{log}");

    // The turn after the fork starts from the request that started goal 2, plus the message.
    let requests = server.requests();
    let at_the_fork = conversation(&requests[1].body);
    let after = conversation(&requests[5].body);
    assert_eq!(after[..after.len() - 1], at_the_fork[..], "{after:#?}");
    assert_eq!(
        after.last().unwrap(),
        &("user".to_owned(), "Polish it another way".to_owned())
    );

    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &forked, "--json"]).await.stdout).unwrap();
    assert_eq!(shown["trace"]["forked_from"]["trace_id"], original.as_str());
    // The original still ends with its own answer.
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &original, "--json"]).await.stdout).unwrap();
    let texts = shown["messages"].to_string();
    assert!(texts.contains("Finished."), "{texts}");
    assert!(!texts.contains("another way"), "{texts}");
}

#[tokio::test]
async fn continue_takes_an_existing_trace_further_under_the_same_id() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::text("The answer is 42."),
        Turn::text("Quarante-deux."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env, &server));
    args.extend(["--json".to_owned(), "What is the answer?".to_owned()]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();

    let output = piped_chat(
        &env,
        &server,
        &["--continue", &trace_id[..8]],
        "In French?\n/trace\n",
    )
    .await;
    let log = stderr(&output);
    assert_eq!(code(&output), 0, "{log}");
    assert!(log.contains(&format!("continuing {trace_id}")), "{log}");
    assert_eq!(stdout(&output), "Quarante-deux.\n");
    assert!(log.lines().any(|l| l.trim() == trace_id), "{log}");
    assert_eq!(trace_ids(&env), std::slice::from_ref(&trace_id));

    // The model reads the old conversation, then the new message.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let before = conversation(&requests[0].body);
    let after = conversation(&requests[1].body);
    assert_eq!(after[..before.len()], before[..], "{after:#?}");
    assert_eq!(
        after[before.len()..],
        [
            ("assistant".to_owned(), "The answer is 42.".to_owned()),
            ("user".to_owned(), "In French?".to_owned()),
        ],
        "{after:#?}"
    );
}
