//! The crash matrix: the `agent` process, running a scripted multi-goal task with an
//! exploration, is killed with SIGKILL at a random moment, then checked and resumed.
//!
//! Each iteration runs the task either with `agent run` or through `agent serve` (started over
//! HTTP), alternately. Scripted delays spread the work over a few seconds, so kills land in model
//! calls, tool calls, commits, the exploration's branches or the merge. Just before the kill the
//! complete commits of every `events.jsonl` are read: those are acknowledged. After the kill:
//!
//! - every trace folder loads through the store, and `agent show <id> --json` works;
//! - `agent resume <id>` finishes the run (`completed`), its interrupted exploration included;
//! - every acknowledged event is still there, unchanged, and every acknowledged message loads;
//! - event ids are dense (1, 2, 3, ...: none duplicated, none missing) in every trace;
//! - every tool call of every trace has exactly one result, and so does the context the model
//!   is shown.
//!
//! `CRASH_MATRIX_ITERATIONS` sets the number of kills (5 by default; `cargo xtask soak` runs 50)
//! and `CRASH_MATRIX_SEED` replays a run. The test prints one `CRASH-MATRIX {json}` summary line.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent_execution::{Role, TraceFilter, TraceStatus, TraceStore};
use agent_llm::ChatMessage;
use agent_runner::ContextBudget;
use agent_runner::context::{ContextInput, build_context};
use agent_store_fs::FileSystemTraceStore;
use agent_test_support::cli::{CliEnv, build_agent};
use serde_json::{Value, json};

/// The task; the routes of the branches key on their assignments.
const TASK: &str = "Prepare the report files, explore two ways to count, and check the result";
const BRANCH_A: &str = "Count with a tally";
const BRANCH_B: &str = "Count with a sort";

/// A small xorshift generator: the kills are random but replayable from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// The scripted model of the run: four goals, files written and read, commands, an exploration
/// with two branches, each turn after a random delay.
fn run_script(rng: &mut Rng) -> Value {
    let mut delay = || 40 + rng.below(160);
    let turn = |delay: u64, name: &str, arguments: Value| json!({"delay_ms": delay, "tool_calls": [{"name": name, "arguments": arguments}]});
    let turns = vec![
        turn(
            delay(),
            "goal",
            json!({"add": "Prepare, Explore counting, Write the report, Check", "focus": "1"}),
        ),
        json!({"delay_ms": delay(), "tool_calls": [
            {"name": "write_file", "arguments": {"path": "data/words.txt", "content": "b a c a b a\n"}},
            {"name": "read_file", "arguments": {"path": "data/words.txt"}},
            {"name": "glob_files", "arguments": {"pattern": "**/*.txt"}}
        ]}),
        turn(
            delay(),
            "bash",
            json!({"command": "sleep 0.2; wc -w data/words.txt"}),
        ),
        turn(
            delay(),
            "goal",
            json!({"done": "data/words.txt holds six words", "focus": "2"}),
        ),
        turn(
            delay(),
            "explore",
            json!({"branches": [BRANCH_A, BRANCH_B], "background": "data/words.txt holds the words."}),
        ),
        turn(
            delay(),
            "goal",
            json!({"done": "a tally is simplest", "focus": "3"}),
        ),
        turn(
            delay(),
            "write_file",
            json!({"path": "report.txt", "content": "a: 3\nb: 2\nc: 1\n"}),
        ),
        turn(
            delay(),
            "edit_file",
            json!({"path": "report.txt", "old": "c: 1", "new": "c: 1 (least)"}),
        ),
        turn(
            delay(),
            "goal",
            json!({"done": "report.txt written", "focus": "4"}),
        ),
        turn(
            delay(),
            "bash",
            json!({"command": "sleep 0.1; grep -c ':' report.txt"}),
        ),
        turn(delay(), "grep", json!({"pattern": "least", "path": "."})),
        turn(delay(), "goal", json!({"done": "three counts checked"})),
        json!({"delay_ms": delay(), "text": "The report is written and checked."}),
    ];
    let branch = |rng: &mut Rng, first: Value, answer: &str| {
        json!([
            {"delay_ms": 40 + rng.below(200), "tool_calls": [first]},
            {"delay_ms": 40 + rng.below(200), "tool_calls": [
                {"name": "read_file", "arguments": {"path": "data/words.txt"}}
            ]},
            {"delay_ms": 40 + rng.below(200), "text": answer}
        ])
    };
    let a = branch(
        rng,
        json!({"name": "grep", "arguments": {"pattern": "a", "path": "data"}}),
        "A tally counts in one pass.",
    );
    let b = branch(
        rng,
        json!({"name": "glob_files", "arguments": {"pattern": "data/*"}}),
        "Sorting works but needs two passes.",
    );
    json!({
        "turns": turns,
        "routes": [
            {"when_task_contains": BRANCH_A, "turns": a},
            {"when_task_contains": BRANCH_B, "turns": b}
        ]
    })
}

