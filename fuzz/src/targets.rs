//! The logic of the fuzz targets, over raw bytes, with the invariants each one checks (a failed
//! check panics, which the fuzzer reports as a crash).
//!
//! The same functions run under libFuzzer (`fuzz/fuzz_targets/*.rs`, with `cargo fuzz`) and
//! under the stable-Rust driver of `agent-e2e` (`tests/it/fuzz_smoke.rs`), which includes this
//! file, replays the corpus and the found crashes, and mutates the corpus for a bounded number
//! of inputs.
//!
//! - [`goal_command`]: goal tool commands, from JSON or from a byte-driven generator, applied
//!   to a plan: a refused command leaves the plan unchanged, and the plan's invariants hold.
//! - [`events_log`]: an `events.jsonl` as found on disk, opened by the filesystem store: it
//!   loads or is reported corrupt, and once loaded it takes an append and reads back densely.
//! - [`sse_stream`]: a streamed model response in chunks, through the OpenAI and Anthropic
//!   decoders: every stream ends with a response or an error.
//! - [`context_builder`]: stored messages and a plan, through `build_context`: the view is a
//!   valid conversation that keeps the task, and the same input gives the same view.

use std::collections::HashSet;
use std::sync::OnceLock;

use agent_execution::{Message, Role, TraceFilter, TraceStore};
use agent_goal::{GoalCommand, GoalStatus, GoalTree};
use agent_llm::{ChatMessage, StreamFormat, collect_stream, decode_recorded_stream};
use agent_runner::context::{ContextInput, build_context};
use agent_runner::{CompactionStrategy, ContextBudget};
use serde_json::{Value, json};

/// The runtime the async parts run on, made once per process.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("no runtime: {e}"))
    })
}

/// Reads choices out of the fuzzer's bytes; past the end it reads zeros.
pub struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }

    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number below `bound`.
    pub fn below(&mut self, bound: usize) -> usize {
        usize::from(self.byte()) % bound.max(1)
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// Whether bytes are left.
    pub fn more(&self) -> bool {
        self.at < self.data.len()
    }

    /// Up to `max` raw bytes as text.
    pub fn text(&mut self, max: usize) -> String {
        let len = self.below(max + 1);
        let end = (self.at + len).min(self.data.len());
        let text = String::from_utf8_lossy(self.data.get(self.at..end).unwrap_or_default());
        self.at = end;
        text.into_owned()
    }
}

// ---------------------------------------------------------------------------------------------
// The goal tool command parser and its application.

/// Texts that exercise the command parser: numbers, lists, blanks and odd forms.
const GOAL_WORDS: &[&str] = &[
    "1",
    "2",
    "3",
    "1.1",
    "1.2",
    "2.1",
    "1.1.1",
    "9",
    "0",
    "-1",
    "1.",
    ".1",
    "1..2",
    "01",
    "99999999999999999999",
    "",
    " ",
    ",",
    ", ,",
    "A",
    "A, B",
    "A, B, C",
    "x,,y",
    "1: renamed",
    ": x",
    "1:",
    "2.1: new text",
    "ü, ß, 中",
    "a\nb",
    "1, 2",
    "\u{0}",
    "done",
];

fn goal_text(bytes: &mut Bytes<'_>) -> Option<String> {
    match bytes.below(4) {
        0 => None,
        1 | 2 => Some(GOAL_WORDS[bytes.below(GOAL_WORDS.len())].to_owned()),
        _ => Some(bytes.text(24)),
    }
}

/// A goal command made from bytes.
pub fn goal_command_from(bytes: &mut Bytes<'_>) -> GoalCommand {
    GoalCommand {
        add: goal_text(bytes),
        done: goal_text(bytes),
        abandon: if bytes.one_in(3) {
            goal_text(bytes)
        } else {
            None
        },
        focus: goal_text(bytes),
        reason: if bytes.one_in(3) {
            goal_text(bytes)
        } else {
            None
        },
        edit: if bytes.one_in(3) {
            goal_text(bytes)
        } else {
            None
        },
        delete: if bytes.one_in(3) {
            goal_text(bytes)
        } else {
            None
        },
        // Added last, so the seeds written before it read as they did.
        agent: if bytes.one_in(5) {
            goal_text(bytes)
        } else {
            None
        },
        select: if bytes.one_in(5) {
            goal_text(bytes)
        } else {
            None
        },
        // Added after the seeds were written; a check on added goals now and then.
        check: if bytes.one_in(7) {
            goal_text(bytes)
        } else {
            None
        },
        ..GoalCommand::default()
    }
}

