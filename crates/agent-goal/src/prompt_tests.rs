//! Tests of the plan text: the Contract format of `to_prompt` and the `to_todo_string` list.

use crate::test_support::{NOW, apply, build};
use crate::{GoalTree, StatsDelta};

/// The example of SPEC §3, built through the goal tool with the spec's placeholders as texts.
fn spec_example() -> GoalTree {
    let mut tree = GoalTree::new("<mission>");
    for json in [
        r#"{"add": "<description>, <description>, <description>"}"#,
        r#"{"focus": "1"}"#,
        r#"{"done": "<summary of a completed goal>"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "<description>, <description>, <description>"}"#,
        r#"{"focus": "2.1"}"#,
        r#"{"done": "designed"}"#,
        r#"{"focus": "2.2"}"#,
    ] {
        apply(&mut tree, json);
    }
    tree
}

#[test]
fn to_prompt_matches_the_spec_example_exactly() {
    let expected = "\
## Current Plan
**Mission**: <mission>
**Current**: 2.2 <description>
**Progress**:
[✓] 1. <description>
    → <summary of a completed goal>
[→] 2. <description>
    [✓] 2.1 <description>
    [→] 2.2 <description> ← current
    [ ] 2.3 <description>
[ ] 3. <description>
";
    assert_eq!(spec_example().to_prompt(), expected);
}

#[test]
fn to_prompt_of_the_original_design_example() {
    let tree = build(&[
        r#"{"add": "分析代码, 实现功能, 测试"}"#,
        r#"{"focus": "1"}"#,
        r#"{"done": "用户模型在 models/user.py,使用 bcrypt 加密"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "设计接口, 实现登录接口, 实现注册接口"}"#,
        r#"{"focus": "2.1"}"#,
        r#"{"done": "接口设计完成"}"#,
        r#"{"focus": "2.2"}"#,
    ]);
    let expected = "\
## Current Plan
**Mission**: Mission
**Current**: 2.2 实现登录接口
**Progress**:
[✓] 1. 分析代码
    → 用户模型在 models/user.py,使用 bcrypt 加密
[→] 2. 实现功能
    [✓] 2.1 设计接口
    [→] 2.2 实现登录接口 ← current
    [ ] 2.3 实现注册接口
[ ] 3. 测试
";
    assert_eq!(tree.to_prompt(), expected);
}

#[test]
fn to_prompt_with_nothing_focused_and_no_goals() {
    let tree = GoalTree::new("Fix the bug");
    assert_eq!(
        tree.to_prompt(),
        "## Current Plan\n**Mission**: Fix the bug\n**Current**: none\n**Progress**:\n\
         (no goals yet)\n"
    );
    assert_eq!(tree.to_todo_string(), "(no goals yet)\n");
    let tree = build(&[r#"{"add": "A"}"#]);
    assert!(
        tree.to_prompt()
            .contains("**Current**: none\n**Progress**:\n[ ] 1. A\n")
    );
}

#[test]
fn completed_subtrees_fold_in_the_prompt_but_not_in_the_todo_list() {
    let tree = build(&[
        r#"{"add": "A, B"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "A1, A2"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"done": "a1"}"#,
        r#"{"focus": "1.2"}"#,
        r#"{"done": "a2\nsecond line"}"#,
        r#"{"focus": "2"}"#,
    ]);
    let prompt = tree.to_prompt();
    assert!(
        prompt.ends_with("[✓] 1. A\n    → A1: a1; A2: a2 second line\n[→] 2. B ← current\n"),
        "{prompt}"
    );
    assert_eq!(
        tree.to_todo_string(),
        "[✓] 1. A\n    [✓] 1.1 A1\n    [✓] 1.2 A2\n[→] 2. B ← current\n"
    );
}

#[test]
fn abandoned_goals_never_appear() {
    let tree = build(&[
        r#"{"add": "Keep, Drop"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "Drop child"}"#,
        r#"{"abandon": "not needed"}"#,
    ]);
    let prompt = tree.to_prompt();
    assert!(!prompt.contains("Drop"), "{prompt}");
    assert!(!prompt.contains("not needed"));
    assert_eq!(tree.to_todo_string(), "[ ] 1. Keep\n");
}

#[test]
fn exploration_goals_carry_a_note() {
    let mut tree = build(&[r#"{"add": "Analyse, Build"}"#, r#"{"focus": "1"}"#]);
    let start = tree
        .start_explore("Compare auth schemes", vec!["A".into(), "B".into()], NOW)
        .expect("started");
    assert!(
        tree.to_prompt()
            .contains("    [→] 1.1 Compare auth schemes (exploring branches A, B) ← current\n")
    );
    tree.finish_explore(&start, "JWT wins", Some("A".into()), NOW)
        .expect("merged");
    assert_eq!(
        tree.to_todo_string(),
        "\
[→] 1. Analyse ← current
    [✓] 1.1 Compare auth schemes (explored branches A, B)
    [✓] 1.2 Evaluate exploration results (exploration merge, selected branch A)
[ ] 2. Build
"
    );
}

#[test]
fn statistics_do_not_change_the_plan_text() {
    let mut tree = spec_example();
    let before = tree.to_prompt();
    let delta = StatsDelta {
        tokens: 10,
        cost: 0.1,
        tools: vec!["read_file".into()],
    };
    tree.record_message("5", &delta, NOW).expect("recorded");
    assert_eq!(tree.to_prompt(), before);
}

#[test]
fn a_top_level_merge_report_is_bounded_in_the_plan() {
    let mut tree = GoalTree::new("Pick a storage engine");
    let start = tree
        .start_explore("Compare engines", vec!["A".into(), "B".into()], NOW)
        .unwrap();
    let report = format!("## Exploration results {}", "finding ".repeat(400));
    tree.finish_explore(&start, &report, None, NOW).unwrap();
    let prompt = tree.to_prompt();
    let line = prompt
        .lines()
        .find(|l| l.trim_start().starts_with("→ ## Exploration"))
        .unwrap();
    assert_eq!(
        line.trim_start().chars().count(),
        2 + crate::MERGE_SUMMARY_PROMPT_CHARS
    );
    assert!(line.ends_with('…'));
    // The stored summary keeps the whole report.
    let merge = tree
        .goals
        .iter()
        .find(|g| g.merge_summary.is_some())
        .unwrap();
    assert_eq!(merge.summary.as_deref(), Some(report.trim()));
}
