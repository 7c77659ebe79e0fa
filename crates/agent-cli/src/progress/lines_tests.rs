//! Progress lines from goal-tree changes (numbers kept, children ticked before parents), the
//! status line, edits shown as changed lines, and tool results in one line.

use agent_goal::GoalCommand;

use super::*;

/// The progress lines of a plan driven by goal commands, one command a step: each step's lines,
/// then `|`.
fn check(commands: &[&str], expect: &str) {
    let mut state = State::new(false, false);
    let mut tree = GoalTree::new("Mission");
    let mut shown = Vec::new();
    for command in commands {
        let command: GoalCommand = serde_json::from_str(command).unwrap();
        tree.apply(&command).unwrap();
        let kind = EventKind::GoalTreeUpdated {
            goal_tree: tree.clone(),
        };
        shown.extend(state.apply(&kind));
        shown.push("|".to_owned());
    }
    assert_eq!(shown.join("\n"), expect.trim());
}

#[test]
fn an_abandoned_goal_keeps_its_number_and_a_renumbering_is_said() {
    check(
        &[
            r#"{"add": "Read, Try a shortcut, Write", "focus": "1"}"#,
            r#"{"done": "read it", "focus": "3"}"#,
            r#"{"focus": "2"}"#,
            r#"{"abandon": "no shortcut"}"#,
            r#"{"focus": "2"}"#,
        ],
        "
▶ goal 1 Read
|
✓ 1 Read — read it
▶ goal 3 Write
|
▶ goal 2 Try a shortcut
|
✗ 2 Try a shortcut — abandoned: no shortcut
  goals renumbered: 3 → 2
|
▶ goal 2 Write
|",
    );
}

#[test]
fn a_parent_is_ticked_after_its_children() {
    check(
        &[
            r#"{"add": "Build", "focus": "1"}"#,
            r#"{"add": "Compile, Link", "focus": "1.1"}"#,
            r#"{"done": "compiled", "focus": "1.2"}"#,
            r#"{"done": "linked"}"#,
        ],
        "
▶ goal 1 Build
|
▶ goal 1.1 Compile
|
✓ 1.1 Compile — compiled
▶ goal 1.2 Link
|
✓ 1.2 Link — linked
✓ 1 Build — Compile: compiled; Link: linked
|",
    );
}

#[test]
fn the_status_names_the_goal_or_thinking_never_planning() {
    let mut state = State::new(false, false);
    assert_eq!(
        state.status_line(),
        "step 0 · thinking · 0 tokens · $0.0000"
    );
    let mut tree = GoalTree::new("Mission");
    let command: GoalCommand = serde_json::from_str(r#"{"add": "Read", "focus": "1"}"#).unwrap();
    tree.apply(&command).unwrap();
    state.apply(&EventKind::GoalTreeUpdated { goal_tree: tree });
    assert_eq!(state.status_line(), "step 0 · 1 Read · 0 tokens · $0.0000");
}

#[test]
fn an_edit_is_shown_as_a_few_changed_lines() {
    let args =
        serde_json::json!({"path": "a.rs", "old": "fn a() {}\nkeep\n", "new": "fn b() {}\nkeep\n"});
    assert_eq!(
        edit_lines("edit_file", &args.to_string(), false),
        ["    - fn a() {}", "    + fn b() {}"]
    );
    let content: String = (1..=9).map(|n| format!("line {n}\n")).collect();
    let args = serde_json::json!({"path": "n.txt", "content": content});
    let lines = edit_lines("write_file", &args.to_string(), false);
    assert_eq!(lines.len(), EDIT_LINES + 1, "{lines:?}");
    assert_eq!(lines[0], "    + line 1");
    assert_eq!(lines[EDIT_LINES], "    … 3 more changed lines");
    assert!(edit_lines("bash", r#"{"command": "ls"}"#, false).is_empty());
}

#[test]
fn a_tool_result_is_one_line_with_a_count_of_the_rest() {
    assert_eq!(
        result_summary("wrote 5 bytes to a.txt (created)").as_deref(),
        Some("    ↳ wrote 5 bytes to a.txt (created)")
    );
    assert_eq!(
        result_summary("exit code: 0\n--- stdout ---\nhello\nworld\n\u{1b}[31mred\n").as_deref(),
        Some("    ↳ hello (+2 lines)")
    );
    assert_eq!(
        result_summary("exit code: 2\n--- stderr ---\nno such file\n").as_deref(),
        Some("    ↳ exit code: 2 (+1 line)")
    );
    assert_eq!(result_summary("  \n"), None);
}
