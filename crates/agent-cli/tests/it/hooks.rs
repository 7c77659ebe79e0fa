//! Lifecycle hooks as a Claude Code user brings them: shell scripts configured in agent.toml
//! (`[[hooks.EVENT]]`, `matcher`, `command`, `timeout`) reading the event's JSON on stdin. A
//! PreToolUse hook that exits 2 keeps a bash command from running and its reason reaches the
//! model (a hook whose matcher names another tool does not, the control); a PostToolUse hook
//! gets the tool's name, Claude Code's `file_path` and the trace id; a Stop hook that exits 2
//! sends the model back once; GoalDone gets the goal's summary; a UserPromptSubmit hook refuses
//! a prompt; a hook that hangs is killed with what it started at its timeout and the run goes
//! on. Every run of a hook is a `hook_ran` event of the trace.

use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::{Value, json};

use crate::agent_env;

/// A script that keeps its stdin (one JSON line per run) in `NAME.jsonl` beside it, then runs
/// `then` (shell).
fn script(env: &CliEnv, name: &str, then: &str) -> String {
    let log = env.arg(&format!("hooks/{name}.jsonl"));
    let text = format!("#!/bin/sh\ncat >> '{log}'\necho >> '{log}'\n{then}\n");
    let path = env.write(&format!("hooks/{name}.sh"), &text);
    format!("sh '{path}'")
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

/// Writes the user's agent.toml with `hooks` (TOML tables).
fn configure(env: &CliEnv, hooks: &str) {
    env.write("home/agent/agent.toml", hooks);
}

/// `agent run --yes --json TASK` on `server`; its output and parsed result.
async fn run(env: &CliEnv, server: &MockModelServer, task: &str) -> (std::process::Output, Value) {
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(env, server));
    args.extend(["--yes".into(), "--json".into(), task.into()]);
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    let result = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (output, result)
}

/// The `hook_ran` events of a trace.
fn hook_events(env: &CliEnv, trace_id: &str) -> Vec<Value> {
    let events = std::fs::read_to_string(env.traces().join(trace_id).join("events.jsonl")).unwrap();
    events
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "hook_ran")
        .collect()
}

/// The text of the tool message of a request.
fn tool_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_pre_tool_use_hook_exiting_2_keeps_bash_from_running_and_tells_the_model() {
    let env = agent_env();
    let hook = script(
        &env,
        "pre",
        "echo 'rm-like commands are not allowed here' >&2\nexit 2",
    );
    configure(
        &env,
        &format!("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"{hook}\"\n"),
    );
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "bash", json!({"command": "touch ran.txt"})),
        Turn::text("Understood."),
    ])
    .await;
    let (output, result) = run(&env, &server, "Touch a file").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(!env.path("work/ran.txt").exists(), "the command ran");
    let told = tool_result(&server.requests()[1].body);
    assert!(
        told.contains("a PreToolUse hook blocked it: rm-like commands are not allowed here"),
        "{told}"
    );
    let trace_id = result["trace_id"].as_str().unwrap();
    let seen = inputs(&env, "pre");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["hook_event_name"], "PreToolUse");
    assert_eq!(seen[0]["session_id"], trace_id);
    assert_eq!(seen[0]["tool_name"], "bash");
    assert_eq!(seen[0]["tool_input"]["command"], "touch ran.txt");
    let events = hook_events(&env, trace_id);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["outcome"], "blocked");
    assert_eq!(events[0]["exit_code"], 2);
    assert_eq!(events[0]["tool_name"], "bash");

    // The control: the same hook on another tool lets the command run.
    configure(
        &env,
        &format!("[[hooks.PreToolUse]]\nmatcher = \"Write|Edit\"\ncommand = \"{hook}\"\n"),
    );
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "bash", json!({"command": "touch ran.txt"})),
        Turn::text("Done."),
    ])
    .await;
    let (output, _) = run(&env, &server, "Touch a file").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(env.path("work/ran.txt").exists(), "the command did not run");
    assert_eq!(inputs(&env, "pre").len(), 1, "the hook ran for bash");
}

