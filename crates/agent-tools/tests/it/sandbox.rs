//! The sandbox of `bash` under the real kernel: what a confined command can write and reach, and
//! the same commands with the sandbox off, which shows each check can fail.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_tools::{SandboxConfig, SandboxMode, ToolContext, ToolRegistry, ToolResult};
use serde_json::json;
use tempfile::TempDir;

/// A workspace with the protected entries in it, and a folder outside it.
struct Setup {
    workspace: TempDir,
    outside: TempDir,
    ctx: ToolContext,
}

fn setup() -> Setup {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path();
    for dir in [".git", ".agent", "src"] {
        std::fs::create_dir(root.join(dir)).unwrap();
    }
    for file in [".git/config", "agent.toml", ".agent/notes.md", "README.md"] {
        std::fs::write(root.join(file), "original\n").unwrap();
    }
    let outside = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(root, format!("sandbox-{}", std::process::id())).unwrap();
    Setup {
        workspace,
        outside,
        ctx,
    }
}

async fn run(mode: SandboxMode, ctx: &ToolContext, command: &str) -> ToolResult {
    ToolRegistry::with_builtins_in(SandboxConfig::new(mode))
        .execute("bash", &json!({ "command": command }).to_string(), ctx)
        .await
}

fn contains(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|content| content.contains(text))
}

/// Each row: a command writing `changed` somewhere, where it lands, and whether the
/// `workspace-write` sandbox lets it.
const WRITES: &[(&str, &str, bool)] = &[
    ("echo changed > src/new.txt", "src/new.txt", true),
    ("echo changed >> README.md", "README.md", true),
    (
        "mkdir -p src/a/b && echo changed > src/a/b/c",
        "src/a/b/c",
        true,
    ),
    (
        "echo changed > \"$TMPDIR/t\" && cp \"$TMPDIR/t\" src/t",
        "src/t",
        true,
    ),
    ("echo changed >> .git/config", ".git/config", false),
    ("echo changed > agent.toml", "agent.toml", false),
    (
        "rm -f agent.toml; echo changed > agent.toml",
        "agent.toml",
        false,
    ),
    (
        "mv agent.toml src/x; echo changed > agent.toml",
        "agent.toml",
        false,
    ),
    ("echo changed > .agent/notes.md", ".agent/notes.md", false),
    (
        "mkdir -p .agent/plans && echo changed > .agent/plans/p.md",
        ".agent/plans/p.md",
        false,
    ),
    (
        "ln -s .. src/up; echo changed > src/up/agent.toml",
        "agent.toml",
        false,
    ),
    (
        "echo changed > top-level-new.txt",
        "top-level-new.txt",
        false,
    ),
];

#[tokio::test]
async fn confined_commands_write_only_where_allowed() {
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::Off] {
        for (command, target, allowed) in WRITES {
            let s = setup();
            let result = run(mode, &s.ctx, command).await;
            let landed = contains(&s.workspace.path().join(target), "changed");
            let expected = *allowed || mode == SandboxMode::Off;
            assert_eq!(
                landed, expected,
                "{mode}: `{command}` -> {target}: {}",
                result.content
            );
            if !expected {
                assert!(
                    result.content.contains("sandbox"),
                    "the refusal names the sandbox: {}",
                    result.content
                );
            }
        }
    }
}

#[tokio::test]
async fn writes_outside_the_workspace_are_refused() {
    for (mode, expected) in [
        (SandboxMode::WorkspaceWrite, false),
        (SandboxMode::ReadOnly, false),
        (SandboxMode::Off, true),
    ] {
        let s = setup();
        let outside = s.outside.path().join("escaped");
        let command = format!("echo changed > '{}'", outside.display());
        let result = run(mode, &s.ctx, &command).await;
        assert_eq!(
            contains(&outside, "changed"),
            expected,
            "{mode}: {}",
            result.content
        );
    }
}

#[tokio::test]
async fn read_only_writes_nothing_but_its_temp_folder() {
    let s = setup();
    let result = run(
        SandboxMode::ReadOnly,
        &s.ctx,
        "cat README.md; echo changed > src/x; echo tmp > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"",
    )
    .await;
    assert!(
        !s.workspace.path().join("src/x").exists(),
        "{}",
        result.content
    );
    assert!(result.content.contains("original"), "{}", result.content);
    assert!(result.content.contains("tmp"), "{}", result.content);
}

/// A loopback server counting the connections it accepts.
fn counting_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, count)
}

#[tokio::test]
async fn confined_commands_reach_no_network_but_unix_sockets() {
    for (mode, expected) in [
        (SandboxMode::WorkspaceWrite, 0),
        (SandboxMode::ReadOnly, 0),
        (SandboxMode::Off, 1),
    ] {
        let s = setup();
        let (port, count) = counting_server();
        let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
        let result = run(mode, &s.ctx, &command).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            count.load(Ordering::SeqCst),
            expected,
            "{mode}: {}",
            result.content
        );
        assert_eq!(result.content.contains("connected"), expected == 1);
    }
    // AF_UNIX sockets stay allowed (local tools such as language servers use them).
    let s = setup();
    let result = run(
        SandboxMode::WorkspaceWrite,
        &s.ctx,
        "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"unix-ok\"); print(b.recv(9).decode())' || echo no-python",
    )
    .await;
    assert!(
        result.content.contains("unix-ok") || result.content.contains("no-python"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn the_file_tools_never_write_protected_entries() {
    let s = setup();
    let registry = ToolRegistry::with_builtins_in(SandboxConfig::new(SandboxMode::Off));
    for path in [
        "agent.toml",
        ".git/config",
        ".agent/notes.md",
        "src/../.git/hooks/pre-commit",
    ] {
        let write = json!({ "path": path, "content": "changed" }).to_string();
        let result = registry.execute("write_file", &write, &s.ctx).await;
        assert!(result.is_error, "{path}: {}", result.content);
        assert!(result.content.contains("protected"), "{}", result.content);
        let edit = json!({ "path": path, "old": "original", "new": "changed" }).to_string();
        assert!(registry.execute("edit_file", &edit, &s.ctx).await.is_error);
    }
    std::os::unix::fs::symlink("..", s.workspace.path().join("src/up")).unwrap();
    let write = json!({ "path": "src/up/agent.toml", "content": "changed" }).to_string();
    assert!(
        registry
            .execute("write_file", &write, &s.ctx)
            .await
            .is_error
    );
    assert!(contains(&s.workspace.path().join("agent.toml"), "original"));
}
