//! Background shells on real processes: a `bash` call with `"background": true` answers at once,
//! `shell_output` returns what the shell printed since the last read and how it ended,
//! `shell_kill` and the end of the run leave no process behind, and a background shell is
//! confined like any other command (with the sandbox off as the control).

use std::time::{Duration, Instant};

use agent_tools::shells::{RunShells, SHELLS_META, ShellState, ShellStatus, list};
use agent_tools::{SandboxConfig, SandboxMode, ToolContext, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tempfile::TempDir;

fn workspace(trace: &str) -> (TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let trace = format!("{trace}-{}", std::process::id());
    let ctx = ToolContext::new(dir.path(), trace).unwrap();
    (dir, ctx)
}

async fn call(registry: &ToolRegistry, ctx: &ToolContext, tool: &str, args: Value) -> ToolResult {
    registry.execute(tool, &args.to_string(), ctx).await
}

fn statuses(result: &ToolResult) -> Vec<ShellStatus> {
    serde_json::from_value(result.metadata[SHELLS_META].clone()).unwrap()
}

/// The pids of processes whose command line has `marker` as an argument.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, s)| s.starts_with('Z'))
        });
        if !zombie
            && cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == marker.as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

async fn none_left(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "processes left: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_background_command_answers_at_once_and_its_output_is_read_later() {
    let (_dir, ctx) = workspace("bg-read");
    let run = RunShells::for_run(&ctx.trace_id);
    let registry = ToolRegistry::with_builtins();
    let started = Instant::now();
    let begun = call(
        &registry,
        &ctx,
        "bash",
        json!({"command": "sleep 2; echo done", "background": true}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert!(!begun.is_error, "{}", begun.content);
    let id = statuses(&begun)[0].id.clone();
    assert!(begun.content.contains(&id), "{}", begun.content);
    assert_eq!(statuses(&begun)[0].state, ShellState::Running);

    let early = call(&registry, &ctx, "shell_output", json!({"id": id})).await;
    assert!(early.content.contains("running"), "{}", early.content);
    assert!(
        early.content.contains("(no new output)"),
        "{}",
        early.content
    );

    tokio::time::sleep(Duration::from_secs(3)).await;
    let late = call(&registry, &ctx, "shell_output", json!({"id": id})).await;
    assert!(late.content.contains("done\n"), "{}", late.content);
    assert!(
        late.content.contains("exited with code 0"),
        "{}",
        late.content
    );
    assert_eq!(statuses(&late)[0].state, ShellState::Exited { code: 0 });
    // What was read is not read again.
    let again = call(&registry, &ctx, "shell_output", json!({})).await;
    assert!(
        again.content.contains("(no new output)"),
        "{}",
        again.content
    );
    assert_eq!(list(&ctx.trace_id).len(), 1);

    let logs = run.finish().await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].output, "done\n");
    assert!(
        list(&ctx.trace_id).is_empty(),
        "the run's shells are forgotten"
    );
}

#[tokio::test]
async fn waiting_for_news_returns_when_the_shell_prints() {
    let (_dir, ctx) = workspace("bg-wait");
    let _run = RunShells::for_run(&ctx.trace_id);
    let registry = ToolRegistry::with_builtins();
    let begun = call(
        &registry,
        &ctx,
        "bash",
        json!({"command": "sleep 1; echo ready; sleep 60", "background": true}),
    )
    .await;
    let id = statuses(&begun)[0].id.clone();
    let started = Instant::now();
    let read = call(
        &registry,
        &ctx,
        "shell_output",
        json!({"id": id, "wait_secs": 30}),
    )
    .await;
    assert!(read.content.contains("ready"), "{}", read.content);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let unknown = call(&registry, &ctx, "shell_output", json!({"id": "sh-nope"})).await;
    assert!(
        unknown.is_error && unknown.content.contains(&id),
        "{}",
        unknown.content
    );
}

