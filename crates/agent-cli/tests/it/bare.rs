//! `agent` without a command, as people used to other terminal agents type it: `-p` for the
//! answer alone, `-c` to continue the newest trace of the project, `-r [ID]` to pick one, `-m`
//! for the model, and a prompt as the first message of a chat — in a pipe (line mode) and on a
//! pseudo-terminal (the full-screen UI).

use std::process::{Output, Stdio};

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use agent_test_support::pty::Terminal;
use tokio::io::AsyncWriteExt;

use crate::{agent_env, on_server};

/// What the full-screen UI shows once it is ready for a message.
const READY: &str = "Type a message and Enter";

/// `agent <args> <the model options of server>`.
fn with_server(env: &CliEnv, server: &MockModelServer, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    all.extend(on_server(env, server));
    all
}

/// `agent <args>` on `server` under the model `model` (given with `-m`).
fn with_model(env: &CliEnv, server: &MockModelServer, model: &str, args: &[&str]) -> Vec<String> {
    let mut all = with_server(env, server, args);
    let at = all.iter().position(|a| a == "--model").unwrap();
    all[at] = "-m".to_owned();
    all[at + 1] = model.to_owned();
    all
}

/// Runs `agent` with `args`, standard input closed.
async fn run(env: &CliEnv, args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run(&args).await
}

/// `agent` with `args` on a pseudo-terminal.
fn on_pty(env: &CliEnv, args: &[String]) -> Terminal {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Terminal::spawn(env.command(&args))
}

