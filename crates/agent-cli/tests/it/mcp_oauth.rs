//! MCP servers that ask for OAuth and servers that ask the person questions, for real: the
//! official SDK's authorization server and MCP endpoint (`tests/mcp/oauth-server.mjs`) on
//! loopback, and an SDK server over stdio that elicits (`tests/mcp/asking.mjs`), driven through
//! the `agent` binary as a person would (the OAuth "browser" follows the printed address; the
//! question is answered on a pseudo-terminal).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use agent_test_support::cli::{CliEnv, stderr, stdout};
use agent_test_support::pty::Terminal;
use serde_json::{Value, json};

/// A script of the test servers, failing loudly when their packages are not installed.
pub(crate) fn test_server(script: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the MCP test servers are not installed: run `cargo xtask setup` (or scripts/setup-mcp.sh)"
    );
    dir.join(script).to_string_lossy().into_owned()
}

/// The OAuth-protected server, killed when dropped.
struct Protected {
    child: Child,
    url: String,
}

impl Drop for Protected {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the OAuth-protected server with access tokens lasting `seconds`.
fn protected(seconds: u32) -> Protected {
    let mut child = Command::new("node")
        .arg(test_server("oauth-server.mjs"))
        .env("TOKEN_SECONDS", seconds.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    Protected { child, url }
}

/// The token file of the server `name` in the environment's config folder.
fn token_file(env: &CliEnv, name: &str) -> PathBuf {
    env.root()
        .join("home/agent/mcp-tokens")
        .join(format!("{name}.json"))
}

/// `agent mcp login NAME` with no browser: reads the address it prints, follows it (the
/// authorization server redirects straight back to the agent), and waits for the command.
async fn login(env: &CliEnv, name: &str) {
    let mut command = env.agent(&["mcp", "login", name]);
    command
        .env_remove("BROWSER")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stderr.take().unwrap()));
    let mut shown = String::new();
    let page = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("no sign-in address printed");
        shown.push_str(&line);
        shown.push('\n');
        if let Some(page) = line.trim().strip_prefix("http") {
            break format!("http{page}");
        }
    };
    assert!(
        shown.contains(&format!("Open this page to sign in to {name}:")),
        "{shown}"
    );
    // The browser: follows the authorization page's redirect back to the agent.
    let landed = tokio::process::Command::new("curl")
        .args(["--silent", "--show-error", "--location", &page])
        .output()
        .await
        .unwrap();
    assert!(
        String::from_utf8_lossy(&landed.stdout).contains("Signed in."),
        "{}",
        String::from_utf8_lossy(&landed.stderr)
    );
    let status = child.wait().await.unwrap();
    while let Ok(Some(line)) = lines.next_line().await {
        shown.push_str(&line);
        shown.push('\n');
    }
    assert!(status.success(), "{shown}");
    assert!(shown.contains(&format!("signed in to {name}")), "{shown}");
}

/// Runs a script calling `tool` once; returns the tool's result.
async fn call(env: &CliEnv, tool: &str) -> String {
    let script = json!([{"tool_calls": [{"name": tool, "arguments": {}}]}, {"text": "done"}]);
    std::fs::write(env.path("script.json"), script.to_string()).unwrap();
    let output = env
        .run(&[
            "run",
            "--script",
            &env.arg("script.json"),
            "--workspace",
            &env.work(),
            "--yes",
            "--json",
            "Call it",
        ])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let trace = result["trace_id"].as_str().unwrap().to_owned();
    let shown = env.run(&["show", &trace, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap()
}

/// Every file under `dir`, read as text.
pub(crate) fn all_text(dir: &Path) -> String {
    let mut text = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return text;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&all_text(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(
                &std::fs::read(&path).unwrap_or_default(),
            ));
        }
    }
    text
}

