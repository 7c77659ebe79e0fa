//! Line mode as a user sees it: the model's text streams onto a real terminal as Markdown while
//! the model is still sending, plain into a pipe (and a reader that goes away ends the run
//! quietly); Ctrl-C mid-answer keeps what arrived in the trace, and a resumed run sends it back;
//! Ctrl-C at an approval question ends the turn at once; the final answer of a planned run is
//! on stdout and in `--json`, with the closing report after it; `--yes` shows the edits it
//! makes.

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn, sse_data};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::agent_env;

/// The pieces of the streamed answer, sent 300 ms apart.
const PIECES: [&str; 4] = [
    "# Plan\n\nFirst words with **bold** text.\n",
    "- an item that is ",
    "finished later\n",
    "Last line.",
];

/// An OpenAI stream chunk carrying `text`.
fn chunk(text: &str) -> Value {
    json!({
        "id": "chatcmpl-lines", "object": "chat.completion.chunk", "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
            "finish_reason": null}],
    })
}

/// A streamed answer made of `pieces`, each sent `pause` after the one before.
fn slow_answer(pieces: &[&str], pause: Duration) -> Reply {
    let mut chunks: Vec<Value> = pieces.iter().map(|piece| chunk(piece)).collect();
    let mut last = chunk("");
    last["choices"][0]["delta"] = json!({});
    last["choices"][0]["finish_reason"] = json!("stop");
    chunks.push(last);
    Reply::openai_stream(&chunks).with_pause(pause)
}

/// A stream that sends `text` and then nothing more, never ending.
pub(crate) fn unfinished(text: &str) -> Reply {
    Reply::sse([sse_data(&chunk(text))]).then_hang()
}

/// `agent <command> <model options on server> <extra>`.
fn args_on(env: &CliEnv, server: &MockModelServer, command: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![command.to_owned()];
    args.extend(crate::on_server(env, server));
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// The id of the only trace of the environment.
fn only_trace(env: &CliEnv) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(env.traces())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_streams_onto_a_terminal_as_markdown() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([slow_answer(&PIECES, Duration::from_millis(300))]).await;
    let args = args_on(&env, &server, "run", &["Make a plan"]);
    let mut command = env.command(&strs(&args));
    // Colours on, as on a user's terminal.
    command.env_remove("NO_COLOR");
    let mut terminal = Terminal::spawn(command);

    let screen = terminal.wait_for("First words with bold text.");
    // The rest of the answer has not been sent yet.
    assert!(!screen.contains("finished later"), "{screen}");
    assert!(!screen.contains("Last line."), "{screen}");
    assert!(terminal.is_bold("bold"), "{screen}");
    assert!(
        !screen.contains("**") && !screen.contains("# Plan"),
        "{screen}"
    );

    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    let screen = terminal.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let first = rows
        .iter()
        .position(|row| *row == "Plan")
        .unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(
        rows[first..first + 5],
        [
            "Plan",
            "",
            "First words with bold text.",
            "• an item that is finished later",
            "Last line."
        ],
        "{screen}"
    );
    // Shown once: not printed again when the run ends.
    assert_eq!(screen.matches("Last line.").count(), 1, "{screen}");
}

