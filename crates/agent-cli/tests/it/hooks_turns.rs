//! Hooks past a run's first message: `UserPromptSubmit` for a chat's later turns and for
//! `agent run --continue` (a refused message never reaches the model or the trace, the next
//! one does), `PreCompact` and `PostCompact` around `/compact` and around the summary the loop
//! makes when the context nears the window, with Claude Code's `trigger` and the tokens before
//! and after, and `Notification` while an approval question waits for
//! the user. Real scripts, run by the real binary.

use std::process::Stdio;

use agent_test_support::cli::{CliEnv, code, stderr};
use agent_test_support::mock_model::{MockModelServer, Turn};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::{agent_env, on_server};

/// A script that keeps its stdin (one JSON line per run) in `NAME.jsonl` beside it, then runs
/// `then` (shell).
fn script(env: &CliEnv, name: &str, then: &str) -> String {
    let log = env.arg(&format!("hooks/{name}.jsonl"));
    let text = format!("#!/bin/sh\ncat >> '{log}'\necho >> '{log}'\n{then}\n");
    let path = env.write(&format!("hooks/{name}.sh"), &text);
    format!("sh '{path}'")
}

/// A new environment whose agent.toml runs a script `name` (which goes on, exit 0) on `event`.
fn with_hook(event: &str, name: &str) -> CliEnv {
    let env = agent_env();
    let hook = script(&env, name, "exit 0");
    env.write(
        "home/agent/agent.toml",
        &format!("[[hooks.{event}]]\ncommand = \"{hook}\"\n"),
    );
    env
}

/// A model that asks for `echo hello` through bash, then answers.
async fn bash_then_done() -> MockModelServer {
    MockModelServer::with_replies([
        Turn::tool_call("c1", "bash", json!({"command": "echo hello"})),
        Turn::text("Done."),
    ])
    .await
}

