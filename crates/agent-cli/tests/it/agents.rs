//! Agent profiles through the `agent` binary: `agent agents` lists the built-ins and the
//! profiles of `agent.toml` and `.agent/agents/`, a run as `--agent NAME` and a delegate naming
//! a profile use it end to end, and invalid profiles are usage errors that name the file and
//! the field.

use std::path::Path;

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use serde_json::{Value, json};

/// A temporary home, project (`work`, with `agent.toml` beside it and an empty
/// `.agent/agents/`) and trace folder.
fn project() -> CliEnv {
    let env = crate::agent_env();
    std::fs::create_dir_all(env.path("work/.agent/agents")).unwrap();
    env
}

/// The `meta.json` of a trace.
fn trace_meta(env: &CliEnv, trace_id: &str) -> Value {
    let path = env.traces().join(trace_id).join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const CONFIG: &str = r#"
[agents.reviewer]
description = "Reviews changes; never edits."
base = "explore"
prompt = "You review code."
model = "review-model"
max_iterations = 7
"#;

/// Claude Code's format, as it would be copied from `.claude/agents/`.
const TESTER: &str = "---
name: tester
description: Runs the tests and reports failures.
tools: Read, Bash
model: inherit
---
You run tests in {workspace}.
";

#[tokio::test]
async fn agents_lists_the_built_ins_and_the_profiles_of_the_file_and_the_project() {
    let env = project();
    env.write("agent.toml", CONFIG);
    env.write("work/.agent/agents/tester.md", TESTER);
    // The project's file changes the reviewer's model only.
    env.write(
        "work/.agent/agents/reviewer.md",
        "---\nmodel: big-model\n---\n",
    );
    let output = env
        .run(&["agents", "--workspace", &env.work(), "--json"])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let agents = listed["agents"].as_array().unwrap();
    let names: Vec<&str> = agents.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "compaction",
            "default",
            "delegate",
            "explore",
            "plan",
            "reviewer",
            "tester"
        ]
    );
    let by_name = |name: &str| agents.iter().find(|a| a["name"] == name).unwrap().clone();
    let reviewer = by_name("reviewer");
    assert_eq!(reviewer["model"], "big-model");
    assert_eq!(reviewer["max_iterations"], 7);
    assert_eq!(reviewer["tools"], "read-only");
    assert!(
        reviewer["source"]
            .as_str()
            .unwrap()
            .ends_with("reviewer.md")
    );
    let tester = by_name("tester");
    assert_eq!(tester["tools"], "bash, read_file");
    assert_eq!(tester["model"], Value::Null);
    assert_eq!(by_name("explore")["source"], "built-in");

    let table = env.run(&["agents", "--workspace", &env.work()]).await;
    let text = stdout(&table);
    assert!(text.starts_with("NAME"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("tester") && l.ends_with("Runs the tests and reports failures.")),
        "{text}"
    );
}

