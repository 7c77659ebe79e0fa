//! `agent serve` as a server you can trust: risky calls of runs started over HTTP wait for
//! approval unless `--approval` says otherwise, runs work only under the `--workspace-root`
//! folders, a bad `--workspace` is a usage error, a server without a model answers run routes
//! with a 4xx, damaged traces are 410, and a trace folder the user cannot write is still served
//! (and shown, and listed).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

use agent_test_support::cli::{CliEnv, Served, code, stderr, stdout};
use serde_json::{Value, json};

use crate::agent_env;

/// A script whose runs, one after the other, each write `shell.txt` with the shell and answer.
fn script(env: &CliEnv) -> String {
    let run = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > shell.txt"}}]}),
        json!({"text": "Done."}),
    ];
    // Made beforehand: without user namespaces the sandbox lets commands write files that
    // exist at the top of the workspace, not add new entries there.
    for workspace in ["work", "work/sub", "elsewhere"] {
        env.write(&format!("{workspace}/shell.txt"), "");
    }
    let turns: Vec<Value> = (0..6).flat_map(|_| run.clone()).collect();
    let script = json!({"turns": turns, "fallback": "Done."});
    env.write("script.json", &script.to_string())
}

/// Whether a run's shell call wrote `shell.txt` in `workspace`.
fn wrote(env: &CliEnv, workspace: &str) -> bool {
    std::fs::read_to_string(env.path(workspace).join("shell.txt")).is_ok_and(|text| text == "hi\n")
}

/// Polls `GET /api/traces/{id}` until `done` holds, for at most 30 seconds.
fn wait_until(server: &Served, trace_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, detail) = server.request("GET", &format!("/api/traces/{trace_id}"), None);
        if status == 200 && done(&detail) {
            return detail;
        }
        assert!(Instant::now() < deadline, "{detail}\n{}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start(server: &Served, body: &Value) -> String {
    let (status, answer) = server.request("POST", "/api/traces", Some(body));
    assert_eq!(status, 201, "{answer}\n{}", server.log());
    answer["trace_id"].as_str().unwrap().to_owned()
}

fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |detail| detail["trace"]["status"] == status
}

#[test]
fn risky_calls_of_runs_started_over_http_wait_for_approval_by_default() {
    let env = agent_env();
    let script = script(&env);
    let work = env.work();
    let server = env.serve(&["--script", &script, "--workspace", &work]);
    assert!(server.log().contains("--approval ask"), "{}", server.log());
    let trace_id = start(&server, &json!({"task": "Run it"}));
    // The trace says `waiting` a moment before the call is listed: wait for both.
    let detail = wait_until(&server, &trace_id, |detail| {
        status_is("waiting")(detail) && detail["pending_approvals"][0].is_object()
    });
    let call = &detail["pending_approvals"][0];
    assert_eq!(call["tool_name"], "bash", "{detail}");
    assert!(!wrote(&env, "work"));
    let url = format!(
        "/api/traces/{trace_id}/approvals/{}",
        call["tool_call_id"].as_str().unwrap()
    );
    let (status, _) = server.request("POST", &url, Some(&json!({"approve": true})));
    assert_eq!(status, 200);
    wait_until(&server, &trace_id, status_is("completed"));
    assert!(wrote(&env, "work"));
    // A request may not loosen the server's mode.
    for approval in [json!(false), json!("auto")] {
        let body = json!({"task": "Run it", "approval": approval});
        let (status, answer) = server.request("POST", "/api/traces", Some(&body));
        assert_eq!(status, 403, "{answer}");
        assert_eq!(answer["error"]["code"], "approval_not_allowed");
    }
}

#[test]
fn approval_never_refuses_risky_calls_and_auto_runs_them() {
    let env = agent_env();
    let script = script(&env);
    let work = env.work();
    let never = env.serve(&[
        "--script",
        &script,
        "--workspace",
        &work,
        "--approval",
        "never",
    ]);
    let trace_id = start(&never, &json!({"task": "Run it"}));
    wait_until(&never, &trace_id, status_is("completed"));
    assert!(!wrote(&env, "work"));
    let (_, messages) = never.request("GET", &format!("/api/traces/{trace_id}/messages"), None);
    let refused = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        refused["content"].as_str().unwrap().contains("never"),
        "the model reads why: {refused}"
    );
    drop(never);

    let auto = env.serve(&[
        "--script",
        &script,
        "--workspace",
        &work,
        "--approval",
        "auto",
    ]);
    let trace_id = start(&auto, &json!({"task": "Run it"}));
    wait_until(&auto, &trace_id, status_is("completed"));
    assert!(wrote(&env, "work"));
    // A stricter mode may be asked for.
    let strict = start(&auto, &json!({"task": "Run it", "approval": "ask"}));
    wait_until(&auto, &strict, status_is("waiting"));
}