/// The model of a resumed run: it answers at once (sent back to goals left open, it answers
/// again), and so does any branch left to resume.
fn resume_script() -> Value {
    json!({
        "turns": [],
        "fallback": "Resumed and finished.",
        "routes": [
            {"when_task_contains": BRANCH_A, "turns": [], "fallback": "A tally, resumed."},
            {"when_task_contains": BRANCH_B, "turns": [], "fallback": "A sort, resumed."}
        ]
    })
}

/// One iteration's folders: the `agent` environment, with the run and resume scripts.
struct Iteration {
    env: CliEnv,
}

impl Iteration {
    fn new(script: &Value) -> Self {
        let env = CliEnv::new(build_agent());
        env.write("run.json", &script.to_string());
        env.write("resume.json", &resume_script().to_string());
        Self { env }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.env.path(name)
    }

    fn arg(&self, name: &str) -> String {
        self.env.arg(name)
    }

    /// `agent <args>` in a clean environment.
    fn agent(&self, args: &[&str]) -> Command {
        self.env.command(args)
    }

    /// The main trace's id, once its folder exists.
    fn main_trace(&self) -> Option<String> {
        std::fs::read_dir(self.path("traces"))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|name| !name.contains('@') && !name.starts_with('.'))
    }

    /// Every trace folder.
    fn trace_folders(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path("traces"))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| !name.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// The complete commits of an `events.jsonl`: every event whose commit was written whole.
fn acknowledged_events(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let mut acknowledged = Vec::new();
    let mut pending = Vec::new();
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        if !line.ends_with(b"\n") {
            break;
        }
        let Ok(event) = serde_json::from_slice::<Value>(&line[..line.len() - 1]) else {
            break;
        };
        let continues = event
            .get("commit_continues")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        pending.push(event);
        if !continues {
            acknowledged.append(&mut pending);
        }
    }
    acknowledged
}

/// What every trace folder held, acknowledged, just before the kill.
fn snapshot(iteration: &Iteration) -> BTreeMap<String, Vec<Value>> {
    iteration
        .trace_folders()
        .into_iter()
        .map(|trace| {
            let events =
                acknowledged_events(&iteration.path("traces").join(&trace).join("events.jsonl"));
            (trace, events)
        })
        .collect()
}

fn kill(child: &mut Child) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = child.wait();
}

/// How the run was started.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Run,
    Serve,
}

