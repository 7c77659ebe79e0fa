//! Project instructions and the task's inputs as a user meets them: an `AGENTS.md` in the
//! workspace reaches the model's system prompt (and `--no-instructions` keeps it out), and the
//! task comes from the argument, standard input (`agent run -`) or a file (`--task-file`).

use std::process::Stdio;

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::agent_env;

const RULES: &str = "Always answer in French. Rule 7b.";

/// The flags that point `agent run` at `server`, working in the environment's workspace with a
/// context window that takes a 1 MB task.
fn run_args(env: &CliEnv, server: &MockModelServer) -> Vec<String> {
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(env, server));
    args.extend(["--context-window".to_owned(), "2000000".to_owned()]);
    args
}

/// Runs `agent <args>` to the end (without blocking the mock server's runtime).
async fn run(env: &CliEnv, args: &[String]) -> std::process::Output {
    env.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await
}

/// The messages of the one request `server` received.
fn messages(server: &MockModelServer) -> Vec<Value> {
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].body["messages"].as_array().unwrap().clone()
}

/// The text of the `index`th message of the one request, whose role must be `role`.
fn text(server: &MockModelServer, index: usize, role: &str) -> String {
    let message = &messages(server)[index];
    assert_eq!(message["role"], role, "{message}");
    message["content"].as_str().unwrap().to_owned()
}

/// The user message carrying the task.
fn task_message(server: &MockModelServer) -> String {
    messages(server)
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn an_agents_md_in_the_workspace_reaches_the_system_prompt_unless_left_out() {
    let env = agent_env();
    env.write("work/AGENTS.md", RULES);
    env.write("home/agent/AGENTS.md", "The user's own rule.");
    let server = MockModelServer::with_replies([Turn::text("Fait.")]).await;
    let mut args = run_args(&env, &server);
    args.push("Do it".into());
    let output = run(&env, &args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "Fait.");
    let prompt = text(&server, 0, "system");
    let plan_starts = prompt.find("## Current Plan").unwrap();
    let work = std::fs::canonicalize(env.path("work")).unwrap();
    let user = std::fs::canonicalize(env.path("home/agent")).unwrap();
    assert!(
        prompt.contains(&format!(
            "## Instructions from {}\n\nThe user's own rule.\n\n## Instructions from {}\n\n{RULES}",
            user.join("AGENTS.md").display(),
            work.join("AGENTS.md").display(),
        )),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!(
            "## Environment\n\n- Workspace: {}\n- OS: {}\n- Date: ",
            work.display(),
            std::env::consts::OS
        )),
        "{prompt}"
    );
    // The instructions come before the plan, in the static part of the prompt.
    assert!(prompt.find(RULES).unwrap() < plan_starts, "{prompt}");

    let server = MockModelServer::with_replies([Turn::text("Done.")]).await;
    let mut args = run_args(&env, &server);
    args.extend(["--no-instructions".into(), "Do it".into()]);
    let output = run(&env, &args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let prompt = text(&server, 0, "system");
    assert!(!prompt.contains(RULES), "{prompt}");
    assert!(!prompt.contains("## Environment"), "{prompt}");

    // `instructions = false` in agent.toml does the same.
    env.write("agent.toml", "instructions = false\n");
    let server = MockModelServer::with_replies([Turn::text("Done.")]).await;
    let mut args = run_args(&env, &server);
    args.push("Do it".into());
    let output = run(&env, &args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(!text(&server, 0, "system").contains(RULES));
}

#[tokio::test]
async fn run_dash_reads_the_task_from_standard_input() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("Read it.")]).await;
    let mut args = run_args(&env, &server);
    args.push("-".into());
    let mut child = env
        .agent(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"Summarise the notes\nline two of the task\n")
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "Read it.");
    let task = task_message(&server);
    assert!(
        task.contains("Summarise the notes\nline two of the task"),
        "{task}"
    );
}

#[tokio::test]
async fn task_file_takes_a_one_megabyte_task() {
    let env = agent_env();
    let line = "Check every line of this long task carefully. ";
    let task = format!("BEGIN {} END", line.repeat(1024 * 1024 / line.len()));
    assert!(task.len() > 1024 * 1024);
    let file = env.write("task.md", &task);
    let script = env.write("script.json", r#"[{"text": "Checked."}]"#);
    let work = env.work();
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--context-window",
            "2000000",
            "--workspace",
            &work,
            "--json",
            "--task-file",
            &file,
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let answer: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(answer["response"], "Checked.");
    let trace_id = answer["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id, "--json"]).await;
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    let shown: Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["trace"]["task"].as_str(), Some(task.as_str()));
}

#[tokio::test]
async fn an_empty_or_unreadable_task_is_a_usage_error_naming_its_source() {
    let env = agent_env();
    let server = MockModelServer::with_replies([Turn::text("never")]).await;
    let run_with = |extra: &[&str]| {
        let mut args = run_args(&env, &server);
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        args
    };
    // Standard input is empty (the environment's commands have none).
    let output = run(&env, &run_with(&["-"])).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(stderr(&output).contains("the task is empty (standard input)"));

    let empty = env.write("empty.md", " \n\n");
    let output = run(&env, &run_with(&["--task-file", &empty])).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("the task is empty (the task file {empty})")),
        "{}",
        stderr(&output)
    );

    let missing = env.arg("missing.md");
    let output = run(&env, &run_with(&["--task-file", &missing])).await;
    assert_ne!(code(&output), 0);
    assert!(
        stderr(&output).contains(&format!("cannot read the task file {missing}")),
        "{}",
        stderr(&output)
    );

    let output = run(&env, &run_with(&["--task-file", &empty, "a task too"])).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn runs_started_over_http_read_the_instructions_of_their_workspace() {
    let env = agent_env();
    env.write("work/AGENTS.md", RULES);
    let model = MockModelServer::with_replies([Turn::text("Fait.")]).await;
    let base = model.openai_base();
    let served = env.serve(&[
        "--provider",
        "openai",
        "--base-url",
        &base,
        "--api-key",
        "sk-test",
        "--model",
        "gpt-4o-mini",
        "--workspace",
        &env.work(),
    ]);
    let (status, body) = served.request(
        "POST",
        "/api/traces",
        Some(&serde_json::json!({"task": "Do it"})),
    );
    assert_eq!(status, 201, "{body} {}", served.log());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "{}", served.log());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let prompt = text(&model, 0, "system");
    assert!(prompt.contains(RULES), "{prompt}");
    assert!(prompt.contains("## Environment"), "{prompt}");
}