#[test]
fn a_run_workspace_must_lie_under_a_workspace_root() {
    let env = agent_env();
    let script = script(&env);
    std::fs::create_dir_all(env.path("work/sub")).unwrap();
    std::fs::create_dir_all(env.path("elsewhere")).unwrap();
    std::os::unix::fs::symlink(env.path("elsewhere"), env.path("work/link")).unwrap();
    let work = env.work();
    let refused = |server: &Served, workspaces: &[&str]| {
        for workspace in workspaces {
            let body = json!({"task": "Run it", "workspace": workspace});
            let (status, answer) = server.request("POST", "/api/traces", Some(&body));
            assert_eq!(status, 403, "{workspace}: {answer}");
            assert_eq!(answer["error"]["code"], "workspace_not_allowed");
        }
    };
    // Without --workspace-root the server's own workspace is the only root.
    let server = env.serve(&[
        "--script",
        &script,
        "--workspace",
        &work,
        "--approval",
        "auto",
    ]);
    let elsewhere = env.arg("elsewhere");
    refused(
        &server,
        &[
            "../../../etc",
            "/etc",
            "../..",
            "/",
            "..",
            "../elsewhere",
            &elsewhere,
            "link",
        ],
    );
    let trace_id = start(&server, &json!({"task": "Run it", "workspace": "sub"}));
    wait_until(&server, &trace_id, status_is("completed"));
    assert!(wrote(&env, "work/sub"));
    drop(server);

    // With --workspace-root, the folders under it: `..` that stays under it and a link to a
    // folder under it are fine.
    let root = env.root().to_string_lossy().into_owned();
    let roots = [
        "--script",
        &script,
        "--workspace",
        &work,
        "--workspace-root",
        &root,
        "--approval",
        "auto",
    ];
    let server = env.serve(&roots);
    refused(&server, &["../../../etc", "/etc", "../..", "/"]);
    let trace_id = start(
        &server,
        &json!({"task": "Run it", "workspace": "../elsewhere"}),
    );
    wait_until(&server, &trace_id, status_is("completed"));
    assert!(wrote(&env, "elsewhere"));
    start(&server, &json!({"task": "Run it", "workspace": "link"}));
}

/// Runs `agent <args>`, which must end by itself within a minute.
async fn ends(env: &CliEnv, args: &[&str]) -> std::process::Output {
    tokio::time::timeout(Duration::from_secs(60), env.run(args))
        .await
        .unwrap_or_else(|_| panic!("agent {args:?} did not end"))
}

#[tokio::test]
async fn a_bad_serve_workspace_or_root_is_a_usage_error() {
    let env = agent_env();
    let script = script(&env);
    env.write("file.txt", "not a folder");
    std::fs::create_dir_all(env.path("elsewhere")).unwrap();
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().to_string_lossy().into_owned();
    let missing = env.arg("missing");
    let file = env.arg("file.txt");
    let model = ["--script", script.as_str()];
    let elsewhere = env.arg("elsewhere");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--workspace", &missing], "does not exist"),
        (vec!["--workspace", &file], "not a folder"),
        (
            vec!["--workspace", &outside, "--workspace-root", &elsewhere],
            "--workspace-root",
        ),
        (vec!["--workspace-root", &missing], "--workspace-root"),
        (vec!["--workspace-root", &file], "--workspace-root"),
    ];
    for (flags, says) in cases {
        for with_model in [false, true] {
            let mut args = vec!["serve", "--port", "0"];
            if with_model {
                args.extend(model);
            }
            args.extend(&flags);
            let output = ends(&env, &args).await;
            assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
            assert!(
                stderr(&output).contains(says),
                "{args:?}: {}",
                stderr(&output)
            );
        }
    }
    // A workspace outside the current folder is its own root; with roots, it lies under one.
    let server = env.serve(&["--script", &script, "--workspace", &outside]);
    let (status, _) = server.request("GET", "/api/traces", None);
    assert_eq!(status, 200);
    drop(server);
    let server = env.serve(&[
        "--script",
        &script,
        "--workspace",
        &outside,
        "--workspace-root",
        &outside,
        "--workspace-root",
        &elsewhere,
    ]);
    let (status, _) = server.request("GET", "/api/traces", None);
    assert_eq!(status, 200);
}