/// Starts the task and returns the process and when its trace appeared.
fn start(iteration: &Iteration, mode: Mode) -> Child {
    match mode {
        Mode::Run => iteration
            .agent(&[
                "run",
                "--provider",
                "scripted",
                "--script",
                &iteration.arg("run.json"),
                "--workspace",
                &iteration.arg("work"),
                "--trace-dir",
                &iteration.arg("traces"),
                "--yes",
                "--json",
                TASK,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        Mode::Serve => {
            let mut child = iteration
                .agent(&[
                    "serve",
                    "--port",
                    "0",
                    "--trace-dir",
                    &iteration.arg("traces"),
                    "--provider",
                    "scripted",
                    "--script",
                    &iteration.arg("run.json"),
                    "--workspace",
                    &iteration.arg("work"),
                    // As `agent run --yes`: the kills land in work, not in a wait for approval.
                    "--approval",
                    "auto",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let url = server_url(&mut child);
            let response = http::post(&format!("{url}/api/traces"), &json!({"task": TASK}));
            assert_eq!(response.0, 201, "starting a run over HTTP: {}", response.1);
            child
        }
    }
}

/// Reads the server's address from its log line `serving ... on http://127.0.0.1:PORT...`.
fn server_url(child: &mut Child) -> String {
    let stderr = child.stderr.take().unwrap();
    let mut reader = BufReader::new(stderr);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut line = String::new();
    loop {
        line.clear();
        let read = reader.read_line(&mut line).unwrap();
        assert!(
            read > 0,
            "the server exited before it said where it listens"
        );
        if let Some(at) = line.find("http://") {
            let url: String = line[at..]
                .chars()
                .take_while(|c| !c.is_whitespace())
                .collect();
            // Keep draining its log so the server never blocks on a full pipe.
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = reader.read_to_end(&mut sink);
            });
            return url.trim_end_matches('/').to_owned();
        }
        assert!(Instant::now() < deadline, "no server address in its log");
    }
}

/// A blocking POST over the async HTTP client.
mod http {
    use serde_json::Value;

    /// POSTs JSON and returns the status and body.
    pub(super) fn post(url: &str, body: &Value) -> (u16, String) {
        agent_llm::ensure_crypto_provider();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let response = reqwest::Client::new()
                .post(url)
                .json(body)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.text().await.unwrap_or_default())
        })
    }
}

/// What one iteration found.
#[derive(Debug, Default)]
struct Findings {
    kills_during_run: u64,
    kills_after_completion: u64,
    events_acknowledged: u64,
    events_after: u64,
    messages_checked: u64,
    calls_checked: u64,
    traces_checked: u64,
    resumed: u64,
}

