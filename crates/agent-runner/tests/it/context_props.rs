//! Property test of the context builder: for random histories of goal edits, tool calls (some
//! left without a result) and outputs of random size, the view never separates a tool call
//! from its result, always keeps the task and the plan, and reports its size consistently.

use std::collections::HashSet;

use agent_execution::{Message, Role};
use agent_goal::{GoalCommand, GoalTree};
use agent_llm::ChatMessage;
use agent_runner::context::{ContextInput, build_context, estimate_chat};
use agent_runner::{CompactionStrategy, ContextBudget};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Op {
    /// A goal command built from (kind, number, text).
    Goal(u8, u8, u8),
    /// An assistant turn with `calls` calls of outputs `size` words, the last `missing` unanswered.
    Turn { calls: u8, size: u16, missing: u8 },
    /// A full-compaction summary.
    Compaction,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..5, 0u8..4, 0u8..4).prop_map(|(k, n, t)| Op::Goal(k, n, t)),
        6 => (0u8..4, 0u16..3000, 0u8..2).prop_map(|(calls, size, missing)| Op::Turn { calls, size, missing }),
        1 => Just(Op::Compaction),
    ]
}

fn command(kind: u8, number: u8, text: u8) -> GoalCommand {
    let number = format!("{}", number % 3 + 1);
    let text = format!("step {text}");
    match kind {
        0 => GoalCommand {
            add: Some(format!("{text}, {text} b")),
            ..Default::default()
        },
        1 => GoalCommand {
            focus: Some(number),
            ..Default::default()
        },
        2 => GoalCommand {
            done: Some(text),
            ..Default::default()
        },
        3 => GoalCommand {
            abandon: Some(text),
            ..Default::default()
        },
        _ => GoalCommand {
            add: Some(text),
            focus: Some(number),
            ..Default::default()
        },
    }
}

fn message(seq: u64, role: Role, goal: Option<String>, content: Value) -> Message {
    Message {
        message_id: format!("t-{seq:04}"),
        trace_id: "t".into(),
        branch_id: None,
        role,
        sequence: seq,
        goal_id: goal,
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

/// Plays the ops into a goal tree and a stored history.
fn play(ops: &[Op]) -> (GoalTree, Vec<Message>) {
    let mut tree = GoalTree::new("mission");
    let mut messages = vec![message(1, Role::User, None, json!("THE TASK"))];
    let mut call = 0;
    for op in ops {
        let goal = tree.current_id().map(str::to_owned);
        let next = |messages: &mut Vec<Message>, role, content| -> usize {
            let seq = messages.len() as u64 + 1;
            messages.push(message(seq, role, goal.clone(), content));
            messages.len() - 1
        };
        match op {
            Op::Goal(kind, number, text) => {
                let _ = tree.apply_at(&command(*kind, *number, *text), "2026-01-01T00:00:00Z");
            }
            Op::Compaction => {
                let i = next(&mut messages, Role::User, json!("SUMMARY"));
                messages[i]
                    .metadata
                    .insert("compaction".into(), json!(true));
            }
            Op::Turn {
                calls,
                size,
                missing,
            } => {
                let ids: Vec<String> = (0..*calls)
                    .map(|_| {
                        call += 1;
                        format!("c{call}")
                    })
                    .collect();
                let names = ["read_file", "goal", "bash"];
                let calls_json: Vec<Value> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, id)| json!({"id": id, "name": names[i % 3], "arguments": "{}"}))
                    .collect();
                next(
                    &mut messages,
                    Role::Assistant,
                    json!({"text": "thinking", "tool_calls": calls_json}),
                );
                let answered = ids.len().saturating_sub(*missing as usize);
                for (i, id) in ids.iter().take(answered).enumerate() {
                    let output = vec!["w"; *size as usize].join(" ");
                    let m = next(&mut messages, Role::Tool, json!(output));
                    messages[m].tool_call_id = Some(id.clone());
                    messages[m].tool_name = Some(names[i % 3].into());
                }
            }
        }
    }
    (tree, messages)
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_view_is_always_a_valid_conversation(
        ops in proptest::collection::vec(op(), 0..60),
        window in 2_000usize..200_000,
        strategy in prop_oneof![
            Just(CompactionStrategy::GoalsAndPrune),
            Just(CompactionStrategy::PruneOnly),
            Just(CompactionStrategy::Nothing),
        ],
    ) {
        let (tree, messages) = play(&ops);
        let mut budget = ContextBudget::for_window(window);
        budget.prune_protect = window / 4;
        budget.prune_minimum = window / 10;
        let view = build_context(&ContextInput {
            system_prompt: "system",
            tree: &tree,
            messages: &messages,
            budget: &budget,
            strategy,
            estimate: &words,
        });
        let chat = &view.messages;

        // The prompt, then the plan (the end of the system prompt, in a system message of its
        // own so that the prompt before it stays the same), and the task right after them.
        prop_assert_eq!(&chat[0], &ChatMessage::System("system".into()));
        prop_assert_eq!(&chat[1], &ChatMessage::System(tree.to_prompt()));
        prop_assert_eq!(&chat[2], &ChatMessage::User("THE TASK".into()));

        // Every call is answered right after its turn, once; every result answers such a call.
        let mut open: Vec<String> = Vec::new();
        let mut answered: HashSet<String> = HashSet::new();
        for message in chat {
            match message {
                ChatMessage::Assistant { tool_calls, .. } => {
                    prop_assert!(open.is_empty(), "a turn started with calls {:?} unanswered", open);
                    open = tool_calls.iter().map(|c| c.id.clone()).collect();
                }
                ChatMessage::Tool { tool_call_id, .. } => {
                    prop_assert!(open.contains(tool_call_id), "result {} without its call", tool_call_id);
                    open.retain(|id| id != tool_call_id);
                    prop_assert!(answered.insert(tool_call_id.clone()), "two results for {}", tool_call_id);
                }
                other => {
                    prop_assert!(open.is_empty(), "{:?} separates calls {:?} from results", other, open);
                }
            }
        }
        prop_assert!(open.is_empty(), "calls {:?} left without results", open);

        // The size is reported consistently, and the flag follows it.
        prop_assert_eq!(view.estimated_tokens, estimate_chat(chat, &words));
        prop_assert_eq!(view.needs_full_compaction, view.estimated_tokens > budget.compaction_threshold());

        // Keeping everything is never smaller than compacting.
        if strategy == CompactionStrategy::GoalsAndPrune {
            let full = build_context(&ContextInput {
                system_prompt: "system",
                tree: &tree,
                messages: &messages,
                budget: &budget,
                strategy: CompactionStrategy::Nothing,
                estimate: &words,
            });
            let hidden_goals = view.compacted_goals.len();
            // Summary lines are short; each may add at most a few words over tiny messages.
            prop_assert!(view.estimated_tokens <= full.estimated_tokens + hidden_goals * 40);
        }
    }
}
