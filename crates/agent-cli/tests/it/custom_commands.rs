//! Custom commands at every door: `/review src/app.py`, from `.agent/commands/review.md`,
//! becomes the same prompt as the task of `agent run`, a line typed in the chat's line mode, a
//! line typed in the full-screen UI (where `/help` lists it and Tab completes it), an editor's
//! prompt over ACP (which is told the command with `available_commands_update`) and the task of
//! `POST /api/traces`. `agent commands` lists it.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, Served, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, RecordedRequest, Turn};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

/// The command file, as a Claude Code user writes one.
const REVIEW_MD: &str = "---\ndescription: Review a file for bugs\nargument-hint: FILE [FOCUS]\n\
allowed-tools: Read, Grep\n---\nReview the file $1 for bugs and risky patterns.\n\
Focus: $2\nEverything asked: $ARGUMENTS\n";

/// What `/review src/app.py` expands to.
const EXPANDED: &str = "Review the file src/app.py for bugs and risky patterns.\nFocus: \n\
Everything asked: src/app.py";

/// The user's agent.toml pointing at `server`.
fn agent_toml(server: &MockModelServer) -> String {
    format!(
        "provider = \"openai\"\nbase_url = \"{}\"\nmodel = \"gpt-4o-mini\"\napi_key = \"sk-test\"\n",
        server.openai_base()
    )
}

