//! Confinement as a user meets it: under `--yes` the model's commands run in the kernel sandbox
//! (no write outside the workspace or to its protected entries, no secrets in their
//! environment) unless `--sandbox off` says otherwise, and they die with the agent, even one
//! killed with SIGKILL, whose trace then resumes at once.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, code, stderr};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::agent_env;

/// A scripted run whose model makes one `bash` call, then answers.
fn bash_script(env: &CliEnv, command: &str) -> String {
    env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "Done."}
        ])
        .to_string(),
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn commands_are_confined_unless_the_sandbox_is_off() {
    for off in [false, true] {
        let env = agent_env();
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped");
        env.write("agent.toml", "# original\n");
        env.write(".git/config", "# original\n");
        let command = format!(
            "env > env.txt; echo changed > '{}'; echo changed >> agent.toml; \
             echo changed >> .git/config; echo changed > inside.txt",
            escaped.display()
        );
        let script = bash_script(&env, &command);
        let mut args = vec![
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--yes",
        ];
        if off {
            args.extend(["--sandbox", "off"]);
        }
        args.push("Look around");
        let output = env
            .agent(&args)
            .env("OPENAI_API_KEY", "sk-secret-openai")
            .env("AGENT_TOKEN", "secret-server-token")
            .env("MY_DB_PASSWORD", "secret-password")
            .output()
            .await
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let seen = read(&env.path("env.txt"));
        assert!(seen.contains("PATH="), "{seen}");
        for secret in ["sk-secret-openai", "secret-server-token", "secret-password"] {
            assert_eq!(seen.contains(secret), off, "{secret} in {seen}");
        }
        assert_eq!(read(&escaped).contains("changed"), off);
        assert_eq!(read(&env.path("agent.toml")).contains("changed"), off);
        assert_eq!(read(&env.path(".git/config")).contains("changed"), off);
        assert!(read(&env.path("inside.txt")).contains("changed"));
        assert_eq!(
            stderr(&output).contains("the sandbox is off"),
            off,
            "{}",
            stderr(&output)
        );
    }
}

/// Every file under `dir`, read as text, one after the other.
fn read_tree(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&read_tree(&path));
        } else {
            text.push_str(&read(&path));
        }
    }
    text
}

#[tokio::test]
async fn commands_create_entries_at_the_top_but_no_protected_path() {
    for off in [false, true] {
        let env = agent_env();
        env.write(".git/config", "# original\n");
        env.write(".agent/notes.md", "# original\n");
        let outside = tempfile::tempdir().unwrap();
        // agent.toml does not exist: it cannot carry a mount, so it is taken away after the
        // command; the rest are read-only or out of reach while it runs.
        let command = format!(
            "touch new.txt && mkdir -p newdir/sub && echo made > newdir/sub/f.txt && \
             echo made > newdir.txt; echo '[x]' > agent.toml; echo changed >> .git/config; \
             echo planted > .git/hooks-planted; echo planted > .agent/x; \
             echo planted > traces/planted.txt; rm -f .agent/notes.md; echo planted > '{}/escaped'; \
             true",
            outside.path().display()
        );
        let script = bash_script(&env, &command);
        let mut args = vec![
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--yes",
        ];
        if off {
            args.extend(["--sandbox", "off"]);
        }
        args.push("Create things");
        let output = env.agent(&args).output().await.unwrap();
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        assert!(env.path("new.txt").exists());
        assert_eq!(read(&env.path("newdir/sub/f.txt")), "made\n");
        assert_eq!(read(&env.path("newdir.txt")), "made\n");
        let planted = [
            env.path("agent.toml"),
            env.path(".git/hooks-planted"),
            env.path(".agent/x"),
            env.traces().join("planted.txt"),
            outside.path().join("escaped"),
        ];
        for path in planted {
            assert_eq!(path.exists(), off, "{}", path.display());
        }
        assert_eq!(read(&env.path(".git/config")) == "# original\n", !off);
        assert_eq!(env.path(".agent/notes.md").exists(), !off);
        let said = read_tree(&env.traces());
        assert_eq!(
            said.contains("the sandbox took away"),
            !off,
            "{}",
            stderr(&output)
        );
        assert_eq!(said.contains("Read-only file system"), !off);
    }
}

/// Whether a process is gone or a zombie.
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