#[tokio::test]
async fn a_pipe_gets_the_plain_text_once_and_a_reader_that_leaves_ends_the_run_quietly() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([slow_answer(&PIECES, Duration::from_millis(50))]).await;
    let args = args_on(&env, &server, "run", &["Make a plan"]);
    let output = env.run(&strs(&args)).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), format!("{}\n", PIECES.concat()));

    // `agent run … | head -1`: the reader takes the first line and goes away while the model
    // is still sending; the run ends with 0, without a panic.
    let server =
        MockModelServer::with_replies([slow_answer(&PIECES, Duration::from_millis(300))]).await;
    let args = args_on(&env, &server, "run", &["Make a plan"]);
    let mut child = env
        .agent(&strs(&args))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap();
    assert_eq!(first.as_deref(), Some("# Plan"));
    drop(lines);
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the run ends")
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_mid_answer_keeps_what_arrived_and_a_resume_goes_on_from_it() {
    let env = agent_env();
    // One line and a half, then nothing more: the model is still "writing" when Ctrl-C comes.
    let server =
        MockModelServer::with_replies([unfinished("Partial answer line.\nand a half")]).await;
    let args = args_on(&env, &server, "run", &["Explain"]);
    let mut terminal = Terminal::spawn(env.command(&strs(&args)));
    terminal.wait_for("Partial answer line.");
    terminal.send("\u{3}");
    assert_eq!(terminal.wait_exit(), Some(130), "{}", terminal.screen());

    let id = only_trace(&env);
    let shown = env.run(&["show", &id, "--json"]).await;
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    let shown: Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["trace"]["status"], "cancelled", "{shown}");
    let messages = shown["messages"].as_array().unwrap();
    let kept = messages
        .iter()
        .find(|m| m["metadata"]["interrupted"] == true)
        .unwrap_or_else(|| panic!("no interrupted message: {shown}"));
    assert_eq!(kept["role"], "assistant");
    assert!(
        kept.to_string()
            .contains("Partial answer line.\\nand a half"),
        "{kept}"
    );
    let text = env.run(&["show", &id]).await;
    assert!(
        stdout(&text).contains("assistant (interrupted)"),
        "{}",
        stdout(&text)
    );

    // Resumed, the model gets its own partial answer back, then a request to go on.
    let server = MockModelServer::with_replies([Turn::text("The rest.")]).await;
    let args = args_on(&env, &server, "resume", &[&id]);
    let output = env.run(&strs(&args)).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "The rest.\n");
    let sent = &server.requests()[0].body["messages"];
    let sent = sent.as_array().unwrap();
    let n = sent.len();
    assert_eq!(sent[n - 2]["role"], "assistant", "{sent:?}");
    assert_eq!(sent[n - 2]["content"], "Partial answer line.\nand a half");
    assert_eq!(sent[n - 1]["role"], "user");
    assert!(
        sent[n - 1]["content"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_keeps_an_interrupted_answer_and_sends_it_with_the_next_turn() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        unfinished("Half of it.\n"),
        Reply::from(Turn::text("Whole.")),
    ])
    .await;
    // The line mode: on a terminal `agent chat` opens the full-screen UI otherwise.
    let args = args_on(&env, &server, "chat", &["--no-tui"]);
    let mut terminal = Terminal::spawn(env.command(&strs(&args)));
    terminal.wait_for("Ctrl-D quits");
    terminal.send("Explain\r");
    terminal.wait_for("Half of it.");
    terminal.send("\u{3}");
    terminal.wait_for("what was done is kept");
    terminal.send("Go on\r");
    terminal.wait_for("Whole.");
    // Only once the line editor reads again: what is typed before it takes the terminal may
    // be dropped when it does.
    terminal.wait_until("the prompt after the second turn", |_| {
        terminal.cursor_row().trim_end() == "›"
    });
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());

    let sent = server.requests()[1].body["messages"].clone();
    let sent = sent.as_array().unwrap();
    let at = sent
        .iter()
        .position(|m| m["role"] == "assistant")
        .unwrap_or_else(|| panic!("{sent:?}"));
    assert_eq!(sent[at]["content"], "Half of it.\n");
    assert_eq!(sent[at - 1]["content"], "Explain");
    assert_eq!(sent[at + 1]["role"], "user");
    assert_eq!(sent[at + 1]["content"], "Go on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_an_approval_question_ends_the_turn_at_once() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::tool_call(
        "c1",
        "bash",
        json!({"command": "touch ran.txt"}),
    )])
    .await;
    let args = args_on(&env, &server, "run", &["Touch it"]);
    let mut terminal = Terminal::spawn(env.command(&strs(&args)));
    terminal.wait_for("[y/n/a");
    let asked = Instant::now();
    terminal.send("\u{3}");
    assert_eq!(terminal.wait_exit(), Some(130), "{}", terminal.screen());
    let took = asked.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "{took:?}: {}",
        terminal.screen()
    );
    assert!(!env.path("work/ran.txt").exists());
}

/// A plan of two goals answering a question, then the closing report.
fn planned_question(env: &CliEnv) -> String {
    env.write(
        "question.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Look it up, Check it", "focus": "1"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "found 42", "focus": "2"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "42 holds"}}]},
            {"text": "The answer is **42**."},
            {"text": "Both goals done: looked up, then checked."}
        ])
        .to_string(),
    )
}

#[tokio::test]
async fn the_final_answer_of_a_plan_is_on_stdout_and_the_report_beside_it() {
    let env = agent_env();
    let question = ["run", "--provider", "scripted", "--script"];
    let script = planned_question(&env);
    let mut args = question.to_vec();
    args.extend([script.as_str(), "--json", "What is it?"]);
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["response"], "The answer is **42**.");
    assert_eq!(
        result["report"],
        "Both goals done: looked up, then checked."
    );
    // The trace's summary is the report, as it was.
    let id = result["trace_id"].as_str().unwrap();
    let shown: Value =
        serde_json::from_str(&stdout(&env.run(&["show", id, "--json"]).await)).unwrap();
    assert_eq!(
        shown["trace"]["summary"],
        "Both goals done: looked up, then checked."
    );

    // A pipe carries the answer alone.
    let script = planned_question(&env);
    let mut args = question.to_vec();
    args.extend([script.as_str(), "What is it?"]);
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "The answer is **42**.\n");

    // A terminal shows the answer, then the report under its rule.
    let script = planned_question(&env);
    let mut args = question.to_vec();
    args.extend([script.as_str(), "What is it?"]);
    let mut terminal = Terminal::spawn(env.command(&args));
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    let screen = terminal.screen();
    let answer = screen
        .find("The answer is 42.")
        .unwrap_or_else(|| panic!("{screen}"));
    let rule = screen
        .find("─── report")
        .unwrap_or_else(|| panic!("{screen}"));
    let report = screen
        .find("Both goals done")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(answer < rule && rule < report, "{screen}");
}

#[tokio::test]
async fn yes_shows_the_edits_it_makes() {
    let env = agent_env();
    env.write("work/a.txt", "one\n");
    let script = env.write(
        "edit.json",
        &json!([
            {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "one", "new": "two"}}]},
            {"text": "Edited."}
        ])
        .to_string(),
    );
    let work = env.work();
    let output = env
        .run(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--workspace",
            &work,
            "--yes",
            "Edit it",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let log = stderr(&output);
    let call = log.find("· edit_file").unwrap_or_else(|| panic!("{log}"));
    let removed = log.find("    - one").unwrap_or_else(|| panic!("{log}"));
    let added = log.find("    + two").unwrap_or_else(|| panic!("{log}"));
    assert!(call < removed && removed < added, "{log}");
    assert_eq!(
        std::fs::read_to_string(env.path("work/a.txt")).unwrap(),
        "two\n"
    );
}
