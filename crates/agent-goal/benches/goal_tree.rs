//! Benchmarks of the per-message roll-up and of the plan text on a tree of 9,840 goals
//! (three children per goal, eight levels deep).

use std::hint::black_box;
use std::time::Duration;

use agent_goal::{GoalCommand, GoalTree, PlanItem, StatsDelta};
use criterion::{Criterion, criterion_group, criterion_main};

const NOW: &str = "2026-01-01T00:00:00Z";
const FAN_OUT: usize = 3;
const DEPTH: usize = 8;

/// A full tree, built as plan mode builds one (a plan of pending goals, depth first, so ids
/// grow with creation order as the tool would make them), then the deepest goal of the first
/// branch focused: it is current and its ancestors are in progress.
fn big_tree() -> GoalTree {
    let mut items = Vec::new();
    plan_level(&mut items, 0);
    let mut tree = GoalTree::new("Benchmark mission").replan_at(&items, NOW);
    let deepest = ["1"; DEPTH].join(".");
    let focus = GoalCommand {
        focus: Some(deepest),
        ..GoalCommand::default()
    };
    if let Err(error) = tree.apply_at(&focus, NOW) {
        panic!("cannot focus the deepest goal: {error}");
    }
    tree
}

/// Appends the goals at `depth` and everything under them, `FAN_OUT` per parent.
fn plan_level(items: &mut Vec<PlanItem>, depth: usize) {
    if depth == DEPTH {
        return;
    }
    for child in 0..FAN_OUT {
        items.push(PlanItem {
            depth,
            description: format!("Goal at depth {depth}, child {child}"),
            agent: None,
            ..PlanItem::default()
        });
        plan_level(items, depth + 1);
    }
}

fn benches(c: &mut Criterion) {
    let mut tree = big_tree();
    assert_eq!(tree.goals().len(), 9_840);
    let leaf = tree.current_id().unwrap_or_default().to_owned();
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
