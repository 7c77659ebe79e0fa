//! Shared helpers of the MCP integration tests: where the reference servers installed by
//! `scripts/setup-mcp.sh` live, server configurations for them, a streamable HTTP server on a
//! free loopback port, and process checks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agent_mcp::ServerConfig;
use nix::sys::signal::{kill, killpg};
use nix::unistd::Pid;

/// `tests/mcp` at the workspace root.
pub(crate) fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// The entry point of an installed npm package under `tests/mcp/node_modules`; fails loudly
/// when the packages are not installed.
pub(crate) fn package_entry(package: &str) -> String {
    let entry = mcp_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        entry.is_file(),
        "{} is missing: the MCP test servers are not installed. Run `cargo xtask setup` \
         (or scripts/setup-mcp.sh), which runs `npm ci` in tests/mcp.",
        entry.display()
    );
    entry.to_string_lossy().into_owned()
}

/// server-everything over stdio.
pub(crate) fn everything() -> ServerConfig {
    ServerConfig::stdio("node", [package_entry("server-everything"), "stdio".into()])
}

/// server-filesystem over stdio, allowed into `dir` only.
pub(crate) fn filesystem(dir: &Path) -> ServerConfig {
    ServerConfig::stdio(
        "node",
        [
            package_entry("server-filesystem"),
            dir.to_string_lossy().into_owned(),
        ],
    )
}

/// A server that answers the handshake and lists a `wait` tool it never answers.
pub(crate) fn silent_tools() -> ServerConfig {
    let script = mcp_dir().join("silent-tools.mjs");
    ServerConfig::stdio("node", [script.to_string_lossy().into_owned()])
}

/// server-everything in its streamable HTTP mode on a free loopback port; killed when dropped.
pub(crate) struct HttpEverything {
    child: tokio::process::Child,
    /// The MCP endpoint.
    pub(crate) url: String,
}

impl HttpEverything {
    pub(crate) async fn start() -> Self {
        let entry = package_entry("server-everything");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = tokio::process::Command::new("node")
            .arg(entry)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "server-everything did not listen on port {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = killpg(Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Whether a process with this id exists (a zombie not yet reaped counts as gone).
pub(crate) fn alive(pid: u32) -> bool {
    let pid = pid as i32;
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// Waits up to 5 s for a process to be gone.
pub(crate) async fn gone(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Whether any process of the process group `pgid` exists.
pub(crate) fn group_alive(pgid: u32) -> bool {
    killpg(Pid::from_raw(pgid as i32), None).is_ok()
}

/// Waits up to 5 s for every process of a process group to be gone.
pub(crate) async fn group_gone(pgid: u32) -> bool {
    for _ in 0..100 {
        if !group_alive(pgid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
