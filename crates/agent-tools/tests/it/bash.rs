//! The `bash` tool: output and exit codes, the working directory, truncation, and that a timeout
//! or a cancel kills the whole process group promptly.

use std::time::{Duration, Instant};

use agent_tools::{ToolContext, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tempfile::TempDir;

fn workspace() -> (TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    // The sandbox lets commands write files that exist at the top of the workspace, not add new
    // ones there; the tests record pids in this one.
    std::fs::write(dir.path().join("pids"), "").unwrap();
    let ctx = ToolContext::new(dir.path(), "trace-1").unwrap();
    (dir, ctx)
}

async fn bash(ctx: &ToolContext, args: Value) -> ToolResult {
    ToolRegistry::with_builtins()
        .execute("bash", &args.to_string(), ctx)
        .await
}

/// Whether a process is gone or a zombie (dead, waiting to be reaped by whoever adopted it).
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

/// Waits briefly for every pid listed in `file` to die.
async fn assert_all_dead(file: &std::path::Path) {
    let pids: Vec<u32> = std::fs::read_to_string(file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(
        pids.len() >= 2,
        "expected the shell and a background child, got {pids:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(2);
    while !pids.iter().all(|&pid| is_dead(pid)) {
        assert!(Instant::now() < deadline, "processes still alive: {pids:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn reports_exit_code_stdout_and_stderr() {
    let (_dir, ctx) = workspace();
    let result = bash(&ctx, json!({ "command": "echo out; echo err >&2; exit 3" })).await;
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        "exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n"
    );

    let quiet = bash(&ctx, json!({ "command": "true" })).await;
    assert_eq!(quiet.content, "exit code: 0\n(no output)\n");
}

#[tokio::test]
async fn runs_in_the_workspace_with_stdin_closed() {
    let (_dir, ctx) = workspace();
    let result = bash(&ctx, json!({ "command": "pwd; cat; echo done" })).await;
    assert_eq!(
        result.content,
        format!(
            "exit code: 0\n--- stdout ---\n{}\ndone\n",
            ctx.workspace.display()
        )
    );
}

#[tokio::test]
async fn long_output_is_cut_in_the_middle_with_a_note() {
    let (_dir, mut ctx) = workspace();
    ctx.limits.max_output_bytes = 1000;
    let result = bash(
        &ctx,
        json!({ "command": "echo first; head -c 100000 /dev/zero | tr '\\0' x; echo; echo last" }),
    )
    .await;
    assert!(
        result
            .content
            .starts_with("exit code: 0\n--- stdout ---\nfirst\n"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("output truncated"),
        "{}",
        result.content
    );
    assert!(result.content.ends_with("last\n"), "{}", result.content);
    assert!(result.content.len() < 1200, "{}", result.content.len());
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group_promptly() {
    let (dir, ctx) = workspace();
    let started = Instant::now();
    let result = bash(
        &ctx,
        json!({ "command": "echo $$ > pids; sleep 30 & echo $! >> pids; echo started; sleep 30; echo never", "timeout_secs": 1 }),
    )
    .await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    assert!(result.is_error);
    assert!(
        result
            .content
            .starts_with("error: the command timed out after 1 s"),
        "{}",
        result.content
    );
    assert!(result.content.contains("started"), "{}", result.content);
    assert!(!result.content.contains("never"));
    assert_all_dead(&dir.path().join("pids")).await;
}

#[tokio::test]
async fn cancel_kills_the_command_and_keeps_its_output() {
    let (dir, ctx) = workspace();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let result = bash(
        &ctx,
        json!({ "command": "echo $$ > pids; sleep 30 & echo $! >> pids; echo working; sleep 30" }),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    assert!(result.is_error);
    assert!(
        result
            .content
            .starts_with("error: the command was cancelled"),
        "{}",
        result.content
    );
    assert!(result.content.contains("working"), "{}", result.content);
    assert_all_dead(&dir.path().join("pids")).await;
}

#[tokio::test]
async fn background_processes_do_not_outlive_a_finished_command() {
    let (dir, ctx) = workspace();
    let started = Instant::now();
    let result = bash(
        &ctx,
        json!({ "command": "echo $$ > pids; sleep 30 & echo $! >> pids; echo done" }),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(result.content, "exit code: 0\n--- stdout ---\ndone\n");
    assert_all_dead(&dir.path().join("pids")).await;
}

#[tokio::test]
async fn an_abandoned_call_kills_the_command() {
    let (dir, ctx) = workspace();
    let registry = ToolRegistry::with_builtins();
    let args =
        json!({ "command": "echo $$ > pids; sleep 30 & echo $! >> pids; sleep 30" }).to_string();
    let call = registry.execute("bash", &args, &ctx);
    let abandoned = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(
        abandoned.is_err(),
        "the call should still have been running"
    );
    assert_all_dead(&dir.path().join("pids")).await;
}

#[tokio::test]
async fn rejects_bad_arguments() {
    let (_dir, ctx) = workspace();
    let zero = bash(&ctx, json!({ "command": "true", "timeout_secs": 0 })).await;
    assert_eq!(
        zero.content,
        "error: invalid arguments for bash: argument `timeout_secs` must be at least 1, got 0"
    );
    let missing = bash(&ctx, json!({})).await;
    assert_eq!(
        missing.content,
        "error: invalid arguments for bash: missing required argument `command` (a string)"
    );
}

#[tokio::test]
async fn a_command_runner_reports_exit_codes_in_the_tool_s_sandbox() {
    use agent_tools::{SandboxConfig, SandboxMode};
    let (_dir, ctx) = workspace();
    let registry = ToolRegistry::with_builtins();
    let runner = registry.get("bash").unwrap().command_runner().unwrap();
    let ran = runner
        .run_command("echo checking; echo failing >&2; exit 3", None, &ctx)
        .await
        .unwrap();
    assert_eq!(ran.exit_code, Some(3));
    assert!(!ran.succeeded());
    assert_eq!(ran.status, "exit code: 3");
    assert!(ran.output.contains("checking") && ran.output.contains("failing"));
    let ran = runner.run_command("true", None, &ctx).await.unwrap();
    assert!(ran.succeeded(), "{ran:?}");
    let started = Instant::now();
    let ran = runner
        .run_command("sleep 30", Some(Duration::from_secs(1)), &ctx)
        .await
        .unwrap();
    assert_eq!(
        (ran.exit_code, ran.status.as_str()),
        (None, "timed out after 1 s")
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The same confinement as the model's commands: no write outside the workspace, which
    // the same command without the sandbox makes.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let write = format!("echo x > {}", target.display());
    let ran = runner.run_command(&write, None, &ctx).await.unwrap();
    assert!(!ran.succeeded() && !target.exists(), "{ran:?}");
    let open = ToolRegistry::with_builtins_in(SandboxConfig::new(SandboxMode::Off));
    let unconfined = open.get("bash").unwrap().command_runner().unwrap();
    assert!(
        unconfined
            .run_command(&write, None, &ctx)
            .await
            .unwrap()
            .succeeded()
    );
    assert!(target.exists());
    // A profile's stricter sandbox holds for its commands too.
    let read_only = registry
        .get("bash")
        .unwrap()
        .confined_to(SandboxMode::ReadOnly)
        .unwrap();
    let ran = read_only
        .command_runner()
        .unwrap()
        .run_command("echo x > pids", None, &ctx)
        .await
        .unwrap();
    assert!(!ran.succeeded(), "{ran:?}");
    assert!(
        registry
            .get("read_file")
            .unwrap()
            .command_runner()
            .is_none()
    );
}
