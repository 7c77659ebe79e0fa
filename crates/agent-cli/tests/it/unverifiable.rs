//! One rule, in every front end, for a command a deny rule cannot check: under `[approvals]
//! deny = ["bash(rm -rf)"]`, the model first runs `ls` (the person answers "always" where a
//! front end offers it), then `x=rm; $x -rf target` — a program named by an expansion, which
//! the rule cannot see. That call is asked again, with the rule's warning and without an
//! "always" choice, and refused by the person: `target/` survives. In the line mode, the
//! full-screen UI (both on a pseudo-terminal), an editor over ACP (the official SDK client,
//! which answers "allow always" whenever it is offered) and the HTTP API (the warning in the
//! pending approval). A control answers yes to the warned call in the line mode, and the
//! command does delete `target/`.

use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, RecordedRequest, Reply, Turn};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

use crate::agent_env;

/// The command the deny rule cannot check.
const HIDDEN_RM: &str = "x=rm; $x -rf target";
/// What every front end shows of the warning.
const WARNING: &str = "cannot check this command";

/// How many tool results a request carries.
fn tool_results(request: &RecordedRequest) -> usize {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    messages.iter().filter(|m| m["role"] == "tool").count()
}

/// The model: `ls`, then the hidden `rm -rf`, then an answer.
fn model(request: &RecordedRequest) -> Reply {
    match tool_results(request) {
        0 => Reply::from(Turn::tool_call("ls_1", "bash", json!({"command": "ls"}))),
        1 => Reply::from(Turn::tool_call(
            "rm_1",
            "bash",
            json!({"command": HIDDEN_RM}),
        )),
        _ => Reply::from(Turn::text("Done.")),
    }
}

/// An environment whose workspace holds `target/`, with a deny rule the model works around,
/// and a model server playing [`model`].
async fn setup() -> (CliEnv, MockModelServer) {
    let env = agent_env();
    env.write("work/target/build.log", "built\n");
    let server = MockModelServer::start().await;
    server.when_empty(model);
    env.write(
        "home/agent/agent.toml",
        &format!(
            "provider = \"openai\"\nbase_url = \"{}\"\napi_key = \"sk-test\"\n\
             model = \"gpt-4o-mini\"\n\n[approvals]\ndeny = [\"bash(rm -rf)\"]\n",
            server.openai_base()
        ),
    );
    (env, server)
}

fn target_survives(env: &CliEnv, front_end: &str) {
    assert!(
        env.path("work/target/build.log").is_file(),
        "{front_end}: target/ was deleted"
    );
}

/// The screen's text after `marker`, where the question shown last is.
fn after<'a>(screen: &'a str, marker: &str) -> &'a str {
    screen.rfind(marker).map_or(screen, |at| &screen[at..])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_mode_asks_again_with_the_warning_and_target_survives() {
    let (env, _server) = setup().await;
    let work = env.work();
    let mut terminal = Terminal::spawn(env.command(&["run", "--workspace", &work, "Clean up"]));
    terminal.wait_for("[y/n/a/p]");
    // "Always bash".
    terminal.send("a\r");
    let screen = terminal.wait_for(WARNING);
    let question = after(&screen, HIDDEN_RM);
    assert!(question.contains("! the rule `bash(rm -rf)`"), "{screen}");
    assert!(!question.contains("always"), "no always for it: {screen}");
    assert!(question.contains("[y/n]"), "{screen}");
    terminal.send("n\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    target_survives(&env, "line mode");

    // The control: a yes to the warned call runs it, and it does delete target/.
    let mut terminal = Terminal::spawn(env.command(&["run", "--workspace", &work, "Clean up"]));
    terminal.wait_for("[y/n/a/p]");
    terminal.send("a\r");
    terminal.wait_for(WARNING);
    terminal.send("y\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(
        !env.path("work/target").exists(),
        "the control: the hidden rm -rf deletes target/ when approved"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_full_screen_ui_asks_again_with_the_warning_and_target_survives() {
    let (env, _server) = setup().await;
    let work = env.work();
    let mut terminal = Terminal::spawn(env.command(&["chat", "--workspace", &work]));
    terminal.wait_for("Type a message and Enter");
    terminal.send("Clean up\r");
    let screen = terminal.wait_for("Allow bash?");
    assert!(screen.contains("ls"), "{screen}");
    assert!(screen.contains("every bash call"), "{screen}");
    crate::answer_question(&mut terminal, "a\r");
    let screen = terminal.wait_for(WARNING);
    assert!(screen.contains("⚠ the rule `bash(rm -rf)`"), "{screen}");
    assert!(
        !screen.contains("every bash call"),
        "no always for it: {screen}"
    );
    crate::answer_question(&mut terminal, "n\r");
    terminal.send("\r");
    terminal.wait_for("Done.");
    terminal.send("\u{4}");
    assert_eq!(terminal.wait_exit(), Some(0));
    target_survives(&env, "full-screen UI");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_answering_allow_always_is_asked_again_with_the_warning() {
    let (env, _server) = setup().await;
    let work = env.work();
    let client =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp/prompt.mjs");
    assert!(
        client
            .with_file_name("node_modules/@agentclientprotocol/sdk/package.json")
            .is_file(),
        "the ACP client SDK is not installed: run `cargo xtask setup`"
    );
    let output = env
        .program(
            "node",
            &[
                client.to_str().unwrap(),
                &work,
                env!("CARGO_BIN_EXE_agent"),
                "Clean up",
            ],
        )
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let permissions = result["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 2, "{result}");
    let options = |index: usize| -> Vec<String> {
        permissions[index]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["optionId"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(options(0).contains(&"allow_always".to_owned()), "{result}");
    assert!(!options(1).contains(&"allow_always".to_owned()), "{result}");
    let content = permissions[1]["toolCall"]["content"].to_string();
    assert!(
        content.contains(WARNING),
        "the warning in the request: {content}"
    );
    assert_eq!(result["response"]["stopReason"], "end_turn", "{result}");
    target_survives(&env, "ACP");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_approval_over_http_carries_the_warning_and_target_survives() {
    let (env, _server) = setup().await;
    let work = env.work();
    let served = env.serve(&["--workspace", &work, "--approval", "ask"]);
    let (status, started) =
        served.request("POST", "/api/traces", Some(&json!({"task": "Clean up"})));
    assert_eq!(status, 201, "{started}\n{}", served.log());
    let id = started["trace_id"].as_str().unwrap().to_owned();
    let mut decided = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, detail) = served.request("GET", &format!("/api/traces/{id}"), None);
        if detail["trace"]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "{detail}\n{}", served.log());
        for pending in detail["pending_approvals"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            let call = pending["tool_call_id"].as_str().unwrap().to_owned();
            if decided.contains(&call) {
                continue;
            }
            // The plain `ls` runs; the hidden `rm -rf` is refused, and said to be unverifiable.
            let warned = pending.get("warning").is_some();
            assert_eq!(warned, call == "rm_1", "{pending}");
            if warned {
                assert!(
                    pending["warning"].as_str().unwrap().contains(WARNING),
                    "{pending}"
                );
            }
            let (status, answer) = served.request(
                "POST",
                &format!("/api/traces/{id}/approvals/{call}"),
                Some(&json!({"approve": !warned})),
            );
            assert_eq!(status, 200, "{answer}");
            decided.push(call);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(decided, ["ls_1", "rm_1"]);
    target_survives(&env, "HTTP");
}
