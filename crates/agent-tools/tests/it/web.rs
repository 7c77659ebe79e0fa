//! `web_fetch` against HTTP servers this test runs on loopback addresses: a page read as
//! Markdown, loopback refused unless `allow_private_hosts` names it (the server then sees no
//! request), a redirect to an address that is not allowed refused, a 20 MB page cut with a
//! note, and `web_search` against a SearXNG-shaped JSON service.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_tools::web::{PrivateHosts, WebConfig, web_tools};
use agent_tools::{ToolContext, ToolRegistry, ToolResult};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PAGE: &str = r#"<!doctype html><html><head><title>Test page</title>
<style>body { color: red }</style><script>document.write("SCRIPT TEXT")</script></head>
<body><h1>The Heading</h1><p>A paragraph with a <a href="/next">link</a>.</p>
<script>var hidden = "ALSO HIDDEN";</script></body></html>"#;

/// A tiny HTTP/1.1 server on `address`: answers each request by its path and counts them.
struct Server {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl Server {
    async fn start(address: &str, redirect_to: Option<String>) -> Self {
        let listener = TcpListener::bind((address, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let redirect_to = redirect_to.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    let head = String::from_utf8_lossy(&head);
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    answer(&mut socket, &path, redirect_to.as_deref()).await;
                });
            }
        });
        Self { port, requests }
    }

    fn url(&self, address: &str, path: &str) -> String {
        format!("http://{address}:{}{path}", self.port)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

async fn answer(socket: &mut tokio::net::TcpStream, path: &str, redirect_to: Option<&str>) {
    let respond = |status: &str, headers: &str, body_len: usize| {
        format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {body_len}\r\nConnection: close\r\n\r\n"
        )
    };
    match path {
        "/page" => {
            let head = respond(
                "200 OK",
                "Content-Type: text/html; charset=utf-8\r\n",
                PAGE.len(),
            );
            let _ = socket.write_all(format!("{head}{PAGE}").as_bytes()).await;
        }
        "/same" => {
            let head = respond("302 Found", "Location: /page\r\n", 0);
            let _ = socket.write_all(head.as_bytes()).await;
        }
        "/away" => {
            let location = format!("Location: {}\r\n", redirect_to.unwrap_or("/"));
            let head = respond("302 Found", &location, 0);
            let _ = socket.write_all(head.as_bytes()).await;
        }
        "/big" => {
            // 20 MB of paragraphs, written until the client stops reading.
            let total = 20 * 1024 * 1024;
            let head = respond("200 OK", "Content-Type: text/html\r\n", total);
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let chunk = "<p>All work and no play makes a long page.</p>\n".repeat(1024);
            let mut sent = 0;
            while sent < total {
                let part = &chunk.as_bytes()[..chunk.len().min(total - sent)];
                if socket.write_all(part).await.is_err() {
                    return;
                }
                sent += part.len();
            }
        }
        "/search?q=rust+serde&format=json" => {
            let body = json!({"results": [
                {"title": "Serde", "url": "https://serde.rs/", "content": "Serialization framework."}
            ]})
            .to_string();
            let head = respond("200 OK", "Content-Type: application/json\r\n", body.len());
            let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
        }
        _ => {
            let head = respond("404 Not Found", "", 0);
            let _ = socket.write_all(head.as_bytes()).await;
        }
    }
}

fn registry(allow: &[&str], search_url: Option<String>) -> ToolRegistry {
    let config = WebConfig {
        allow_private_hosts: PrivateHosts::parse(allow).unwrap(),
        search_url,
        ..WebConfig::default()
    };
    let mut registry = ToolRegistry::new();
    for tool in web_tools(&config) {
        registry.register(tool).unwrap();
    }
    registry
}

async fn fetch(registry: &ToolRegistry, url: &str) -> ToolResult {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "trace-web").unwrap();
    let args = json!({"url": url, "prompt": "the heading"}).to_string();
    registry.execute("web_fetch", &args, &ctx).await
}