#[tokio::test]
async fn sign_in_call_refresh_and_sign_out_of_an_oauth_protected_server() {
    let server = protected(2);
    let env = crate::agent_env();
    env.write(
        "agent.toml",
        &format!("[mcp.servers.guarded]\nurl = {:?}\n", server.url),
    );

    // Before signing in, the run goes on without the server and says how to sign in.
    let listed = env.run(&["mcp", "list"]).await;
    assert_eq!(listed.status.code(), Some(1));
    assert!(
        stdout(&listed).contains("needs sign-in: run `agent mcp login guarded`"),
        "{}",
        stdout(&listed)
    );

    login(&env, "guarded").await;
    let file = token_file(&env, "guarded");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let listed = env.run(&["mcp", "list", "--json"]).await;
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["servers"][0]["auth"]["signed_in"], true, "{listed}");
    assert_eq!(
        listed["servers"][0]["auth"]["refreshable"], true,
        "{listed}"
    );

    // A call with the token, then, once it expired, another with a refreshed one: the server
    // numbers the tokens it issues, and only the browser step or a refresh issues one. (Tokens
    // this short are refreshed before each use, as they are within the refresh margin.)
    let number = |text: String| -> u32 {
        text.strip_prefix("signed in with token number ")
            .unwrap_or_else(|| panic!("{text}"))
            .parse()
            .unwrap()
    };
    let first = number(call(&env, "mcp__guarded__whoami").await);
    let before = std::fs::read_to_string(&file).unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let second = number(call(&env, "mcp__guarded__whoami").await);
    assert!(second > first, "{first} then {second}");
    assert_ne!(
        std::fs::read_to_string(&file).unwrap(),
        before,
        "the refreshed token is kept"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");

    // No token in the traces: neither the access token nor the refresh token.
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let access = stored["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap();
    let refresh = stored["credentials"]["token_response"]["refresh_token"]
        .as_str()
        .unwrap();
    let traces = all_text(&env.traces());
    assert!(traces.contains(&format!("signed in with token number {second}")));
    assert!(!traces.contains(access) && !traces.contains(refresh));

    let out = env.run(&["mcp", "logout", "guarded"]).await;
    assert!(
        stderr(&out).contains("signed out of guarded"),
        "{}",
        stderr(&out)
    );
    assert!(!file.exists());
    let listed = env.run(&["mcp", "list"]).await;
    assert!(
        stdout(&listed).contains("needs sign-in"),
        "{}",
        stdout(&listed)
    );
}

#[tokio::test]
async fn a_server_question_is_answered_on_the_terminal_and_declined_without_one() {
    let env = crate::agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.asking]\ncommand = \"node\"\nargs = [{:?}]\n",
            test_server("asking.mjs")
        ),
    );
    let script = json!([
        {"tool_calls": [{"name": "mcp__asking__greet", "arguments": {}}]},
        {"text": "done"}
    ]);
    std::fs::write(env.path("script.json"), script.to_string()).unwrap();
    let args = [
        "run",
        "--script",
        &env.arg("script.json"),
        "--workspace",
        &env.work(),
        "--yes",
        "Greet me",
    ];

    let mut terminal = Terminal::spawn(env.command(&args));
    let screen = terminal.wait_for("[c] cancel:");
    assert!(
        screen.contains("The MCP server asking asks: Who is there?"),
        "{screen}"
    );
    terminal.send("\r");
    terminal.wait_for("Name:");
    terminal.send("Ada\r");
    let screen = terminal.wait_for("[green]:");
    assert!(screen.contains("1) red  2) green  3) blue"), "{screen}");
    terminal.send("3\r");
    assert_eq!(terminal.wait_exit(), Some(0), "{}", terminal.screen());
    let traces = all_text(&env.traces());
    assert!(traces.contains("Hello Ada, who likes blue."), "{traces}");

    // Without a terminal nobody can answer: declined, and the run says so.
    let output = env.run(&args).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("nobody can answer without a terminal"),
        "{}",
        stderr(&output)
    );
    assert!(all_text(&env.traces()).contains("No answer: decline."));
}