/// Runs a short task into the trace folder and returns its trace id.
async fn a_trace(env: &CliEnv) -> String {
    let script = env.write("done.json", r#"{"turns": [], "fallback": "All done."}"#);
    let output = env
        .run(&[
            "run",
            "--script",
            &script,
            "--workspace",
            &env.work(),
            "--json",
            "Read",
        ])
        .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let run: Value = serde_json::from_str(&stdout(&output)).unwrap();
    run["trace_id"].as_str().unwrap().to_owned()
}

/// How a trace folder is damaged, and the file the error must name.
type Damage = (&'static str, fn(&Path), &'static str);

fn damages() -> Vec<Damage> {
    fn log(dir: &Path) -> std::path::PathBuf {
        dir.join("events.jsonl")
    }
    vec![
        (
            "garbage inside the event log",
            |dir| {
                let text = std::fs::read_to_string(log(dir)).unwrap();
                let (first, rest) = text.split_at(text.find('\n').unwrap() + 1);
                std::fs::write(log(dir), format!("{first}{{not an event\n{rest}")).unwrap();
            },
            "events.jsonl",
        ),
        (
            "an event log of binary garbage",
            |dir| std::fs::write(log(dir), b"\x00\xff\xfe\n\x01\x02\n").unwrap(),
            "events.jsonl",
        ),
        (
            "an event log torn inside its first line",
            |dir| std::fs::write(log(dir), "{\"event_id\": 1, \"ev").unwrap(),
            "events.jsonl",
        ),
        (
            "the last event repeated",
            |dir| {
                let text = std::fs::read_to_string(log(dir)).unwrap();
                let last = text.trim_end().rsplit('\n').next().unwrap().to_owned();
                std::fs::write(log(dir), format!("{text}{last}\n")).unwrap();
            },
            "events.jsonl",
        ),
        (
            "no event log",
            |dir| std::fs::remove_file(log(dir)).unwrap(),
            "events.jsonl",
        ),
        (
            "an event log that is a folder",
            |dir| {
                std::fs::remove_file(log(dir)).unwrap();
                std::fs::create_dir(log(dir)).unwrap();
            },
            "events.jsonl",
        ),
        (
            "a meta.json that does not parse",
            |dir| std::fs::write(dir.join("meta.json"), "{\"trace_id\": ").unwrap(),
            "meta.json",
        ),
        (
            "a meta.json that is a folder",
            |dir| {
                std::fs::remove_file(dir.join("meta.json")).unwrap();
                std::fs::create_dir(dir.join("meta.json")).unwrap();
            },
            "meta.json",
        ),
        (
            "a goal.json of another shape",
            |dir| std::fs::write(dir.join("goal.json"), "[1, 2, 3]").unwrap(),
            "goal.json",
        ),
    ]
}

#[tokio::test]
async fn a_read_only_server_answers_4xx_and_damaged_traces_are_410() {
    let env = agent_env();
    let damages = damages();
    let mut ids = Vec::new();
    for _ in 0..=damages.len() {
        ids.push(a_trace(&env).await);
    }
    for ((_, damage, _), id) in damages.iter().zip(&ids) {
        damage(&env.traces().join(id));
    }
    let healthy = ids.last().unwrap().clone();
    let script = script(&env);
    let read_only = env.serve(&[]);
    assert!(read_only.log().contains("read-only"), "{}", read_only.log());
    let with_model = env.serve(&["--script", &script, "--workspace", &env.work()]);
    for server in [&read_only, &with_model] {
        for ((what, _, file), id) in damages.iter().zip(&ids) {
            let url = format!("/api/traces/{id}");
            let mut routes: Vec<(&str, String, Option<Value>)> = [
                url.clone(),
                format!("{url}/messages"),
                format!("{url}/messages?goal_id=1"),
                format!("{url}/events"),
                format!("{url}/events?since_event_id=1"),
                format!("{url}/watch"),
            ]
            .into_iter()
            .map(|route| ("GET", route, None))
            .collect();
            routes.push(("POST", format!("{url}/fork"), Some(json!({"goal": "1"}))));
            routes.push(("POST", format!("{url}/cancel"), None));
            if server.log().contains("runs started over HTTP use") {
                routes.push(("POST", format!("{url}/resume"), None));
                routes.push((
                    "POST",
                    format!("{url}/messages"),
                    Some(json!({"content": "Go"})),
                ));
            }
            for (method, route, body) in routes {
                let (status, answer) = server.request(method, &route, body.as_ref());
                assert_eq!(status, 410, "{what}: {method} {route}: {answer}");
                assert_eq!(answer["error"]["code"], "trace_unreadable");
                let message = answer["error"]["message"].as_str().unwrap();
                assert!(message.contains(file), "{what}: {route}: {message}");
                assert!(
                    !message.contains(&env.root().to_string_lossy().into_owned()),
                    "{what}: {route}: the server's folders are not told: {message}"
                );
            }
        }
        // The list shows what its meta.json tells; the trace itself says it is unreadable.
        let (status, list) = server.request("GET", "/api/traces", None);
        assert_eq!(status, 200, "{list}");
        assert!(list.to_string().contains(&healthy), "{list}");
    }
    // The read-only server refuses every route that would run something, saying why.
    let url = format!("/api/traces/{healthy}");
    for (route, body) in [
        ("/api/traces".to_owned(), Some(json!({"task": "Do it"}))),
        (format!("{url}/resume"), None),
        (format!("{url}/resume"), Some(json!({"max_iterations": 2}))),
        (format!("{url}/messages"), Some(json!({"content": "Go on"}))),
    ] {
        let (status, answer) = read_only.request("POST", &route, body.as_ref());
        assert_eq!(status, 403, "{route}: {answer}");
        assert_eq!(answer["error"]["code"], "runs_unavailable");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("read-only")
        );
    }
    let (status, answer) = read_only.request("POST", &format!("{url}/cancel"), None);
    assert_eq!(status, 409, "{answer}");
    let approval = format!("{url}/approvals/call_1");
    let (status, answer) = read_only.request("POST", &approval, Some(&json!({"approve": true})));
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read-only")
    );
    // A fork runs nothing: a read-only server makes it, to be resumed where a model is.
    let fork = Some(json!({"message_sequence": 1}));
    let (status, answer) = read_only.request("POST", &format!("{url}/fork"), fork.as_ref());
    assert_eq!(status, 201, "{answer}");
}