/// Checks a killed iteration: loads, show, resume, nothing lost, ids dense, calls answered.
fn check(iteration: &Iteration, before: &BTreeMap<String, Vec<Value>>, findings: &mut Findings) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let main = iteration.main_trace().expect("no main trace");

    // Every folder loads, before anything else touches it.
    let store = FileSystemTraceStore::open(iteration.path("traces")).unwrap();
    let status = runtime.block_on(async {
        let listed = store.list_traces(&TraceFilter::default()).await.unwrap();
        assert_eq!(
            listed.len(),
            iteration.trace_folders().len(),
            "every folder is a listed trace"
        );
        for trace in iteration.trace_folders() {
            store.get_trace(&trace).await.unwrap().expect("trace loads");
            store.get_goal_tree(&trace).await.unwrap();
            store.get_trace_messages(&trace).await.unwrap();
            store.get_events(&trace, 0).await.unwrap();
        }
        store.get_trace(&main).await.unwrap().unwrap().status
    });
    drop(store);

    let show = iteration
        .agent(&[
            "show",
            &main,
            "--json",
            "--trace-dir",
            &iteration.arg("traces"),
        ])
        .output()
        .unwrap();
    assert!(
        show.status.success(),
        "agent show failed: {}",
        String::from_utf8_lossy(&show.stderr)
    );
    let shown: Value = serde_json::from_slice(&show.stdout).expect("agent show prints JSON");
    assert!(
        shown.to_string().contains(&main),
        "agent show names the trace"
    );

    if status == TraceStatus::Completed {
        findings.kills_after_completion += 1;
    } else {
        findings.kills_during_run += 1;
        let resume = iteration
            .agent(&[
                "resume",
                &main,
                "--provider",
                "scripted",
                "--script",
                &iteration.arg("resume.json"),
                "--workspace",
                &iteration.arg("work"),
                "--trace-dir",
                &iteration.arg("traces"),
                "--yes",
                "--json",
            ])
            .output()
            .unwrap();
        // The resumed model only answers: the run ends on its own, `completed` when the kill
        // came after the plan was done, `incomplete` (exit code 5, the goals named) otherwise.
        let code = resume.status.code();
        assert!(
            matches!(code, Some(0 | 5)),
            "agent resume did not finish the run: {} {}",
            String::from_utf8_lossy(&resume.stdout),
            String::from_utf8_lossy(&resume.stderr)
        );
        let result: Value = serde_json::from_slice(&resume.stdout).unwrap();
        let left = result["pending_goals"].as_array().map_or(0, Vec::len);
        match code {
            Some(0) => assert_eq!((result["status"].as_str(), left), (Some("completed"), 0)),
            _ => assert!(result["status"] == "incomplete" && left > 0, "{result}"),
        }
        assert_eq!(result["trace_id"], main.as_str());
        findings.resumed += 1;
    }

    let store = FileSystemTraceStore::open(iteration.path("traces")).unwrap();
    runtime.block_on(async {
        // Nothing acknowledged before the kill is lost or changed.
        for (trace, events) in before {
            let path = iteration.path("traces").join(trace).join("events.jsonl");
            let after = acknowledged_events(&path);
            assert!(
                after.len() >= events.len(),
                "{trace}: {} events acknowledged before the kill, {} after",
                events.len(),
                after.len()
            );
            for (seen, now) in events.iter().zip(&after) {
                assert_eq!(seen, now, "{trace}: an acknowledged event changed");
            }
            findings.events_acknowledged += events.len() as u64;
            for event in events {
                if event["event"] == "message_added" {
                    let id = event["message"]["message_id"].as_str().unwrap();
                    let message = store.get_message(id).await.unwrap();
                    assert!(message.is_some(), "{trace}: acknowledged message {id} lost");
                    findings.messages_checked += 1;
                }
            }
        }

        for trace in iteration.trace_folders() {
            findings.traces_checked += 1;
            // Event ids are dense: no duplicate, no hole.
            let events = store.get_events(&trace, 0).await.unwrap();
            let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
            assert_eq!(
                ids,
                (1..=ids.len() as u64).collect::<Vec<_>>(),
                "{trace}: event ids"
            );
            findings.events_after += ids.len() as u64;

            // Every trace ended, and every call has exactly one result.
            let meta = store.get_trace(&trace).await.unwrap().unwrap();
            assert!(
                matches!(
                    meta.status,
                    TraceStatus::Completed | TraceStatus::Incomplete | TraceStatus::Failed
                ),
                "{trace} ended {:?}",
                meta.status
            );
            let messages = store.get_trace_messages(&trace).await.unwrap();
            let mut results: HashMap<String, usize> = HashMap::new();
            for message in messages.iter().filter(|m| m.role == Role::Tool) {
                *results
                    .entry(message.tool_call_id.clone().unwrap())
                    .or_default() += 1;
            }
            for message in messages.iter().filter(|m| m.role == Role::Assistant) {
                for call in message.content.tool_calls() {
                    let id = call.id.as_str();
                    assert_eq!(
                        results.get(id).copied().unwrap_or(0),
                        1,
                        "{trace}: call {id} ({}) has no single result",
                        call.name
                    );
                    findings.calls_checked += 1;
                }
            }

            // And so does the context a model would be shown now.
            let tree = store
                .get_goal_tree(&trace)
                .await
                .unwrap()
                .unwrap_or_default();
            let budget = ContextBudget::for_window(128_000);
            let view = build_context(&ContextInput {
                system_prompt: "system",
                tree: &tree,
                messages: &messages,
                budget: &budget,
                strategy: Default::default(),
                estimate: &|text: &str| text.len() / 4,
            });
            assert_view_answers_every_call(&trace, &view.messages);
        }
    });
}