/// The JSON objects a script read, one per run.
fn inputs(env: &CliEnv, name: &str) -> Vec<Value> {
    std::fs::read_to_string(env.path(&format!("hooks/{name}.jsonl")))
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A UserPromptSubmit hook that refuses any prompt that mentions a password.
fn no_passwords(env: &CliEnv) -> String {
    let log = env.arg("hooks/prompt.jsonl");
    let refuse = format!(
        "tail -n 1 '{log}' | grep -q password && {{ echo 'no passwords in prompts' >&2; exit 2; }}\nexit 0"
    );
    let hook = script(env, "prompt", &refuse);
    format!("[[hooks.UserPromptSubmit]]\ncommand = \"{hook}\"\n")
}

/// `agent chat` with `input` piped in.
async fn piped_chat(env: &CliEnv, server: &MockModelServer, input: &str) -> std::process::Output {
    let mut args = vec!["chat".to_owned()];
    args.extend(on_server(env, server));
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

/// The user messages of every request the server received.
fn user_messages(server: &MockModelServer) -> Vec<String> {
    let mut seen = Vec::new();
    for request in server.requests() {
        for message in request.body["messages"].as_array().unwrap() {
            let text = message["content"].as_str().unwrap_or_default().to_owned();
            if message["role"] == "user" && !seen.contains(&text) {
                seen.push(text);
            }
        }
    }
    seen
}

#[tokio::test]
async fn user_prompt_submit_refuses_a_chats_later_turn_and_lets_the_next_one_through() {
    let env = agent_env();
    env.write("home/agent/agent.toml", &no_passwords(&env));
    let server = MockModelServer::with_replies([Turn::text("Hello."), Turn::text("Bye.")]).await;
    let output = piped_chat(
        &env,
        &server,
        "hi there\nmy password is hunter2\nthat is all\n",
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no passwords in prompts"),
        "{}",
        stderr(&output)
    );
    let prompts: Vec<Value> = inputs(&env, "prompt")
        .into_iter()
        .map(|input| input["prompt"].clone())
        .collect();
    // The control: every message went to the hook, and those it let through reached the model.
    assert_eq!(
        prompts,
        [
            json!("hi there"),
            json!("my password is hunter2"),
            json!("that is all")
        ]
    );
    let users = user_messages(&server);
    assert!(
        users.iter().any(|m| m.contains("that is all")),
        "{users:?} {}",
        stderr(&output)
    );
    assert!(!users.iter().any(|m| m.contains("hunter2")), "{users:?}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn user_prompt_submit_refuses_the_message_of_run_continue() {
    let env = agent_env();
    env.write("home/agent/agent.toml", &no_passwords(&env));
    let server = MockModelServer::with_replies([Turn::text("First."), Turn::text("Second.")]).await;
    let run = |extra: &[&str]| {
        let mut args = vec!["run".to_owned()];
        args.extend(on_server(&env, &server));
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    };
    let args = run(&["--json", "Start"]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();

    let args = run(&["--continue", &trace_id, "the password is hunter2"]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_ne!(code(&output), 0, "a refused message ran");
    assert!(
        stderr(&output).contains("no passwords in prompts"),
        "{}",
        stderr(&output)
    );
    // Nothing of the refused message is kept in the trace.
    for file in std::fs::read_dir(env.traces().join(&trace_id)).unwrap() {
        let kept = std::fs::read(file.unwrap().path()).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&kept).contains("hunter2"));
    }
    assert_eq!(server.requests().len(), 1);

    // The control: a message the hook lets through continues the trace.
    let args = run(&["--continue", &trace_id, "go on"]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(server.requests().len(), 2);
    assert!(user_messages(&server).iter().any(|m| m == "go on"));
    assert_eq!(inputs(&env, "prompt").len(), 3);
}

#[tokio::test]
async fn compaction_hooks_run_around_compact_with_the_trigger_and_the_tokens() {
    let env = agent_env();
    let pre = script(&env, "pre", "exit 0");
    let post = script(&env, "post", "exit 0");
    env.write(
        "home/agent/agent.toml",
        &format!(
            "[[hooks.PreCompact]]\ncommand = \"{pre}\"\n\n[[hooks.PostCompact]]\n\
             command = \"{post}\"\n"
        ),
    );
    let server = MockModelServer::with_replies([
        Turn::text("One."),
        Turn::text("The user said first; the answer was One."),
        Turn::text("Two."),
    ])
    .await;
    let output = piped_chat(&env, &server, "first\n/compact\nsecond\n").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let (pre, post) = (inputs(&env, "pre"), inputs(&env, "post"));
    assert_eq!((pre.len(), post.len()), (1, 1), "{pre:?} {post:?}");
    assert_eq!(pre[0]["hook_event_name"], "PreCompact");
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["custom_instructions"], "");
    assert!(pre[0]["tokens_before"].as_u64().unwrap() > 0, "{pre:?}");
    assert!(
        !pre[0]["session_id"].as_str().unwrap().is_empty(),
        "{pre:?}"
    );
    assert_eq!(post[0]["hook_event_name"], "PostCompact");
    assert_eq!(post[0]["session_id"], pre[0]["session_id"]);
    assert_eq!(post[0]["tokens_before"], pre[0]["tokens_before"]);
    assert!(post[0]["tokens_after"].as_u64().unwrap() > 0, "{post:?}");

    // The control: the same chat without /compact runs neither.
    let env = with_hook("PreCompact", "pre");
    let server = MockModelServer::with_replies([Turn::text("One."), Turn::text("Two.")]).await;
    let output = piped_chat(&env, &server, "first\nsecond\n").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(inputs(&env, "pre").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_hook_runs_while_an_approval_question_waits() {
    let env = with_hook("Notification", "notify");
    let server = bash_then_done().await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env, &server));
    args.push("Say hello".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut terminal = Terminal::spawn(env.command(&args));
    terminal.wait_for("[y/n/a/p]");
    // The hook has run while the question waits for its answer.
    let seen = inputs(&env, "notify");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "Notification");
    assert_eq!(seen[0]["notification_type"], "permission_prompt");
    assert!(
        seen[0]["message"].as_str().unwrap().contains("bash"),
        "{seen:?}"
    );
    terminal.send("y\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());

    // The control: with --yes nobody is asked, and nobody is notified.
    let env2 = with_hook("Notification", "notify");
    let server = bash_then_done().await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env2, &server));
    args.extend(["--yes".to_owned(), "Say hello".to_owned()]);
    let output = env2
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    // Only the end of the run notifies.
    let seen = inputs(&env2, "notify");
    let types: Vec<&Value> = seen.iter().map(|s| &s["notification_type"]).collect();
    assert_eq!(types, ["idle_prompt"], "{seen:?}");
}

#[tokio::test]
async fn a_notification_hook_runs_when_each_turn_of_a_chat_ends() {
    let env = with_hook("Notification", "notify");
    let server = MockModelServer::with_replies([Turn::text("One."), Turn::text("Two.")]).await;
    let output = piped_chat(&env, &server, "first\nsecond\n").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let seen = inputs(&env, "notify");
    assert_eq!(seen.len(), 2, "{seen:?}");
    for input in &seen {
        assert_eq!(input["hook_event_name"], "Notification");
        assert_eq!(input["notification_type"], "idle_prompt");
        assert!(
            input["message"]
                .as_str()
                .unwrap()
                .contains("waits for your input")
        );
    }
    assert_eq!(seen[0]["session_id"], seen[1]["session_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_hooks_say_auto_when_the_context_nears_the_window() {
    let env = agent_env();
    let pre = script(&env, "pre", "exit 0");
    let post = script(&env, "post", "exit 0");
    env.write(
        "home/agent/agent.toml",
        &format!(
            "[[hooks.PreCompact]]\ncommand = \"{pre}\"\n\n[[hooks.PostCompact]]\n\
             command = \"{post}\"\n"
        ),
    );
    // A 2 MB argument fills a 100k-token window: the loop summarises before the next call.
    let big = "The quick brown fox jumps over the lazy dog. ".repeat(2_000_000 / 45);
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "c1",
            "write_file",
            json!({"path": "log.txt", "content": big}),
        ),
        Turn::text("The log was written: 2 MB of the pangram."),
        Turn::text("Done."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env, &server));
    args.extend(["--yes", "--context-window", "100000", "Write the log"].map(str::to_owned));
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let (pre, post) = (inputs(&env, "pre"), inputs(&env, "post"));
    assert_eq!((pre.len(), post.len()), (1, 1), "{pre:?} {post:?}");
    assert_eq!(pre[0]["trigger"], "auto");
    assert_eq!(post[0]["trigger"], "auto");
    let (before, after) = (
        post[0]["tokens_before"].as_u64().unwrap(),
        post[0]["tokens_after"].as_u64().unwrap(),
    );
    assert!(before > 100_000 / 2 && after < 1_000, "{post:?}");
    // The hooks ran before the summary request and after it was stored.
    assert_eq!(server.requests().len(), 3);

    // The control: a small file leaves the window room, and no hook runs.
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "c1",
            "write_file",
            json!({"path": "small.txt", "content": "x"}),
        ),
        Turn::text("Done."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(on_server(&env, &server));
    args.extend(["--yes", "--context-window", "100000", "Write it"].map(str::to_owned));
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(inputs(&env, "pre").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_prompt_submit_leaves_out_a_message_sent_while_the_run_works() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "bash", json!({"command": "sleep 3"})),
        Turn::text("Done."),
    ])
    .await;
    env.write(
        "home/agent/agent.toml",
        &format!(
            "provider = \"openai\"\nbase_url = \"{}\"\nmodel = \"gpt-4o-mini\"\n\
             api_key = \"sk-test\"\n{}",
            server.openai_base(),
            no_passwords(&env)
        ),
    );
    let work = env.work();
    let served = env.serve(&["--workspace", &work, "--approval", "auto"]);
    let (status, started) =
        served.request("POST", "/api/traces", Some(&json!({"task": "Wait a bit"})));
    assert_eq!(status, 201, "{started}\n{}", served.log());
    let trace_id = started["trace_id"].as_str().unwrap().to_owned();
    // While `sleep 3` runs, two messages come: the hook refuses the first.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.request_count() < 1 {
        assert!(std::time::Instant::now() < deadline, "{}", served.log());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let path = format!("/api/traces/{trace_id}/messages");
    for text in ["my password is hunter2", "and say when"] {
        let (status, sent) = served.request("POST", &path, Some(&json!({"content": text})));
        assert_eq!(status, 202, "{sent}\n{}", served.log());
        assert_eq!(sent["queued"], true, "{sent}");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, detail) = served.request("GET", &format!("/api/traces/{trace_id}"), None);
        if detail["trace"]["status"] == "completed" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{detail}\n{}",
            served.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let users = user_messages(&server);
    assert!(users.iter().any(|m| m == "and say when"), "{users:?}");
    assert!(!users.iter().any(|m| m.contains("hunter2")), "{users:?}");
    // The control: the hook saw every message, the task's too.
    let prompts: Vec<Value> = inputs(&env, "prompt")
        .into_iter()
        .map(|input| input["prompt"].clone())
        .collect();
    assert_eq!(
        prompts,
        [
            json!("Wait a bit"),
            json!("my password is hunter2"),
            json!("and say when")
        ]
    );
}