#[tokio::test]
async fn a_run_as_a_profile_and_a_delegate_naming_one() {
    let env = project();
    env.write("agent.toml", CONFIG);
    std::fs::write(env.path("work/notes.txt"), "hello\n").unwrap();
    // As the reviewer: read-only tools, so the write is refused as an unknown tool.
    let script = env.write(
        "review.json",
        &json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "x", "content": ""}}]},
            {"text": "Reviewed: no problems."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &env.work(),
            "--agent",
            "reviewer",
            "--json",
            "Review notes.txt",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let meta = trace_meta(&env, result["trace_id"].as_str().unwrap());
    assert_eq!(meta["agent_type"], "reviewer");
    assert_eq!(meta["model"], "review-model");
    assert!(!env.path("work/x").exists());

    // The default agent delegates to the reviewer, which runs as a sub-trace of that profile.
    let task = "Check notes.txt for typos";
    let script = env.write(
        "delegate.json",
        &json!({
            "turns": [
                {"tool_calls": [{"name": "delegate", "arguments": {"task": task, "agent": "reviewer"}}]},
                {"text": "The reviewer found nothing."}
            ],
            "routes": [{"when_task_contains": task, "turns": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                {"text": "notes.txt has no typos."}
            ]}]
        })
        .to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &env.work(),
            "--json",
            "Get a review",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap();
    assert_eq!(trace_meta(&env, trace_id)["agent_type"], Value::Null);
    let sub = std::fs::read_dir(env.path("traces"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .find(|name| name.starts_with(&format!("{trace_id}@reviewer-")))
        .expect("a reviewer sub-trace");
    let meta = trace_meta(&env, &sub);
    assert_eq!(meta["agent_type"], "reviewer");
    assert_eq!(meta["status"], "completed");
    assert_eq!(meta["model"], "review-model");
}

/// Runs `agent agents` with `file` as `agent.toml` or as a profile file, and returns stderr.
async fn invalid(env: &CliEnv, args: &[&str]) -> String {
    let output = env.run(args).await;
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    stderr(&output)
}

#[tokio::test]
async fn invalid_profiles_are_usage_errors_naming_the_file_and_the_field() {
    let env = project();
    let work = env.work();
    let list = ["agents", "--workspace", work.as_str()];

    env.write("agent.toml", "[agents.reviewer]\ntoolz = [\"read_file\"]\n");
    let message = invalid(&env, &list).await;
    assert!(
        message.contains("agent.toml") && message.contains("toolz"),
        "{message}"
    );

    env.write("agent.toml", "[agents.reviewer]\nprovider = \"mistral\"\n");
    let message = invalid(&env, &list).await;
    assert!(
        message.contains("agent.toml [agents.reviewer]: `provider`: unknown provider \"mistral\""),
        "{message}"
    );

    std::fs::remove_file(env.path("agent.toml")).unwrap();
    let file = env.write(
        "work/.agent/agents/broken.md",
        "---\nmax_iterations: lots\n---\n",
    );
    let message = invalid(&env, &list).await;
    assert!(
        message.contains(&format!("{file}: `max_iterations`: invalid type")),
        "{message}"
    );

    std::fs::remove_file(Path::new(&file)).unwrap();
    let output = env
        .run(&["run", "--provider", "scripted", "--agent", "nobody", "x"])
        .await;
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("there is no agent profile \"nobody\""),
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn a_plan_is_written_as_plan_and_executed_and_resumed_as_the_running_profile() {
    let env = project();
    let work = env.work();
    let script = env.write(
        "plan.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Write notes"}}]},
            {"text": "One goal."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "plan",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Make notes",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let planned: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let trace_id = planned["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(trace_meta(&env, &trace_id)["agent_type"], "plan");

    // Executing it stops on a model error; it is now the default profile's trace.
    let failing = env.write(
        "fail.json",
        &json!([{"error": {"kind": "server", "message": "down"}}]).to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--trace",
            &trace_id,
            "--script",
            &failing,
            "--workspace",
            &work,
            "--yes",
        ])
        .await;
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert_eq!(trace_meta(&env, &trace_id)["agent_type"], Value::Null);

    // The resume has every tool again, not only the goal tools of `plan`.
    let script = env.write(
        "resume.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"focus": "2"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "n"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "notes written"}}]},
            {"text": "Written."}
        ])
        .to_string(),
    );
    let output = env
        .run(&[
            "resume",
            &trace_id,
            "--script",
            &script,
            "--workspace",
            &work,
            "--yes",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(env.path("work/notes.txt").is_file());
}

#[tokio::test]
async fn flags_win_over_the_profile_and_its_model_stays_with_its_provider() {
    let env = project();
    env.write(
        "agent.toml",
        "[agents.remote]\nprovider = \"openai\"\nmodel = \"gpt-remote\"\nmax_iterations = 7\n",
    );
    std::fs::write(env.path("work/notes.txt"), "hello\n").unwrap();
    let read = json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]});
    let script = env.write(
        "reads.json",
        &json!([read, read, {"text": "Read twice."}]).to_string(),
    );
    // `--provider scripted` beats the profile's OpenAI (which has no key here), the profile's
    // model does not follow the run to another provider, and `--max-iterations` beats the
    // profile's limit.
    let output = env
        .run(&[
            "run",
            "--agent",
            "remote",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--workspace",
            &env.work(),
            "--max-iterations",
            "1",
            "--json",
            "Read the notes",
        ])
        .await;
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let meta = trace_meta(&env, result["trace_id"].as_str().unwrap());
    assert_eq!(meta["agent_type"], "remote");
    assert_eq!(meta["model"], "scripted");
}

#[tokio::test]
async fn a_resume_whose_profile_is_gone_says_so_and_how_to_go_on() {
    let env = project();
    let tester = env.write("work/.agent/agents/tester.md", TESTER);
    let failing = env.write(
        "fail.json",
        &json!([{"error": {"kind": "server", "message": "down"}}]).to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--agent",
            "tester",
            "--script",
            &failing,
            "--workspace",
            &env.work(),
            "--json",
            "Run the tests",
        ])
        .await;
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(trace_meta(&env, &trace_id)["agent_type"], "tester");

    std::fs::remove_file(&tester).unwrap();
    let done = env.write("done.json", &json!([{"text": "Done."}]).to_string());
    let resume = |agent: Option<&'static str>| {
        let mut args = vec![
            "resume".to_owned(),
            trace_id.clone(),
            "--script".into(),
            done.clone(),
            "--workspace".into(),
            env.work(),
        ];
        if let Some(agent) = agent {
            args.extend(["--agent".into(), agent.into()]);
        }
        args
    };
    let args = resume(None);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = env.run(&args).await;
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    let message = stderr(&output);
    assert!(
        message.contains("\"tester\", which is not defined any more")
            && message.contains("--agent"),
        "{message}"
    );
    let args = resume(Some("default"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
}
