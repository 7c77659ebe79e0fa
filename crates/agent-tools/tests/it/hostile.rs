//! Hostile conditions for the built-in tools beyond the plain escape attempts of `tools_files.rs`:
//! a symlink swapped in between the path check and the use (a race another process can win),
//! commands whose grandchildren try to outlive a timeout, and output floods.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_tools::{ToolContext, ToolRegistry, ToolResult};
use serde_json::{Value, json};

const SECRET: &str = "the secret that lives outside";
const INSIDE: &str = "harmless inside text";

/// How many calls each race makes: enough for the swap to land between check and use many
/// times over (`HOSTILE_RACE_CALLS` raises it for soak runs).
fn race_calls() -> usize {
    std::env::var("HOSTILE_RACE_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

/// A workspace with `dir/secret.txt` inside, and an outside folder with its own `secret.txt`.
struct Race {
    _workspace: tempfile::TempDir,
    outside: tempfile::TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
}

impl Race {
    fn new() -> Self {
        let workspace = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
        let ctx = ToolContext::new(workspace.path(), "race").unwrap();
        std::fs::create_dir(ctx.workspace.join("dir")).unwrap();
        std::fs::write(ctx.workspace.join("dir/secret.txt"), INSIDE).unwrap();
        Self {
            _workspace: workspace,
            outside,
            ctx,
            registry: ToolRegistry::with_builtins(),
        }
    }

    /// Swaps `dir` between the real folder and a symlink to the outside folder, as fast as it
    /// can, until the returned flag is set; returns how many swaps it made.
    fn start_swapping(&self) -> (Arc<AtomicBool>, std::thread::JoinHandle<u64>) {
        let stop = Arc::new(AtomicBool::new(false));
        let root = self.ctx.workspace.clone();
        let outside = self.outside.path().to_path_buf();
        let flag = stop.clone();
        let swaps = Arc::new(AtomicU64::new(0));
        let handle = std::thread::spawn(move || {
            let dir = root.join("dir");
            let parked = root.join(".parked");
            while !flag.load(Ordering::Relaxed) {
                if std::fs::rename(&dir, &parked).is_err() {
                    continue;
                }
                // A write may recreate `dir` while it is parked; then the symlink cannot go in.
                if symlink(&outside, &dir).is_ok() {
                    std::thread::yield_now();
                    std::fs::remove_file(&dir).unwrap();
                }
                while std::fs::rename(&parked, &dir).is_err() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                swaps.fetch_add(1, Ordering::Relaxed);
                // Leave the real folder in place for a moment too.
                std::thread::sleep(Duration::from_micros(50));
            }
            swaps.load(Ordering::Relaxed)
        });
        (stop, handle)
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.registry
            .execute(tool, &args.to_string(), &self.ctx)
            .await
    }

    /// Every file outside, with its content.
    fn outside_files(&self) -> Vec<(PathBuf, String)> {
        let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let content = std::fs::read_to_string(&path).unwrap_or_default();
                (path, content)
            })
            .collect();
        files.sort();
        files
    }
}

/// How long a race goes on past its calls while none has seen the real folder.
const RACE_EXTRA: Duration = Duration::from_secs(20);

/// Runs `calls` calls of one tool while `dir` is swapped, and returns the results; with
/// `until_real`, more calls until one succeeds (see [`RACE_EXTRA`]).
async fn race(
    race: &Race,
    tool: &str,
    args: impl Fn(usize) -> Value,
    until_real: bool,
) -> Vec<ToolResult> {
    let (stop, swapper) = race.start_swapping();
    let mut results = Vec::new();
    for i in 0..race_calls() {
        results.push(race.call(tool, args(i)).await);
    }
    // On a loaded machine the swapper can be kept off the CPU with the symlink in place for a
    // whole run of calls: a race whose calls can succeed goes on, for a bounded time, until one
    // call also saw the real folder.
    let started = Instant::now();
    let mut seen_real = !until_real || successes(&results) > 0;
    while !seen_real && started.elapsed() < RACE_EXTRA {
        let result = race.call(tool, args(results.len())).await;
        seen_real = !result.is_error;
        results.push(result);
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0, "the swapper never ran");
    // Counted by `cargo xtask soak`.
    println!(
        "HOSTILE-RACE {{\"tool\":\"{tool}\",\"calls\":{},\"swaps\":{swaps}}}",
        results.len()
    );
    results
}