/// Gives the tree under `path` these permissions: folders `dirs`, files `files`.
fn chmod_tree(path: &Path, dirs: u32, files: u32) {
    let mode = if path.is_dir() { dirs } else { files };
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chmod_tree(&entry.unwrap().path(), dirs, files);
        }
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn a_trace_folder_the_user_cannot_write_is_listed_shown_and_served() {
    let env = agent_env();
    let trace_id = a_trace(&env).await;
    let script = script(&env);
    // Everyone may read the environment; nobody may write the trace folder.
    chmod_tree(env.root(), 0o755, 0o644);
    chmod_tree(&env.traces(), 0o555, 0o444);
    // A privileged user writes whatever the permissions say: run as `nobody` then.
    let probe = std::fs::OpenOptions::new()
        .append(true)
        .open(env.traces().join(&trace_id).join("events.jsonl"));
    let as_user = |command: &mut std::process::Command| {
        if probe.is_ok() {
            command.uid(65534).gid(65534);
        }
    };
    for args in [
        vec!["traces"],
        vec!["traces", "--json"],
        vec!["show", &trace_id],
        vec!["show", &trace_id[..8], "--json"],
    ] {
        let mut command = env.command(&args);
        as_user(&mut command);
        let output = command.output().unwrap();
        assert_eq!(code(&output), 0, "{args:?}: {}", stderr(&output));
        assert!(stdout(&output).contains(&trace_id[..8]), "{args:?}");
    }
    for args in [
        vec![],
        vec!["--script", script.as_str(), "--workspace", "work"],
    ] {
        let server = env.serve_with(&args, as_user);
        let (status, detail) = server.request("GET", &format!("/api/traces/{trace_id}"), None);
        assert_eq!(status, 200, "{detail}\n{}", server.log());
        let (status, events) =
            server.request("GET", &format!("/api/traces/{trace_id}/events"), None);
        assert_eq!(status, 200, "{events}");
        // It cannot write there, so it runs nothing, and says so.
        assert!(server.log().contains("read-only"), "{}", server.log());
        let (status, answer) =
            server.request("POST", "/api/traces", Some(&json!({"task": "Do it"})));
        assert_eq!(status, 403, "{answer}");
        let fork = json!({"message_sequence": 1});
        let route = format!("/api/traces/{trace_id}/fork");
        let (status, answer) = server.request("POST", &route, Some(&fork));
        assert_eq!(status, 403, "{answer}");
        assert_eq!(answer["error"]["code"], "not_writable");
    }
    chmod_tree(&env.traces(), 0o755, 0o644);
}

