//! The sandbox of an agent profile, under the real kernel sandbox: a profile's `sandbox =
//! "read-only"` (in `agent.toml` or a profile file's front matter) keeps its commands, and those
//! of every sub-agent below it, from writing in the workspace, while the default profile's
//! commands write there; a profile asking for a looser sandbox than the run's is told so and
//! runs under the run's.

use agent_test_support::cli::{CliEnv, code, stderr};
use serde_json::json;

/// A project whose `reader` profile (agent.toml) and `viewer` profile (a profile file) are
/// read-only, and whose `loose` profile asks for no sandbox at all.
fn project() -> CliEnv {
    let env = crate::agent_env();
    env.write(
        "agent.toml",
        "[agents.reader]\ndescription = \"Reads.\"\nsandbox = \"read-only\"\n\n\
         [agents.loose]\ndescription = \"Asks for everything.\"\nsandbox = \"off\"\n",
    );
    env.write(
        "work/.agent/agents/viewer.md",
        "---\ndescription: Looks, never writes.\nsandbox: read-only\n---\nYou look.\n",
    );
    env
}

/// Runs `--agent profile` (or the default profile), `--yes`, with a model that runs `command`
/// once; returns stderr.
async fn run_bash(env: &CliEnv, profile: Option<&str>, sandbox: &[&str], command: &str) -> String {
    let script = env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "Done."}
        ])
        .to_string(),
    );
    let work = env.work();
    let mut args = vec!["run", "--script", &script, "--workspace", &work, "--yes"];
    args.extend_from_slice(sandbox);
    if let Some(profile) = profile {
        args.extend(["--agent", profile]);
    }
    args.push("Write a file");
    let output = env.run(&args).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    stderr(&output)
}

#[tokio::test]
async fn a_read_only_profile_cannot_write_where_the_default_profile_can() {
    let env = project();
    run_bash(&env, Some("reader"), &[], "echo reader > reader.txt").await;
    assert!(!env.path("work/reader.txt").exists());
    run_bash(&env, Some("viewer"), &[], "echo viewer > viewer.txt").await;
    assert!(!env.path("work/viewer.txt").exists());
    run_bash(&env, None, &[], "echo main > main.txt").await;
    assert!(env.path("work/main.txt").exists());
    // The run's `--sandbox off` is looser: the profile still tightens it.
    run_bash(
        &env,
        Some("reader"),
        &["--sandbox", "off"],
        "echo x > off.txt",
    )
    .await;
    assert!(!env.path("work/off.txt").exists());
}

#[tokio::test]
async fn a_profile_cannot_loosen_the_run_sandbox_and_is_told_so() {
    let env = project();
    let outside = tempfile::tempdir().unwrap();
    let escaped = outside.path().join("escaped");
    let command = format!("echo loose > '{}'; echo in > in.txt", escaped.display());
    let said = run_bash(&env, Some("loose"), &[], &command).await;
    assert!(
        said.contains("asks for the `off` sandbox, looser than this run's `workspace-write`"),
        "{said}"
    );
    assert!(!escaped.exists());
    assert!(env.path("work/in.txt").exists());
    // With the user's own `--sandbox off`, the profile has what it asks for.
    let said = run_bash(&env, Some("loose"), &["--sandbox", "off"], &command).await;
    assert!(!said.contains("asks for the `off` sandbox"), "{said}");
    assert!(escaped.exists());
}

#[tokio::test]
async fn sub_agents_of_a_read_only_profile_and_below_it_cannot_write() {
    let env = project();
    let (viewer_task, nested_task) = ("View the notes", "Nested job");
    let script = env.write(
        "delegate.json",
        &json!({
            "turns": [
                {"tool_calls": [{"name": "delegate", "arguments": {"task": viewer_task, "agent": "viewer"}}]},
                {"tool_calls": [{"name": "bash", "arguments": {"command": "echo main > main.txt"}}]},
                {"text": "Done."}
            ],
            "routes": [
                {"when_task_contains": viewer_task, "turns": [
                    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo viewer > viewer.txt"}}]},
                    {"tool_calls": [{"name": "delegate", "arguments": {"task": nested_task}}]},
                    {"text": "Viewed."}
                ]},
                {"when_task_contains": nested_task, "turns": [
                    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo nested > nested.txt"}}]},
                    {"text": "Nested done."}
                ]}
            ]
        })
        .to_string(),
    );
    let work = env.work();
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--yes",
            "Get it viewed",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let traces: Vec<String> = std::fs::read_dir(env.traces())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        traces
            .iter()
            .any(|t| t.contains("@viewer-") && t.contains("@delegate-")),
        "no nested sub-trace: {traces:?}"
    );
    assert!(!env.path("work/viewer.txt").exists());
    assert!(!env.path("work/nested.txt").exists());
    assert!(env.path("work/main.txt").exists());
}
