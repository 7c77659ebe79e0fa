//! The web tools as the `agent` command gives them: `web_fetch` of a page on a loopback server
//! this test runs reaches the model as Markdown text when agent.toml's `[web]
//! allow_private_hosts` names the server, and without it the server sees no request; approval
//! rules by domain decide before anyone is asked; `[web] enabled = false` leaves the tool out.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_test_support::cli::{CliEnv, code, stderr};
use agent_test_support::mock_model::{MockModelServer, Turn};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::agent_env;

const PAGE: &str = r#"<!doctype html><html><head><title>Test page</title>
<style>body { color: red }</style><script>document.write("SCRIPT TEXT")</script></head>
<body><h1>The Heading</h1><p>A paragraph with a <a href="/next">link</a>.</p>
<script>var hidden = "ALSO HIDDEN";</script></body></html>"#;

/// An HTTP/1.1 server on 127.0.0.1 answering every request with [`PAGE`], counting them.
struct Page {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl Page {
    async fn start() -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                        PAGE.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        Self { port, requests }
    }

    fn url(&self, host: &str) -> String {
        format!("http://{host}:{}/page", self.port)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// What one `agent run` gave: the tool results the model was sent (joined), whether the model
/// was offered `web_fetch`, the exit code and stderr.
struct Ran {
    result: String,
    offered: bool,
    code: i32,
    stderr: String,
}

/// Runs `agent run [extra] TASK` with a model that fetches `url`, then answers.
async fn fetch_through_agent(env: &CliEnv, url: &str, extra: &[&str]) -> Ran {
    let server = MockModelServer::with_replies([
        Turn::tool_call("w1", "web_fetch", json!({ "url": url })),
        Turn::text("Read it."),
    ])
    .await;
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_server(env, &server));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.push("Read the page".into());
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    let requests = server.requests();
    let result = requests.last().map_or_else(String::new, |last| {
        last.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    });
    let offered = requests.first().is_some_and(|first| {
        first.body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["function"]["name"] == "web_fetch"))
    });
    Ran {
        result,
        offered,
        code: code(&output),
        stderr: stderr(&output),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_fetch_reads_a_page_of_an_allowed_private_host_as_text() {
    let page = Page::start().await;
    let env = agent_env();
    env.write(
        "agent.toml",
        "[web]\nallow_private_hosts = [\"127.0.0.1\"]\n",
    );
    let ran = fetch_through_agent(&env, &page.url("127.0.0.1"), &["--yes"]).await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(ran.offered);
    let result = ran.result;
    assert_eq!(page.requests(), 1, "{result}");
    assert!(result.contains("The Heading"), "{result}");
    assert!(result.contains("A paragraph with a [link]"), "{result}");
    for hidden in [
        "<h1>",
        "<p>",
        "<script",
        "SCRIPT TEXT",
        "ALSO HIDDEN",
        "color: red",
    ] {
        assert!(!result.contains(hidden), "{hidden} in {result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_setting_a_private_host_sees_no_request() {
    let page = Page::start().await;
    let env = agent_env();
    let ran = fetch_through_agent(&env, &page.url("127.0.0.1"), &["--yes"]).await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let result = ran.result;
    assert!(result.starts_with("error:"), "{result}");
    assert!(result.contains("allow_private_hosts"), "{result}");
    assert!(!result.contains("The Heading"), "{result}");
    assert_eq!(page.requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_rules_decide_fetches_and_the_table_can_turn_the_tools_off() {
    let page = Page::start().await;
    let env = agent_env();
    // Allowed by its domain: no terminal, no --yes, and the page is read.
    env.write(
        "agent.toml",
        "[web]\nallow_private_hosts = [\"localhost\"]\n\
         [approvals]\nallow = [\"web_fetch(domain:localhost)\"]\n",
    );
    let ran = fetch_through_agent(&env, &page.url("localhost"), &[]).await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(ran.result.contains("The Heading"), "{}", ran.result);
    assert_eq!(page.requests(), 1);

    // Denied by its domain: even --yes does not fetch it.
    env.write(
        "agent.toml",
        "[web]\nallow_private_hosts = [\"localhost\"]\n\
         [approvals]\ndeny = [\"web_fetch(domain:localhost)\"]\n",
    );
    let ran = fetch_through_agent(&env, &page.url("localhost"), &["--yes"]).await;
    assert!(
        ran.result
            .contains("the approval rule `web_fetch(domain:localhost)` denies it"),
        "{}",
        ran.result
    );
    assert_eq!(page.requests(), 1);

    // Off: the model is not offered the tool, and a call of it is not run.
    env.write(
        "agent.toml",
        "[web]\nenabled = false\nallow_private_hosts = [\"localhost\"]\n",
    );
    let ran = fetch_through_agent(&env, &page.url("localhost"), &["--yes"]).await;
    assert!(!ran.offered);
    assert!(ran.result.starts_with("error:"), "{}", ran.result);
    assert!(!ran.result.contains("The Heading"), "{}", ran.result);
    assert_eq!(page.requests(), 1);

    // A setting that cannot be read stops the command with a usage error naming it.
    env.write(
        "agent.toml",
        "[web]\nallow_private_hosts = [\"not a host\"]\n",
    );
    let ran = fetch_through_agent(&env, &page.url("localhost"), &["--yes"]).await;
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("[web]") && ran.stderr.contains("not a host"),
        "{}",
        ran.stderr
    );
}