#[test]
fn approval_rules_of_agent_toml_apply_to_runs_started_over_http() {
    let env = agent_env();
    env.write(
        "agent.toml",
        "[approvals]\nallow = [\"bash(touch)\"]\ndeny = [\"bash(rm)\"]\n",
    );
    let run = |command: &str| {
        [
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}),
            json!({"text": "Done."}),
        ]
    };
    let turns: Vec<Value> = [run("touch out/allowed.txt"), run("rm -f work.txt")]
        .into_iter()
        .flatten()
        .collect();
    let script = env.write("rules.json", &json!({"turns": turns}).to_string());
    let work = env.work();
    // The command writes in a folder of the workspace: without user namespaces the sandbox
    // lets commands change top-level entries, not add new ones.
    std::fs::create_dir_all(env.path("work/out")).unwrap();
    let server = env.serve(&["--script", &script, "--workspace", &work]);
    // Allowed: runs without waiting for a decision, although the mode is `ask`.
    let allowed = start(&server, &json!({"task": "Touch"}));
    wait_until(&server, &allowed, status_is("completed"));
    assert!(env.path("work/out/allowed.txt").exists());
    // Denied: refused with the rule named, without asking.
    let denied = start(&server, &json!({"task": "Remove"}));
    wait_until(&server, &denied, status_is("completed"));
    let (_, messages) = server.request("GET", &format!("/api/traces/{denied}/messages"), None);
    let tool = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(
        tool["content"].as_str().unwrap().contains("bash(rm)"),
        "{tool}"
    );
    drop(server);

    // In `never` mode an allow rule runs nothing.
    std::fs::remove_file(env.path("work/out/allowed.txt")).unwrap();
    let never = env.serve(&[
        "--script",
        &script,
        "--workspace",
        &work,
        "--approval",
        "never",
    ]);
    let refused = start(&never, &json!({"task": "Touch"}));
    wait_until(&never, &refused, status_is("completed"));
    assert!(!env.path("work/out/allowed.txt").exists());
}

/// `GET /api/traces` on a new connection: the status and how long the answer took.
fn timed_list(address: &str) -> (u16, Duration) {
    use std::io::{Read, Write};
    let started = Instant::now();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /api/traces HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, started.elapsed())
}

#[test]
fn idle_connections_past_the_open_file_limit_do_not_keep_clients_out() {
    use std::io::{Read, Write};
    agent_test_support::fds::raise_own_open_file_limit(2_048);
    let env = agent_env();
    let mut server = env.serve(&[]);
    // The server runs under the usual default open-file limit, 1,024, with its default cap.
    let pid = server.child().id();
    agent_test_support::fds::set_open_file_limit(pid, 1_024);
    assert_eq!(agent_test_support::fds::open_file_limits(pid).0, 1_024);
    let address = server.url.trim_start_matches("http://").to_owned();
    let prober = {
        let address = address.clone();
        std::thread::spawn(move || {
            let mut times = Vec::new();
            for _ in 0..40 {
                let (status, took) = timed_list(&address);
                assert_eq!(status, 200);
                times.push(took);
                std::thread::sleep(Duration::from_millis(50));
            }
            times
        })
    };
    let mut idle = Vec::new();
    for n in 0..1_100 {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        if n % 3 == 0 {
            // Part of a head, as a slow client sends it.
            let _ = stream.write_all(b"GET /api/tra");
        }
        idle.push(stream);
    }
    let times = prober.join().unwrap();
    let (status, after) = timed_list(&address);
    assert_eq!(status, 200, "{}", server.log());
    let slowest = times.iter().max().copied().unwrap_or_default();
    let mut open = 0;
    for stream in &mut idle {
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0_u8; 1];
        if matches!(stream.read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock) {
            open += 1;
        }
    }
    eprintln!(
        "agent serve under an open-file limit of 1,024, 1,100 idle connections: {} requests \
         answered meanwhile, the slowest in {slowest:?}; one more afterwards in {after:?}; {open} \
         idle connections still open",
        times.len()
    );
    assert!(slowest < Duration::from_secs(1), "{times:?}");
    assert!(open <= 512, "{open} idle connections open");
    assert!(
        !server.log().contains("accepting a connection failed"),
        "{}",
        server.log()
    );
}

