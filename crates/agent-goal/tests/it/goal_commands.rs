//! Property test: random sequences of goal commands, messages, explorations and re-plans never
//! panic and never break the tree's invariants, and a refused operation leaves the tree
//! unchanged.

use std::collections::HashSet;

use agent_goal::{GoalCommand, GoalStatus, GoalTree, StatsDelta, parse_plan};
use proptest::prelude::*;

const NOW: &str = "2026-01-01T00:00:00Z";

/// One step of a random session.
#[derive(Debug, Clone)]
enum Op {
    /// A goal tool call.
    Apply(Box<GoalCommand>),
    /// A message attached to the goal at this position (modulo the goal count), or to an
    /// unknown id when there are no goals.
    Record {
        pick: usize,
        tokens: u64,
        cost: f64,
        tools: Vec<String>,
    },
    /// An exploration started under the current goal.
    StartExplore { branches: usize },
    /// The exploration at this position among explore_start goals merged.
    FinishExplore { pick: usize, summary: String },
    /// The tree replaced by a fresh plan read from its own plan text (plan mode's edit).
    Replan,
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[1-3]",
        4 => "[1-2]\\.[1-3]",
        2 => "[1-2]\\.[1-2]\\.[1-2]",
        1 => Just("x".to_owned()),
        1 => Just("0".to_owned()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![6 => "[a-z]{1,4}", 1 => Just(String::new())]
}

fn add() -> impl Strategy<Value = String> {
    prop::collection::vec("[A-E][a-z]{0,2}", 0..4).prop_map(|items| items.join(", "))
}

/// Any combination of fields, mostly refused.
fn any_command() -> impl Strategy<Value = GoalCommand> {
    let edit = (number(), text()).prop_map(|(n, t)| format!("{n}: {t}"));
    let delete = prop::collection::vec(number(), 1..3).prop_map(|items| items.join(", "));
    (
        prop::option::weighted(0.4, add()),
        prop::option::weighted(0.25, text()),
        prop::option::weighted(0.15, text()),
        prop::option::weighted(0.45, number()),
        prop::option::weighted(0.1, text()),
        prop::option::weighted(0.1, edit),
        prop::option::weighted(0.1, delete),
    )
        .prop_map(
            |(add, done, abandon, focus, reason, edit, delete)| GoalCommand {
                add,
                done,
                abandon,
                focus,
                reason,
                edit,
                delete,
                agent: None,
                select: None,
                ..GoalCommand::default()
            },
        )
}

/// The calls a model typically makes, mostly accepted.
fn typical_command() -> impl Strategy<Value = GoalCommand> {
    prop_oneof![
        3 => add().prop_map(|add| GoalCommand { add: Some(add), ..GoalCommand::default() }),
        4 => number().prop_map(|n| GoalCommand { focus: Some(n), ..GoalCommand::default() }),
        3 => text().prop_map(|t| GoalCommand { done: Some(t), ..GoalCommand::default() }),
        1 => text().prop_map(|t| GoalCommand { abandon: Some(t), ..GoalCommand::default() }),
        1 => (add(), number()).prop_map(|(add, n)| GoalCommand {
            add: Some(add),
            focus: Some(n),
            ..GoalCommand::default()
        }),
        1 => (text(), number()).prop_map(|(t, n)| GoalCommand {
            done: Some(t),
            focus: Some(n),
            ..GoalCommand::default()
        }),
        1 => (number(), text()).prop_map(|(n, t)| GoalCommand {
            edit: Some(format!("{n}: {t}")),
            ..GoalCommand::default()
        }),
        1 => number().prop_map(|n| GoalCommand { delete: Some(n), ..GoalCommand::default() }),
    ]
}

fn command() -> impl Strategy<Value = GoalCommand> {
    prop_oneof![3 => typical_command(), 1 => any_command()]
}

fn op() -> impl Strategy<Value = Op> {
    let tools = prop::collection::vec(prop::sample::select(vec!["read", "edit", "bash"]), 0..4)
        .prop_map(|names| names.into_iter().map(str::to_owned).collect());
    prop_oneof![
        12 => command().prop_map(|cmd| Op::Apply(Box::new(cmd))),
        5 => (any::<usize>(), 0u64..5_000, 0u32..1_000, tools).prop_map(
            |(pick, tokens, millicents, tools)| Op::Record {
                pick,
                tokens,
                cost: f64::from(millicents) / 100_000.0,
                tools,
            }
        ),
        1 => (0usize..3).prop_map(|branches| Op::StartExplore { branches }),
        1 => (any::<usize>(), text()).prop_map(|(pick, summary)| Op::FinishExplore { pick, summary }),
        1 => Just(Op::Replan),
    ]
}

/// Runs one step; returns the ids it created, or `None` when the step was refused.
fn run(tree: &mut GoalTree, op: &Op) -> Option<Vec<String>> {
    match op {
        Op::Apply(cmd) => tree.apply_at(cmd, NOW).ok().map(|outcome| {
            let mut reported: Vec<&String> = outcome.added.iter().collect();
            reported.extend(&outcome.updated);
            reported.extend(&outcome.removed);
            let unique: HashSet<&String> = reported.iter().copied().collect();
            assert_eq!(
                unique.len(),
                reported.len(),
                "an id is reported twice: {outcome:?}"
            );
            for id in &outcome.removed {
                assert!(tree.get(id).is_none(), "removed goal {id} is still there");
            }
            assert!(!outcome.message.is_empty());
            outcome.added
        }),
        Op::Record {
            pick,
            tokens,
            cost,
            tools,
        } => {
            let id = if tree.goals().is_empty() {
                "999".to_owned()
            } else {
                tree.goals()[pick % tree.goals().len()].id.clone()
            };
            let delta = StatsDelta {
                tokens: *tokens,
                cost: *cost,
                tools: tools.clone(),
            };
            let affected = tree.record_message(&id, &delta, NOW).ok()?;
            let mut expected = vec![id.clone()];
            expected.extend(tree.ancestors(&id).iter().map(|g| g.id.clone()));
            assert_eq!(affected, expected);
            Some(Vec::new())
        }
        Op::StartExplore { branches } => {
            let names = ["A", "B", "C"][..*branches]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
            tree.start_explore("Explore", names, NOW)
                .ok()
                .map(|id| vec![id])
        }
        Op::FinishExplore { pick, summary } => {
            let starts: Vec<String> = tree
                .goals()
                .iter()
                .filter(|g| g.branch_ids.is_some())
                .map(|g| g.id.clone())
                .collect();
            let id = if starts.is_empty() {
                "999".to_owned()
            } else {
                starts[pick % starts.len()].clone()
            };
            tree.finish_explore(&id, summary, None, NOW)
                .ok()
                .map(|merge| vec![merge])
        }
        Op::Replan => {
            let text = tree.plan_text();
            let items = parse_plan(&text).ok()?;
            let fresh = tree.replan_at(&items, NOW);
            assert_eq!(fresh.plan_text(), text, "the text survives a re-plan");
            assert_eq!(fresh.mission(), tree.mission());
            assert_eq!(fresh.current_id(), None);
            assert!(
                fresh
                    .goals()
                    .iter()
                    .all(|g| g.status == GoalStatus::Pending)
            );
            *tree = fresh;
            Some(tree.goals().iter().map(|g| g.id.clone()).collect())
        }
    }
}

fn check_invariants(tree: &GoalTree, ever: &HashSet<String>) {
    // Ids are unique, numeric, below next_id, and every one was handed out exactly once.
    let ids: HashSet<&str> = tree.goals().iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids.len(), tree.goals().len(), "duplicate ids");
    for goal in tree.goals() {
        let n: u64 = goal.id.parse().expect("numeric id");
        assert!(
            n < tree.next_id(),
            "id {n} not below next_id {}",
            tree.next_id()
        );
        assert!(
            ever.contains(&goal.id),
            "id {} was never reported as created",
            goal.id
        );
    }

