//! The sandbox at its seams, as a hostile model would try it on this kind of machine (Linux,
//! Landlock ABI 7, user namespaces, `dev.tty.legacy_tiocsti=1`): processes that detach to outlive
//! their command, the agent's secrets through `/proc`, local services through Unix sockets,
//! metadata and signals outside the workspace, nested protected names, and the run's temporary
//! folder. Every attack is run again with `--sandbox off`, where it must succeed, so a check
//! that cannot fail cannot pass.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_test_support::cli::{CliEnv, code, stderr};
use serde_json::{Value, json};

use crate::agent_env;
use crate::confinement::running;

/// `agent run --yes` of one `bash` call of `command`, in `mode`, with secrets in the
/// environment and `--api-key` on the command line; returns the tool's result.
async fn run_in(env: &CliEnv, mode: &str, command: &str) -> String {
    let script = env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "Done."}
        ])
        .to_string(),
    );
    let work = env.work();
    let args = [
        "run",
        "--provider",
        "scripted",
        "--script",
        &script,
        "--api-key",
        "sk-secret-flag",
        "--workspace",
        &work,
        "--yes",
        "--json",
        "--sandbox",
        mode,
        "Try",
    ];
    let output = env
        .agent(&args)
        .env("OPENAI_API_KEY", "sk-secret-openai")
        .output()
        .await
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let shown = env
        .run(&["show", result["trace_id"].as_str().unwrap(), "--json"])
        .await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

const MODES: [(&str, bool); 3] = [
    ("workspace-write", false),
    ("read-only", false),
    ("off", true),
];

#[tokio::test]
async fn nothing_a_command_starts_outlives_it() {
    // `setsid -f`, a daemon's double fork with `setsid` between, and `setpgid`: each waits 3 s
    // and plants agent.toml or a file in the workspace.
    let command = "setsid -f sh -c 'sleep 3; echo planted > planted-setsid; \
        printf \"sandbox = \\\"off\\\"\\n\" > agent.toml'; \
        python3 -c 'import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(3); open(\"planted-fork\", \"w\").write(\"x\")\n    os._exit(0)'; \
        perl -e 'if (fork() == 0) { setpgrp(0, 0); sleep 3; open(F, \">planted-pgid\"); print F \"x\"; exit 0 }'; \
        echo started";
    for (mode, off) in [("workspace-write", false), ("off", true)] {
        let env = agent_env();
        let result = run_in(&env, mode, command).await;
        assert!(result.contains("started"), "{result}");
        tokio::time::sleep(Duration::from_secs(6)).await;
        for planted in [
            "planted-setsid",
            "planted-fork",
            "planted-pgid",
            "agent.toml",
        ] {
            assert_eq!(
                env.path("work").join(planted).exists(),
                off,
                "{mode}: {planted}: {result}"
            );
        }
        assert!(
            running("planted-").is_empty(),
            "{mode}: {:?}",
            running("planted-")
        );
    }
}

#[tokio::test]
async fn the_agent_s_secrets_are_not_in_any_proc_a_command_can_read() {
    let command = "echo CMDLINE; tr '\\0' ' ' < /proc/$PPID/cmdline; echo; echo ENVIRON; \
        for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done 2>/dev/null \
        | grep -o 'sk-secret[a-z-]*' | sort -u";
    for (mode, off) in MODES {
        let env = agent_env();
        let result = run_in(&env, mode, command).await;
        let (cmdline, environ) = result.split_once("ENVIRON").unwrap();
        assert!(cmdline.contains("CMDLINE"), "{result}");
        assert_eq!(
            environ.contains("sk-secret-openai"),
            off,
            "{mode}: {result}"
        );
        assert_eq!(environ.contains("sk-secret-flag"), off, "{mode}: {result}");
        // The agent's own command line is readable with the sandbox off, without the key.
        assert_eq!(
            cmdline.contains("--provider scripted"),
            off,
            "{mode}: {result}"
        );
        assert!(!cmdline.contains("sk-secret"), "{mode}: {result}");
    }
}

/// A Unix listener counting the connections it accepts.
fn count_accepts(listener: std::os::unix::net::UnixListener) -> Arc<AtomicUsize> {
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stream.is_ok() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    count
}

#[tokio::test]
async fn local_services_are_out_of_reach_with_the_network_off() {
    use std::os::linux::net::SocketAddrExt;
    for (mode, off) in MODES {
        let env = agent_env();
        let outside = tempfile::tempdir().unwrap();
        let path = outside.path().join("service.sock");
        let named = count_accepts(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let name = format!("agent-test-{}-{mode}", std::process::id());
        let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let hidden = count_accepts(std::os::unix::net::UnixListener::bind_addr(&address).unwrap());
        let command = format!(
            "python3 -c 'import socket\nfor a in [\"{}\", \"\\0{name}\"]:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(a); print(\"connected\")\n    except OSError as e:\n        print(\"refused\", e)'",
            path.display()
        );
        let result = run_in(&env, mode, &command).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let expected = usize::from(off);
        assert_eq!(named.load(Ordering::SeqCst), expected, "{mode}: {result}");
        assert_eq!(hidden.load(Ordering::SeqCst), expected, "{mode}: {result}");
    }
}

/// The extended attribute `user.seam` of `path`, read with Python (std has no call for it).
fn xattr(path: &Path) -> String {
    let output = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys\ntry:\n    print(os.getxattr(sys.argv[1], 'user.seam').decode())\nexcept OSError:\n    print('none')",
        ])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[tokio::test]