#[tokio::test]
async fn an_allowed_loopback_page_is_read_as_markdown_without_tags_or_scripts() {
    let server = Server::start("127.0.0.1", None).await;
    let result = fetch(
        &registry(&["127.0.0.1"], None),
        &server.url("127.0.0.1", "/page"),
    )
    .await;
    assert!(!result.is_error, "{}", result.content);
    let text = &result.content;
    assert!(text.contains("# The Heading"), "{text}");
    assert!(text.contains("A paragraph with a [link](/next)."), "{text}");
    for hidden in [
        "<h1>",
        "<p>",
        "<script",
        "SCRIPT TEXT",
        "ALSO HIDDEN",
        "color: red",
    ] {
        assert!(
            !text.contains(hidden),
            "{hidden:?} reached the model: {text}"
        );
    }
    assert!(text.contains("Read for: the heading"), "{text}");
    // A redirect on the same host is followed.
    let followed = fetch(
        &registry(&["127.0.0.1"], None),
        &server.url("127.0.0.1", "/same"),
    )
    .await;
    assert!(
        followed.content.contains("# The Heading"),
        "{}",
        followed.content
    );
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn loopback_is_refused_without_the_setting_and_the_server_sees_nothing() {
    let server = Server::start("127.0.0.1", None).await;
    for url in [
        server.url("127.0.0.1", "/page"),
        server.url("localhost", "/page"),
        server.url("[::ffff:127.0.0.1]", "/page"),
    ] {
        let result = fetch(&registry(&[], None), &url).await;
        assert!(result.is_error, "{url}: {}", result.content);
        assert!(result.content.contains("refuses"), "{}", result.content);
        assert!(
            result.content.contains("allow_private_hosts"),
            "{}",
            result.content
        );
    }
    // Another address than the one allowed is refused too.
    let result = fetch(
        &registry(&["10.0.0.0/8"], None),
        &server.url("127.0.0.1", "/page"),
    )
    .await;
    assert!(result.is_error, "{}", result.content);
    assert_eq!(server.requests(), 0, "a refused fetch reached the server");
    // The control: the same fetch with the setting reaches it.
    let allowed = fetch(
        &registry(&["localhost"], None),
        &server.url("localhost", "/page"),
    )
    .await;
    assert!(!allowed.is_error, "{}", allowed.content);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_redirect_to_an_address_that_is_not_allowed_is_refused() {
    let inner = Server::start("127.0.0.2", None).await;
    let secret = inner.url("127.0.0.2", "/page");
    let outer = Server::start("127.0.0.1", Some(secret.clone())).await;
    let result = fetch(
        &registry(&["127.0.0.1"], None),
        &outer.url("127.0.0.1", "/away"),
    )
    .await;
    assert!(result.is_error, "{}", result.content);
    assert!(result.content.contains("refuses"), "{}", result.content);
    assert!(result.content.contains("127.0.0.2"), "{}", result.content);
    assert_eq!(outer.requests(), 1);
    assert_eq!(
        inner.requests(),
        0,
        "the redirect reached the address that is not allowed"
    );
    // Metadata addresses in a redirect are refused the same way.
    let metadata = Server::start("127.0.0.1", Some("http://169.254.169.254/latest/".into())).await;
    let result = fetch(
        &registry(&["127.0.0.1"], None),
        &metadata.url("127.0.0.1", "/away"),
    )
    .await;
    assert!(result.content.contains("metadata"), "{}", result.content);
    // A redirect to another host that may be fetched is named, not followed.
    let named = fetch(
        &registry(&["127.0.0.0/8"], None),
        &outer.url("127.0.0.1", "/away"),
    )
    .await;
    assert!(!named.is_error, "{}", named.content);
    assert!(named.content.contains(&secret), "{}", named.content);
    assert!(named.content.contains("not followed"), "{}", named.content);
    assert_eq!(inner.requests(), 0);
}

#[tokio::test]
async fn a_twenty_megabyte_page_is_cut_with_a_note() {
    let server = Server::start("127.0.0.1", None).await;
    let started = Instant::now();
    let result = fetch(
        &registry(&["127.0.0.1"], None),
        &server.url("127.0.0.1", "/big"),
    )
    .await;
    assert!(
        !result.is_error,
        "{}",
        &result.content[..result.content.len().min(500)]
    );
    let text = &result.content;
    assert!(
        text.contains("only its first 2097152 of 20971520 bytes were read"),
        "{}",
        &text[..400]
    );
    assert!(
        text.contains("the page goes on"),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(text.contains("All work and no play"));
    assert!(
        text.len() <= 50_000,
        "{} bytes reached the model",
        text.len()
    );
    assert!(started.elapsed() < Duration::from_secs(120));
}

#[tokio::test]
async fn web_search_asks_the_configured_service() {
    let server = Server::start("127.0.0.1", None).await;
    let registry = registry(&[], Some(server.url("127.0.0.1", "/search")));
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "trace-web").unwrap();
    let result = registry
        .execute(
            "web_search",
            &json!({"query": "rust serde"}).to_string(),
            &ctx,
        )
        .await;
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.contains("1. [Serde](https://serde.rs/)"),
        "{}",
        result.content
    );
    // Without a service there is no web_search.
    assert!(self::registry(&[], None).get("web_search").is_none());
}