#[test]
fn the_connection_cap_and_head_timeout_are_checked() {
    let env = agent_env();
    let output = env
        .command(&["serve", "--port", "0", "--max-connections", "0"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--max-connections"),
        "{}",
        stderr(&output)
    );
    // A partial head is closed after `--header-timeout`.
    let server = env.serve(&["--header-timeout", "1"]);
    let address = server.url.trim_start_matches("http://");
    let mut partial = std::net::TcpStream::connect(address).unwrap();
    std::io::Write::write_all(&mut partial, b"GET / HTTP/1.1\r\n").unwrap();
    partial
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut partial, &mut rest);
    let took = started.elapsed();
    eprintln!("--header-timeout 1: a partial head closed after {took:?}");
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A run over HTTP may ask for whole answers (`"stream": false`) and a stricter sandbox than the
/// server's: the model server is asked without streaming, and a command of a `read-only` run
/// cannot write in the workspace, where the same command of a run with the server's sandbox
/// can. A looser sandbox is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_may_ask_for_whole_answers_and_a_stricter_sandbox() {
    use agent_test_support::mock_model::{MockModelServer, Turn};
    let model = MockModelServer::start().await;
    let write = || Turn::tool_call("call_1", "bash", json!({"command": "echo hi > shell.txt"}));
    for _ in 0..2 {
        model.push(write());
        model.push(Turn::text("Done."));
    }
    let env = agent_env();
    env.write("work/shell.txt", "");
    let work = env.work();
    let base = model.openai_base();
    let args = [
        "--provider",
        "openai",
        "--base-url",
        &base,
        "--api-key",
        "sk-test",
        "--model",
        "gpt-4o-mini",
        "--workspace",
        &work,
        "--approval",
        "auto",
    ];
    // The server and the requests block: the mock model server runs on the other thread.
    let server = tokio::task::block_in_place(|| env.serve(&args));
    let ask = |body: Value| {
        tokio::task::block_in_place(|| server.request("POST", "/api/traces", Some(&body)))
    };
    let (status, answer) = ask(json!({"task": "Loosen", "sandbox": "off"}));
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"]["code"], "sandbox_not_allowed");

    let (status, answer) =
        ask(json!({"task": "Read-only", "sandbox": "read-only", "stream": false}));
    assert_eq!(status, 201, "{answer}");
    let strict = answer["trace_id"].as_str().unwrap().to_owned();
    tokio::task::block_in_place(|| wait_until(&server, &strict, status_is("completed")));
    assert!(
        !wrote(&env, "work"),
        "a read-only run wrote in the workspace"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests.iter().all(|request| !request.is_stream()),
        "a run with `stream: false` asked for a stream"
    );
    let (_, messages) = tokio::task::block_in_place(|| {
        server.request("GET", &format!("/api/traces/{strict}/messages"), None)
    });
    let tool = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let said = tool["content"].as_str().unwrap();
    assert!(
        said.contains("Read-only file system") && said.contains("read-only sandbox"),
        "{tool}"
    );

    // The server's own sandbox (workspace-write) lets the same command write; it streams.
    let (status, answer) = ask(json!({"task": "Default"}));
    assert_eq!(status, 201, "{answer}");
    let default = answer["trace_id"].as_str().unwrap().to_owned();
    tokio::task::block_in_place(|| wait_until(&server, &default, status_is("completed")));
    assert!(wrote(&env, "work"));
    assert!(
        model.requests()[requests.len()..]
            .iter()
            .all(|r| r.is_stream())
    );
}