/// The ids of the traces in the environment's trace folder.
fn trace_ids(env: &CliEnv) -> Vec<String> {
    std::fs::read_dir(env.traces())
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The user messages a request to the model carried, in order.
fn user_messages(request: &serde_json::Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn dash_p_prints_the_answer_alone_and_dash_c_continues_the_newest_trace() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([Turn::text("First **answer**."), Turn::text("Second.")])
            .await;
    let output = run(&env, &with_server(&env, &server, &["-p", "Say one thing"])).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "First **answer**.\n");
    assert!(!stderr(&output).contains("trace "), "{}", stderr(&output));

    let output = run(
        &env,
        &with_server(&env, &server, &["-c", "-p", "And another"]),
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Second.\n");
    assert_eq!(trace_ids(&env).len(), 1, "the same trace went on");
    let requests = server.requests();
    assert_eq!(
        user_messages(&requests[1].body),
        ["Say one thing", "And another"]
    );
}

#[tokio::test]
async fn dash_m_names_the_model_and_dash_r_continues_the_trace_it_names() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("One."), Turn::text("Two.")]).await;
    let args = with_model(&env, &server, "mock-other", &["-p", "Start here"]);
    let output = run(&env, &args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(server.requests()[0].body["model"], "mock-other");

    let id = trace_ids(&env).remove(0);
    // `-r` with a prefix of the id, and the message of the next turn; no -m: the trace's own.
    let work = env.work();
    let output = env
        .run(&[
            "-r",
            &id[..8],
            "-p",
            "Go on",
            "--provider",
            "openai",
            "--base-url",
            &server.openai_base(),
            "--api-key",
            "sk-test",
            "--workspace",
            &work,
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Two.\n");
    let second = &server.requests()[1].body;
    assert_eq!(second["model"], "mock-other");
    assert_eq!(user_messages(second), ["Start here", "Go on"]);
}

#[tokio::test]
async fn a_prompt_without_a_terminal_is_the_first_turn_of_a_line_mode_chat() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([Turn::text("Hello to you."), Turn::text("Bye.")]).await;
    let args = with_server(&env, &server, &["Hello there, agent"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env
        .agent(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"And goodbye\n").await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("Hello to you."), "{out}");
    assert!(out.contains("Bye."), "{out}");
    assert!(
        stderr(&output).contains("agent chat · gpt-4o-mini"),
        "{}",
        stderr(&output)
    );
    let requests = server.requests();
    assert_eq!(user_messages(&requests[0].body), ["Hello there, agent"]);
    assert_eq!(
        user_messages(&requests[1].body),
        ["Hello there, agent", "And goodbye"]
    );
}

#[tokio::test]
async fn one_word_alone_is_taken_for_a_mistyped_command_and_subcommands_still_win() {
    let env = agent_env();
    let output = env.run(&["trces"]).await;
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("\"trces\" is not a command of agent"),
        "{}",
        stderr(&output)
    );
    // Global flags before a command leave it a command.
    let output = env.run(&["-v", "--color", "never", "traces"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    // Nothing at all, without a terminal: the help, as before.
    let output = env.run(&[]).await;
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("Usage: agent [OPTIONS] [PROMPT]"),
        "{}",
        stderr(&output)
    );
    // -r without an id cannot ask anything with -p.
    let output = env.run(&["-r", "-p", "What now?"]).await;
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("name the trace"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_dash_m_and_a_prompt_open_the_ui_and_dash_p_does_not() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([Turn::text("Opened with **it**."), Turn::text("Plain.")])
            .await;
    let mut terminal = on_pty(
        &env,
        &with_model(&env, &server, "mock-pty", &["Open with this message"]),
    );
    let screen = terminal.wait_for("Opened with it.");
    assert!(screen.contains(READY), "{screen}");
    assert!(screen.contains("› Open with this message"), "{screen}");
    assert!(
        screen.contains("mock-pty"),
        "the status line names the model: {screen}"
    );
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    assert_eq!(server.requests()[0].body["model"], "mock-pty");
    drop(terminal);

    let mut terminal = on_pty(&env, &with_server(&env, &server, &["-p", "Just answer"]));
    assert_eq!(terminal.wait_exit(), Some(0));
    let screen = terminal.screen();
    assert!(screen.contains("Plain."), "{screen}");
    assert!(!screen.contains(READY), "{screen}");
    assert_eq!(trace_ids(&env).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_c_on_a_terminal_shows_the_conversation_and_continues_the_same_trace() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::text("The first answer, kept."),
        Turn::text("The second answer."),
        Turn::text("The third answer."),
    ])
    .await;
    // A first session says something.
    let output = run(&env, &with_server(&env, &server, &["-p", "Tell me first"])).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let ids = trace_ids(&env);
    assert_eq!(ids.len(), 1);

    for (args, message, answer) in [
        (vec!["-c"], "Then this", "The second answer."),
        (vec!["chat", "-c"], "And this", "The third answer."),
    ] {
        let mut terminal = on_pty(&env, &with_server(&env, &server, &args));
        let screen = terminal.wait_for("The first answer, kept.");
        assert!(screen.contains("› Tell me first"), "{screen}");
        terminal.wait_for(READY);
        terminal.send(&format!("{message}\r"));
        terminal.wait_for(answer);
        terminal.send("\u{4}");
        assert_eq!(terminal.wait_exit(), Some(0), "{args:?}");
        assert_eq!(trace_ids(&env), ids, "{args:?} went on in the same trace");
    }
    let last = server.requests().pop().unwrap();
    assert_eq!(
        user_messages(&last.body),
        ["Tell me first", "Then this", "And this"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_r_on_a_terminal_picks_a_trace_from_a_list() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([Turn::text("Older answer."), Turn::text("Newer answer.")])
            .await;
    for task in ["The older task", "The newer task"] {
        let output = run(&env, &with_server(&env, &server, &["-p", task])).await;
        assert_eq!(code(&output), 0, "{}", stderr(&output));
    }
    let mut terminal = on_pty(&env, &with_server(&env, &server, &["-r"]));
    let screen = terminal.wait_for("Which trace? [1-2, Enter for 1]");
    assert!(screen.contains("The newer task"), "{screen}");
    terminal.send("2\r");
    let screen = terminal.wait_for("Older answer.");
    assert!(!screen.contains("Newer answer."), "{screen}");
    terminal.wait_for(READY);
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
}

/// `agent <args>` with `input` piped into it, configured by the environment to reach `server`.
async fn piped(env: &CliEnv, server: &MockModelServer, args: &[&str], input: &str) -> Output {
    let mut child = env
        .agent(args)
        .env("OPENAI_BASE_URL", server.openai_base())
        .env("OPENAI_API_KEY", "sk-test")
        .env("AGENT_MODEL", "gpt-4o-mini")
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

#[tokio::test]
async fn text_piped_into_agent_is_the_task_of_a_headless_run() {
    let env = agent_env();
    let server =
        MockModelServer::with_replies([Turn::text("It is a diff."), Turn::text("Also a diff.")])
            .await;
    // `agent` alone, and with flags but no prompt.
    for (args, answer) in [
        (&[][..], "It is a diff."),
        (&["-m", "gpt-4o-mini"][..], "Also a diff."),
    ] {
        let output = piped(&env, &server, args, "What is this?\n+added line\n").await;
        assert_eq!(code(&output), 0, "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), format!("{answer}\n"), "{args:?}");
        assert!(!stderr(&output).contains("Usage:"), "{}", stderr(&output));
    }
    for request in server.requests() {
        let said = user_messages(&request.body);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("What is this?\n+added line"),
            "{said:?}"
        );
    }
}

#[tokio::test]
async fn dash_p_exits_1_when_a_tool_call_was_refused_and_0_when_all_ran() {
    for yes in [false, true] {
        let env = agent_env();
        let server = MockModelServer::with_replies([
            Turn::tool_call(
                "c1",
                "bash",
                serde_json::json!({"command": "touch made.txt"}),
            ),
            Turn::text("Done, I think."),
        ])
        .await;
        let mut args = vec!["-p", "Make the file"];
        if yes {
            args.push("--yes");
        }
        let output = run(&env, &with_server(&env, &server, &args)).await;
        assert_eq!(stdout(&output), "Done, I think.\n");
        assert_eq!(env.path("work/made.txt").exists(), yes);
        if yes {
            assert_eq!(code(&output), 0, "{}", stderr(&output));
        } else {
            // Nobody could be asked: the call was refused and the task is not done.
            assert_eq!(code(&output), 1, "{}", stderr(&output));
            assert!(
                stderr(&output).contains("1 tool call was refused"),
                "{}",
                stderr(&output)
            );
        }
    }
}
