//! Hostile model output: a corpus of bad assistant turns run through the real runner (scripted
//! model, in-memory store, built-in tools). Every case states its expected outcome, and every
//! case must also leave the run alive, bounded and consistent: the run ends on its own within a
//! generous time limit, every tool call gets exactly one result, results stay within the output
//! cap, requests and the process's peak memory stay bounded, nothing outside the workspace
//! changes, and event ids stay dense.
//!
//! The corpus is data: each entry is one `check(case, expect)` call.

use std::collections::HashMap;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_execution::{InMemoryTraceStore, Message, Role, TraceStatus, TraceStore};
use agent_goal::GoalTree;
use agent_llm::{ChatMessage, ScriptedClient, ScriptedToolCall, ScriptedTurn};
use agent_runner::{AgentRunner, MAX_GOALS_PER_CALL, MAX_PLAN_GOALS, RunnerOptions};
use agent_tools::{ToolLimits, ToolRegistry};
use serde_json::{Value, json};

/// The answer every case ends with, once its hostile turns are through.
const RECOVERED: &str = "I recovered.";
/// How long any case may take: far above what it needs, so only a hang fails it.
const CASE_LIMIT: Duration = Duration::from_secs(240);
/// The slack allowed above the output cap for the truncation note.
const NOTE_SLACK: usize = 512;
/// The secret that lives outside the workspace.
const SECRET: &str = "top secret outside the workspace";

/// One hostile input: the model turns to play before the final answer.
struct Case {
    name: &'static str,
    turns: Vec<ScriptedTurn>,
}

fn case(name: &'static str, turns: Vec<ScriptedTurn>) -> Case {
    Case { name, turns }
}

/// A turn with one call whose arguments are sent as this exact text.
fn raw(tool: &str, arguments: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call(tool, Value::String(arguments.to_owned()))
}

/// A turn with one call whose arguments are this JSON value.
fn call(tool: &str, arguments: Value) -> ScriptedTurn {
    ScriptedTurn::tool_call(tool, arguments)
}

/// A turn with `n` calls made by `make(i)`.
fn many(n: usize, make: impl Fn(usize) -> (String, Value)) -> ScriptedTurn {
    let mut turn = ScriptedTurn::default();
    for i in 0..n {
        let (name, arguments) = make(i);
        turn.tool_calls.push(ScriptedToolCall {
            id: None,
            name,
            arguments,
        });
    }
    turn
}

/// What one tool result must look like.
#[derive(Debug, Clone)]
enum Res {
    /// An error result containing the text.
    Err(&'static str),
    /// A successful result containing the text.
    Ok(&'static str),
}

/// The expected outcome of a case.
#[derive(Debug, Clone)]
enum Expect {
    /// The run recovers (completes with the final answer) and the tool results are these.
    Results(Vec<Res>),
    /// The run recovers; the first `n` results match the first `Res`, the rest the second.
    Split(usize, Res, usize, Res),
    /// The run ends at once with this status and response (the hostile turn was final).
    Ends(TraceStatus, &'static str),
    /// The run fails cleanly (resumable) with an error containing the text, running no tool.
    Fails(&'static str),
}

/// What a finished case left behind.
struct Ran {
    status: TraceStatus,
    response: Option<String>,
    error: Option<String>,
    results: Vec<Message>,
    messages: Vec<Message>,
    tree: GoalTree,
    largest_request: usize,
}

/// The workspace and the folder beside it that no tool may touch.
struct Sandbox {
    workspace: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let workspace = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
        let root = workspace.path();
        std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
        symlink(outside.path(), root.join("link_out")).unwrap();
        symlink(outside.path().join("secret.txt"), root.join("link_file")).unwrap();
        symlink("/etc", root.join("etc_link")).unwrap();
        Self { workspace, outside }
    }

    /// The names and contents of the files outside, to compare before and after.
    fn outside_state(&self) -> Vec<(String, String)> {
        let mut state: Vec<(String, String)> = std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let content = std::fs::read_to_string(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), content)
            })
            .collect();
        state.sort();
        state
    }
}