#[tokio::test]
async fn shell_kill_and_the_end_of_the_run_leave_no_process() {
    let (_dir, ctx) = workspace("bg-kill");
    let registry = ToolRegistry::with_builtins();
    let marker_a = format!("{}.5", 3000 + std::process::id() % 1000);
    let marker_b = format!("{}.25", 3000 + std::process::id() % 1000);
    let run = RunShells::for_run(&ctx.trace_id);
    // Each starts a child in the background as well (without the sandbox helper a command is a
    // process group, which a child leaving with `setsid` would escape; the helper's PID
    // namespace holds those too, as the command line's tests show).
    let begun = call(
        &registry,
        &ctx,
        "bash",
        json!({"command": format!("sleep {marker_a} & sleep {marker_a}"), "background": true}),
    )
    .await;
    let id = statuses(&begun)[0].id.clone();
    call(
        &registry,
        &ctx,
        "bash",
        json!({"command": format!("sleep {marker_b} & sleep {marker_b}"), "background": true}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(&marker_a).len() < 2 || processes_with(&marker_b).len() < 2 {
        assert!(Instant::now() < deadline, "the shells did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let killed = call(&registry, &ctx, "shell_kill", json!({"id": id})).await;
    assert!(killed.content.contains("was stopped"), "{}", killed.content);
    assert!(matches!(
        statuses(&killed)[0].state,
        ShellState::Killed { .. }
    ));
    none_left(&marker_a).await;
    assert_eq!(
        processes_with(&marker_b).len(),
        2,
        "the other shell goes on"
    );
    // The run ends: its other shell goes too, and what each printed is handed back.
    let logs = run.finish().await;
    assert_eq!(logs.len(), 2);
    none_left(&marker_b).await;
}

#[tokio::test]
async fn a_dropped_run_kills_its_shells() {
    let (_dir, ctx) = workspace("bg-drop");
    let registry = ToolRegistry::with_builtins();
    let marker = format!("{}.75", 3000 + std::process::id() % 1000);
    let run = RunShells::for_run(&ctx.trace_id);
    call(
        &registry,
        &ctx,
        "bash",
        json!({"command": format!("sleep {marker}"), "background": true}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the shell did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(run);
    none_left(&marker).await;
}

#[tokio::test]
async fn a_background_shell_is_confined_like_any_command() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let command = format!("echo out > {}", target.display());
    for (mode, lands) in [
        (SandboxMode::WorkspaceWrite, false),
        (SandboxMode::Off, true),
    ] {
        let (_dir, ctx) = workspace(&format!("bg-confined-{mode}"));
        let run = RunShells::for_run(&ctx.trace_id);
        let registry = ToolRegistry::with_builtins_in(SandboxConfig::new(mode));
        let begun = call(
            &registry,
            &ctx,
            "bash",
            json!({"command": command, "background": true}),
        )
        .await;
        assert!(!begun.is_error, "{}", begun.content);
        let logs = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let read = call(&registry, &ctx, "shell_output", json!({"wait_secs": 5})).await;
                if !read.content.contains("running") {
                    return read;
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(target.exists(), lands, "{mode}: {}", logs.content);
        run.finish().await;
    }
}

#[tokio::test]
async fn a_person_lists_the_runs_shells_and_stops_one_with_the_shells_command() {
    use agent_tools::interaction::shells;
    let (_dir, ctx) = workspace("bg-person");
    let registry = ToolRegistry::with_builtins();
    let marker = format!("{}.125", 3000 + std::process::id() % 1000);
    let run = RunShells::for_run(&ctx.trace_id);
    let begun = call(
        &registry,
        &ctx,
        "bash",
        json!({"command": format!("sleep {marker}"), "background": true}),
    )
    .await;
    let id = statuses(&begun)[0].id.clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the shell did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A sub-trace's view does not reach its parent's shells; the run's own view lists it.
    assert!(shells::of_run(&format!("{}@delegate-1", ctx.trace_id)).is_empty());
    let listed = shells::of_run(&ctx.trace_id);
    assert_eq!(listed.len(), 1);
    let line = shells::line(&listed[0], chrono::Utc::now());
    assert!(line.starts_with(&format!("{id}  running ")), "{line}");
    assert!(line.ends_with(&format!("sleep {marker}")), "{line}");

    let wrong = shells::kill(&ctx.trace_id, "sh-nope").unwrap_err();
    assert!(wrong.contains(&id), "{wrong}");
    assert_eq!(processes_with(&marker).len(), 1, "a wrong id stops nothing");
    let said = shells::kill(&ctx.trace_id, &id).unwrap();
    assert!(said.starts_with(&format!("stopping shell {id}")), "{said}");
    none_left(&marker).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !shells::of_run(&ctx.trace_id)[0].state.ended() {
        assert!(Instant::now() < deadline, "the shell was not seen ending");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = shells::kill(&ctx.trace_id, &id).unwrap();
    assert!(again.contains("had already ended"), "{again}");
    drop(run);
}