fn pids(path: &Path) -> Vec<i32> {
    read(path)
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

/// Waits until `path` lists at least `count` pids, or the agent exits (a failure).
async fn wait_for_pids(path: &Path, count: usize, agent: &mut tokio::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while pids(path).len() < count {
        if let Some(status) = agent.try_wait().unwrap() {
            let mut text = String::new();
            if let Some(mut err) = agent.stderr.take() {
                use tokio::io::AsyncReadExt;
                let _ = err.read_to_string(&mut text).await;
            }
            panic!("the agent exited ({status}) before its command started: {text}");
        }
        assert!(Instant::now() < deadline, "the command did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn sigkill(agent: &tokio::process::Child) {
    kill(Pid::from_raw(agent.id().unwrap() as i32), Signal::SIGKILL).unwrap();
}

#[tokio::test]
async fn a_killed_agent_leaves_no_command_running() {
    let env = agent_env();
    // In its PID namespace a command's pids are not the host's: its processes are found by
    // the unusual duration they sleep.
    let script = bash_script(
        &env,
        "echo $$ >> work/pids; sleep 30.417 & echo $! >> work/pids; (sleep 30.417; true) & echo $! >> work/pids; sleep 30.417",
    );
    let mut agent = env
        .agent(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--yes",
            "Wait",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let file = env.path("work/pids");
    wait_for_pids(&file, 3, &mut agent).await;
    let started = running("30.417");
    assert!(started.len() >= 3, "{started:?}");
    sigkill(&agent);
    agent.wait().await.unwrap();
    let killed = Instant::now();
    while !running("30.417").is_empty() {
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "still running a second after the agent was killed: {:?}",
            running("30.417")
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The live processes (not zombies) whose command line holds `marker`, by their pid here.
pub(crate) fn running(marker: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != std::process::id() as i32 && !is_dead(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

#[tokio::test]
async fn a_trace_resumes_right_after_its_agent_was_killed() {
    const ROUNDS: usize = 60;
    let env = agent_env();
    let script = bash_script(&env, "echo $$ >> work/pids; sleep 30");
    let model = [
        "--provider",
        "scripted",
        "--script",
        script.as_str(),
        "--yes",
    ];
    let file = env.path("work/pids");
    let mut args = vec!["run"];
    args.extend(model);
    args.push("Wait");
    let mut agent = env
        .agent(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_pids(&file, 1, &mut agent).await;
    let listed = env.run(&["traces", "--json"]).await;
    let traces: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = traces[0]["trace_id"].as_str().unwrap().to_owned();
    for round in 1..=ROUNDS {
        sigkill(&agent);
        agent.wait().await.unwrap();
        let mut args = vec!["resume", id.as_str()];
        args.extend(model);
        agent = env
            .agent(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The resumed run takes the trace's lock, then runs the command again.
        wait_for_pids(&file, round + 1, &mut agent).await;
    }
    sigkill(&agent);
    agent.wait().await.unwrap();
}

/// `agent run --yes` of `script` with the sandbox off, so that only the rules stand in the way.
async fn clean_up(env: &CliEnv, script: &str) -> std::process::Output {
    env.run(&[
        "run",
        "--provider",
        "scripted",
        "--script",
        script,
        "--yes",
        "--sandbox",
        "off",
        "Clean up",
    ])
    .await
}

#[tokio::test]
async fn a_deny_rule_holds_against_every_spelling_under_yes() {
    let (script_name, script_text) = agent_test_support::shell::RM_RF_SCRIPT;
    let spellings = agent_test_support::shell::RM_RF_SPELLINGS
        .iter()
        .chain(agent_test_support::shell::RM_RF_HIDDEN_SPELLINGS);
    for spelling in spellings {
        let env = agent_env();
        env.write("agent.toml", "[approvals]\ndeny = [\"bash(rm -rf)\"]\n");
        env.write("target/keep.txt", "precious\n");
        env.write(script_name, script_text);
        let script = bash_script(&env, spelling);
        // The sandbox may delete `target` (it is no protected entry): the rules must hold on
        // their own.
        let output = clean_up(&env, &script).await;
        assert_eq!(code(&output), 0, "{spelling}: {}", stderr(&output));
        assert_eq!(
            read(&env.path("target/keep.txt")),
            "precious\n",
            "`{spelling}` deleted the file"
        );
    }
    // Without the rule the same run deletes it, so the check above can fail.
    let env = agent_env();
    env.write("target/keep.txt", "precious\n");
    let script = bash_script(&env, "rm -rf target");
    let output = clean_up(&env, &script).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(!env.path("target").exists());
}