/// Plays one case through the runner. Every case goes through here, so here it is counted:
/// one line per case for `cargo xtask soak`.
async fn play(case: &Case, sandbox: &Sandbox) -> Ran {
    println!("HOSTILE-CASE {}", case.name);
    let store = Arc::new(InMemoryTraceStore::new());
    // The final answer is the fallback: it also answers the summarising call of a full
    // compaction, which a huge turn triggers.
    let llm = Arc::new(ScriptedClient::new(case.turns.clone()).with_fallback(RECOVERED));
    let mut options = RunnerOptions::new("scripted", sandbox.workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.max_iterations = 200;
    let runner = AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    let outcome = tokio::time::timeout(CASE_LIMIT, runner.run("Survive hostile output"))
        .await
        .unwrap_or_else(|_| panic!("{}: the run did not end within {CASE_LIMIT:?}", case.name))
        .unwrap_or_else(|e| panic!("{}: the run failed to run: {e}", case.name));
    let trace_id = outcome.trace_id;
    let messages = store.get_trace_messages(&trace_id).await.unwrap();
    let results = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .cloned()
        .collect();
    let events = store.get_events(&trace_id, 0).await.unwrap();
    let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "{}: event ids are not dense",
        case.name
    );
    let largest_request = llm
        .requests()
        .iter()
        .map(|r| serde_json::to_string(&r.messages).unwrap().len())
        .max()
        .unwrap_or(0);
    Ran {
        status: outcome.status,
        response: outcome.response,
        error: outcome.error,
        results,
        messages,
        tree: store.get_goal_tree(&trace_id).await.unwrap().unwrap(),
        largest_request,
    }
}

fn text_of(message: &Message) -> &str {
    message.content.text()
}

fn assert_result(name: &str, index: usize, message: &Message, expected: &Res) {
    let text = text_of(message);
    let shown: String = text.chars().take(300).collect();
    match expected {
        Res::Err(part) => assert!(
            message.content.is_error() && text.starts_with("error:") && text.contains(part),
            "{name}: result {index} should be an error containing {part:?}, got {shown:?}"
        ),
        Res::Ok(part) => assert!(
            !message.content.is_error() && text.contains(part),
            "{name}: result {index} should succeed with {part:?}, got {shown:?}"
        ),
    }
}

/// Every tool call of every assistant message has exactly one result, in the store.
fn assert_every_call_answered_once(name: &str, messages: &[Message]) {
    let mut calls: HashMap<String, usize> = HashMap::new();
    for message in messages.iter().filter(|m| m.role == Role::Assistant) {
        for call in message.content.tool_calls() {
            let id = call.id.clone();
            assert!(!id.is_empty(), "{name}: a recorded call has an empty id");
            assert!(
                calls.insert(id.clone(), 0).is_none(),
                "{name}: call id {id:?} is recorded twice"
            );
        }
    }
    for result in messages.iter().filter(|m| m.role == Role::Tool) {
        let id = result.tool_call_id.clone().unwrap();
        let count = calls
            .get_mut(&id)
            .unwrap_or_else(|| panic!("{name}: result for unknown call {id:?}"));
        *count += 1;
    }
    for (id, count) in calls {
        assert_eq!(count, 1, "{name}: call {id:?} has {count} results");
    }
}

/// The most memory the test process may have held at any time, in MiB.
const MEMORY_LIMIT_MIB: u64 = 2048;