#[tokio::test]
async fn a_post_tool_use_hook_gets_the_tool_its_input_and_the_trace_id() {
    let env = agent_env();
    env.write("work/notes.txt", "The answer is 42.\n");
    let hook = script(&env, "post", "exit 0");
    configure(
        &env,
        &format!("[[hooks.PostToolUse]]\nmatcher = \"Read\"\ncommand = \"{hook}\"\n"),
    );
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "read_file", json!({"path": "notes.txt"})),
        Turn::text("42."),
    ])
    .await;
    let (output, result) = run(&env, &server, "Read the notes").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let trace_id = result["trace_id"].as_str().unwrap();
    let seen = inputs(&env, "post");
    assert_eq!(seen.len(), 1, "{seen:?}");
    let input = &seen[0];
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "read_file");
    assert_eq!(input["session_id"], trace_id);
    assert_eq!(input["tool_input"]["file_path"], "notes.txt");
    assert!(
        input["tool_response"]
            .as_str()
            .unwrap()
            .contains("The answer is 42."),
        "{input}"
    );
    let work = std::fs::canonicalize(env.path("work")).unwrap();
    assert_eq!(input["cwd"], work.to_str().unwrap());
    assert_eq!(hook_events(&env, trace_id)[0]["outcome"], "continued");
}

#[tokio::test]
async fn a_stop_hook_exiting_2_sends_the_model_back_once() {
    let env = agent_env();
    let hook = script(&env, "stop", "echo 'run the tests first' >&2\nexit 2");
    configure(&env, &format!("[[hooks.Stop]]\ncommand = \"{hook}\"\n"));
    let server = MockModelServer::with_replies([
        Turn::text("Done."),
        Turn::text("Ran the tests; they pass."),
        Turn::text("never asked"),
    ])
    .await;
    let (output, result) = run(&env, &server, "Fix it").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(result["response"], "Ran the tests; they pass.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "sent back once, not twice");
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("run the tests first"), "{second}");
    let seen = inputs(&env, "stop");
    let active: Vec<&Value> = seen.iter().map(|s| &s["stop_hook_active"]).collect();
    assert_eq!(active, [&json!(false), &json!(true)]);
    let outcomes: Vec<Value> = hook_events(&env, result["trace_id"].as_str().unwrap())
        .iter()
        .map(|e| e["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("blocked"), json!("blocked")]);
}

#[tokio::test]
async fn goal_done_gets_the_goal_and_its_summary() {
    let env = agent_env();
    let hook = script(&env, "goal", "exit 0");
    configure(
        &env,
        &format!(
            "[[hooks.GoalDone]]\ncommand = \"{hook}\"\n\n[[hooks.GoalAbandoned]]\ncommand = \"{hook}\"\n"
        ),
    );
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "call_1",
            "goal",
            json!({"add": "Write the notes, Check them", "focus": "1"}),
        ),
        Turn::tool_call(
            "call_2",
            "goal",
            json!({"done": "Wrote notes.txt with three points.", "focus": "2"}),
        ),
        Turn::tool_call("call_3", "goal", json!({"abandon": "Nothing to check."})),
        Turn::text("Finished."),
    ])
    .await;
    let (output, result) = run(&env, &server, "Take notes").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let seen = inputs(&env, "goal");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "GoalDone");
    assert_eq!(seen[0]["goal_number"], "1");
    assert_eq!(seen[0]["goal_title"], "Write the notes");
    assert_eq!(seen[0]["summary"], "Wrote notes.txt with three points.");
    assert_eq!(seen[0]["session_id"], result["trace_id"]);
    assert_eq!(seen[1]["hook_event_name"], "GoalAbandoned");
    assert_eq!(seen[1]["goal_title"], "Check them");
    assert_eq!(seen[1]["reason"], "Nothing to check.");
}

