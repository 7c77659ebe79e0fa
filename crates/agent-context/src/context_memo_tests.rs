//! Tests of the context memo: a view built with a memo equals one built without.

use agent_goal::{GoalCommand, GoalTree};
use serde_json::json;

use super::tests::History;
use super::*;

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

fn apply(tree: &mut GoalTree, command: serde_json::Value) {
    let command: GoalCommand = serde_json::from_value(command).unwrap_or_else(|e| panic!("{e}"));
    tree.apply_at(&command, "2026-01-01T00:00:00Z")
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Three goals of many tool calls (the second abandoned), an unanswered call, and a
/// full-compaction summary, with the tree as it ends.
fn long_history() -> (GoalTree, History) {
    let mut tree = GoalTree::new("Check the records");
    apply(&mut tree, json!({"add": "One, Two, Three", "focus": "1"}));
    let mut h = History::default();
    h.user("Check the records");
    let mut call = 0;
    for goal in ["1", "2", "3"] {
        for _ in 0..12 {
            call += 1;
            let id = format!("c{call}");
            h.assistant(Some(goal), "", &[(&id, "read", r#"{"n":1}"#)]);
            let output = format!("record {call} ").repeat(15);
            h.tool(Some(goal), &id, "read", &output);
        }
        if goal == "2" {
            // A call the run never answered.
            h.assistant(Some(goal), "Trying once more.", &[("lost", "read", "{}")]);
            h.compaction("Summary of the conversation so far: records 1 to 24 read.");
        }
    }
    apply(&mut tree, json!({"done": "one is fine", "focus": "2"}));
    // Once "Two" is abandoned it leaves the numbering, and "Three" is number 2.
    apply(
        &mut tree,
        json!({"abandon": "two is a dead end", "focus": "2"}),
    );
    (tree, h)
}

fn input<'a>(
    tree: &'a GoalTree,
    messages: &'a [Message],
    budget: &'a ContextBudget,
    strategy: CompactionStrategy,
) -> ContextInput<'a> {
    ContextInput {
        system_prompt: "You are a careful agent.",
        tree,
        messages,
        budget,
        strategy,
        estimate: &words,
    }
}

#[test]
fn a_memo_kept_across_steps_gives_the_same_view_at_every_step() {
    let (tree, history) = long_history();
    let budget = ContextBudget {
        prune_protect: 60,
        prune_minimum: 30,
        ..ContextBudget::for_window(400)
    };
    for strategy in [
        CompactionStrategy::GoalsAndPrune,
        CompactionStrategy::PruneOnly,
        CompactionStrategy::Nothing,
    ] {
        let mut memo = ContextMemo::new();
        let mut pruned_somewhere = false;
        let mut compacted_somewhere = false;
        for end in 1..=history.messages.len() {
            let messages = &history.messages[..end];
            let fresh = build_context(&input(&tree, messages, &budget, strategy));
            let memoised =
                build_context_with(&input(&tree, messages, &budget, strategy), &mut memo);
            assert_eq!(fresh, memoised, "{strategy:?}, first {end} messages");
            pruned_somewhere |= fresh.pruned_outputs > 0;
            compacted_somewhere |= !fresh.compacted_goals.is_empty();
        }
        assert!(!memo.is_empty());
        assert_eq!(
            compacted_somewhere,
            strategy == CompactionStrategy::GoalsAndPrune,
            "{strategy:?}"
        );
        assert_eq!(
            pruned_somewhere,
            strategy != CompactionStrategy::Nothing,
            "{strategy:?}"
        );
    }
}

#[test]
fn a_message_edited_to_another_length_is_estimated_again() {
    let (tree, mut history) = long_history();
    let budget = ContextBudget::for_window(1_000_000);
    let strategy = CompactionStrategy::PruneOnly;
    let mut memo = ContextMemo::new();
    build_context_with(
        &input(&tree, &history.messages, &budget, strategy),
        &mut memo,
    );
    let last = history.messages.len() - 1;
    history.messages[last].content = agent_execution::Content::Text("a much shorter text".into());
    let fresh = build_context(&input(&tree, &history.messages, &budget, strategy));
    let memoised = build_context_with(
        &input(&tree, &history.messages, &budget, strategy),
        &mut memo,
    );
    assert_eq!(fresh, memoised);
    assert_eq!(
        fresh.estimated_tokens,
        estimate_chat(&fresh.messages, &words)
    );
}