#[test]
fn a_notification_hook_runs_when_an_mcp_server_asks_the_person() {
    let env = agent_env();
    let hook = script(&env, "notify", "exit 0");
    env.write(
        "home/agent/agent.toml",
        &format!(
            "[[hooks.Notification]]\ncommand = \"{hook}\"\n\n\
             [mcp.servers.asking]\ncommand = \"node\"\nargs = [{:?}]\n",
            crate::mcp_oauth::test_server("asking.mjs")
        ),
    );
    let script = json!({"turns": [
        {"tool_calls": [{"name": "mcp__asking__greet", "arguments": {}}]},
        {"text": "Greeted."}
    ], "fallback": "Done."});
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    let served = env.serve(&["--script", &script, "--workspace", &work]);
    let (status, started) = served.request("POST", "/api/traces", Some(&json!({"task": "Greet"})));
    assert_eq!(status, 201, "{started}\n{}", served.log());
    let trace_id = started["trace_id"].as_str().unwrap().to_owned();
    let list = format!("/api/traces/{trace_id}/elicitations");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let question = loop {
        let (_, listed) = served.request("GET", &list, None);
        if let Some(first) = listed["elicitations"].get(0) {
            break first.clone();
        }
        assert!(std::time::Instant::now() < deadline, "{}", served.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // The hook has run while the question waits.
    let seen = inputs(&env, "notify");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "Notification");
    assert_eq!(seen[0]["notification_type"], "elicitation_dialog");
    assert_eq!(seen[0]["session_id"], trace_id.as_str());
    let message = seen[0]["message"].as_str().unwrap();
    assert!(
        message.contains("asking") && message.contains("Who is there?"),
        "{message}"
    );
    let answer = format!("{list}/{}", question["id"].as_str().unwrap());
    let body = json!({"action": "accept", "content": {"name": "Ada", "colour": "blue"}});
    let (status, _) = served.request("POST", &answer, Some(&body));
    assert_eq!(status, 200);

    // The control: a run that asks nothing notifies nobody.
    let (status, started) = served.request("POST", "/api/traces", Some(&json!({"task": "Hi"})));
    assert_eq!(status, 201);
    let second = started["trace_id"].as_str().unwrap();
    for id in [trace_id.as_str(), second] {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let (_, detail) = served.request("GET", &format!("/api/traces/{id}"), None);
            if detail["trace"]["status"] == "completed" {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{detail}\n{}",
                served.log()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    // Past the question, only the ends of the two runs notify.
    let types: Vec<Value> = inputs(&env, "notify")
        .iter()
        .map(|seen| seen["notification_type"].clone())
        .collect();
    assert_eq!(
        types,
        ["elicitation_dialog", "idle_prompt", "idle_prompt"],
        "{types:?}"
    );
}
