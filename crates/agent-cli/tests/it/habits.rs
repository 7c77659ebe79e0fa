//! The command-line habits: `-m`, `-c` (the newest trace of the project), `-p` (the answer
//! alone), `resume` with the model the trace ran with and without an id, id prefixes in every
//! command, traces in the user's data folder, and model errors that say what to fix.

use agent_test_support::cli::{CliEnv, code, stderr, stdout};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use serde_json::{Value, json};

use crate::agent_env;

/// The last line of stdout as JSON (the `--json` result).
fn result_of(output: &std::process::Output) -> Value {
    let text = stdout(output);
    serde_json::from_str(text.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|_| panic!("not JSON: {text}\nstderr: {}", stderr(output)))
}

/// `show --json` of a trace.
async fn shown(env: &CliEnv, trace_id: &str) -> Value {
    let output = env.run(&["show", trace_id, "--json"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// A scripted run of `task` answering `answer`, in the environment's workspace; its trace id.
async fn scripted_run(env: &CliEnv, name: &str, answer: &str, task: &str) -> String {
    let script = env.write(name, &json!([{ "text": answer }]).to_string());
    let work = env.work();
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
            task,
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    result_of(&output)["trace_id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn resume_asks_the_server_for_the_model_the_trace_ran_with_unless_told_otherwise() {
    let env = agent_env();
    let work = env.work();
    let server = MockModelServer::with_replies([
        // The server answers under its own, longer name.
        Turn::tool_call("c1", "goal", json!({"add": "Look", "focus": "1"}))
            .with_model("mock-coder-0601"),
        Turn::tool_call("c2", "glob_files", json!({"pattern": "*"})),
        Turn::tool_call("c3", "goal", json!({"done": "looked around"})),
        Turn::text("Done."),
    ])
    .await;
    let base = server.openai_base();
    let output = env
        .run(&[
            "run",
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--api-key",
            "sk-test",
            "-m",
            "mock-coder",
            "--workspace",
            &work,
            "--max-iterations",
            "1",
            "--json",
            "Look around",
        ])
        .await;
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let trace_id = result_of(&output)["trace_id"].as_str().unwrap().to_owned();
    let trace = &shown(&env, &trace_id).await["trace"];
    assert_eq!(trace["model"], "mock-coder-0601", "the model that answered");
    assert_eq!(trace["model_settings"]["model"], "mock-coder");
    assert_eq!(trace["model_settings"]["provider"], "openai");
    assert_eq!(trace["model_settings"]["base_url"], base.as_str());

    // No --model, no --base-url, no --provider: the trace's own are used, and nothing is said.
    let output = env
        .run(&[
            "resume",
            &trace_id[..8],
            "--api-key",
            "sk-test",
            "--workspace",
            &work,
        ])
        .await;
    assert_eq!(
        code(&output),
        3,
        "stored limit of one call: {}",
        stderr(&output)
    );
    assert!(
        !stderr(&output).contains("overrides"),
        "{}",
        stderr(&output)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["model"], "mock-coder");

    // A flag wins, and says so in one line.
    let output = env
        .run(&[
            "resume",
            &trace_id[..8],
            "--api-key",
            "sk-test",
            "--workspace",
            &work,
            "-m",
            "mock-bigger",
            "--max-iterations",
            "5",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(server.requests()[2].body["model"], "mock-bigger");
    let said: Vec<String> = stderr(&output)
        .lines()
        .filter(|line| line.contains("overrides"))
        .map(str::to_owned)
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&output));
    assert!(
        said[0].contains("model mock-bigger (was mock-coder)"),
        "{said:?}"
    );
    assert!(said[0].contains("max iterations 5 (was 1)"), "{said:?}");
    assert_eq!(
        shown(&env, &trace_id).await["trace"]["model"],
        "mock-bigger"
    );

    // A completed trace has nothing to resume: the error names the command that continues it.
    let output = env.run(&["resume", &trace_id, "--workspace", &work]).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("agent run --continue {}", &trace_id[..8])),
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn continue_without_an_id_takes_the_newest_trace_and_print_prints_the_answer_alone() {
    let env = agent_env();
    let work = env.work();
    let _older = scripted_run(&env, "a.json", "First.", "One").await;
    let newest = scripted_run(&env, "b.json", "Second.", "Two").await;

    // -c with one value and no task: the value is the message, to the newest trace.
    let script = env.write("c.json", &json!([{"text": "Third."}]).to_string());
    let output = env
        .run(&[
            "run",
            "-c",
            "And again",
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
        ])
        .await;
    let result = result_of(&output);
    assert_eq!(result["trace_id"], newest.as_str(), "{}", stderr(&output));
    assert_eq!(result["response"], "Third.");

    // --last alone, and -p: stdout holds the answer and nothing else.
    let script = env.write("d.json", &json!([{"text": "Fourth."}]).to_string());
    let output = env
        .run(&[
            "run",
            "--last",
            "-p",
            "--script",
            &script,
            "--workspace",
            &work,
            "Once more",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Fourth.\n");
    assert!(
        !stderr(&output).contains("messages ·"),
        "{}",
        stderr(&output)
    );
    let messages = shown(&env, &newest).await["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(messages, 6, "two turns were added to the newest trace");

    // A prefix with no message is an id that needs one.
    let output = env
        .run(&[
            "run",
            "-c",
            &newest[..8],
            "--script",
            &script,
            "--workspace",
            &work,
        ])
        .await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("needs a message"),
        "{}",
        stderr(&output)
    );

    // chat --last continues the newest trace too.
    let script = env.write("e.json", &json!([{"text": "Fifth."}]).to_string());
    let mut child = env
        .agent(&["chat", "--last", "--script", &script, "--workspace", &work])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"hello\n")
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "Fifth.\n");
    let messages = shown(&env, &newest).await["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(messages, 8);
}

#[tokio::test]
async fn resume_without_an_id_and_without_a_terminal_lists_the_newest_traces() {
    let env = agent_env();
    let output = env.run(&["resume"]).await;
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("no traces"), "{}", stderr(&output));
    let trace_id = scripted_run(&env, "a.json", "Done.", "Count the files").await;
    let output = env.run(&["resume"]).await;
    assert_eq!(code(&output), 2);
    let said = stderr(&output);
    assert!(
        said.contains(&trace_id[..8]) && said.contains("Count the files"),
        "{said}"
    );
    assert!(said.contains("agent resume"), "{said}");
}

#[tokio::test]
async fn every_command_that_takes_a_trace_id_takes_a_prefix() {
    let env = agent_env();
    let work = env.work();
    let script = env.write(
        "plan.json",
        &json!([{"tool_calls": [{"name": "goal", "arguments": {"add": "Read, Write"}}]},
                {"text": "Planned."}])
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
            "Do two things",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let plan = result_of(&output)["trace_id"].as_str().unwrap().to_owned();
    let prefix = &plan[..8];

    let edited = env
        .command(&["plan", "edit", prefix])
        .env("EDITOR", "true")
        .output()
        .unwrap();
    assert_eq!(code(&edited), 0, "{}", stderr(&edited));
    let saved = env
        .run(&["plan", "save", prefix, "two-things", "--workspace", &work])
        .await;
    assert_eq!(code(&saved), 0, "{}", stderr(&saved));
    for args in [vec!["show", prefix], vec!["diff", prefix]] {
        let output = env.run(&args).await;
        assert!(
            !stderr(&output).contains("no trace"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // A model that only answers leaves the plan's goals open: the run ends incomplete.
    let script = env.write(
        "run.json",
        &json!({"turns": [], "fallback": "Ran."}).to_string(),
    );
    let output = env
        .run(&[
            "run",
            "--trace",
            prefix,
            "--script",
            &script,
            "--workspace",
            &work,
            "--json",
        ])
        .await;
    let result = result_of(&output);
    assert_eq!(result["trace_id"], plan.as_str());
    assert_eq!(result["response"], "Ran.");

    // cancel: the server is asked for the full id it knows.
    let served = env.serve(&[]);
    let cancel = env.run(&["cancel", prefix, "--server", &served.url]).await;
    let said = stderr(&cancel);
    assert!(
        said.contains(&plan),
        "the prefix became the full id: {said}"
    );
    let unknown = env
        .run(&["cancel", "ffffffff", "--server", &served.url])
        .await;
    assert_eq!(code(&unknown), 2, "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("has no trace ffffffff"),
        "{}",
        stderr(&unknown)
    );
}

#[tokio::test]
async fn traces_live_in_the_data_folder_one_per_project_and_reads_create_nothing() {
    let env = agent_env();
    let project = env.path("work");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("src/deep")).unwrap();
    let in_folder = |dir: &std::path::Path, args: &[&str]| {
        let mut command = env.command(args);
        command.current_dir(dir).env_remove("AGENT_TRACE_DIR");
        command.output().unwrap()
    };
    // Reading in a folder with no traces writes nothing anywhere.
    let listed = in_folder(&project, &["traces"]);
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    assert_eq!(stdout(&listed), "no traces\n");
    assert!(
        !env.data().join("agent").exists(),
        "a read created a folder"
    );

    let script = env.write("s.json", &json!([{"text": "Done."}]).to_string());
    let output = in_folder(
        &project.join("src"),
        &["run", "--script", &script, "--json", "Hi"],
    );
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let trace_id = result_of(&output)["trace_id"].as_str().unwrap().to_owned();
    let key = std::fs::canonicalize(&project)
        .unwrap()
        .to_string_lossy()
        .replace(['/', ' '], "-");
    let folder = env.data().join("agent/traces").join(&key);
    assert!(
        folder.join(&trace_id).join("meta.json").is_file(),
        "{}",
        folder.display()
    );
    assert!(!project.join(".trace").exists() && !project.join("src/.trace").exists());

    // Any folder of the project sees it; another project does not.
    let listed = in_folder(&project.join("src/deep"), &["traces"]);
    assert!(stdout(&listed).contains(&trace_id), "{}", stdout(&listed));
    let elsewhere = env.path("other");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert_eq!(stdout(&in_folder(&elsewhere, &["traces"])), "no traces\n");

    // An old .trace at a project's root is still used, with a notice.
    let old = env.path("old");
    std::fs::create_dir_all(old.join(".trace")).unwrap();
    let output = in_folder(&old, &["run", "--script", &script, "--json", "Old"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let old_id = result_of(&output)["trace_id"].as_str().unwrap().to_owned();
    assert!(old.join(".trace").join(&old_id).is_dir());
    assert_eq!(
        stderr(&output)
            .matches("using this project's trace folder")
            .count(),
        1
    );

    // The flag and the environment still win.
    let listed = env.run(&["traces"]).await;
    assert!(!stdout(&listed).contains(&trace_id));
}

#[tokio::test]
async fn model_errors_say_what_to_fix_and_leave_no_trace_in_the_list() {
    let env = agent_env();
    let server = MockModelServer::start().await;
    server.serve_models(&["qwen-small", "qwen-large"]);
    server.push(Reply::error(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    ));
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(&env, &server));
    args.push("Hi".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = env.run(&args).await;
    assert_eq!(code(&output), 1);
    let said = stderr(&output);
    assert!(said.contains("OPENAI_API_KEY"), "{said}");
    assert!(!said.contains("agent resume"), "{said}");
    assert!(!said.contains("WARN"), "{said}");

    server.push(Reply::error(
        404,
        json!({"error": {"code": "model_not_found", "message": "The model `gpt-4o-mini` does not exist"}}),
    ));
    let output = env.run(&args).await;
    assert_eq!(code(&output), 1);
    let said = stderr(&output);
    assert!(said.contains("\"gpt-4o-mini\""), "{said}");
    assert!(said.contains("qwen-small, qwen-large"), "{said}");
    assert!(!said.contains("agent resume"), "{said}");

    // Neither failed trace is listed, unless asked for.
    let listed = env.run(&["traces"]).await;
    assert_eq!(stdout(&listed), "no traces\n");
    assert!(stderr(&listed).contains("2 traces that failed before the model answered"));
    let all = env.run(&["traces", "--all", "--json"]).await;
    let all: Value = serde_json::from_str(&stdout(&all)).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn completions_man_init_and_config() {
    let env = agent_env();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let output = env.run(&["completions", shell]).await;
        assert_eq!(code(&output), 0, "{shell}: {}", stderr(&output));
        assert!(stdout(&output).contains("resume"), "{shell}");
    }
    let man = env.run(&["man"]).await;
    assert_eq!(code(&man), 0);
    assert!(
        stdout(&man).starts_with(".ie") || stdout(&man).contains(".TH agent"),
        "{}",
        stdout(&man)
    );

    let init = env.run(&["init"]).await;
    assert_eq!(code(&init), 0, "{}", stderr(&init));
    assert!(env.path("agent.toml").is_file());
    let again = env.run(&["init"]).await;
    assert_eq!(code(&again), 2);
    assert!(stderr(&again).contains("--force"));
    env.write("agent.toml", "model = \"from-file\"\nmax_iterations = 9\n");
    assert_eq!(code(&env.run(&["init", "--force"]).await), 0);
    env.write(
        "agent.toml",
        "provider = \"openai\"\nmodel = \"from-file\"\nmax_iterations = 9\n",
    );

    let config = env
        .run(&["config", "--base-url", "http://127.0.0.1:9/v1"])
        .await;
    assert_eq!(code(&config), 0, "{}", stderr(&config));
    let text = stdout(&config);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name}: {text}"))
            .to_owned()
    };
    assert!(
        line("model").contains("from-file") && line("model").contains("agent.toml"),
        "{text}"
    );
    assert!(line("base URL").contains("flag --base-url"), "{text}");
    assert!(line("max iterations").contains('9'), "{text}");
    assert!(
        line("traces").contains("environment AGENT_TRACE_DIR"),
        "{text}"
    );
    let config = env.run(&["config", "-m", "from-flag"]).await;
    assert!(
        stdout(&config).lines().any(|l| l.starts_with("model")
            && l.contains("from-flag")
            && l.contains("flag --model"))
    );
}

#[tokio::test]
async fn resume_without_an_id_on_a_terminal_offers_the_projects_traces() {
    let env = agent_env();
    let work = env.work();
    let script = env.write(
        "first.json",
        &json!([{"tool_calls": [{"name": "goal", "arguments": {"add": "Count", "focus": "1"}}]}])
            .to_string(),
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
            "--json",
            "Count the files",
        ])
        .await;
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let trace_id = result_of(&output)["trace_id"].as_str().unwrap().to_owned();
    let again = env.write(
        "again.json",
        &json!([
            {"tool_calls": [{"name": "goal", "arguments": {"done": "three files"}}]},
            {"text": "Three files."}
        ])
        .to_string(),
    );
    let mut terminal = agent_test_support::pty::Terminal::spawn(env.command(&[
        "resume",
        "--script",
        &again,
        "--workspace",
        &work,
        "--yes",
        "--max-iterations",
        "2",
    ]));
    let screen = terminal.wait_for("Which trace?");
    assert!(
        screen.contains(&trace_id[..8]) && screen.contains("Count the files"),
        "{screen}"
    );
    terminal.send("1\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    assert!(
        terminal.screen().contains("Three files."),
        "{}",
        terminal.screen()
    );
    assert_eq!(shown(&env, &trace_id).await["trace"]["status"], "completed");
}