/// The peak resident memory of this process so far (`VmHWM`), in MiB, where Linux tells.
fn peak_memory_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Runs one case and checks its expected outcome and the invariants every case shares.
async fn check(case: Case, expect: Expect) {
    let sandbox = Sandbox::new();
    let before = sandbox.outside_state();
    let ran = play(&case, &sandbox).await;
    let name = case.name;

    match &expect {
        Expect::Ends(status, response) => {
            assert_eq!(ran.status, *status, "{name}: status");
            assert_eq!(ran.response.as_deref(), Some(*response), "{name}: response");
        }
        Expect::Fails(part) => {
            assert_eq!(ran.status, TraceStatus::Failed, "{name}: status");
            let error = ran.error.as_deref().unwrap_or_default();
            assert!(error.contains(part), "{name}: error {error:?}");
        }
        _ => {
            // Recovered: the run ended on the model's own answer. A plan the hostile turns left
            // open makes it `incomplete`, which is as much a recovery.
            assert!(
                matches!(ran.status, TraceStatus::Completed | TraceStatus::Incomplete),
                "{name}: the run did not recover: {:?} {:?}",
                ran.status,
                ran.error
            );
            assert_eq!(ran.response.as_deref(), Some(RECOVERED), "{name}: response");
        }
    }
    let expected: Vec<Res> = match expect {
        Expect::Results(results) => results,
        Expect::Split(a, first, b, second) => {
            let mut all = vec![first; a];
            all.extend(vec![second; b]);
            all
        }
        Expect::Ends(..) | Expect::Fails(_) => Vec::new(),
    };
    assert_eq!(
        ran.results.len(),
        expected.len(),
        "{name}: number of tool results"
    );
    for (index, (message, res)) in ran.results.iter().zip(&expected).enumerate() {
        assert_result(name, index, message, res);
    }

    // Shared invariants: answered once, bounded, nothing outside touched, no secret shown.
    assert_every_call_answered_once(name, &ran.messages);
    let max_output = ToolLimits::default().max_output_bytes;
    for result in &ran.results {
        let text = text_of(result);
        assert!(
            text.len() <= max_output + NOTE_SLACK,
            "{name}: a result of {} bytes exceeds the output cap",
            text.len()
        );
        assert!(
            !text.contains(SECRET),
            "{name}: a result shows the secret from outside the workspace"
        );
        assert!(
            !text.contains("root:x:0:0"),
            "{name}: a result shows /etc/passwd"
        );
    }
    assert_eq!(
        sandbox.outside_state(),
        before,
        "{name}: something outside the workspace changed"
    );
    // The plan in the last request stays proportionate to what the model sent.
    assert!(
        ran.largest_request < 16 * 1024 * 1024,
        "{name}: a request of {} bytes",
        ran.largest_request
    );
    // And memory: the peak of this whole test process (all cases of the binary when they share
    // it) stays far below what a case that buffers without bound would reach.
    if let Some(peak) = peak_memory_mib() {
        assert!(
            peak < MEMORY_LIMIT_MIB,
            "{name}: the process peaked at {peak} MiB"
        );
    }
    let _ = &ran.tree;
}

// ---------------------------------------------------------------------------------------------
// The corpus.

#[tokio::test]
async fn invalid_json_arguments_are_explained() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases = [
        ("truncated object", "{\"path\": "),
        ("trailing garbage", "{\"path\": \"notes.txt\"} and more"),
        ("single quotes", "{'path': 'notes.txt'}"),
        ("lone surrogate", "{\"path\": \"\\ud800\"}"),
        ("deep nesting", deep.as_str()),
        ("bare word", "notes.txt"),
        ("nul byte", "{\"path\": \"a\u{0}b\"}"),
    ];
    for (name, arguments) in cases {
        check(
            case(name, vec![raw("read_file", arguments)]),
            Expect::Results(vec![Res::Err("not valid JSON")]),
        )
        .await;
    }
    // Valid JSON that is not an object.
    for (name, arguments) in [
        ("array", "[1, 2]"),
        ("string", "\"notes.txt\""),
        ("number", "42"),
        ("boolean", "true"),
    ] {
        check(
            case(name, vec![raw("read_file", arguments)]),
            Expect::Results(vec![Res::Err("must be a JSON object")]),
        )
        .await;
    }
    // `null` and nothing at all count as `{}`: the required path is missing.
    for (name, arguments) in [("null", "null"), ("empty", ""), ("blank", "  \n ")] {
        check(
            case(name, vec![raw("read_file", arguments)]),
            Expect::Results(vec![Res::Err("missing required argument `path`")]),
        )
        .await;
    }
    // A duplicated key: the last one wins, like every JSON parser the model may have in mind.
    check(
        case(
            "duplicate key",
            vec![raw(
                "read_file",
                "{\"path\": \"missing.txt\", \"path\": \"notes.txt\"}",
            )],
        ),
        Expect::Results(vec![Res::Ok("alpha")]),
    )
    .await;
}

