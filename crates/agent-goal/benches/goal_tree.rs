//! Benchmarks of the per-message roll-up and of the plan text on a tree of 9,840 goals
//! (three children per goal, eight levels deep).

use std::hint::black_box;
use std::time::Duration;

use agent_goal::{Goal, GoalStatus, GoalTree, StatsDelta};
use criterion::{Criterion, criterion_group, criterion_main};

const NOW: &str = "2026-01-01T00:00:00Z";
const FAN_OUT: usize = 3;
const DEPTH: usize = 8;

/// A full tree built level by level, so ids grow with creation order as the tool would make
/// them; the first goal of every level is in progress and the deepest one is current.
fn big_tree() -> GoalTree {
    let mut tree = GoalTree::new("Benchmark mission");
    let mut level: Vec<Option<String>> = vec![None];
    let mut next = 1u64;
    for depth in 0..DEPTH {
        let mut below = Vec::new();
        for parent in &level {
            for child in 0..FAN_OUT {
                let id = next.to_string();
                next += 1;
                let mut goal = Goal::new(
                    id.clone(),
                    parent.clone(),
                    format!("Goal at depth {depth}, child {child}"),
                    NOW,
                );
                if below.is_empty() {
                    goal.status = GoalStatus::InProgress;
                    tree.current_id = Some(id.clone());
                }
                tree.goals.push(goal);
                below.push(Some(id));
            }
        }
        level = below;
    }
    tree.next_id = next;
    tree
}

fn benches(c: &mut Criterion) {
    let mut tree = big_tree();
    assert_eq!(tree.goals.len(), 9_840);
    let leaf = tree.current_id.clone().unwrap_or_default();
    assert_eq!(tree.ancestors(&leaf).len(), DEPTH - 1);
    let delta = StatsDelta {
        tokens: 1_000,
        cost: 0.001,
        tools: vec!["read_file".to_owned(), "edit_file".to_owned()],
    };

    let mut group = c.benchmark_group("goal_tree_10k");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    group.bench_function("record_message_depth_8", |b| {
        b.iter(|| tree.record_message(black_box(&leaf), black_box(&delta), NOW))
    });
    let plain = StatsDelta {
        tools: Vec::new(),
        ..delta.clone()
    };
    group.bench_function("record_message_depth_8_without_tools", |b| {
        b.iter(|| tree.record_message(black_box(&leaf), black_box(&plain), NOW))
    });
    group.bench_function("to_prompt", |b| b.iter(|| black_box(&tree).to_prompt()));
    group.finish();
}

criterion_group!(goal_tree, benches);
criterion_main!(goal_tree);
