//! Tests of the `agent` binary as a user runs it: against an in-process mock of an
//! OpenAI-compatible server and with the scripted provider, checking stdout, stderr, exit codes
//! and what lands in the trace folder.

use std::process::Stdio;

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Turn, Usage};
use serde_json::{Value, json};

use crate::agent_env;

/// Writes a scripted model's turns to a file and returns its path.
fn write_script(env: &CliEnv, name: &str, turns: Value) -> String {
    env.write(name, &turns.to_string())
}

/// A turn making one call, with the usage every answer of these tests reports.
fn tool_call(id: &str, name: &str, args: Value) -> Turn {
    Turn::tool_call(id, name, args).with_usage(Usage::new(50, 5))
}

/// A final answer, with the usage every answer of these tests reports.
fn text(content: &str) -> Turn {
    Turn::text(content).with_usage(Usage::new(50, 5))
}

#[tokio::test]
async fn run_against_an_openai_compatible_server_prints_one_json_object() {
    let env = agent_env();
    let server = MockModelServer::with_replies([
        tool_call(
            "c1",
            "goal",
            json!({"add": "Write the answer", "focus": "1"}),
        ),
        tool_call(
            "c2",
            "write_file",
            json!({"path": "answer.txt", "content": "42"}),
        ),
        tool_call("c3", "goal", json!({"done": "answer.txt holds 42"})),
        text("The answer is 42."),
    ])
    .await;
    let work = env.work();
    let output = env
        .run(&[
            "run",
            "--provider",
            "openai",
            "--base-url",
            &server.openai_base(),
            "--api-key",
            "sk-test",
            "--model",
            "gpt-test",
            "--workspace",
            &work,
            "--yes",
            "--json",
            "Write the answer",
        ])
        .await;
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["status"], "completed");
    assert_eq!(result["response"], "The answer is 42.");
    assert_eq!(result["totals"]["messages"], 8);
    assert_eq!(
        std::fs::read_to_string(env.path("work/answer.txt")).unwrap(),
        "42"
    );
    let trace_id = result["trace_id"].as_str().unwrap();
    assert!(
        env.path("traces")
            .join(trace_id)
            .join("events.jsonl")
            .is_file()
    );

    // The requests carried the key, the tools and the plan.
    let sent = server.requests();
    assert!(
        sent.iter()
            .all(|r| r.header("authorization") == Some("Bearer sk-test"))
    );
    let requests: Vec<Value> = sent.into_iter().map(|r| r.body).collect();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0]["model"], "gpt-test");
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "goal",
        "read_file",
        "write_file",
        "edit_file",
        "bash",
        "grep",
        "glob_files",
        "read_progress",
    ] {
        assert!(tools.contains(&name), "{name} missing from {tools:?}");
    }
    let system = requests[3]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("[✓] 1. Write the answer"), "{system}");
}

#[tokio::test]
async fn exit_codes_say_how_the_run_ended() {
    let env = agent_env();
    let work = env.work();
    // Completed: 0; the answer alone on stdout.
    let script = write_script(&env, "done.json", json!([{"text": "Finished."}]));
    let output = env
        .run(&["run", "--script", &script, "--workspace", &work, "Do it"])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Finished.\n");

    // Failed: 1, with how to resume.
    let script = write_script(
        &env,
        "fail.json",
        json!([{"error": {"kind": "authentication", "message": "bad key"}}]),
    );
    let output = env
        .run(&["run", "--script", &script, "--workspace", &work, "Do it"])
        .await;
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("agent resume"),
        "{}",
        stderr(&output)
    );

    // Limit: 3.
    let script = write_script(
        &env,
        "loop.json",
        json!([
            {"tool_calls": [{"name": "read_progress", "arguments": {}}]},
            {"tool_calls": [{"name": "read_progress", "arguments": {}}]},
            {"text": "never"}
        ]),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--max-iterations",
            "1",
            "Loop",
        ])
        .await;
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("max_iterations"),
        "{}",
        stderr(&output)
    );

    // Usage: 2, for a bad flag and for a missing provider.
    let output = env.run(&["run", "--max-iterations", "lots", "x"]).await;
    assert_eq!(code(&output), 2);
    let output = env.run(&["run", "Do it"]).await;
    assert_eq!(code(&output), 2);
    let message = stderr(&output);
    assert!(
        message.contains("no model provider is configured") && message.contains("OPENAI_API_KEY"),
        "{message}"
    );
    assert!(message.contains("agent demo"), "{message}");
}