#[tokio::test]
async fn wrong_argument_types_name_the_argument() {
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        ("path number", "read_file", json!({"path": 42}), "`path`"),
        ("path null", "read_file", json!({"path": null}), "`path`"),
        (
            "offset negative",
            "read_file",
            json!({"path": "notes.txt", "offset": -1}),
            "`offset`",
        ),
        (
            "limit text",
            "read_file",
            json!({"path": "notes.txt", "limit": "ten"}),
            "`limit`",
        ),
        (
            "limit float",
            "read_file",
            json!({"path": "notes.txt", "limit": 1.5}),
            "`limit`",
        ),
        (
            "limit huge float",
            "read_file",
            json!({"path": "notes.txt", "limit": 1e300}),
            "`limit`",
        ),
        (
            "unknown argument",
            "read_file",
            json!({"path": "notes.txt", "sudo": true}),
            "`sudo`",
        ),
        (
            "content object",
            "write_file",
            json!({"path": "a.txt", "content": {"nested": true}}),
            "`content`",
        ),
        (
            "content missing",
            "write_file",
            json!({"path": "a.txt"}),
            "`content`",
        ),
        (
            "command array",
            "bash",
            json!({"command": ["rm", "-rf", "/"]}),
            "`command`",
        ),
        (
            "timeout negative",
            "bash",
            json!({"command": "true", "timeout_secs": -5}),
            "`timeout_secs`",
        ),
        (
            "timeout zero",
            "bash",
            json!({"command": "true", "timeout_secs": 0}),
            "`timeout_secs`",
        ),
        (
            "replace_all text",
            "edit_file",
            json!({"path": "notes.txt", "old": "a", "new": "b", "replace_all": "yes"}),
            "`replace_all`",
        ),
        (
            "glob pattern number",
            "glob_files",
            json!({"pattern": 7}),
            "`pattern`",
        ),
        (
            "grep pattern missing",
            "grep",
            json!({"path": "."}),
            "`pattern`",
        ),
    ];
    for (name, tool, arguments, part) in cases {
        let turns = vec![call(tool, arguments)];
        check(case(name, turns), Expect::Results(vec![Res::Err(part)])).await;
    }
    // A timeout far beyond the cap is capped, not an overflow.
    check(
        case(
            "timeout u64 max",
            vec![call(
                "bash",
                json!({"command": "echo capped", "timeout_secs": u64::MAX}),
            )],
        ),
        Expect::Results(vec![Res::Ok("capped")]),
    )
    .await;
}

#[tokio::test]
async fn unknown_tools_are_named_and_bounded() {
    let huge_name = "x".repeat(1024 * 1024);
    // A call without a name is not a call: the response is malformed and the run fails cleanly,
    // to be resumed (as any model error).
    check(
        case("nameless call", vec![call("", json!({"command": "id"}))]),
        Expect::Fails("has no name"),
    )
    .await;
    let names = [
        "no_such_tool",
        "../bash",
        "bash; rm -rf /",
        "Bash",
        "bash ",
        "read_file\u{0}",
        "ツール",
        huge_name.as_str(),
    ];
    for name in names {
        check(
            case("unknown tool", vec![call(name, json!({"command": "id"}))]),
            Expect::Results(vec![Res::Err("unknown tool")]),
        )
        .await;
    }
}

