//! A server whose authorization server knows only the client credentials grant
//! (`tests/mcp/client-credentials-server.mjs`, on the official SDK and `jose`), reached through
//! the `agent` binary with no browser: the token is fetched when the server answers `401`,
//! fetched again when the server refuses it (at the start of a run or in the middle of one) and
//! when it expired on the client's clock, kept in
//! an owner-only file without the secret, and never written into a trace; with a secret (HTTP
//! Basic) and with a private key (a signed JWT assertion).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

use agent_test_support::cli::{CliEnv, stderr};
use serde_json::{Value, json};

use crate::mcp_oauth::{all_text, test_server};

const SECRET: &str = "the-client-secret-42";
const WHOAMI: &str = "mcp__machine__whoami";

/// The server, killed when dropped, with the private key it made for the client.
struct Server {
    child: Child,
    url: String,
    private_key_pem: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server() -> Server {
    let mut child = Command::new("node")
        .arg(test_server("client-credentials-server.mjs"))
        .env("CLIENT_SECRET", SECRET)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).unwrap();
    Server {
        child,
        url: ready["url"].as_str().unwrap().to_owned(),
        private_key_pem: ready["private_key_pem"].as_str().unwrap().to_owned(),
    }
}

/// Runs a script calling `tools` one after the other, with the secret in the environment;
/// returns the last one's result.
async fn call(env: &CliEnv, tools: &[&str]) -> String {
    let mut script: Vec<Value> = tools
        .iter()
        .map(|tool| json!({"tool_calls": [{"name": tool, "arguments": {}}]}))
        .collect();
    script.push(json!({"text": "done"}));
    let script = Value::Array(script);
    std::fs::write(env.path("script.json"), script.to_string()).unwrap();
    let script = env.arg("script.json");
    let work = env.work();
    let args = [
        "run",
        "--script",
        &script,
        "--workspace",
        &work,
        "--yes",
        "--json",
        "Call it",
    ];
    let output = env
        .agent(&args)
        .env("CC_SECRET", SECRET)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let trace = result["trace_id"].as_str().unwrap().to_owned();
    let shown = env.run(&["show", &trace, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap()
}

fn number(text: &str) -> u32 {
    text.strip_prefix("signed in with token number ")
        .unwrap_or_else(|| panic!("{text}"))
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_client_secret_gets_a_token_without_a_browser_and_a_new_one_when_refused_or_expired() {
    let server = server();
    let env = crate::agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.machine]\nurl = {:?}\n[mcp.servers.machine.oauth]\n\
             grant = \"client_credentials\"\nclient_id = \"agent-test\"\n\
             client_secret_env = \"CC_SECRET\"\n",
            server.url
        ),
    );
    let file = env.root().join("home/agent/mcp-tokens/machine.json");

    // The server's 401 starts the grant: the first token, kept owner-only, without the secret.
    assert_eq!(number(&call(&env, &[WHOAMI]).await), 1);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(!kept.contains(SECRET), "{kept}");

    // The server stops taking it: at the start of the next run, a new one is fetched.
    assert_eq!(call(&env, &["mcp__machine__revoke"]).await, "revoked");
    assert_eq!(number(&call(&env, &[WHOAMI]).await), 2);
    // And in the middle of a run: the refused call is made again with a new token.
    assert_eq!(
        number(&call(&env, &["mcp__machine__revoke", WHOAMI]).await),
        3
    );

    // A token that expired on the client's clock is replaced before it is used.
    let mut stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    stored["credentials"]["token_received_at"] = json!(1_000);
    std::fs::write(&file, stored.to_string()).unwrap();
    assert_eq!(number(&call(&env, &[WHOAMI]).await), 4);

    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let access = stored["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap();
    let traces = all_text(&env.traces());
    assert!(traces.contains("signed in with token number 4"));
    assert!(!traces.contains(access) && !traces.contains(SECRET));
}

#[tokio::test]
async fn a_private_key_signs_the_assertion_and_login_fetches_at_once() {
    let server = server();
    let env = crate::agent_env();
    let key = env.write("client.pem", &server.private_key_pem);
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.keyed]\nurl = {:?}\n[mcp.servers.keyed.oauth]\n\
             grant = \"client_credentials\"\nclient_id = \"agent-test\"\n\
             private_key_file = {key:?}\n",
            server.url
        ),
    );
    // `agent mcp login` needs no browser for this grant.
    let out = env.run(&["mcp", "login", "keyed"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("signed in to keyed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(number(&call(&env, &["mcp__keyed__whoami"]).await), 1);
    let kept =
        std::fs::read_to_string(env.root().join("home/agent/mcp-tokens/keyed.json")).unwrap();
    assert!(!kept.contains("PRIVATE KEY"), "{kept}");

    // A wrong key is refused by the authorization server, and the run says so and goes on.
    let other = server.private_key_pem.clone();
    drop(server);
    let second = self::server();
    env.write("client.pem", &other);
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.keyed]\nurl = {:?}\n[mcp.servers.keyed.oauth]\n\
             grant = \"client_credentials\"\nclient_id = \"agent-test\"\n\
             private_key_file = {key:?}\n",
            second.url
        ),
    );
    let out = env.run(&["mcp", "login", "keyed"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("invalid_client"), "{}", stderr(&out));
}
