//! Tests of message statistics: the run-collapsed preview and the roll-up to ancestors.

use super::*;
use crate::test_support::{NOW, build};

fn preview_of(tools: &[&str]) -> Option<String> {
    let mut preview = None;
    for tool in tools {
        push_tool(&mut preview, tool);
    }
    preview
}

#[test]
fn preview_collapses_runs() {
    let cases: &[(&[&str], Option<&str>)] = &[
        (&[], None),
        (&["glob"], Some("glob")),
        (
            &["glob", "read", "read", "edit"],
            Some("glob → read × 2 → edit"),
        ),
        (&["read", "read", "read"], Some("read × 3")),
        (&["read", "edit", "read"], Some("read → edit → read")),
        (&["edit", " ", "edit"], Some("edit × 2")),
        (&["a", "a × 2", "a"], Some("a → a _ 2 → a")),
        (&["…", "…"], Some("_ × 2")),
    ];
    for (tools, expected) in cases {
        assert_eq!(preview_of(tools).as_deref(), *expected, "{tools:?}");
    }
}

#[test]
fn preview_keeps_the_last_segments_behind_an_ellipsis() {
    let tools: Vec<String> = (1..=13).map(|i| format!("t{i}")).collect();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    let preview = preview_of(&tools).expect("preview");
    assert_eq!(
        preview,
        "… → t4 → t5 → t6 → t7 → t8 → t9 → t10 → t11 → t12 → t13"
    );
    // A run continues across the cap, and the cap holds for ever.
    let mut preview = Some(preview);
    push_tool(&mut preview, "t13");
    assert_eq!(
        preview.as_deref().map(|p| p.ends_with("t12 → t13 × 2")),
        Some(true)
    );
    for i in 0..1000 {
        push_tool(&mut preview, if i % 2 == 0 { "x" } else { "y" });
    }
    let preview = preview.expect("preview");
    assert_eq!(preview.split(" → ").count(), PREVIEW_MAX_SEGMENTS + 1);
    assert!(preview.starts_with("… → "));
}

#[test]
fn record_message_rolls_up_to_every_ancestor() {
    let mut tree = build(&[
        r#"{"add": "A, B"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "A1"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"add": "A1a"}"#,
    ]);
    let first = StatsDelta {
        tokens: 100,
        cost: 0.5,
        tools: vec!["read".into(), "read".into()],
    };
    let affected = tree.record_message("4", &first, "later").expect("recorded");
    assert_eq!(
        affected,
        ["4", "3", "1"],
        "the goal first, then its ancestors"
    );
    let second = StatsDelta {
        tokens: 20,
        cost: 0.25,
        tools: vec!["edit".into()],
    };
    tree.record_message("3", &second, NOW).expect("recorded");

    let leaf = tree.get("4").expect("leaf");
    assert_eq!(leaf.self_stats, leaf.cumulative_stats);
    assert_eq!(leaf.self_stats.preview.as_deref(), Some("read × 2"));
    assert_eq!(leaf.updated_at, "later");
    let mid = tree.get("3").expect("mid");
    assert_eq!(mid.self_stats.message_count, 1);
    assert_eq!(mid.self_stats.preview.as_deref(), Some("edit"));
    assert_eq!(mid.cumulative_stats.message_count, 2);
    assert_eq!(mid.cumulative_stats.total_tokens, 120);
    assert_eq!(
        mid.cumulative_stats.preview.as_deref(),
        Some("read × 2 → edit")
    );
    let top = tree.get("1").expect("top");
    assert_eq!(top.self_stats, GoalStats::default());
    assert_eq!(top.cumulative_stats.total_tokens, 120);
    assert!((top.cumulative_stats.total_cost - 0.75).abs() < 1e-12);
    assert_eq!(
        tree.get("2").map(|g| g.cumulative_stats.message_count),
        Some(0)
    );
}

#[test]
fn record_message_on_an_unknown_goal_is_refused() {
    let mut tree = build(&[r#"{"add": "A"}"#]);
    let before = tree.clone();
    let err = tree
        .record_message("9", &StatsDelta::default(), NOW)
        .expect_err("unknown");
    assert_eq!(err, GoalError::UnknownId { id: "9".into() });
    assert_eq!(err.to_string(), "there is no goal with id 9");
    assert_eq!(tree, before);
}