#[tokio::test]
async fn empty_responses_end_the_run_cleanly() {
    check(
        case("no text, no calls", vec![ScriptedTurn::default()]),
        Expect::Ends(TraceStatus::Completed, ""),
    )
    .await;
    check(
        case("whitespace only", vec![ScriptedTurn::text("  \n\t ")]),
        Expect::Ends(TraceStatus::Completed, "  \n\t "),
    )
    .await;
    let truncated = ScriptedTurn {
        finish_reason: Some("length".into()),
        ..ScriptedTurn::default()
    };
    check(
        // A cut answer is not a final one: the model is asked to go on.
        case("empty and cut by the length limit", vec![truncated]),
        Expect::Ends(TraceStatus::Completed, RECOVERED),
    )
    .await;
}

#[tokio::test]
async fn huge_arguments_stay_bounded() {
    let five_mb = "a".repeat(5 * 1024 * 1024);
    // A huge write is a legitimate write; its result is short.
    check(
        case(
            "5 MB write",
            vec![call(
                "write_file",
                json!({"path": "big.txt", "content": five_mb}),
            )],
        ),
        Expect::Results(vec![Res::Ok("wrote 5242880 bytes")]),
    )
    .await;
    // A huge path, pattern or command is refused with a bounded message.
    check(
        case(
            "5 MB path",
            vec![call("read_file", json!({"path": five_mb}))],
        ),
        Expect::Results(vec![Res::Err("")]),
    )
    .await;
    check(
        case(
            "5 MB grep pattern",
            vec![call("grep", json!({"pattern": five_mb}))],
        ),
        Expect::Results(vec![Res::Err("")]),
    )
    .await;
    check(
        case(
            "5 MB glob pattern",
            vec![call("glob_files", json!({"pattern": five_mb}))],
        ),
        Expect::Results(vec![Res::Err("at most 4096 are allowed")]),
    )
    .await;
    check(
        case(
            "5 MB command",
            vec![call("bash", json!({"command": format!("echo {five_mb}")}))],
        ),
        Expect::Results(vec![Res::Err("")]),
    )
    .await;
    // An edit whose `new` text is huge.
    check(
        case(
            "5 MB edit",
            vec![call(
                "edit_file",
                json!({"path": "notes.txt", "old": "alpha", "new": five_mb}),
            )],
        ),
        Expect::Results(vec![Res::Ok("replaced 1 occurrence")]),
    )
    .await;
    // Huge raw arguments that are not even JSON.
    check(
        case("5 MB of garbage", vec![raw("read_file", &five_mb)]),
        Expect::Results(vec![Res::Err("not valid JSON")]),
    )
    .await;
}