    // Display numbers: the visible children of every visible parent (and of the top level)
    // are numbered <parent>.1, <parent>.2, ... consecutively, and numbers resolve back.
    let mut parents: Vec<(Option<&str>, String)> = vec![(None, String::new())];
    while let Some((parent, prefix)) = parents.pop() {
        let visible = tree
            .children(parent)
            .filter(|g| g.status != GoalStatus::Abandoned);
        for (position, goal) in visible.enumerate() {
            let expected = if prefix.is_empty() {
                (position + 1).to_string()
            } else {
                format!("{prefix}.{}", position + 1)
            };
            assert_eq!(
                tree.display_number(&goal.id).as_deref(),
                Some(expected.as_str())
            );
            assert_eq!(
                tree.find_by_display(&expected).map(|g| &g.id),
                Some(&goal.id)
            );
            parents.push((Some(goal.id.as_str()), expected));
        }
    }
    let numbered: HashSet<&str> = tree.numbered().iter().map(|(_, g)| g.id.as_str()).collect();
    for goal in tree.goals() {
        let hidden = goal.status == GoalStatus::Abandoned
            || tree
                .ancestors(&goal.id)
                .iter()
                .any(|a| a.status == GoalStatus::Abandoned);
        assert_eq!(
            tree.display_number(&goal.id).is_none(),
            hidden,
            "goal {}",
            goal.id
        );
        assert_eq!(numbered.contains(goal.id.as_str()), !hidden);
    }