/// The text of the first user message of a request.
fn first_user(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Waits until `server` has `count` requests.
async fn requests_reach(server: &MockModelServer, count: usize, door: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while server.request_count() < count {
        assert!(Instant::now() < deadline, "{door}: the model was not asked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the trace `id` served at `server` has completed.
fn completed(server: &Served, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, detail) = server.request("GET", &format!("/api/traces/{id}"), None);
        if detail["trace"]["status"] == "completed" {
            return;
        }
        assert!(Instant::now() < deadline, "{detail}\n{}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An environment with the command and the user's agent.toml on `server`.
fn env_with_command(server: &MockModelServer) -> CliEnv {
    let env = agent_env();
    env.write("work/.agent/commands/review.md", REVIEW_MD);
    env.write("work/src/app.py", "print('hi')\n");
    env.write("home/agent/agent.toml", &agent_toml(server));
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_expands_the_same_at_every_door() {
    let server = MockModelServer::start().await;
    server.when_empty(|_| Turn::text("Reviewed.").into());
    let env = env_with_command(&server);
    let work = env.work();
    let mut firsts: Vec<(&str, String)> = Vec::new();
    let mut seen = 0;
    let mut take = |door: &'static str, firsts: &mut Vec<(&str, String)>| {
        let all = server.requests();
        assert!(all.len() > seen, "{door}: no model request");
        firsts.push((door, first_user(&all[seen])));
        seen = all.len();
    };

    let ran = env
        .run(&["run", "--workspace", &work, "/review src/app.py"])
        .await;
    assert_eq!(code(&ran), 0, "run: {}", stderr(&ran));
    take("run", &mut firsts);

    // The line mode: the command typed as a line.
    let mut child = env
        .agent(&["chat", "--no-tui", "--workspace", &work])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"/help\n/review src/app.py\n")
        .await
        .unwrap();
    drop(stdin);
    let chat = child.wait_with_output().await.unwrap();
    assert_eq!(chat.status.code(), Some(0), "chat: {}", stderr(&chat));
    let said = stderr(&chat);
    assert!(
        said.contains("/review FILE [FOCUS]  Review a file for bugs"),
        "/help lists it: {said}"
    );
    take("chat", &mut firsts);

    // The full-screen UI: Tab completes the name, /help lists it, Enter sends it.
    let before = server.request_count();
    let mut terminal = Terminal::spawn(env.command(&["chat", "--workspace", &work]));
    terminal.wait_for("Type a message and Enter");
    terminal.send("/help\r");
    terminal.wait_for("FILE [FOCUS]  Review a file for bugs");
    terminal.send("/rev");
    terminal.send("\t");
    terminal.wait_for("/review ");
    terminal.send("src/app.py\r");
    requests_reach(&server, before + 1, "the full-screen UI").await;
    terminal.wait_for("Reviewed.");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    take("tui", &mut firsts);

    // An editor over ACP: told the command, then prompting with it.
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp/prompt.mjs");
    let acp = env
        .program(
            "node",
            &[
                client.to_str().unwrap(),
                &work,
                env!("CARGO_BIN_EXE_agent"),
                "/review src/app.py",
            ],
        )
        .output()
        .unwrap();
    assert!(acp.status.success(), "acp: {}", stderr(&acp));
    let seen_acp: Value = serde_json::from_str(stdout(&acp).trim()).unwrap();
    let offered: Vec<&Value> = seen_acp["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["update"])
        .filter(|u| u["sessionUpdate"] == "available_commands_update")
        .collect();
    assert_eq!(offered.len(), 1, "{seen_acp:#}");
    // `/goal` is every session's; the custom commands follow it.
    assert_eq!(offered[0]["availableCommands"][0]["name"], "goal");
    assert_eq!(
        Value::Array(offered[0]["availableCommands"].as_array().unwrap()[1..].to_vec()),
        json!([{
            "name": "review",
            "description": "Review a file for bugs",
            "input": {"hint": "FILE [FOCUS]"},
        }])
    );
    assert_eq!(seen_acp["response"]["stopReason"], "end_turn");
    take("acp", &mut firsts);

    let served = env.serve(&["--workspace", &work, "--approval", "auto"]);
    let (status, started) = served.request(
        "POST",
        "/api/traces",
        Some(&json!({"task": "/review src/app.py"})),
    );
    assert_eq!(status, 201, "serve: {started}\n{}", served.log());
    completed(&served, started["trace_id"].as_str().unwrap());
    drop(served);
    take("serve", &mut firsts);

    for (door, first) in &firsts {
        assert!(first.contains(EXPANDED), "{door}: {first}");
        assert!(!first.contains("/review"), "{door}: {first}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_expands_in_a_run_a_queue_worker_executes() {
    let cluster = agent_test_support::postgres::Cluster::start();
    let url = cluster.url("postgres");
    let server = MockModelServer::start().await;
    server.when_empty(|_| Turn::text("Reviewed.").into());
    let env = env_with_command(&server);
    let work = env.work();
    let served = env.serve(&[
        "--store",
        &url,
        "--worker",
        "--workspace",
        &work,
        "--approval",
        "auto",
    ]);
    for (task, expected) in [
        ("/review src/app.py", EXPANDED),
        // The control: a task that names no command reaches the model as typed.
        ("/standup now", "/standup now"),
    ] {
        let before = server.request_count();
        let (status, started) = served.request("POST", "/api/traces", Some(&json!({"task": task})));
        assert_eq!(status, 201, "{started}\n{}", served.log());
        let trace_id = started["trace_id"].as_str().unwrap();
        completed(&served, trace_id);
        let first = first_user(&server.requests()[before]);
        assert!(first.contains(expected), "{task}: {first}");
        let (_, messages) =
            served.request("GET", &format!("/api/traces/{trace_id}/messages"), None);
        let typed = if task.starts_with("/review") {
            json!(task)
        } else {
            Value::Null
        };
        let first_message = messages["messages"]
            .as_array()
            .and_then(|all| all.iter().find(|m| m["role"] == "user"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            first_message["metadata"]["expanded_from"], typed,
            "{messages:#}"
        );
    }
}

#[tokio::test]
async fn agent_commands_lists_them_and_an_unknown_name_stays_a_task() {
    let server = MockModelServer::with_replies([Turn::text("Fine.")]).await;
    let env = env_with_command(&server);
    env.write(
        "home/agent/commands/standup.md",
        "Write the standup note.\n",
    );
    let output = env
        .run(&["commands", "--workspace", &env.work(), "--json"])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let names: Vec<(&str, &str)> = listed["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["source"].as_str().unwrap()))
        .collect();
    let user = env.path("home/agent/commands");
    assert_eq!(
        names,
        [
            ("review", ".agent/commands"),
            ("standup", user.to_str().unwrap())
        ]
    );
    assert_eq!(
        listed["commands"][0]["allowed_tools"],
        json!(["Read", "Grep"])
    );

    // A task that starts with a slash but names no command goes as it is.
    let ran = env
        .run(&["run", "--workspace", &env.work(), "/etc/hosts looks odd"])
        .await;
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(first_user(&server.requests()[0]).contains("/etc/hosts looks odd"));
}