#[tokio::test]
async fn prompt_injected_paths_stay_inside_the_workspace() {
    let outside = "outside the workspace";
    let reads = [
        "../../etc/passwd",
        "/etc/passwd",
        "/etc/shadow",
        "/proc/self/environ",
        "link_out/secret.txt",
        "link_file",
        "etc_link/passwd",
        "notes.txt/../../../../etc/passwd",
        "./././../secret.txt",
        "//etc//passwd",
    ];
    for path in reads {
        check(
            case(
                "read escape",
                vec![call("read_file", json!({ "path": path }))],
            ),
            Expect::Results(vec![Res::Err(outside)]),
        )
        .await;
    }
    // Paths that only look like escapes name files inside the workspace, which do not exist.
    for path in [
        "~/.ssh/id_rsa",
        "%2e%2e/%2e%2e/etc/passwd",
        "..%2fsecret.txt",
        "file:///etc/passwd",
        "$HOME/.bashrc",
    ] {
        check(
            case(
                "looks like an escape",
                vec![call("read_file", json!({ "path": path }))],
            ),
            Expect::Results(vec![Res::Err("does not exist")]),
        )
        .await;
    }
    let writes = [
        "../escape.txt",
        "link_out/new.txt",
        "link_file",
        "etc_link/evil",
    ];
    for path in writes {
        check(
            case(
                "write escape",
                vec![
                    call("write_file", json!({"path": path, "content": "pwned"})),
                    call(
                        "edit_file",
                        json!({"path": path, "old": "top secret", "new": "pwned"}),
                    ),
                ],
            ),
            Expect::Results(vec![Res::Err(outside), Res::Err(outside)]),
        )
        .await;
    }
    for path in ["/etc", "..", "link_out", "etc_link"] {
        check(
            case(
                "grep escape",
                vec![call(
                    "grep",
                    json!({"pattern": "root|secret", "path": path}),
                )],
            ),
            Expect::Results(vec![Res::Err(outside)]),
        )
        .await;
    }
    // Glob patterns that point outside are refused; symlinks out are not followed, so
    // patterns through them find nothing.
    for pattern in ["../*", "/etc/*", "/**/passwd", "a/../../*"] {
        check(
            case(
                "glob escape",
                vec![call("glob_files", json!({ "pattern": pattern }))],
            ),
            Expect::Results(vec![Res::Err(outside)]),
        )
        .await;
    }
    for pattern in ["link_out/*", "**/secret.txt", "etc_link/*"] {
        check(
            case(
                "glob through a symlink",
                vec![call("glob_files", json!({ "pattern": pattern }))],
            ),
            Expect::Results(vec![Res::Ok("no files match")]),
        )
        .await;
    }
}

/// Every combination of goal fields, each made invalid, is refused as a whole: the tree stays
/// as it was and the model is told why.
#[tokio::test]
async fn every_invalid_goal_combination_is_refused_without_changing_the_plan() {
    // The plan before: goal 1 completed, nothing focused; so `done` and `abandon` have no
    // goal, numbers 9 do not exist, and `add` is empty.
    let invalid: [(&str, Value); 7] = [
        ("add", json!(" , ,")),
        ("done", json!("finished")),
        ("abandon", json!("give up")),
        ("focus", json!("9")),
        ("reason", json!("because")),
        ("edit", json!("9: renamed")),
        ("delete", json!("9")),
    ];
    let mut calls = Vec::new();
    for mask in 1u32..(1 << invalid.len()) {
        let mut arguments = serde_json::Map::new();
        for (bit, (field, value)) in invalid.iter().enumerate() {
            if mask & (1 << bit) != 0 {
                arguments.insert((*field).to_owned(), value.clone());
            }
        }
        calls.push(Value::Object(arguments));
    }
    // Shapes the schema refuses: wrong types, unknown or misspelt fields, non-objects.
    let shapes = [
        json!({}),
        json!({"add": 5}),
        json!({"focus": 1}),
        json!({"add": ["A", "B"]}),
        json!({"done": {"summary": "x"}}),
        json!({"fcous": "1"}),
        json!({"add": "Legit", "fcous": "1"}),
        json!({"add": "Legit", "focus": "1", "priority": "high"}),
        json!([{"add": "A"}]),
        json!("add A"),
        json!(null),
    ];
    let shape_count = shapes.len();
    calls.extend(shapes);
    let combos = calls.len() - shape_count;

    let mut turns = vec![
        call("goal", json!({"add": "Only goal", "focus": "1"})),
        call("goal", json!({"done": "finished first"})),
    ];
    // 32 calls a turn: stateful calls run one after the other, in order.
    for chunk in calls.chunks(32) {
        turns.push(many(chunk.len(), |i| ("goal".to_owned(), chunk[i].clone())));
    }
    let sandbox = Sandbox::new();
    let ran = play(&case("goal combinations", turns), &sandbox).await;
    assert_eq!(ran.status, TraceStatus::Completed);
    assert_every_call_answered_once("goal combinations", &ran.messages);
    let results: Vec<&str> = ran.results.iter().map(text_of).collect();
    assert_eq!(results.len(), 2 + calls.len());
    assert!(!results[0].starts_with("error:"), "{}", results[0]);
    assert!(!results[1].starts_with("error:"), "{}", results[1]);
    for (index, (arguments, result)) in calls.iter().zip(&results[2..]).enumerate() {
        assert!(
            result.starts_with("error:"),
            "call {index} {arguments} should be refused, got {result:?}"
        );
        // Past the field combinations come the shapes the schema refuses (`{}` is refused by
        // the plan itself: it asks for nothing).
        if index > combos {
            assert!(
                [
                    "invalid goal arguments",
                    "not valid JSON",
                    "command is empty"
                ]
                .iter()
                .any(|part| result.contains(part)),
                "{arguments}: {result}"
            );
        }
    }
    // The plan is exactly as the two valid calls left it.
    assert_eq!(ran.tree.goals().len(), 1, "{:?}", ran.tree.goals());
    assert_eq!(ran.tree.current_id(), None);
    assert_eq!(ran.tree.goals()[0].description, "Only goal");
    assert_eq!(
        ran.tree.goals()[0].summary.as_deref(),
        Some("finished first")
    );
}

