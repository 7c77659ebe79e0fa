//! A server whose authorization server knows only the client credentials grant
//! (`tests/mcp/client-credentials-server.mjs`, on the official SDK and `jose`), reached through
//! the `agent` binary with no browser: the token is fetched when the server answers `401`,
//! fetched again when the server refuses it (at the start of a run or in the middle of one) and
//! when it expired on the client's clock, kept in
//! an owner-only file without the secret, and never written into a trace; with a secret (HTTP
//! Basic), with a private key (a signed JWT assertion), and by cross-app access (an identity
//! provider's ID token exchanged for a grant the authorization server takes).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

use agent_test_support::cli::{CliEnv, stderr};
use serde_json::{Value, json};

use crate::mcp_oauth::{all_text, test_server};

const SECRET: &str = "the-client-secret-42";
const WHOAMI: &str = "mcp__machine__whoami";

/// The server, killed when dropped, with what it hands the client: a private key, and for
/// cross-app access the identity provider's token endpoint and an ID token from it.
struct Server {
    child: Child,
    url: String,
    private_key_pem: String,
    ready: Value,
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
        ready,
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

#[tokio::test]
async fn cross_app_access_exchanges_the_id_token_at_the_identity_provider() {
    let server = server();
    let env = crate::agent_env();
    let id_token = server.ready["id_token"].as_str().unwrap();
    let token_file = env.write("id-token", id_token);
    let config = |token_file: &str| {
        format!(
            "[mcp.servers.sso]\nurl = {:?}\n[mcp.servers.sso.oauth]\n\
             grant = \"cross_app_access\"\nclient_id = \"agent-test\"\n\
             client_secret_env = \"CC_SECRET\"\nidp_token_endpoint = {:?}\n\
             id_token_file = {token_file:?}\n",
            server.url,
            server.ready["idp_token_endpoint"].as_str().unwrap()
        )
    };
    env.write("agent.toml", &config(&token_file));
    assert_eq!(number(&call(&env, &["mcp__sso__whoami"]).await), 1);
    let kept = std::fs::read_to_string(env.root().join("home/agent/mcp-tokens/sso.json")).unwrap();
    assert!(!kept.contains(id_token) && !kept.contains(SECRET), "{kept}");
    assert!(!all_text(&env.traces()).contains(id_token));

    // An ID token the identity provider did not issue gets no grant; the run says so.
    let forged = env.write("forged", &format!("{id_token}x"));
    env.write("agent.toml", &config(&forged));
    std::fs::remove_file(env.root().join("home/agent/mcp-tokens/sso.json")).unwrap();
    let out = env
        .agent(&["mcp", "login", "sso"])
        .env("CC_SECRET", SECRET)
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("token exchange failed") && stderr(&out).contains("invalid_grant"),
        "{}",
        stderr(&out)
    );
}