#[tokio::test]
async fn ctrl_c_cancels_cleanly_with_exit_code_130_and_the_trace_resumes() {
    let env = agent_env();
    let work = env.work();
    let script = write_script(
        &env,
        "sleep.json",
        json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]},
            {"text": "never"}
        ]),
    );
    let child = env
        .agent(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--yes",
            "--json",
            "Sleep",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the bash call is recorded, then interrupt.
    let traces = env.path("traces");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let found = std::fs::read_dir(&traces).unwrap().flatten().any(|entry| {
            std::fs::read_to_string(entry.path().join("events.jsonl"))
                .unwrap_or_default()
                .contains("tool call: bash")
        });
        if found {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run never reached bash"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id().unwrap() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let output = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(code(&output), 130, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["status"], "cancelled");

    let trace_id = result["trace_id"].as_str().unwrap().to_owned();
    let script = write_script(&env, "after.json", json!([{"text": "Resumed."}]));
    let output = env
        .run(&[
            "resume",
            &trace_id,
            "--script",
            &script,
            "--workspace",
            &work,
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Resumed.\n");
}

#[tokio::test]
async fn without_yes_and_without_a_terminal_risky_tools_are_refused() {
    let env = agent_env();
    let work = env.work();
    let script = write_script(
        &env,
        "write.json",
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
            {"text": "I could not write it."}
        ]),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Write x",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        !env.path("work/x.txt").exists(),
        "the write ran without approval"
    );
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let tool = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("no terminal to ask on"),
        "{tool}"
    );
}

