//! What a goal's check says, in words: what the model is told when a check fails or passes
//! ([`failed_note`], [`passed_note`], the [`tail`] of a command's output), and a judge's side of
//! it ([`JUDGE_PROMPT`], the [`judge_material`] it reads, the [`read_verdict`] of its answer).
//!
//! A judge reads the goal, what it must achieve, the summary the model gave with `done` and
//! the evidence it cites; it has no tools, so evidence that does not show the goal met makes it
//! not met, and an answer that says neither is read as not met: a check fails closed.

use crate::gate::{CheckKind, CheckResult, GoalCheck};
use crate::model::Goal;

/// The system prompt of a judge call.
pub const JUDGE_PROMPT: &str = "You judge whether one goal of an agent's task is met. You are \
given the goal, what it must achieve, the agent's summary of what it did and the evidence it \
cites. You cannot run anything or read files: judge only from what you are given, and when it \
does not show the goal met, the goal is not met. Answer with MET or NOT MET on the first line, \
then one or two sentences saying why.";

/// The longest evidence, in characters, a judge is given; the rest is cut.
const MAX_EVIDENCE_CHARS: usize = 20_000;

/// What one `done` asks a judge to weigh.
#[derive(Debug, Clone, Copy)]
pub struct JudgeClaim<'a> {
    /// What the goal must achieve; the goal's description when empty.
    pub criteria: &'a str,
    /// The summary given with `done`.
    pub summary: &'a str,
    /// The evidence cited with `done`.
    pub evidence: Option<&'a str>,
}

/// How much of a failed command's output the model is shown: its last lines, at most this many
/// characters.
const TAIL_CHARS: usize = 4_000;
/// ... and at most this many lines.
const TAIL_LINES: usize = 60;

/// The judge's user message: the goal, its criteria, the summary and the evidence.
pub fn judge_material(goal: &Goal, claim: &JudgeClaim<'_>) -> String {
    let criteria = match claim.criteria.trim() {
        "" => goal.description.as_str(),
        criteria => criteria,
    };
    let evidence = claim.evidence.map(str::trim).unwrap_or_default();
    let evidence = match evidence {
        "" => "(none cited)".to_owned(),
        text if text.chars().count() > MAX_EVIDENCE_CHARS => {
            let cut: String = text.chars().take(MAX_EVIDENCE_CHARS).collect();
            format!("{cut}\n[… the rest was cut]")
        }
        text => text.to_owned(),
    };
    format!(
        "## Goal\n\n{}\n\n## What it must achieve\n\n{criteria}\n\n## The agent's summary\n\n{}\n\n\
         ## Evidence the agent cites\n\n{evidence}\n",
        goal.description,
        claim.summary.trim()
    )
}

