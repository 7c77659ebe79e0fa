//! The incremental view against the pure function: over random histories (goal commands,
//! tool calls with and without results, results recorded late, repeated call ids, queued user
//! messages, full-compaction summaries) and varying budgets, the view after every step equals
//! the one built from scratch.

use agent_execution::Content;
use agent_execution::message::{Message, Role};
use agent_goal::{GoalCommand, GoalTree};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::compaction::{COMPACTION_KEY, ContextBudget, PRUNED_MARKER};
use crate::context::build_context;

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// One thing that happens to a trace between two builds of its context.
#[derive(Debug, Clone)]
enum Event {
    /// A goal command: add, focus, done or abandon (it may be refused by the tree).
    Goal(u8, u8),
    /// An assistant turn with calls `(tool, output words, answered)`.
    Turn(Vec<(u8, u8, u8)>),
    /// The result of an earlier call, recorded late.
    Late(u8),
    /// A user message sent while the run works.
    User(u8),
    /// A message recorded under goal `n` whatever the current goal is (as a message queued
    /// while an earlier goal was current).
    Under(u8),
    /// A full-compaction summary.
    Compaction,
    /// A system message (never shown).
    System,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => (0u8..4, 0u8..6).prop_map(|(kind, n)| Event::Goal(kind, n)),
        8 => prop::collection::vec((0u8..4, 0u8..40, 0u8..10), 0..4).prop_map(Event::Turn),
        1 => (0u8..255).prop_map(Event::Late),
        1 => (0u8..8).prop_map(Event::User),
        1 => (1u8..6).prop_map(Event::Under),
        1 => Just(Event::Compaction),
        1 => Just(Event::System),
    ]
}

/// How the context is built at one step.
#[derive(Debug, Clone)]
struct Build {
    protected_turns: usize,
    prune_protect: usize,
    prune_minimum: usize,
    window: usize,
    strategy: u8,
    /// Whether the view is still held by a request when the next one is built.
    hold: bool,
}

fn build() -> impl Strategy<Value = Build> {
    (
        0usize..4,
        0usize..120,
        0usize..80,
        50usize..2_000,
        0u8..12,
        any::<bool>(),
    )
        .prop_map(
            |(protected_turns, prune_protect, prune_minimum, window, strategy, hold)| Build {
                protected_turns,
                prune_protect,
                prune_minimum,
                window,
                strategy,
                hold,
            },
        )
}

/// A trace being recorded: its messages and goal tree.
struct Trace {
    tree: GoalTree,
    messages: Vec<Message>,
    calls: Vec<(String, String)>,
    next_call: usize,
}

impl Trace {
    fn new() -> Self {
        let mut trace = Trace {
            tree: GoalTree::new("Check the records"),
            messages: Vec::new(),
            calls: Vec::new(),
            next_call: 0,
        };
        trace.push(Role::User, json!("Check the records"));
        trace
    }

    fn push(&mut self, role: Role, content: Value) -> &mut Message {
        let sequence = self.messages.len() as u64 + 1;
        self.messages.push(Message {
            message_id: format!("t-{sequence:04}"),
            trace_id: "t".into(),
            branch_id: None,
            role,
            sequence,
            goal_id: self.tree.current_id().map(str::to_owned),
            tool_call_id: None,
            tool_name: None,
            content: Content::from_stored(role, content, false),
            description: String::new(),
            tokens: None,
            cost: None,
            duration_ms: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            metadata: Default::default(),
        });
        self.messages.last_mut().unwrap_or_else(|| unreachable!())
    }

    fn result(&mut self, id: &str, name: &str, output: &str) {
        let message = self.push(Role::Tool, json!(output));
        message.tool_call_id = Some(id.to_owned());
        message.tool_name = Some(name.to_owned());
    }

    fn apply(&mut self, event: &Event) {
        match event {
            Event::Goal(kind, n) => {
                let number = ["1", "2", "3", "1.1", "1.2", "2.1"][usize::from(*n)];
                let command = match kind {
                    0 => json!({"add": "One, Two", "focus": number}),
                    1 => json!({"focus": number}),
                    2 => json!({"done": format!("finished {n}")}),
                    _ => json!({"abandon": format!("dead end {n}")}),
                };
                if let Ok(command) = serde_json::from_value::<GoalCommand>(command) {
                    let _ = self.tree.apply_at(&command, "2026-01-01T00:00:00Z");
                }
            }
            Event::Turn(calls) => {
                let mut made = Vec::new();
                for (tool, size, answered) in calls {
                    let name = ["read", "goal", "emit", "read"][usize::from(*tool)];
                    // Now and then an id the trace already used.
                    let id = match self.calls.first() {
                        Some((id, _)) if *answered == 9 && *size % 2 == 0 => id.clone(),
                        _ => {
                            self.next_call += 1;
                            format!("c{}", self.next_call)
                        }
                    };
                    self.calls.push((id.clone(), name.to_owned()));
                    made.push((id, name, *size, *answered));
                }
                let tool_calls: Vec<Value> = made
                    .iter()
                    .map(|(id, name, _, _)| json!({"id": id, "name": name, "arguments": "{}"}))
                    .collect();
                let text = if made.is_empty() {
                    json!("Thinking.")
                } else {
                    Value::Null
                };
                self.push(
                    Role::Assistant,
                    json!({"text": text, "tool_calls": tool_calls}),
                );
                for (id, name, size, answered) in made {
                    if answered < 8 {
                        let output = if size == 39 {
                            format!("{PRUNED_MARKER}: about 3 tokens]")
                        } else {
                            format!("row{size} ").repeat(usize::from(size))
                        };
                        self.result(&id, name, &output);
                    }
                }
            }
            Event::Late(n) => {
                if !self.calls.is_empty() {
                    let (id, name) = self.calls[usize::from(*n) % self.calls.len()].clone();
                    self.result(&id, &name, "a late result");
                }
            }
            Event::User(n) => {
                self.push(Role::User, json!(format!("Also check row {n}.")));
            }
            Event::Under(n) => {
                let message = self.push(Role::User, json!(format!("About goal {n}.")));
                message.goal_id = Some(n.to_string());
            }
            Event::Compaction => {
                let message = self.push(Role::User, json!("Summary: rows read so far."));
                message.metadata.insert(COMPACTION_KEY.into(), json!(true));
            }
            Event::System => {
                self.push(Role::System, json!("A note for the record."));
            }
        }
    }
}