/// Replaces what changes from run to run (ids, times) so the text can be compared.
fn normalise(text: &str, trace_id: &str) -> String {
    text.replace(trace_id, "TRACE")
        .lines()
        .map(|line| {
            if line.starts_with("created_at: ") {
                "created_at: TIME"
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn show_prints_the_trace_as_a_tree() {
    let env = agent_env();
    let work = env.work();
    let script = write_script(
        &env,
        "show.json",
        json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Look around, Try a shortcut, Report", "focus": "1"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"tool_calls": [{"name": "glob_files", "arguments": {"pattern": "*"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "the folder is empty", "focus": "2"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"tool_calls": [{"name": "goal", "arguments": {"abandon": "no shortcut exists"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"tool_calls": [{"name": "goal", "arguments": {"focus": "2"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "reported"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
            {"text": "Nothing to do.", "usage": {"prompt_tokens": 100, "completion_tokens": 10}}
        ]),
    );
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Inspect the folder",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let trace_id = result["trace_id"].as_str().unwrap();
    let shown = env.run(&["show", trace_id]).await;
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    let expected = "\
============================================================
Trace TRACE
============================================================
## Trace
task: Inspect the folder
status: completed
model: scripted
total_messages: 14
total_tokens: 914
total_cost: 0.0000
limits: max_iterations 100
created_at: TIME
summary: Nothing to do.
## Goals
├── [✓] 1. Look around (id 1)
│   summary: the folder is empty
│   stats: 4 messages · 249 tokens · $0.0000 · glob_files → goal
│   · #4 assistant: tool call: glob_files (110 tokens)
│   · #5 tool: glob_files (4 tokens)
│   · #6 assistant: tool call: goal (110 tokens)
│   · #7 tool: goal (25 tokens)
├── [✗] Try a shortcut (id 2)
│   reason: no shortcut exists
│   stats: 2 messages · 154 tokens · $0.0000 · goal
│   · #8 assistant: tool call: goal (110 tokens)
│   · #9 tool: goal (44 tokens)
└── [✓] 2. Report (id 3)
    summary: reported
    stats: 2 messages · 128 tokens · $0.0000 · goal
    · #12 assistant: tool call: goal (110 tokens)
    · #13 tool: goal (18 tokens)
## Messages outside any goal
├── #1 user: Inspect the folder
├── #2 assistant: tool call: goal (110 tokens)
├── #3 tool: goal (39 tokens)
├── #10 assistant: tool call: goal (110 tokens)
├── #11 tool: goal (14 tokens)
└── #14 assistant: Nothing to do. (110 tokens)";
    assert_eq!(normalise(stdout(&shown).trim_end(), trace_id), expected);

    let listed = env.run(&["traces"]).await;
    assert!(
        stdout(&listed).contains(trace_id) && stdout(&listed).contains("completed"),
        "{}",
        stdout(&listed)
    );
    let missing = env.run(&["show", "no-such-trace"]).await;
    assert_eq!(code(&missing), 2);
    let bad = env.run(&["show", "../etc"]).await;
    assert_ne!(code(&bad), 0);
    assert!(stderr(&bad).contains("invalid"), "{}", stderr(&bad));
}

#[tokio::test]
async fn a_plan_is_written_edited_and_run() {
    let env = agent_env();
    let work = env.work();
    let script = write_script(
        &env,
        "plan.json",
        json!([
            {"tool_calls": [{"name": "goal", "arguments": {"add": "Write notes, Check notes"}}]},
            {"text": "Two goals: write the notes, then check them."}
        ]),
    );
    let output = env
        .run(&["plan", "--script", &script, "--json", "Make notes"])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["status"], "planned");
    let trace_id = result["trace_id"].as_str().unwrap().to_owned();

    // The editor turns "Check notes" into two sub-goals of a renamed goal.
    let editor = env.path("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/^Check notes$/Review\\n  Read notes.txt back\\n  Fix typos/' \"$1\"\n").unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let output = env
        .agent(&["plan", "edit", &trace_id])
        .env("EDITOR", &editor)
        .output()
        .await
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Review\n  Read notes.txt back\n  Fix typos\n"),
        "{}",
        stdout(&output)
    );

    let saved = env.path("plan.txt");
    let output = env
        .run(&["plan", "save", &trace_id, saved.to_str().unwrap()])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));

    let script = write_script(
        &env,
        "execute.json",
        json!([
            // Goal 1 is the planning goal, completed; the plan starts at 2.
            {"tool_calls": [{"name": "goal", "arguments": {"focus": "2"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "notes"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "written", "focus": "3.1"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "read back", "focus": "3.2"}}]},
            {"tool_calls": [{"name": "goal", "arguments": {"done": "no typos"}}]},
            {"text": "Notes written and reviewed."}
        ]),
    );
    let output = env
        .run(&[
            "run",
            "--trace",
            &trace_id,
            "--script",
            &script,
            "--workspace",
            &work,
            "--yes",
            "--json",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["trace_id"], trace_id.as_str());
    assert_eq!(result["response"], "Notes written and reviewed.");
    assert!(env.path("work/notes.txt").is_file());
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", &trace_id, "--json"]).await.stdout).unwrap();
    let statuses: Vec<&str> = shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "completed",
            "completed",
            "completed",
            "completed",
            "completed"
        ]
    );
    assert_eq!(
        shown["goal_tree"]["goals"][0]["summary"],
        "Two goals: write the notes, then check them."
    );

    // The saved plan starts another run, which holds the model to it: a model that only
    // answers leaves the run incomplete, its four goals open.
    let script = write_script(
        &env,
        "reuse.json",
        json!({"turns": [{"text": "Reused."}], "fallback": "Reused."}),
    );
    let output = env
        .run(&[
            "run",
            "--plan",
            saved.to_str().unwrap(),
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            "Make notes again",
        ])
        .await;
    assert_eq!(code(&output), 5, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(
        result["pending_goals"].as_array().unwrap().len(),
        4,
        "{result}"
    );
    let shown: Value = serde_json::from_slice(
        &env.run(&["show", result["trace_id"].as_str().unwrap(), "--json"])
            .await
            .stdout,
    )
    .unwrap();
    let descriptions: Vec<&str> = shown["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["description"].as_str().unwrap())
        .collect();
    assert_eq!(
        descriptions,
        ["Write notes", "Review", "Read notes.txt back", "Fix typos"]
    );

    // Running a trace that is not a plan is refused with a pointer to resume.
    let output = env
        .run(&["run", "--trace", &trace_id, "--script", &script])
        .await;
    assert_ne!(code(&output), 0);
    assert!(
        stderr(&output).contains("agent resume"),
        "{}",
        stderr(&output)
    );
}

/// Runs `agent demo --no-serve` into the environment's trace folder and checks it succeeded.
async fn run_demo(env: &CliEnv) -> std::process::Output {
    let traces = env.path("traces");
    let output = env
        .run(&[
            "demo",
            "--no-serve",
            "--trace-dir",
            traces.to_str().unwrap(),
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    output
}

#[tokio::test]
async fn the_demo_runs_offline_and_records_a_full_trace() {
    let env = agent_env();
    let traces = env.path("traces");
    let output = run_demo(&env).await;
    // The model's words stream on stdout, the final answer last; the closing report, made from
    // every goal's summary, is the trace's summary and stays off a pipe.
    let answer = stdout(&output);
    assert!(
        answer.starts_with("I will plan first, then read the code before changing it.\n"),
        "{answer}"
    );
    assert!(
        answer.trim_end().ends_with("checks both lines and passes."),
        "{answer}"
    );
    assert!(!answer.contains("## Report"), "{answer}");

    let listed: Value =
        serde_json::from_slice(&env.run(&["traces", "--json"]).await.stdout).unwrap();
    let main = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["parent_trace_id"].is_null())
        .unwrap();
    let trace_id = main["trace_id"].as_str().unwrap();
    let shown: Value =
        serde_json::from_slice(&env.run(&["show", trace_id, "--json"]).await.stdout).unwrap();
    assert_eq!(shown["trace"]["status"], "completed");
    let summary = shown["trace"]["summary"].as_str().unwrap();
    assert!(summary.starts_with("## Report"), "{summary}");
    assert!(
        summary.contains("**Abandoned:** a regex tokenizer"),
        "{summary}"
    );

    // The plan: an abandoned approach, an exploration with two branches, everything else done.
    let goals = shown["goal_tree"]["goals"].as_array().unwrap();
    let by_type = |kind: &str| {
        goals
            .iter()
            .filter(|g| g["type"] == kind)
            .collect::<Vec<_>>()
    };
    let start = by_type("explore_start");
    let merge = by_type("explore_merge");
    assert_eq!((start.len(), merge.len()), (1, 1), "{goals:#?}");
    assert_eq!(merge[0]["explore_start_id"], start[0]["id"]);
    assert_eq!(merge[0]["selected_branch"], "A", "the model chose Counter");
    assert!(
        merge[0]["merge_summary"]
            .as_str()
            .unwrap()
            .starts_with("## Exploration results")
    );
    let branches: Vec<&str> = start[0]["branch_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert_eq!(branches.len(), 2);
    let subs: Vec<&str> = shown["sub_traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trace_id"].as_str().unwrap())
        .collect();
    for branch in &branches {
        assert!(
            subs.contains(branch),
            "{branch} is not a sub-trace: {subs:?}"
        );
        assert!(
            traces.join(branch).join("events.jsonl").is_file(),
            "no folder for {branch}"
        );
    }
    let abandoned: Vec<_> = goals
        .iter()
        .filter(|g| g["status"] == "abandoned")
        .collect();
    assert_eq!(abandoned.len(), 1);
    assert!(
        goals
            .iter()
            .filter(|g| g["status"] != "abandoned")
            .all(|g| g["status"] == "completed"),
        "{goals:#?}"
    );

    // No tool call failed, and the events tell the story in order.
    let errors: Vec<&Value> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["role"] == "tool" && m["content"].as_str().unwrap_or("").starts_with("error:")
        })
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let events: Vec<Value> = std::fs::read_to_string(traces.join(trace_id).join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let ids: Vec<u64> = events
        .iter()
        .map(|e| e["event_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    let count = |name: &str| events.iter().filter(|e| e["event"] == name).count();
    assert_eq!(count("sub_trace_started"), 2);
    assert_eq!(count("sub_trace_completed"), 2);
    assert_eq!(events.last().unwrap()["event"], "trace_completed");
}

#[tokio::test]
async fn a_done_plan_ends_with_a_closing_report_unless_no_report() {
    let env = agent_env();
    let work = env.work();
    let turns = json!([
        {"tool_calls": [{"name": "goal", "arguments": {"add": "Count, Check", "focus": "1"}}]},
        {"tool_calls": [{"name": "goal", "arguments": {"done": "counted 3", "focus": "2"}}]},
        {"tool_calls": [{"name": "goal", "arguments": {"done": "checked: 3"}}]},
        {"text": "Both done."},
        {"text": "## Report\nCounted 3 and checked it."}
    ]);
    let script = write_script(&env, "report.json", turns.clone());
    let args = [
        "run",
        "--script",
        &script,
        "--workspace",
        &work,
        "--json",
        "Count",
    ];
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    // The final answer stays the answer; the report is beside it.
    assert_eq!(result["response"], "Both done.");
    assert_eq!(result["report"], "## Report\nCounted 3 and checked it.");

    let script = write_script(&env, "no-report.json", turns);
    let mut args = vec!["run", "--script", &script, "--workspace", &work, "--json"];
    args.extend(["--no-report", "Count"]);
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(result["response"], "Both done.");
    assert_eq!(result["report"], Value::Null);
}

#[tokio::test]
async fn a_reader_that_went_away_ends_listing_commands_quietly() {
    let env = agent_env();
    run_demo(&env).await;
    let listed: Value =
        serde_json::from_slice(&env.run(&["traces", "--json"]).await.stdout).unwrap();
    let trace_id = listed[0]["trace_id"].as_str().unwrap().to_owned();
    // As `agent traces | head -0`: the pipe's reading end is closed before anything is written,
    // so the first write fails with a broken pipe.
    for args in [
        vec!["traces"],
        vec!["traces", "--json"],
        vec!["show", &trace_id],
        vec!["show", &trace_id, "--json"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = env
            .command(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{args:?}: {}", stderr(&output));
        assert_eq!(stderr(&output), "", "{args:?}");
    }
}

#[tokio::test]
async fn the_demo_does_not_become_the_newest_trace_of_the_project() {
    let env = agent_env();
    let demo = env
        .agent(&["demo", "--no-serve"])
        .env_remove("AGENT_TRACE_DIR")
        .output()
        .await
        .unwrap();
    assert_eq!(code(&demo), 0, "{}", stderr(&demo));
    // Its traces are in a project of their own, named in what it says.
    let kept = env.data().join("agent/traces/demo");
    assert!(
        stderr(&demo).contains(&kept.display().to_string()),
        "{}",
        stderr(&demo)
    );
    // `-c` in the folder the demo ran in finds nothing to continue (not the demo, whose model is
    // the built-in script).
    let script = write_script(&env, "s.json", json!([{"text": "Hi."}]));
    let continued = env
        .agent(&["run", "-c", "--script", &script, "go on"])
        .env_remove("AGENT_TRACE_DIR")
        .output()
        .await
        .unwrap();
    assert_eq!(code(&continued), 2, "{}", stderr(&continued));
    assert!(
        stderr(&continued).contains("no traces in this project's trace folder"),
        "{}",
        stderr(&continued)
    );
}