/// Reads a judge's answer: `MET` or `NOT MET` starting its first line (Markdown emphasis
/// allowed), then the reason. Anything else is not met.
pub fn read_verdict(text: &str) -> (bool, String) {
    let text = text.trim();
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first =
        first.trim_start_matches(|c: char| matches!(c, '*' | '#' | '`') || c.is_whitespace());
    // ASCII upper case keeps every byte where it was, so `first` is cut where `upper` is.
    let upper = first.to_ascii_uppercase();
    let word = |prefix: &str| {
        upper.starts_with(prefix)
            && !upper[prefix.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
    };
    let (met, said) = if word("NOT MET") {
        (false, &first["NOT MET".len()..])
    } else if word("MET") {
        (true, &first["MET".len()..])
    } else {
        let shown: String = text.chars().take(300).collect();
        return (
            false,
            format!("the judge's answer did not say MET or NOT MET: {shown}"),
        );
    };
    let said = said
        .trim_start_matches(|c: char| {
            matches!(c, '*' | '`' | ':' | '.' | '-' | '—') || c.is_whitespace()
        })
        .trim();
    let reason = [said, rest.trim()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let reason = if reason.is_empty() {
        "no reason given".to_owned()
    } else {
        reason
    };
    (met, reason)
}

impl CheckResult {
    /// The result of a command that ended with `exit_code` (`None`: killed, or its timeout),
    /// `status` in words and `output`, of which the [`tail`] is kept (after the
    /// status, when the command did not exit on its own).
    pub fn of_command(
        exit_code: Option<i32>,
        status: &str,
        output: &str,
        duration_ms: u64,
    ) -> Self {
        let tail = tail(output);
        let output = match exit_code {
            Some(_) => tail,
            None => format!("{status}\n{tail}"),
        };
        Self {
            passed: exit_code == Some(0),
            exit_code,
            output,
            duration_ms,
            checked_at: crate::time::now_rfc3339(),
        }
    }
}

impl CheckResult {
    /// The result of a judge that found the goal met (`passed`) or not, for `reason`.
    pub fn of_judge(passed: bool, reason: String, duration_ms: u64) -> Self {
        Self {
            passed,
            exit_code: None,
            output: reason,
            duration_ms,
            checked_at: crate::time::now_rfc3339(),
        }
    }
}

/// The end of `output`: its last `TAIL_LINES` lines, at most `TAIL_CHARS` characters, with
/// a line saying so when something was cut.
pub fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    let mut kept = lines[from..].join("\n");
    let chars = kept.chars().count();
    if chars > TAIL_CHARS {
        kept = kept.chars().skip(chars - TAIL_CHARS).collect();
    }
    if from > 0 || chars > TAIL_CHARS {
        kept = format!("[… the start of the output was cut]\n{kept}");
    }
    kept
}

/// What the model is told of a failed check.
pub fn failed_note(label: &str, check: &GoalCheck, result: &CheckResult) -> String {
    let what = match (&check.kind, result.exit_code) {
        (CheckKind::Judge(_), _) => format!("The judge found it not met: {}", result.output),
        (CheckKind::Command(_), Some(code)) => format!(
            "{} exited with code {code}. The end of its output:\n{}",
            check.describe(),
            result.output
        ),
        (CheckKind::Command(_), None) => format!(
            "{} did not finish. The end of its output:\n{}",
            check.describe(),
            result.output
        ),
    };
    format!(
        "the check of {label} failed, so it is not done and stays in progress.\n{what}\n\
         Fix what the check reports and call done again, or abandon the goal with the reason."
    )
}

/// What the model is told of a passed check, after what the call did.
pub fn passed_note(check: &GoalCheck, result: &CheckResult) -> String {
    match &check.kind {
        CheckKind::Command(_) => format!("Its check {} passed (exit code 0).", check.describe()),
        CheckKind::Judge(_) => format!("The judge found it met: {}", result.output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_verdict_is_met_only_when_the_judge_says_so() {
        assert_eq!(
            read_verdict("MET\nThe README explains installation."),
            (true, "The README explains installation.".to_owned())
        );
        assert_eq!(
            read_verdict("**NOT MET**: no test output is cited"),
            (false, "no test output is cited".to_owned())
        );
        assert_eq!(read_verdict("met"), (true, "no reason given".to_owned()));
        assert!(
            !read_verdict("Methodically checked: fine").0,
            "a word, not a prefix"
        );
        let (met, reason) = read_verdict("It looks fine to me.");
        assert!(!met);
        assert!(reason.contains("did not say MET"), "{reason}");
    }

    #[test]
    fn the_judge_reads_the_goal_the_summary_and_the_evidence() {
        let goal = Goal::new("2", None, "Write the README", "now");
        let claim = JudgeClaim {
            criteria: "",
            summary: "Wrote README.md",
            evidence: Some("README.md: ## Install\npip install ."),
        };
        let text = judge_material(&goal, &claim);
        assert!(text.contains("## What it must achieve\n\nWrite the README\n"));
        assert!(text.contains("## Evidence the agent cites\n\nREADME.md: ## Install"));
        let none = JudgeClaim {
            evidence: None,
            ..claim
        };
        assert!(judge_material(&goal, &none).contains("(none cited)"));
    }

    #[test]
    fn the_tail_keeps_the_end_of_long_output() {
        let long: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let kept = tail(&long);
        assert!(kept.starts_with("[… the start of the output was cut]\nline 41\n"));
        assert!(kept.ends_with("line 100"));
        assert_eq!(tail("short\n"), "short");
        let wide = "x".repeat(10_000);
        assert_eq!(tail(&wide).chars().count(), TAIL_CHARS + 36);
    }
}
