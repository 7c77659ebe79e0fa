//! The trace folder is protected wherever the store a run opened is, whatever named it: the
//! `--trace-dir` flag, `AGENT_TRACE_DIR`, agent.toml's `trace_dir`, and a project's old `.trace`
//! folder found through `--workspace` from another folder. Each lies inside the workspace, which
//! the `workspace-write` sandbox lets commands write, so only the protection keeps it. The
//! model's command tries to plant a file there (a forged trace would be read back by the next
//! `agent run -c`); the file does not exist afterwards. A run over HTTP is held to the same, and
//! `write_file` too. The control runs the same command with `--sandbox off`, and the file is
//! planted.

use std::path::Path;
use std::process::Command;

use agent_test_support::cli::{CliEnv, code, stderr};
use serde_json::json;

use crate::agent_env;

/// A script whose model runs `command` once, then answers.
fn script(env: &CliEnv, command: &str) -> String {
    let turns = json!({"turns": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "Done."}
    ]});
    env.write("script.json", &turns.to_string())
}

/// The command that plants `planted.json` in `folder`.
fn plant(folder: &Path) -> String {
    format!("echo forged > '{}/planted.json'", folder.display())
}

/// Runs `command` (an `agent run`), which must succeed.
fn ran(mut command: Command) {
    let output = command.output().unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
}

fn untouched(folder: &Path, named_by: &str) {
    assert!(
        folder.is_dir(),
        "{named_by}: the store was not opened there"
    );
    assert!(
        !folder.join("planted.json").exists(),
        "{named_by}: the command wrote into the trace folder"
    );
}

#[test]
fn a_trace_folder_named_by_the_flag_or_the_environment_is_not_writable() {
    let env = agent_env();
    let work = env.work();
    // The flag.
    let flagged = env.path("work/flagged-traces");
    let script_path = script(&env, &plant(&flagged));
    let mut command = env.command(&[
        "run",
        "--yes",
        "--script",
        &script_path,
        "--workspace",
        &work,
        "--trace-dir",
        flagged.to_str().unwrap(),
        "Plant it",
    ]);
    command.env_remove("AGENT_TRACE_DIR");
    ran(command);
    untouched(&flagged, "--trace-dir");

    // The environment.
    let traces = env.path("work/env-traces");
    let script_path = script(&env, &plant(&traces));
    let mut command = env.command(&[
        "run",
        "--yes",
        "--script",
        &script_path,
        "--workspace",
        &work,
        "Plant it",
    ]);
    command.env("AGENT_TRACE_DIR", &traces);
    ran(command);
    untouched(&traces, "AGENT_TRACE_DIR");

    // The control: without the sandbox the same command plants its file.
    let script_path = script(&env, &plant(&flagged));
    let mut command = env.command(&[
        "run",
        "--yes",
        "--sandbox",
        "off",
        "--script",
        &script_path,
        "--workspace",
        &work,
        "--trace-dir",
        flagged.to_str().unwrap(),
        "Plant it",
    ]);
    command.env_remove("AGENT_TRACE_DIR");
    ran(command);
    assert!(
        flagged.join("planted.json").is_file(),
        "the control: without the sandbox the command writes there"
    );
}

#[test]
fn a_trace_folder_named_by_agent_toml_is_not_writable() {
    let env = agent_env();
    let work = env.work();
    let folder = env.path("work/configured-traces");
    env.write(
        "agent.toml",
        &format!("trace_dir = \"{}\"\n", folder.display()),
    );
    let script_path = script(&env, &plant(&folder));
    let mut command = env.command(&[
        "run",
        "--yes",
        "--script",
        &script_path,
        "--workspace",
        &work,
        "Plant it",
    ]);
    command.env_remove("AGENT_TRACE_DIR");
    ran(command);
    untouched(&folder, "agent.toml");
}

#[test]
fn a_projects_trace_folder_found_through_the_workspace_is_not_writable() {
    let env = agent_env();
    let project = env.path("elsewhere/project");
    let legacy = project.join(".trace");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&legacy).unwrap();
    let turns = json!({"turns": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": plant(&legacy)}}]},
        {"tool_calls": [{"name": "write_file",
            "arguments": {"path": ".trace/written.json", "content": "{}"}}]},
        {"text": "Done."}
    ]});
    let script_path = env.write("script.json", &turns.to_string());
    // Started from the environment's root, not the project: the project is found through
    // --workspace.
    let mut command = env.command(&[
        "run",
        "--yes",
        "--script",
        &script_path,
        "--workspace",
        project.to_str().unwrap(),
        "Plant it",
    ]);
    command.env_remove("AGENT_TRACE_DIR");
    let output = command.output().unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("using this project's trace folder"),
        "{}",
        stderr(&output)
    );
    untouched(&legacy, "--workspace's project");
    assert!(
        !legacy.join("written.json").exists(),
        "write_file wrote into the trace folder"
    );
    // The run itself was recorded there.
    let recorded = std::fs::read_dir(&legacy)
        .unwrap()
        .filter_map(Result::ok)
        .any(|entry| entry.path().join("meta.json").is_file());
    assert!(recorded, "the run was recorded in the project's .trace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_started_over_http_cannot_write_the_servers_trace_folder() {
    let env = agent_env();
    let work = env.work();
    let folder = env.path("work/served-traces");
    let script_path = script(&env, &plant(&folder));
    let served = env.serve_with(
        &[
            "--trace-dir",
            folder.to_str().unwrap(),
            "--script",
            &script_path,
            "--workspace",
            &work,
            "--approval",
            "auto",
        ],
        |command| {
            command.env_remove("AGENT_TRACE_DIR");
        },
    );
    let (status, started) = served.request("POST", "/api/traces", Some(&json!({"task": "Plant"})));
    assert_eq!(status, 201, "{started}\n{}", served.log());
    let id = started["trace_id"].as_str().unwrap().to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, detail) = served.request("GET", &format!("/api/traces/{id}"), None);
        if detail["trace"]["status"] == "completed" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{detail}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    untouched(&folder, "agent serve --trace-dir");
}