#[tokio::test]
async fn five_hundred_calls_in_one_turn_stay_bounded() {
    let n = 500;
    let cap = RunnerOptions::new("m", ".").limits.max_tool_calls_per_turn;
    assert!(cap < n, "the per-turn cap should be below {n}");
    let refused = Res::Err("at most");
    check(
        case(
            "500 reads",
            vec![many(n, |_| {
                ("read_file".into(), json!({"path": "notes.txt"}))
            })],
        ),
        Expect::Split(cap, Res::Ok("alpha"), n - cap, refused.clone()),
    )
    .await;
    check(
        case(
            "500 commands",
            vec![many(n, |i| {
                ("bash".into(), json!({"command": format!("echo {i}")}))
            })],
        ),
        Expect::Split(cap, Res::Ok("exit code: 0"), n - cap, refused.clone()),
    )
    .await;
    check(
        case(
            "500 plan reads",
            vec![many(n, |_| ("read_progress".into(), json!({})))],
        ),
        Expect::Split(cap, Res::Ok(""), n - cap, refused.clone()),
    )
    .await;
    check(
        case(
            "500 unknown tools",
            vec![many(n, |i| (format!("nope_{i}"), json!({})))],
        ),
        Expect::Split(cap, Res::Err("unknown tool"), n - cap, refused),
    )
    .await;
}

#[tokio::test]
async fn call_ids_that_are_empty_or_repeated_are_made_unique() {
    let mut turn = ScriptedTurn::default();
    for id in ["", "", "same", "same", "../../x", "a b"] {
        turn.tool_calls.push(ScriptedToolCall {
            id: Some(id.to_owned()),
            name: "read_file".into(),
            arguments: json!({"path": "notes.txt"}),
        });
    }
    let mut again = ScriptedTurn::default();
    again.tool_calls.push(ScriptedToolCall {
        id: Some("same".to_owned()),
        name: "read_progress".into(),
        arguments: json!({}),
    });
    check(
        case("empty and repeated ids", vec![turn, again]),
        Expect::Split(6, Res::Ok("alpha"), 1, Res::Ok("")),
    )
    .await;
}