#[tokio::test]
async fn a_user_prompt_submit_hook_refuses_a_prompt_before_the_model_sees_it() {
    let env = agent_env();
    let hook = script(
        &env,
        "prompt",
        "grep -q password \"$(dirname \"$0\")/prompt.jsonl\" && { echo 'no secrets in prompts' >&2; exit 2; }\nexit 0",
    );
    configure(
        &env,
        &format!("[[hooks.UserPromptSubmit]]\ncommand = \"{hook}\"\n"),
    );
    let server = MockModelServer::with_replies([Turn::text("Fine.")]).await;
    let (output, _) = run(&env, &server, "My password is hunter2").await;
    assert_ne!(code(&output), 0, "{}", stdout(&output));
    assert!(
        stderr(&output)
            .contains("a UserPromptSubmit hook refused the prompt: no secrets in prompts"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.request_count(), 0);
    assert_eq!(
        inputs(&env, "prompt")[0]["prompt"],
        "My password is hunter2"
    );
}

#[tokio::test]
async fn a_hook_that_hangs_is_killed_at_its_timeout_and_the_run_goes_on() {
    let env = agent_env();
    let pid_file = env.arg("hooks/child.pid");
    let hook = script(
        &env,
        "hang",
        &format!("sleep 300 &\necho $! > '{pid_file}'\nwait"),
    );
    configure(
        &env,
        &format!("[[hooks.PreToolUse]]\ncommand = \"{hook}\"\ntimeout = 1\n"),
    );
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "bash", json!({"command": "echo hi > ran.txt"})),
        Turn::text("Done."),
    ])
    .await;
    let started = Instant::now();
    let (output, result) = run(&env, &server, "Say hi").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(env.path("work/ran.txt").exists(), "the run did not go on");
    let events = hook_events(&env, result["trace_id"].as_str().unwrap());
    assert_eq!(events[0]["outcome"], "timed_out", "{events:?}");
    assert_eq!(events[0]["exit_code"], Value::Null);
    // What the hook started went with it.
    let pid: u32 = std::fs::read_to_string(env.path("hooks/child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if state.contains(") Z ") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the hook's child {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn an_unknown_hook_event_is_a_configuration_error() {
    let env = agent_env();
    configure(&env, "[[hooks.BeforeEverything]]\ncommand = \"true\"\n");
    let server = MockModelServer::with_replies([Turn::text("Fine.")]).await;
    let (output, _) = run(&env, &server, "Hi").await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`hooks.BeforeEverything` is not a hook event"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn a_project_hook_runs_only_once_the_user_accepted_the_file_as_it_is() {
    let env = agent_env();
    let hook = script(&env, "project", "echo 'the project says no' >&2\nexit 2");
    // The project's agent.toml (the commands' current folder), written by whoever wrote the
    // repository.
    let toml = format!("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"{hook}\"\n");
    env.write("agent.toml", &toml);
    let calls = || {
        [
            Turn::tool_call("call_1", "bash", json!({"command": "touch ran.txt"})),
            Turn::text("Done."),
        ]
    };
    let server = MockModelServer::with_replies(calls()).await;
    let (output, _) = run(&env, &server, "Touch a file").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        inputs(&env, "project").is_empty(),
        "the hook ran before it was accepted"
    );
    assert!(env.path("work/ran.txt").exists());
    assert!(
        stderr(&output).contains("do not run") && stderr(&output).contains("agent trust"),
        "{}",
        stderr(&output)
    );

    // Not a terminal and no --yes: nothing is accepted.
    let refused = env.run(&["trust"]).await;
    assert_eq!(code(&refused), 2, "{}", stderr(&refused));
    let accepted = env.run(&["trust", "--yes"]).await;
    assert_eq!(code(&accepted), 0, "{}", stderr(&accepted));
    assert!(stderr(&accepted).contains(&format!("PreToolUse [Bash]: {hook}")));
    assert!(env.data().join("agent/trusted.json").is_file());

    std::fs::remove_file(env.path("work/ran.txt")).unwrap();
    let server = MockModelServer::with_replies(calls()).await;
    let (output, _) = run(&env, &server, "Touch a file").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(inputs(&env, "project").len(), 1);
    assert!(
        !env.path("work/ran.txt").exists(),
        "the accepted hook did not block"
    );

    // A changed file is a file not accepted.
    env.write("agent.toml", &format!("{toml}\n# changed\n"));
    let server = MockModelServer::with_replies(calls()).await;
    let (output, _) = run(&env, &server, "Touch a file").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(
        inputs(&env, "project").len(),
        1,
        "the changed file's hook ran"
    );
    assert!(env.path("work/ran.txt").exists());
}