/// Counts results that succeeded, to show the race exercised both outcomes.
fn successes(results: &[ToolResult]) -> usize {
    results.iter().filter(|r| !r.is_error).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_during_a_read_never_shows_outside_content() {
    let race_ = Race::new();
    let results = race(
        &race_,
        "read_file",
        |_| json!({"path": "dir/secret.txt"}),
        true,
    )
    .await;
    for result in &results {
        assert!(
            !result.content.contains(SECRET),
            "read_file showed a file outside the workspace: {}",
            result.content
        );
    }
    assert!(successes(&results) > 0, "no read ever saw the real folder");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_during_a_grep_never_shows_outside_content() {
    let race_ = Race::new();
    let results = race(
        &race_,
        "grep",
        |_| json!({"pattern": "secret|harmless"}),
        false,
    )
    .await;
    for result in &results {
        assert!(
            !result.content.contains(SECRET),
            "grep showed a file outside the workspace: {}",
            result.content
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_during_an_edit_never_touches_outside_files() {
    let race_ = Race::new();
    let before = race_.outside_files();
    let results = race(
        &race_,
        "edit_file",
        |i| {
            let (old, new) = if i % 2 == 0 {
                ("secret", "SECRET")
            } else {
                ("SECRET", "secret")
            };
            json!({"path": "dir/secret.txt", "old": old, "new": new})
        },
        false,
    )
    .await;
    for result in &results {
        assert!(
            !result.content.contains("the secret that"),
            "edit_file read a file outside the workspace: {}",
            result.content
        );
    }
    assert_eq!(
        race_.outside_files(),
        before,
        "edit_file changed a file outside"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_during_a_write_never_writes_outside() {
    let race_ = Race::new();
    let before = race_.outside_files();
    let results = race(
        &race_,
        "write_file",
        |i| json!({"path": format!("dir/new-{i}.txt"), "content": "written"}),
        true,
    )
    .await;
    assert_eq!(
        race_.outside_files(),
        before,
        "write_file wrote outside the workspace"
    );
    let errors: Vec<&str> = results
        .iter()
        .filter(|r| r.is_error)
        .map(|r| r.content.as_str())
        .take(3)
        .collect();
    assert!(
        successes(&results) > 0,
        "no write ever saw the real folder: {errors:?}"
    );
}

#[tokio::test]
async fn a_named_pipe_is_refused_instead_of_blocking_the_call() {
    let race_ = Race::new();
    let fifo = race_.ctx.workspace.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let read = race_.call("read_file", json!({"path": "pipe"})).await;
    assert!(
        read.is_error && read.content.contains("not a regular file"),
        "{}",
        read.content
    );
    let edit = race_
        .call("edit_file", json!({"path": "pipe", "old": "a", "new": "b"}))
        .await;
    assert!(edit.is_error, "{}", edit.content);
    let grep = race_
        .call("grep", json!({"pattern": "x", "path": "pipe"}))
        .await;
    assert!(!grep.content.contains("timed out"), "{}", grep.content);
    let grep_all = race_.call("grep", json!({"pattern": "harmless"})).await;
    assert!(
        grep_all.content.contains("dir/secret.txt"),
        "{}",
        grep_all.content
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the pipe blocked a call for {:?}",
        started.elapsed()
    );
}

// ---------------------------------------------------------------------------------------------
// Commands that try to outlive their call, and output floods.

async fn bash(ctx: &ToolContext, args: Value) -> ToolResult {
    ToolRegistry::with_builtins()
        .execute("bash", &args.to_string(), ctx)
        .await
}

/// Whether a process is gone or a zombie.
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

async fn wait_all_dead(file: &Path, at_least: usize) {
    let pids: Vec<u32> = std::fs::read_to_string(file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(pids.len() >= at_least, "expected {at_least} pids: {pids:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids.iter().all(|&pid| is_dead(pid)) {
        assert!(Instant::now() < deadline, "processes still alive: {pids:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_timeout_kills_grandchildren_and_deeper_descendants() {
    let dir = tempfile::tempdir().unwrap();
    // The sandbox lets commands write files that exist at the top of the workspace, not add new
    // ones there.
    std::fs::write(dir.path().join("pids"), "").unwrap();
    let ctx = ToolContext::new(dir.path(), "t").unwrap();
    // The shell starts a subshell that starts a subshell that sleeps; each records its pid.
    let command = "echo $$ >> pids; \
        ( echo $BASHPID >> pids; ( echo $BASHPID >> pids; sleep 60 ) & sleep 60 ) & \
        bash -c 'echo $$ >> pids; sleep 60 & echo $! >> pids; wait' & \
        nohup sleep 60 > /dev/null 2>&1 & echo $! >> pids; \
        sleep 0.5; echo ready; wait";
    let started = Instant::now();
    let result = bash(&ctx, json!({"command": command, "timeout_secs": 1})).await;
    assert!(result.is_error, "{}", result.content);
    assert!(result.content.contains("timed out"), "{}", result.content);
    assert!(result.content.contains("ready"), "{}", result.content);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    wait_all_dead(&dir.path().join("pids"), 6).await;
}

#[tokio::test]
async fn an_endless_output_flood_is_cut_and_stopped_by_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "t").unwrap();
    let limit = ctx.limits.max_output_bytes;
    for command in [
        // Lines without end, on both streams.
        "yes flood & yes error-flood >&2",
        // One endless line without a newline.
        "tr '\\0' x < /dev/zero",
        // Bytes that are not UTF-8.
        "cat /dev/urandom",
    ] {
        let result = bash(&ctx, json!({"command": command, "timeout_secs": 1})).await;
        assert!(result.is_error, "{command}: {}", &result.content[..200]);
        assert!(
            result.content.contains("timed out"),
            "{command}: {}",
            &result.content[..200]
        );
        assert!(
            result.content.contains("truncated"),
            "{command}: no truncation note"
        );
        assert!(
            result.content.len() <= limit + 1024,
            "{command}: {} bytes",
            result.content.len()
        );
    }
}