    // Cumulative statistics are the goal's own plus its children's.
    for goal in tree.goals() {
        let children: Vec<_> = tree.children(Some(&goal.id)).collect();
        let count: u64 = children
            .iter()
            .map(|c| c.cumulative_stats.message_count)
            .sum();
        let tokens: u64 = children
            .iter()
            .map(|c| c.cumulative_stats.total_tokens)
            .sum();
        let cost: f64 = children.iter().map(|c| c.cumulative_stats.total_cost).sum();
        let own = &goal.self_stats;
        let all = &goal.cumulative_stats;
        assert_eq!(
            all.message_count,
            own.message_count + count,
            "goal {}",
            goal.id
        );
        assert_eq!(
            all.total_tokens,
            own.total_tokens + tokens,
            "goal {}",
            goal.id
        );
        assert!(
            (all.total_cost - own.total_cost - cost).abs() < 1e-9,
            "goal {}",
            goal.id
        );
        if all.message_count == 0 {
            assert_eq!(all.preview, None);
        }
    }

    // The current goal and all its ancestors are in progress.
    if let Some(id) = tree.current_id() {
        let current = tree.get(id).expect("current goal exists");
        assert_eq!(current.status, GoalStatus::InProgress);
        for ancestor in tree.ancestors(id) {
            assert_eq!(
                ancestor.status,
                GoalStatus::InProgress,
                "ancestor {}",
                ancestor.id
            );
        }
    }

    // A finished goal has a summary, and no open goal sits under a finished one.
    for goal in tree.goals() {
        if goal.status.is_finished() {
            assert!(
                goal.summary.as_deref().is_some_and(|s| !s.is_empty()),
                "{goal:?}"
            );
        }
        // A pending goal never started, so nothing under it did (a re-plan gives pending goals
        // pending children; the goal tool adds children only under the goal in progress).
        if goal.status == GoalStatus::Pending {
            assert!(
                tree.children(Some(&goal.id))
                    .all(|child| child.status == GoalStatus::Pending),
                "a goal under pending goal {} has started",
                goal.id
            );
        }
        for ancestor in tree.ancestors(&goal.id) {
            if ancestor.status == GoalStatus::Completed {
                assert!(
                    !goal.status.is_open(),
                    "open goal {} under completed {}",
                    goal.id,
                    ancestor.id
                );
            }
            if ancestor.status == GoalStatus::Abandoned {
                assert!(
                    !goal.status.is_open(),
                    "open goal {} under abandoned {}",
                    goal.id,
                    ancestor.id
                );
            }
        }
    }

    // The texts render without panicking and agree on the current goal.
    let prompt = tree.to_prompt();
    assert_eq!(prompt.contains(" ← current"), tree.current_id().is_some());
    let _ = tree.to_todo_string();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_sessions_keep_the_invariants(ops in prop::collection::vec(op(), 1..60)) {
        let mut tree = GoalTree::new("Mission");
        let mut ever: HashSet<String> = HashSet::new();
        for op in &ops {
            let before = tree.clone();
            match run(&mut tree, op) {
                Some(created) => {
                    for id in created {
                        prop_assert!(ever.insert(id.clone()), "id {} handed out twice", id);
                    }
                }
                None => prop_assert_eq!(&tree, &before, "a refused {:?} changed the tree", op),
            }
            check_invariants(&tree, &ever);
        }
        // The tree survives its JSON form (costs may differ in the last bit of a float).
        let text = serde_json::to_string(&tree).unwrap();
        let back: GoalTree = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back.to_prompt(), tree.to_prompt());
        prop_assert_eq!(back.to_todo_string(), tree.to_todo_string());
        prop_assert_eq!(back.next_id(), tree.next_id());
        prop_assert_eq!(back.goals().len(), tree.goals().len());
    }
}