/// Every assistant turn of a view is followed by one result per call before the next turn.
fn assert_view_answers_every_call(trace: &str, view: &[ChatMessage]) {
    let mut open: Vec<String> = Vec::new();
    for message in view {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "{trace}: calls without results {open:?}");
                open = tool_calls.iter().map(|c| c.id.clone()).collect();
            }
            ChatMessage::Tool { tool_call_id, .. } => {
                let at = open.iter().position(|id| id == tool_call_id);
                let at = at.unwrap_or_else(|| panic!("{trace}: stray result {tool_call_id}"));
                open.remove(at);
            }
            _ => assert!(open.is_empty(), "{trace}: calls without results {open:?}"),
        }
    }
    assert!(open.is_empty(), "{trace}: calls without results {open:?}");
}

fn wait_for_trace(iteration: &Iteration) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while iteration.main_trace().is_none() {
        assert!(Instant::now() < deadline, "no trace appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs the task once without a kill and returns how long it took from the trace's creation
/// to the end, in milliseconds, with a tenth more so that some kills land after the end.
fn calibrate(rng: &mut Rng) -> u64 {
    let iteration = Iteration::new(&run_script(rng));
    let mut child = start(&iteration, Mode::Run);
    wait_for_trace(&iteration);
    let started = Instant::now();
    let status = child.wait().unwrap();
    let took = started.elapsed().as_millis() as u64;
    assert!(status.success(), "the unkilled run failed: {status}");
    let store = FileSystemTraceStore::open(iteration.path("traces")).unwrap();
    let main = iteration.main_trace().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let trace = runtime.block_on(store.get_trace(&main)).unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Completed);
    assert_eq!(
        iteration.trace_folders().len(),
        3,
        "the run explores in two branches"
    );
    took + took / 10
}

fn iterations() -> u64 {
    std::env::var("CRASH_MATRIX_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

#[test]
fn sigkill_at_random_moments_loses_nothing_and_resumes() {
    let seed = std::env::var("CRASH_MATRIX_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
        | 1;
    eprintln!("crash matrix: seed {seed} (CRASH_MATRIX_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let mut findings = Findings::default();
    let mut kill_points = Vec::new();
    let total = iterations();
    let window = calibrate(&mut rng);
    eprintln!("crash matrix: an unkilled run takes {window} ms; kills land in 0..{window} ms");
    for round in 0..total {
        let mode = if round % 2 == 0 {
            Mode::Run
        } else {
            Mode::Serve
        };
        let script = run_script(&mut rng);
        let iteration = Iteration::new(&script);
        let mut child = start(&iteration, mode);
        // Wait for the trace, then let the run go on for a random part of its duration.
        wait_for_trace(&iteration);
        let wait = rng.below(window);
        std::thread::sleep(Duration::from_millis(wait));
        let before = snapshot(&iteration);
        kill(&mut child);
        let seen: usize = before.values().map(Vec::len).sum();
        eprintln!(
            "round {round} ({mode:?}): killed after {wait} ms with {seen} events acknowledged in {} traces",
            before.len()
        );
        kill_points.push(json!({"mode": format!("{mode:?}"), "after_ms": wait, "events": seen, "traces": before.len()}));
        check(&iteration, &before, &mut findings);
    }
    let summary = json!({
        "seed": seed,
        "iterations": total,
        "kills_during_run": findings.kills_during_run,
        "kills_after_completion": findings.kills_after_completion,
        "resumed_to_completion": findings.resumed,
        "traces_checked": findings.traces_checked,
        "events_acknowledged": findings.events_acknowledged,
        "events_after": findings.events_after,
        "messages_checked": findings.messages_checked,
        "tool_calls_checked": findings.calls_checked,
        "losses": 0,
        "duplicate_event_ids": 0,
        "unanswered_calls": 0,
        "kill_points": kill_points,
    });
    println!("CRASH-MATRIX {summary}");
}
