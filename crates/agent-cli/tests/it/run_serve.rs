//! `agent run --serve`: the viewer of the run stays served after the run ends, until Ctrl-C, so
//! an open page keeps the result; the exit code is still the run's. `agent demo` serves the
//! viewer the same way and names its trace's page.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

use agent_test_support::cli::code;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::agent_env;

/// `GET path` on `address` (host:port); the body.
fn get(address: &str, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// Reads the child's stderr up to the line that starts with `prefix`; returns the word that
/// follows it and everything read so far.
fn first_word_after(child: &mut std::process::Child, prefix: &str) -> (String, String) {
    let mut log = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(log.read_line(&mut line).unwrap() > 0, "exited: {seen}");
        seen.push_str(&line);
        if let Some(rest) = line.strip_prefix(prefix) {
            let word = rest.split_whitespace().next().unwrap().to_owned();
            return (word, seen);
        }
    }
}

#[test]
fn the_viewer_keeps_serving_after_the_run_until_ctrl_c() {
    let env = agent_env();
    let script = env.write("script.json", &json!([{"text": "All done."}]).to_string());
    let mut child = env
        .command(&[
            "run",
            "--provider",
            "scripted",
            "--script",
            &script,
            "--serve",
            "0",
            "Do it",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (page, seen) = first_word_after(&mut child, "the run ended; still serving ");
    // The page named is the trace's own page of the viewer.
    let (base, trace_id) = page.split_once("/#/traces/").unwrap();
    assert!(seen.contains(&format!("this run: {page}")), "{seen}");
    let address = base.trim_start_matches("http://");
    let trace = get(address, &format!("/api/traces/{trace_id}"));
    assert!(trace.starts_with("HTTP/1.1 200"), "{trace}");
    assert!(trace.contains("\"status\":\"completed\""), "{trace}");
    assert!(get(address, "/").contains("<html"), "the viewer page");
    // Still there a moment later.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "{seen}");

    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(code(&output), 0);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "All done.\n");
}

#[test]
fn the_demo_names_the_viewer_page_of_its_trace_and_serves_it() {
    let env = agent_env();
    let traces = env.path("traces");
    let mut child = env
        .command(&[
            "demo",
            "--port",
            "0",
            "--trace-dir",
            traces.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (page, seen) = first_word_after(&mut child, "viewer: ");
    // The link is the demo trace's page, on the port the system gave.
    let (base, trace_id) = page
        .split_once("/#/traces/")
        .unwrap_or_else(|| panic!("not a trace page: {page}"));
    assert!(seen.contains(&format!("trace {trace_id}: ")), "{seen}");
    let address = base.trim_start_matches("http://");
    assert!(!address.ends_with(":0"), "{page}");
    let trace = get(address, &format!("/api/traces/{trace_id}"));
    assert!(trace.starts_with("HTTP/1.1 200"), "{trace}");
    assert!(
        trace.contains(&format!("\"trace_id\":\"{trace_id}\"")),
        "{trace}"
    );
    assert!(get(address, "/").contains("<html"), "the viewer page");
    assert!(child.try_wait().unwrap().is_none(), "{seen}");

    child.kill().unwrap();
    child.wait().unwrap();
}
