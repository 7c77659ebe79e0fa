//! The plan held to its share of the window. A plan grows with every goal the model adds and
//! every summary it writes, and it is part of what each request carries whatever compaction
//! does; in a long conversation on a small window it would crowd out the conversation, and
//! then the task. Past an eighth of the window (at about four characters a token), the plan
//! gives up, in order: the end of very long lines, the summaries of finished goals (oldest
//! first; the summary lines in the conversation and `read_progress` keep them), then the lines
//! of finished goals themselves (oldest first), which a note counts.

use crate::compaction::ContextBudget;

/// The least room a plan gets, in characters, however small the window.
const PLAN_MIN_CHARS: usize = 1_000;

/// The longest line of a plan held to its share, in characters.
const LINE_CHARS: usize = 240;

/// The most characters of plan a request carries under `budget`.
pub(crate) fn plan_chars(budget: &ContextBudget) -> usize {
    (budget.context_window / 2).max(PLAN_MIN_CHARS)
}

/// `plan` (as `GoalTree::to_prompt` writes it) held to `max` characters when that can be done
/// by the steps of the module's documentation; otherwise as short as they make it.
pub(crate) fn plan_within(plan: String, max: usize) -> String {
    if plan.chars().count() <= max {
        return plan;
    }
    let mut lines: Vec<String> = plan.lines().map(cut_line).collect();
    let fits = |lines: &[String]| lines.iter().map(|l| l.chars().count() + 1).sum::<usize>() <= max;
    let oldest = |lines: &[String], marker: &str| {
        lines
            .iter()
            .position(|line| line.trim_start().starts_with(marker))
    };
    // Summaries of finished goals, oldest first.
    while !fits(&lines)
        && let Some(at) = oldest(&lines, "→ ")
    {
        lines.remove(at);
    }
    // Finished goals, oldest first, counted in one note where the first of them was.
    let mut dropped = 0;
    let mut note_at = None;
    while !fits(&lines)
        && let Some(at) = oldest(&lines, "[✓]")
    {
        lines.remove(at);
        dropped += 1;
        let at = *note_at.get_or_insert(at);
        let note = format!("({dropped} finished goals not shown: read_progress lists every goal)");
        if dropped == 1 {
            lines.insert(at, note);
        } else {
            lines[at] = note;
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A line cut to [`LINE_CHARS`] characters, ending with `…` when cut.
fn cut_line(line: &str) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(LINE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use agent_goal::{GoalCommand, GoalTree};
    use serde_json::{Value, json};

    use super::*;

    fn apply(tree: &mut GoalTree, command: Value) {
        let command: GoalCommand = serde_json::from_value(command).unwrap();
        tree.apply_at(&command, "2026-01-01T00:00:00Z").unwrap();
    }

    fn tree(goals: usize, summary: &str) -> GoalTree {
        let mut tree = GoalTree::new("Ship it");
        let names: Vec<String> = (1..=goals).map(|i| format!("Goal number {i}")).collect();
        apply(&mut tree, json!({"add": names.join(", "), "focus": "1"}));
        for i in 2..=goals {
            let done = json!({"done": format!("{summary} {}", i - 1), "focus": i.to_string()});
            apply(&mut tree, done);
        }
        tree
    }

    #[test]
    fn a_plan_within_its_share_is_the_plan() {
        let tree = tree(5, "short");
        assert_eq!(plan_within(tree.to_prompt(), 10_000), tree.to_prompt());
    }

    #[test]
    fn summaries_go_first_then_finished_goals_oldest_first_and_the_current_goal_stays() {
        let tree = tree(30, &"A long summary of what was found. ".repeat(4));
        let full = tree.to_prompt();
        assert!(full.chars().count() > 3_000, "{full}");

        // Room for every goal line but not for the summaries: the newest summaries stay.
        let plan = plan_within(tree.to_prompt(), 2_600);
        assert!(plan.chars().count() <= 2_600, "{plan}");
        assert!(plan.contains("[✓] 1. Goal number 1"), "{plan}");
        let summary_of = |n: usize| {
            let end = format!(" {n}");
            plan.lines()
                .any(|l| l.trim_start().starts_with("→ ") && l.ends_with(&end))
        };
        assert!(!summary_of(1), "{plan}");
        assert!(summary_of(29), "{plan}");

        // Less room: the oldest finished goals go too, counted in one note; the header, the
        // current goal and the newest goals stay.
        let plan = plan_within(tree.to_prompt(), 600);
        assert!(plan.chars().count() <= 600, "{plan}");
        assert!(
            plan.starts_with("## Current Plan\n**Mission**: Ship it\n"),
            "{plan}"
        );
        assert!(plan.contains("**Current**: 30 Goal number 30"), "{plan}");
        assert!(plan.contains("[→] 30. Goal number 30 ← current"), "{plan}");
        assert!(!plan.contains("[✓] 1. Goal number 1\n"), "{plan}");
        assert!(plan.contains("[✓] 29. Goal number 29"), "{plan}");
        let note = plan
            .lines()
            .find(|l| l.contains("finished goals not shown"))
            .unwrap();
        let shown = plan.lines().filter(|l| l.starts_with("[✓]")).count();
        let dropped: usize = note[1..].split(' ').next().unwrap().parse().unwrap();
        assert_eq!(dropped + shown, 29, "{plan}");
    }

    #[test]
    fn very_long_lines_are_cut() {
        let mut tree = GoalTree::new("Ship it");
        let long = "word ".repeat(200);
        apply(&mut tree, json!({"add": long.trim(), "focus": "1"}));
        let plan = plan_within(tree.to_prompt(), 1_000);
        assert!(
            plan.lines().all(|l| l.chars().count() <= LINE_CHARS),
            "{plan}"
        );
        assert!(plan.contains("word…"), "{plan}");
    }

    #[test]
    fn the_share_is_an_eighth_of_the_window_with_a_floor() {
        assert_eq!(plan_chars(&ContextBudget::for_window(128_000)), 64_000);
        assert_eq!(plan_chars(&ContextBudget::for_window(4_096)), 2_048);
        assert_eq!(plan_chars(&ContextBudget::for_window(512)), PLAN_MIN_CHARS);
    }
}