fn check(trace: &Trace, build: &Build, incremental: &mut IncrementalContext) {
    let budget = ContextBudget {
        context_window: build.window,
        compaction_ratio: 0.7,
        prune_protect: build.prune_protect,
        prune_minimum: build.prune_minimum,
        protected_turns: build.protected_turns,
        ..ContextBudget::for_window(build.window)
    };
    // Mostly the default strategy, as a run keeps one.
    let strategy = match build.strategy {
        0 => CompactionStrategy::PruneOnly,
        1 => CompactionStrategy::Nothing,
        _ => CompactionStrategy::GoalsAndPrune,
    };
    let input = ContextInput {
        system_prompt: "You are a careful agent.",
        tree: &trace.tree,
        messages: &trace.messages,
        budget: &budget,
        strategy,
        estimate: &words,
    };
    let expected = build_context(&input);
    let got = incremental.build_shared(&input);
    assert_eq!(got.to_view(), expected);
    // A request may still hold the view when the next one is built: it must not change.
    if build.hold {
        let held = got.messages.to_vec();
        let later = incremental.build_shared(&input);
        assert_eq!(*got.messages, held);
        assert_eq!(later, got);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_incremental_view_equals_a_rebuild_after_every_step(
        steps in prop::collection::vec((event(), build()), 1..60),
    ) {
        let mut trace = Trace::new();
        let mut incremental = IncrementalContext::new();
        for (event, build) in &steps {
            trace.apply(event);
            check(&trace, build, &mut incremental);
        }
    }
}

#[test]
fn a_long_run_without_goals_extends_the_view() {
    let mut trace = Trace::new();
    let mut incremental = IncrementalContext::new();
    let build = Build {
        protected_turns: 2,
        prune_protect: 60,
        prune_minimum: 20,
        window: 100_000,
        strategy: 5,
        hold: false,
    };
    for n in 0..200u8 {
        trace.apply(&Event::Turn(vec![(0, n % 30, 0)]));
        check(&trace, &build, &mut incremental);
    }
    assert!(incremental.stuck.is_none());
    assert_eq!(incremental.conversation.consumed, trace.messages.len());
}

#[test]
fn a_result_recorded_after_its_call_was_interrupted_is_shown_in_its_place() {
    let mut trace = Trace::new();
    let mut incremental = IncrementalContext::new();
    let build = Build {
        protected_turns: 0,
        prune_protect: 1_000,
        prune_minimum: 1_000,
        window: 100_000,
        strategy: 5,
        hold: false,
    };
    trace.apply(&Event::Turn(vec![(0, 3, 8)]));
    check(&trace, &build, &mut incremental);
    trace.apply(&Event::User(1));
    check(&trace, &build, &mut incremental);
    trace.apply(&Event::Late(0));
    check(&trace, &build, &mut incremental);
    assert!(incremental.stuck.is_some());
    // A full-compaction summary hides the turn, and the view is incremental again.
    trace.apply(&Event::Compaction);
    check(&trace, &build, &mut incremental);
    trace.apply(&Event::Turn(vec![(0, 3, 0)]));
    check(&trace, &build, &mut incremental);
    assert!(incremental.stuck.is_none());
}

#[test]
fn a_summary_added_in_a_later_step_joins_the_one_before_it() {
    let mut trace = Trace::new();
    let mut incremental = IncrementalContext::new();
    let build = Build {
        protected_turns: 2,
        prune_protect: 1_000,
        prune_minimum: 1_000,
        window: 100_000,
        strategy: 5,
        hold: false,
    };
    trace.apply(&Event::Goal(0, 0));
    trace.apply(&Event::Goal(2, 0));
    trace.apply(&Event::Goal(1, 1));
    trace.apply(&Event::Goal(3, 1));
    check(&trace, &build, &mut incremental);
    trace.apply(&Event::Under(1));
    check(&trace, &build, &mut incremental);
    trace.apply(&Event::Under(2));
    check(&trace, &build, &mut incremental);
    let view = incremental.build(&ContextInput {
        system_prompt: "",
        tree: &trace.tree,
        messages: &trace.messages,
        budget: &ContextBudget::for_window(100_000),
        strategy: CompactionStrategy::GoalsAndPrune,
        estimate: &words,
    });
    assert_eq!(view.compacted_goals, ["1", "2"]);
    let joined = view.messages.iter().any(|m| {
        matches!(m, ChatMessage::User(text) if text.contains("completed") && text.contains('\n'))
    });
    assert!(joined, "{view:#?}");
}