/// Checks the invariants a plan keeps after every command.
pub fn check_plan(tree: &GoalTree) {
    let mut ids = HashSet::new();
    for goal in tree.goals() {
        assert!(
            ids.insert(goal.id.as_str()),
            "duplicate goal id {}",
            goal.id
        );
    }
    for goal in tree.goals() {
        if let Some(parent) = &goal.parent_id {
            assert!(
                ids.contains(parent.as_str()),
                "{} has a missing parent",
                goal.id
            );
        }
        // The summary of a finished goal is set; an open goal has none.
        if goal.status == GoalStatus::Completed {
            assert!(
                goal.summary.is_some(),
                "completed goal {} without summary",
                goal.id
            );
        }
    }
    if let Some(current) = tree.current() {
        assert_eq!(
            current.status,
            GoalStatus::InProgress,
            "the current goal is not in progress"
        );
        for ancestor in tree.ancestors(&current.id) {
            assert_eq!(
                ancestor.status,
                GoalStatus::InProgress,
                "an ancestor of the current goal is not in progress"
            );
        }
    } else {
        assert!(tree.current_id().is_none(), "current_id names no goal");
    }
    // Display numbers name exactly the visible goals, and find them back.
    for (number, goal) in tree.numbered() {
        assert_ne!(
            goal.status,
            GoalStatus::Abandoned,
            "abandoned goal {number} numbered"
        );
        let found = tree.find_by_display(&number).map(|g| g.id.as_str());
        assert_eq!(
            found,
            Some(goal.id.as_str()),
            "number {number} does not find its goal"
        );
    }
    let prompt = tree.to_prompt();
    assert!(prompt.starts_with("## Current Plan\n"), "{prompt}");
    let _ = tree.to_todo_string();
}

/// Goal commands (JSON lines after a `{`-free first byte < 128, else generated from bytes)
/// applied to a plan, one after the other.
pub fn goal_command(data: &[u8]) {
    let mut tree = GoalTree::new("fuzz the plan");
    let now = "2026-01-01T00:00:00Z";
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let commands: Vec<GoalCommand> = if mode < 128 {
        rest.split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice::<GoalCommand>(line).ok())
            .collect()
    } else {
        let mut bytes = Bytes::new(rest);
        let mut commands = Vec::new();
        while bytes.more() && commands.len() < 64 {
            commands.push(goal_command_from(&mut bytes));
        }
        commands
    };
    for command in &commands {
        let before = tree.clone();
        match tree.apply_at(command, now) {
            Ok(outcome) => {
                assert!(
                    !outcome.message.is_empty(),
                    "an applied command says nothing"
                );
            }
            Err(error) => {
                assert_eq!(tree, before, "a refused command changed the plan: {error}");
                assert!(!error.to_string().is_empty());
            }
        }
        check_plan(&tree);
        // The plan survives its JSON form (goal.json and the API).
        let json = serde_json::to_string(&tree).unwrap_or_default();
        let back: GoalTree = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, tree, "the plan does not round-trip through JSON");
    }
}

// ---------------------------------------------------------------------------------------------
// The events.jsonl reader of the filesystem store.

/// The trace the `events.jsonl` inputs belong to.
pub const EVENTS_TRACE: &str = "cba3ee5f-7655-415c-9a6e-f77e8949edc2";