async fn metadata_and_processes_outside_stay_untouched() {
    for (mode, off) in MODES {
        let env = agent_env();
        let outside = tempfile::tempdir().unwrap();
        let file = outside.path().join("file");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let mut victim = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let command = format!(
            "f='{}'; chmod 600 \"$f\"; touch -d 2001-01-01 \"$f\"; \
             python3 -c 'import os, sys; os.setxattr(sys.argv[1], \"user.seam\", b\"set\")' \"$f\"; \
             kill -9 {}; true",
            file.display(),
            victim.id()
        );
        let result = run_in(&env, mode, &command).await;
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(
            meta.permissions().mode() & 0o777 == 0o600,
            off,
            "{mode}: {result}"
        );
        assert_eq!(meta.modified().unwrap() != before, off, "{mode}: {result}");
        assert_eq!(xattr(&file) == "set", off, "{mode}: {result}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            victim.try_wait().unwrap().is_some(),
            off,
            "{mode}: {result}"
        );
        let _ = victim.kill();
        let _ = victim.wait();
    }
}

#[tokio::test]
async fn protected_names_are_protected_at_any_depth() {
    for (mode, off) in [("workspace-write", false), ("off", true)] {
        let env = agent_env();
        env.write("work/sub/.git/config", "# original\n");
        std::fs::create_dir_all(env.path("work/sub/.git/hooks")).unwrap();
        std::fs::create_dir_all(env.path("work/deeper/project")).unwrap();
        let command = "echo 'rm -rf ~' > sub/.git/hooks/pre-commit; \
            echo changed >> sub/.git/config; \
            echo 'sandbox = \"off\"' > deeper/project/agent.toml; \
            mkdir -p deeper/.agent && echo x > deeper/.agent/notes.md; \
            echo fine > deeper/project/ok.txt; true";
        let result = run_in(&env, mode, command).await;
        let work = env.path("work");
        for planted in [
            "sub/.git/hooks/pre-commit",
            "deeper/project/agent.toml",
            "deeper/.agent",
        ] {
            assert_eq!(
                work.join(planted).exists(),
                off,
                "{mode}: {planted}: {result}"
            );
        }
        let config = std::fs::read_to_string(work.join("sub/.git/config")).unwrap();
        assert_eq!(config.contains("changed"), off, "{mode}: {result}");
        assert!(
            work.join("deeper/project/ok.txt").exists(),
            "{mode}: {result}"
        );
    }
}

#[tokio::test]
async fn the_run_s_temporary_folder_goes_when_the_run_ends() {
    let env = agent_env();
    let temp = tempfile::tempdir().unwrap();
    // One left by a run that died a while ago, and one too young to tell.
    let stale = temp.path().join("agent-run-stale");
    let young = temp.path().join("agent-run-young");
    for dir in [&stale, &young] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    std::fs::File::open(&stale)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let script = env.write(
        "script.json",
        &json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo kept > \"$TMPDIR/f\" && echo \"$TMPDIR\""}}]},
            {"text": "Done."}
        ])
        .to_string(),
    );
    let output = env
        .agent(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--yes",
            "Go",
        ])
        .env("TMPDIR", temp.path())
        .output()
        .await
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let left: Vec<String> = std::fs::read_dir(temp.path())
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("agent-run-"))
        .collect();
    assert_eq!(left, ["agent-run-young"], "{}", stderr(&output));
    // The run's own folder existed while its command ran.
    let traces = std::fs::read_dir(env.traces()).unwrap().count();
    assert_eq!(traces, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_allowed_by_a_rule_cannot_type_into_the_terminal() {
    use agent_test_support::pty::Terminal;
    const QUESTION: &str = "The sandbox refused this command";
    for (mode, off) in [("workspace-write", false), ("off", true)] {
        let env = agent_env();
        // The rule lets the command run without a question; nothing else is allowed.
        env.write("agent.toml", "[approvals]\nallow = [\"bash\"]\n");
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped");
        let command = format!(
            "python3 -c 'import fcntl, termios\ntry:\n    tty = open(\"/dev/tty\", \"wb\", buffering=0)\n    for c in b\"y\\n\":\n        fcntl.ioctl(tty, termios.TIOCSTI, bytes([c]))\n    print(\"injected\")\nexcept OSError as e:\n    print(\"no terminal:\", e)'; echo PWN > '{}'",
            escaped.display()
        );
        let script = env.write(
            "script.json",
            &json!([
                {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                {"text": "Done."}
            ])
            .to_string(),
        );
        let work = env.work();
        let args = [
            "run",
            "--script",
            &script,
            "--workspace",
            &work,
            "--sandbox",
            mode,
            "Type",
        ];
        let mut terminal = Terminal::spawn(env.command(&args));
        let screen = terminal.wait_until("the question or the end of the run", |screen| {
            screen.contains(QUESTION) || screen.contains("Done.")
        });
        if screen.contains(QUESTION) && !screen.contains("Done.") {
            // Nothing typed the answer: the user says no.
            terminal.send("n\r");
        }
        assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
        let traces: Vec<_> = std::fs::read_dir(env.traces()).unwrap().flatten().collect();
        let shown = env
            .run(&["show", &traces[0].file_name().to_string_lossy(), "--json"])
            .await;
        let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
        let result = shown["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned();
        assert_eq!(result.contains("injected"), off, "{mode}: {result}");
        assert_eq!(
            escaped.exists(),
            off,
            "{mode}: {result}\n{}",
            terminal.screen()
        );
        if !off {
            assert!(result.contains("no terminal"), "{result}");
        }
    }
}
