//! A served run's MCP server asks the person a question (the official SDK's stdio server
//! `tests/mcp/asking.mjs`), the question waits over HTTP beside the run's approvals, a wrong
//! answer is refused with a 400 naming the field, and the right one reaches the server, whose
//! tool result carries it.

use std::time::{Duration, Instant};

use agent_test_support::cli::Served;
use serde_json::{Value, json};

use crate::agent_env;
use crate::mcp_oauth::{all_text, test_server};

/// Polls `GET path` until `done` holds, for at most 30 seconds.
fn wait_for(server: &Served, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, answer) = server.request("GET", path, None);
        if status == 200 && done(&answer) {
            return answer;
        }
        assert!(Instant::now() < deadline, "{answer}\n{}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_server_question_of_a_served_run_is_answered_over_http() {
    let env = agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.asking]\ncommand = \"node\"\nargs = [{:?}]\n",
            test_server("asking.mjs")
        ),
    );
    let turn = [
        json!({"tool_calls": [{"name": "mcp__asking__greet", "arguments": {}}]}),
        json!({"text": "Greeted."}),
    ];
    let script = json!({"turns": [turn[0], turn[1], turn[0], turn[1]], "fallback": "Done."});
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    let server = env.serve(&["--script", &script, "--workspace", &work]);
    let (status, started) = server.request("POST", "/api/traces", Some(&json!({"task": "Greet"})));
    assert_eq!(status, 201, "{started}\n{}", server.log());
    let trace_id = started["trace_id"].as_str().unwrap().to_owned();
    let list = format!("/api/traces/{trace_id}/elicitations");

    let listed = wait_for(&server, &list, |answer| {
        answer["elicitations"]
            .as_array()
            .is_some_and(|l| !l.is_empty())
    });
    let question = &listed["elicitations"][0];
    assert_eq!(question["server"], "asking", "{listed}");
    assert_eq!(question["message"], "Who is there?");
    assert_eq!(question["mode"], "form");
    assert_eq!(
        question["requested_schema"]["properties"]["colour"]["enum"],
        json!(["red", "green", "blue"])
    );
    // The trace's detail lists it too, beside the pending approvals.
    let (_, detail) = server.request("GET", &format!("/api/traces/{trace_id}"), None);
    assert_eq!(detail["pending_elicitations"][0]["id"], question["id"]);
    let answer = format!("{list}/{}", question["id"].as_str().unwrap());

    // Content that does not fit the schema is refused, and the question keeps waiting.
    for (content, says) in [
        (json!({"colour": "blue"}), "`name` is required"),
        (json!({"name": "Ada", "colour": "purple"}), "must be one of"),
        (json!({"name": 7}), "must be a string"),
    ] {
        let body = json!({"action": "accept", "content": content});
        let (status, refused) = server.request("POST", &answer, Some(&body));
        assert_eq!(status, 400, "{refused}");
        assert_eq!(refused["error"]["code"], "invalid_content");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
    let (status, _) = server.request(
        "POST",
        &format!("{list}/elicitation-999"),
        Some(&json!({"action": "decline"})),
    );
    assert_eq!(status, 404);
    let (status, _) = server.request("POST", &answer, Some(&json!({"action": "maybe"})));
    assert_eq!(status, 400);

    let body = json!({"action": "accept", "content": {"name": "Ada", "colour": "blue"}});
    let (status, recorded) = server.request("POST", &answer, Some(&body));
    assert_eq!(status, 200, "{recorded}");
    assert_eq!(recorded["action"], "accept");
    let (status, _) = server.request("POST", &answer, Some(&body));
    assert_eq!(status, 409);
    wait_for(&server, &format!("/api/traces/{trace_id}"), |detail| {
        detail["trace"]["status"] == "completed"
    });
    assert!(
        all_text(&env.traces()).contains("Hello Ada, who likes blue."),
        "{}",
        server.log()
    );

    // A declined question reaches the server as declined.
    let (_, started) = server.request("POST", "/api/traces", Some(&json!({"task": "Again"})));
    let second = started["trace_id"].as_str().unwrap().to_owned();
    let list = format!("/api/traces/{second}/elicitations");
    let listed = wait_for(&server, &list, |answer| {
        answer["elicitations"]
            .as_array()
            .is_some_and(|l| !l.is_empty())
    });
    let id = listed["elicitations"][0]["id"].as_str().unwrap();
    let (status, _) = server.request(
        "POST",
        &format!("{list}/{id}"),
        Some(&json!({"action": "decline"})),
    );
    assert_eq!(status, 200);
    wait_for(&server, &format!("/api/traces/{second}"), |detail| {
        detail["trace"]["status"] == "completed"
    });
    assert!(all_text(&env.traces()).contains("No answer: decline."));
}

/// Sends one HTTP/1.1 request to `address`; the status and the body as JSON.
fn request(address: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).unwrap().parse().unwrap();
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or_default())
}

#[test]
fn a_server_question_of_a_run_with_serve_is_answered_over_http() {
    use std::io::BufRead;
    let env = agent_env();
    env.write(
        "agent.toml",
        &format!(
            "[mcp.servers.asking]\ncommand = \"node\"\nargs = [{:?}]\n",
            test_server("asking.mjs")
        ),
    );
    let script = json!([
        {"tool_calls": [{"name": "mcp__asking__greet", "arguments": {}}]},
        {"text": "Greeted."}
    ]);
    let script = env.write("script.json", &script.to_string());
    let work = env.work();
    let args = [
        "run",
        "--script",
        &script,
        "--workspace",
        &work,
        "--serve",
        "0",
        "Greet me",
    ];
    let mut child = env
        .command(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = std::io::BufReader::new(child.stderr.take().unwrap());
    let page = loop {
        let mut line = String::new();
        assert!(log.read_line(&mut line).unwrap() > 0, "the run ended early");
        if let Some(page) = line.trim().strip_prefix("this run: ") {
            break page.to_owned();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
    let (base, trace_id) = page.split_once("/#/traces/").unwrap();
    let address = base.trim_start_matches("http://").to_owned();
    let list = format!("/api/traces/{trace_id}/elicitations");
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        let (_, listed) = request(&address, "GET", &list, None);
        if let Some(id) = listed["elicitations"][0]["id"].as_str() {
            break id.to_owned();
        }
        assert!(Instant::now() < deadline, "{listed}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let body = json!({"action": "accept", "content": {"name": "Ada", "colour": "red"}});
    let (status, answer) = request(&address, "POST", &format!("{list}/{id}"), Some(&body));
    assert_eq!(status, 200, "{answer}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !all_text(&env.traces()).contains("Hello Ada, who likes red.") {
        assert!(
            Instant::now() < deadline,
            "the answer did not reach the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The run serves its viewer until Ctrl-C; what was to be seen is seen.
    let _ = child.kill();
    let _ = child.wait();
}