/// An `events.jsonl` as found on disk (possibly without its other files), opened by the store.
pub fn events_log(data: &[u8]) {
    let Ok(base) = tempfile::tempdir() else {
        return;
    };
    let folder = base.path().join(EVENTS_TRACE);
    if std::fs::create_dir_all(&folder).is_err()
        || std::fs::write(folder.join("events.jsonl"), data).is_err()
    {
        return;
    }
    runtime().block_on(async {
        let Ok(store) = agent_store_fs::FileSystemTraceStore::open(base.path())
            .map(|s| s.with_durability(agent_store_fs::Durability::Buffered))
        else {
            return;
        };
        let _ = store.list_traces(&TraceFilter::default()).await;
        let Ok(Some(trace)) = store.get_trace(EVENTS_TRACE).await else {
            return;
        };
        assert_eq!(trace.trace_id, EVENTS_TRACE, "the log names another trace");
        let events = match store.get_events(EVENTS_TRACE, 0).await {
            Ok(events) => events,
            Err(_) => return,
        };
        let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
        assert_eq!(
            ids,
            (1..=ids.len() as u64).collect::<Vec<_>>(),
            "a loaded log has holes or duplicates"
        );
        let Ok(messages) = store.get_trace_messages(EVENTS_TRACE).await else {
            return;
        };
        let _ = store.get_goal_tree(EVENTS_TRACE).await;
        // A loaded trace takes an append (the torn tail is cut first) and reads back densely.
        let added = store
            .add_message(EVENTS_TRACE, agent_execution::NewMessage::user("appended"))
            .await;
        drop(store);
        if added.is_err() {
            return;
        }
        let Ok(store) = agent_store_fs::FileSystemTraceStore::open(base.path())
            .map(|s| s.with_durability(agent_store_fs::Durability::Buffered))
        else {
            panic!("the store does not reopen after an append");
        };
        let after = store
            .get_events(EVENTS_TRACE, 0)
            .await
            .unwrap_or_else(|e| panic!("the appended log does not load: {e}"));
        let ids: Vec<u64> = after.iter().map(|e| e.event_id).collect();
        assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
        assert!(after.len() > events.len(), "the append is missing");
        let now = store
            .get_trace_messages(EVENTS_TRACE)
            .await
            .unwrap_or_else(|e| panic!("messages do not load after an append: {e}"));
        assert_eq!(now.len(), messages.len() + 1, "messages lost by an append");
    });
}

// ---------------------------------------------------------------------------------------------
// The SSE stream decoders.

