//! Hostile HTTP against a real `agent serve`, with a scripted model (so run control works) and
//! read-only (without a model), over a trace folder holding a finished trace and a damaged one:
//!
//! - schemathesis (PyPI, pinned in `scripts/setup-schemathesis.sh`, in a virtualenv under the
//!   target folder) generates requests from the served OpenAPI document, stateful phase
//!   included, against both servers, and checks that no response is a 5xx and that every
//!   response matches the document (status, content type, headers, body schema);
//! - hand-written requests over raw TCP: path traversal in trace ids (plain, encoded, double
//!   encoded), oversized bodies (with a length and chunked), oversized headers and URLs, garbage,
//!   WebSocket upgrades with bad `since_event_id`, and a non-loopback bind that needs its token.
//!
//! `HOSTILE_HTTP_EXAMPLES` sets schemathesis' examples per operation (25 by default; `cargo
//! xtask soak` runs more). The test prints one `HOSTILE-HTTP {json}` summary line.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, build_agent};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The schemathesis command, installed by its setup script when missing.
fn schemathesis() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root().join(dir)
            }
        })
        .unwrap_or_else(|| root().join("target"));
    let status = Command::new("bash")
        .arg(root().join("scripts/setup-schemathesis.sh"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("bash could not start");
    assert!(status.success(), "scripts/setup-schemathesis.sh failed");
    target.join("schemathesis-venv/bin/schemathesis")
}

/// A trace folder, a workspace and a script, with one finished trace in the folder and one
/// whose event log is damaged.
struct Site {
    env: CliEnv,
    trace_id: String,
    damaged_id: String,
}

impl Site {
    fn new() -> Self {
        let env = CliEnv::new(build_agent());
        // Runs started over HTTP plan, wait a little (so cancel and approvals find them
        // running), and finish.
        let script = json!({
            "turns": [
                {"tool_calls": [{"name": "goal", "arguments": {"add": "Look", "focus": "1"}}]},
                {"delay_ms": 300, "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                {"tool_calls": [{"name": "goal", "arguments": {"done": "looked"}}]}
            ],
            "fallback": "Done."
        });
        env.write("script.json", &script.to_string());
        let output = env
            .command(&[
                "run",
                "--provider",
                "scripted",
                "--script",
                &env.arg("script.json"),
                "--workspace",
                &env.work(),
                "--trace-dir",
                &env.arg("traces"),
                "--yes",
                "--json",
                "A trace to read",
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        let trace_id = result["trace_id"].as_str().unwrap().to_owned();
        // A copy of the trace under another id, its event log cut by garbage after one line.
        let damaged_id = "0d4a7a6e-0000-4000-8000-00000000dead".to_owned();
        let damaged = env.path("traces").join(&damaged_id);
        std::fs::create_dir_all(damaged.join("messages")).unwrap();
        let log = std::fs::read_to_string(env.path("traces").join(&trace_id).join("events.jsonl"))
            .unwrap()
            .replace(&trace_id, &damaged_id);
        let first = log.split_inclusive('\n').next().unwrap();
        std::fs::write(damaged.join("events.jsonl"), format!("{first}{{garbage\n")).unwrap();
        Self {
            env,
            trace_id,
            damaged_id,
        }
    }

    /// `agent serve` on a free port with the scripted model and `extra` flags.
    fn serve(&self, extra: &[&str]) -> Server {
        let mut args = vec![
            "--provider".to_owned(),
            "scripted".into(),
            "--script".into(),
            self.env.arg("script.json"),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.serve_without_model(&args)
    }

    /// `agent serve` on a free port with `extra` flags (read-only unless they name a model).
    fn serve_without_model(&self, extra: &[&str]) -> Server {
        let mut args = vec![
            "serve".to_owned(),
            "--port".into(),
            "0".into(),
            "--trace-dir".into(),
            self.env.arg("traces"),
            "--workspace".into(),
            self.env.work(),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = self
            .env
            .command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            line.clear();
            assert!(
                reader.read_line(&mut line).unwrap() > 0,
                "the server exited"
            );
            if let Some(at) = line.find("http://") {
                let address: String = line[at + 7..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '/')
                    .collect();
                break address.rsplit(':').next().unwrap().parse::<u16>().unwrap();
            }
            assert!(Instant::now() < deadline, "no address in the server's log");
        };
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = reader.read_to_end(&mut sink);
        });
        Server {
            child,
            address: format!("127.0.0.1:{port}"),
        }
    }
}

struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    fn assert_alive(&mut self) {
        assert!(self.child.try_wait().unwrap().is_none(), "the server died");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends raw bytes and returns the status code (0 when the server closed without one) and the
/// body.
async fn raw(address: &str, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    // The server may answer (and close) before the whole request is written.
    let _ = stream.write_all(request).await;
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

fn get(path: &str, extra_headers: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra_headers}\r\n")
        .into_bytes()
}

/// What every refused request must look like: a 4xx, and JSON of the error shape when the
/// service (rather than the HTTP parser) answered.
fn assert_refused(what: &str, (status, body): &(u16, String), allowed: &[u16]) {
    assert!(
        allowed.contains(status) || (*status == 0 && allowed.contains(&0)),
        "{what}: status {status}, expected one of {allowed:?}: {body}"
    );
    assert!(!body.contains("root:"), "{what}: a file leaked: {body}");
    if let Some(start) = body.find('{') {
        let json: Value = serde_json::from_str(body[start..].trim()).unwrap_or(Value::Null);
        if !json.is_null() {
            assert!(json["error"]["code"].is_string(), "{what}: {body}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_and_no_schema_mismatch() {
    let site = Site::new();
    let server = site.serve(&[]);
    run_schemathesis(&site, server, "scripted model").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_on_a_read_only_server() {
    let site = Site::new();
    let server = site.serve_without_model(&[]);
    run_schemathesis(&site, server, "read-only").await;
}

/// Runs schemathesis against `server` and checks it found nothing.
async fn run_schemathesis(site: &Site, mut server: Server, what: &str) {
    let st = schemathesis();
    let examples: u32 = std::env::var("HOSTILE_HTTP_EXAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    // Half the generated trace ids are a real one (the finished trace or the damaged one), so
    // requests also reach the routes' logic (messages, events, resume of a finished trace, a
    // trace that cannot be read) rather than stopping at 404.
    let config = tempfile::tempdir().unwrap();
    let config_file = config.path().join("schemathesis.toml");
    std::fs::write(
        &config_file,
        format!(
            "[dictionaries.trace_ids]\nvalues = [\"{}\", \"{}\"]\n\n[parameters]\n\
             \"path.trace_id\" = {{ dictionary = \"trace_ids\", probability = 0.5 }}\n\
             \"query.parent_trace_id\" = {{ dictionary = \"trace_ids\", probability = 0.5 }}\n",
            site.trace_id, site.damaged_id
        ),
    )
    .unwrap();
    let output = tokio::task::spawn_blocking({
        let url = format!("{}/api/openapi.json", server.url());
        move || {
            Command::new(st)
                .arg("--config-file")
                .arg(&config_file)
                .args([
                    "run",
                    &url,
                    "--checks",
                    "not_a_server_error,status_code_conformance,content_type_conformance,\
                     response_headers_conformance,response_schema_conformance",
                    "--phases",
                    "examples,coverage,fuzzing,stateful",
                    "--max-examples",
                    &examples.to_string(),
                    // One worker: its Python crashed in parser internals with two.
                    "--workers",
                    "1",
                    "--no-color",
                ])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "schemathesis found problems ({what} server):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    server.assert_alive();
    // "N generated, ..." in its summary.
    let generated = stdout
        .lines()
        .filter(|l| l.contains(" generated"))
        .find_map(|l| l.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(generated > 0, "schemathesis generated nothing:\n{stdout}");
    println!(
        "HOSTILE-HTTP {}",
        json!({"server": what, "schemathesis_examples_per_operation": examples, "schemathesis_requests": generated, "server_errors": 0, "schema_mismatches": 0})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_written_hostile_requests_are_refused_cleanly() {
    let site = Site::new();
    let mut server = site.serve(&[]);
    let address = server.address.clone();
    let id = site.trace_id.clone();
    let mut cases = 0;

    // Path traversal through the trace id: plain, encoded, double encoded, with separators of
    // another system, NUL, on every route.
    let ids = [
        "..",
        "..%2F..%2Fetc%2Fpasswd",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "%252e%252e%252fetc%252fpasswd",
        "..%5C..%5Cwindows",
        "%2E%2E",
        ".hidden",
        "a%00b",
        "%C0%AE%C0%AE%2F",
        "%FF%FE",
        "x%0D%0ASet-Cookie:%20a=b",
    ];
    for bad in ids {
        for suffix in ["", "/messages", "/events", "/watch"] {
            let path = format!("/api/traces/{bad}{suffix}");
            let answer = raw(&address, &get(&path, "")).await;
            assert_refused(&path, &answer, &[400, 404]);
            cases += 1;
        }
        let path = format!("/api/traces/{bad}/cancel");
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        );
        assert_refused(&path, &raw(&address, request.as_bytes()).await, &[400, 404]);
        cases += 1;
    }
    // Raw `..` segments, which HTTP clients would normalise away.
    for path in [
        "/api/traces/../../../../etc/passwd",
        "/api/../../etc/passwd",
        "/../../etc/passwd",
        "/api/traces/%2e%2e/%2e%2e/etc/passwd",
        "/api/traces/./../api/traces",
    ] {
        assert_refused(path, &raw(&address, &get(path, "")).await, &[400, 404]);
        cases += 1;
    }

    // Oversized bodies: with a length, chunked, and a length far beyond what is sent.
    let big = format!("{{\"task\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let request = format!(
        "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{big}",
        big.len()
    );
    assert_refused(
        "2 MiB body",
        &raw(&address, request.as_bytes()).await,
        &[413],
    );
    let mut chunked = b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in big.as_bytes().chunks(64 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    assert_refused("2 MiB chunked body", &raw(&address, &chunked).await, &[413]);
    let lying = b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{\"task\": ";
    assert_refused("10 GB length", &raw(&address, lying).await, &[413, 400, 0]);
    cases += 3;

    // Oversized headers and URLs, and bytes that are not HTTP.
    // Headers are bounded by the HTTP layer's buffer (about 400 KiB); beyond it, refused.
    let header = format!("X-Junk: {}\r\n", "a".repeat(1024 * 1024));
    assert_refused(
        "1 MiB header",
        &raw(&address, &get("/api/traces", &header)).await,
        &[431, 400, 0],
    );
    let long = format!("/api/traces/{}", "a".repeat(100 * 1024));
    assert_refused(
        "100 KiB URL",
        &raw(&address, &get(&long, "")).await,
        &[414, 431, 400, 404, 0],
    );
    assert_refused(
        "garbage",
        &raw(&address, b"\x16\x03\x01\x02\x00 not http at all\r\n\r\n").await,
        &[400, 0],
    );
    assert_refused(
        "unknown method",
        &raw(
            &address,
            b"BREW /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await,
        &[405, 400, 404],
    );
    cases += 4;

    // WebSocket upgrades with a bad since_event_id are refused before the upgrade.
    let events = tokio::time::timeout(
        Duration::from_secs(30),
        raw(&address, &get(&format!("/api/traces/{id}/events"), "")),
    )
    .await
    .unwrap();
    let newest = serde_json::from_str::<Value>(&events.1).unwrap()["events"]
        .as_array()
        .unwrap()
        .len();
    for since in [
        "-1",
        "abc",
        "1e3",
        "18446744073709551616",
        "",
        "%00",
        &(newest + 1).to_string(),
    ] {
        let url = format!("ws://{address}/api/traces/{id}/watch?since_event_id={since}");
        match tokio_tungstenite::connect_async(&url).await {
            Ok(_) => panic!("since_event_id={since:?} was accepted"),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status().as_u16(), 400, "since_event_id={since:?}");
            }
            Err(other) => panic!("since_event_id={since:?}: {other}"),
        }
        cases += 1;
    }
    // A good one gets `connected` first, then the stored events.
    let url = format!("ws://{address}/api/traces/{id}/watch?since_event_id=0");
    let (mut socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(30), socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let first: Value = serde_json::from_str(first.to_text().unwrap()).unwrap();
    assert_eq!(first["event"], "connected");
    let _ = socket.close(None).await;

    // The server took all of it and still answers.
    server.assert_alive();
    let (status, _) = raw(&address, &get("/api/traces", "")).await;
    assert_eq!(status, 200);
    println!("HOSTILE-HTTP {}", json!({"hand_written_cases": cases}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_bind_needs_its_token_everywhere() {
    let site = Site::new();
    // Without a token, a public address is refused at start.
    let refused = site
        .env
        .command(&[
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--trace-dir",
            &site.env.arg("traces"),
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("token"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let token = "s3cret-token";
    let mut server = site.serve(&["--host", "0.0.0.0", "--token", token]);
    let address = server.address.clone();
    let id = site.trace_id.clone();
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let routes = [
        "/api/traces".to_owned(),
        format!("/api/traces/{id}"),
        format!("/api/traces/{id}/messages"),
        format!("/api/traces/{id}/events"),
        "/api/openapi.json".to_owned(),
        "/".to_owned(),
    ];
    for route in &routes {
        for (what, header) in [
            ("no token", String::new()),
            (
                "wrong token",
                "Authorization: Bearer s3cret-tokem\r\n".to_owned(),
            ),
            (
                "token prefix",
                "Authorization: Bearer s3cret\r\n".to_owned(),
            ),
            (
                "basic auth",
                "Authorization: Basic czNjcmV0LXRva2Vu\r\n".to_owned(),
            ),
            ("empty bearer", "Authorization: Bearer \r\n".to_owned()),
        ] {
            let answer = raw(&address, &get(route, &header)).await;
            assert_refused(&format!("{route} with {what}"), &answer, &[401]);
        }
        let (status, _) = raw(&address, &get(route, &bearer)).await;
        assert_eq!(status, 200, "{route} with the token");
    }
    // The query token is for pages and the watch only, not for the API.
    let (status, _) = raw(&address, &get(&format!("/api/traces?token={token}"), "")).await;
    assert_eq!(status, 401);
    // Runs cannot be started or steered without it.
    let post = "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"task\": \"hi!\"}";
    assert_refused(
        "start without token",
        &raw(&address, post.as_bytes()).await,
        &[401],
    );
    let cancel = format!(
        "POST /api/traces/{id}/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    );
    assert_refused(
        "cancel without token",
        &raw(&address, cancel.as_bytes()).await,
        &[401],
    );
    // The watch: refused without the token, open with it in the query.
    let url = format!("ws://{address}/api/traces/{id}/watch");
    match tokio_tungstenite::connect_async(&url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 401);
        }
        other => panic!("a watch without the token: {other:?}"),
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("{url}?token={token}"))
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(30), socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(first.to_text().unwrap().contains("connected"));
    let _ = socket.close(None).await;
    server.assert_alive();
    // Per route: five refused, one allowed; then the query token, start, cancel, two watches;
    // and the refused start of the server itself.
    let cases = routes.len() * 6 + 6;
    println!("HOSTILE-HTTP {}", json!({"hand_written_cases": cases}));
}