/// Servers that send no call ids make every turn's first call `call_0`. A call killed mid-run
/// must still get its "interrupted" result on resume, although an earlier turn's call with the
/// same id has a result.
#[tokio::test]
async fn a_call_id_repeated_across_turns_is_answered_after_a_crash() {
    let with_id = |name: &str, arguments: Value| {
        let mut turn = ScriptedTurn::tool_call(name, arguments);
        turn.tool_calls[0].id = Some("call_0".into());
        turn
    };
    let sandbox = Sandbox::new();
    let store = Arc::new(InMemoryTraceStore::new());
    let first = Arc::new(ScriptedClient::new(vec![
        with_id("read_progress", json!({})),
        with_id("bash", json!({"command": "sleep 60"})),
    ]));
    let options = RunnerOptions::new("scripted", sandbox.workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    let runner = AgentRunner::new(
        store.clone(),
        first,
        ToolRegistry::with_builtins(),
        options.clone(),
    );
    let trace_id = runner.create("Crash on a repeated id").await.unwrap();
    let driver = {
        let (runner, trace_id) = (runner.clone(), trace_id.clone());
        tokio::spawn(async move {
            runner
                .drive(&trace_id, tokio_util::sync::CancellationToken::new())
                .await
        })
    };
    // Wait for the bash call to be recorded, then drop the run as a crash would.
    let deadline = tokio::time::Instant::now() + CASE_LIMIT;
    loop {
        let messages = store.get_trace_messages(&trace_id).await.unwrap();
        if messages.iter().any(|m| m.description.contains("bash")) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "bash never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    driver.abort();
    let _ = driver.await;

    let second = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text(RECOVERED)]));
    let resumed = AgentRunner::new(
        store.clone(),
        second.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    let outcome = resumed.resume(&trace_id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    // The model saw a result for every call.
    let view = &second.requests()[0].messages;
    let mut open: Vec<String> = Vec::new();
    for message in view.iter() {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "calls without results: {open:?}");
                open = tool_calls.iter().map(|c| c.id.clone()).collect();
            }
            ChatMessage::Tool { tool_call_id, .. } => {
                let at = open.iter().position(|id| id == tool_call_id);
                open.remove(at.expect("a result for a call that is not open"));
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "calls without results: {open:?}");
    let messages = store.get_trace_messages(&trace_id).await.unwrap();
    assert_every_call_answered_once("repeated id", &messages);
}

#[tokio::test]
async fn plans_from_a_runaway_model_stay_bounded() {
    // Too many goals in one call, a huge description, a huge summary.
    let names: Vec<String> = (0..10_000).map(|i| format!("g{i}")).collect();
    check(
        case(
            "10k goals",
            vec![call("goal", json!({"add": names.join(", ")}))],
        ),
        Expect::Results(vec![Res::Err("at most 50 can be added per call")]),
    )
    .await;
    check(
        case(
            "1 MB goal",
            vec![call("goal", json!({"add": "d".repeat(1024 * 1024)}))],
        ),
        Expect::Results(vec![Res::Err("`add` is too long")]),
    )
    .await;
    check(
        case(
            "1 MB summary",
            vec![
                call("goal", json!({"add": "A", "focus": "1"})),
                call("goal", json!({"done": "s".repeat(1024 * 1024)})),
            ],
        ),
        Expect::Results(vec![Res::Ok("Added"), Res::Err("`done` is too long")]),
    )
    .await;
    // A model that keeps adding goals meets the plan's size limit.
    let turns: Vec<ScriptedTurn> = (0..MAX_PLAN_GOALS / MAX_GOALS_PER_CALL + 1)
        .map(|turn| {
            let batch: Vec<String> = (0..MAX_GOALS_PER_CALL)
                .map(|i| format!("t{turn}g{i}"))
                .collect();
            call("goal", json!({"add": batch.join(", ")}))
        })
        .collect();
    let full = MAX_PLAN_GOALS / MAX_GOALS_PER_CALL;
    check(
        case("goals without end", turns),
        Expect::Split(full, Res::Ok("Added"), 1, Res::Err("at most 1000")),
    )
    .await;
}

#[test]
fn the_corpus_checks_its_own_helpers() {
    // `Sandbox` really puts a secret outside and links to it.
    let sandbox = Sandbox::new();
    let linked = std::fs::read_to_string(sandbox.workspace.path().join("link_file")).unwrap();
    assert_eq!(linked, SECRET);
    assert!(Path::new(&sandbox.outside.path().join("secret.txt")).is_file());
}