/// A streamed response: the first byte picks the wire format, `0xFF` bytes split the rest into
/// the chunks it arrives in.
pub fn sse_stream(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let format = if mode % 2 == 0 {
        StreamFormat::OpenAi
    } else {
        StreamFormat::Anthropic
    };
    let chunks: Vec<Vec<u8>> = rest.split(|b| *b == 0xFF).map(<[u8]>::to_vec).collect();
    let result = runtime().block_on(collect_stream(decode_recorded_stream(format, chunks)));
    if let Ok(response) = result {
        for call in &response.tool_calls {
            assert!(
                !call.name.is_empty(),
                "a tool call without a name got through"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The context builder.

fn message(sequence: u64, role: Role, goal_id: Option<String>, content: Value) -> Message {
    Message {
        message_id: format!("m-{sequence:04}"),
        trace_id: "fuzz".into(),
        branch_id: None,
        role,
        sequence,
        goal_id,
        tool_call_id: None,
        tool_name: None,
        content: agent_execution::Content::from_stored(role, content, false),
        description: String::new(),
        tokens: None,
        cost: None,
        duration_ms: None,
        created_at: "2026-01-01T00:00:00Z".into(),
        metadata: Default::default(),
    }
}

/// A trace as the runner records it, made from bytes: a plan built by goal commands, a task,
/// then turns (an assistant message with unique call ids, then results for some of them in
/// any order, sometimes a stray one), user messages and compaction summaries; then its view.
pub fn context_builder(data: &[u8]) {
    let mut bytes = Bytes::new(data);
    let mut tree = GoalTree::new("fuzz the context");
    let mut messages = Vec::new();
    let mut sequence = 0;
    let mut next = || {
        sequence += 1;
        sequence
    };
    let tools = ["goal", "read_file", "bash", "skill", "grep", "explore"];
    messages.push(message(next(), Role::User, None, json!("the task")));
    let mut call_count = 0;
    while bytes.more() && messages.len() < 200 {
        let goal_id = match bytes.below(3) {
            0 => None,
            1 => tree.current_id().map(str::to_owned),
            _ => Some(format!("{}", bytes.below(12))),
        };
        match bytes.below(8) {
            0 => {
                let _ = tree.apply_at(&goal_command_from(&mut bytes), "2026-01-01T00:00:00Z");
            }
            1 => {
                let text = bytes.text(40);
                messages.push(message(next(), Role::User, goal_id, json!(text)));
            }
            2 => {
                let mut summary = message(next(), Role::User, goal_id, json!(bytes.text(40)));
                summary.metadata.insert("compaction".into(), json!(true));
                messages.push(summary);
            }
            _ => {
                let calls: Vec<(String, &str)> = (0..bytes.below(4))
                    .map(|_| {
                        call_count += 1;
                        (format!("c{call_count}"), tools[bytes.below(tools.len())])
                    })
                    .collect();
                let text = if bytes.one_in(2) {
                    Value::Null
                } else {
                    json!(bytes.text(30))
                };
                let content = json!({
                    "text": text,
                    "tool_calls": calls.iter().map(|(id, name)| json!({
                        "id": id, "name": name, "arguments": "{}",
                    })).collect::<Vec<_>>(),
                });
                messages.push(message(next(), Role::Assistant, goal_id.clone(), content));
                let mut answered: Vec<&(String, &str)> =
                    calls.iter().filter(|_| !bytes.one_in(4)).collect();
                if bytes.one_in(2) {
                    answered.reverse();
                }
                for (id, name) in answered {
                    let size = bytes.below(6) * 4000;
                    let mut result =
                        message(next(), Role::Tool, goal_id.clone(), json!("x".repeat(size)));
                    result.tool_call_id = Some(id.clone());
                    result.tool_name = Some((*name).to_owned());
                    messages.push(result);
                }
                if bytes.one_in(8) {
                    let mut stray = message(next(), Role::Tool, goal_id, json!("stray"));
                    stray.tool_call_id = Some(format!("stray{}", bytes.below(5)));
                    messages.push(stray);
                }
            }
        }
    }
    let window = [2_000, 8_000, 32_000, 128_000][bytes.below(4)];
    let budget = ContextBudget::for_window(window);
    let strategy = [
        CompactionStrategy::GoalsAndPrune,
        CompactionStrategy::PruneOnly,
        CompactionStrategy::Nothing,
    ][bytes.below(3)];
    let estimate = |text: &str| text.len() / 4;
    let input = ContextInput {
        system_prompt: "You are fuzzed.",
        tree: &tree,
        messages: &messages,
        budget: &budget,
        strategy,
        estimate: &estimate,
    };
    let view = build_context(&input);
    assert!(
        matches!(view.messages.first(), Some(ChatMessage::System(_))),
        "the view does not start with the system prompt"
    );
    assert!(
        view.messages
            .iter()
            .any(|m| matches!(m, ChatMessage::User(text) if text == "the task")),
        "the task left the view"
    );
    check_conversation(&view.messages);
    assert_eq!(
        build_context(&input),
        view,
        "the view is not a pure function"
    );
}

/// Every assistant turn of a view is followed by exactly one result per call, before anything
/// else, and there is no result without its call.
pub fn check_conversation(view: &[ChatMessage]) {
    let mut open: Vec<&str> = Vec::new();
    for message in view {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "calls without results: {open:?}");
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { tool_call_id, .. } => {
                let Some(at) = open.iter().position(|id| id == tool_call_id) else {
                    panic!("a result without its call: {tool_call_id}");
                };
                open.remove(at);
            }
            _ => assert!(open.is_empty(), "calls without results: {open:?}"),
        }
    }
    assert!(open.is_empty(), "calls without results: {open:?}");
}
