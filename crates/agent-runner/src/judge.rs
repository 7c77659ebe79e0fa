//! A goal's judge: for a goal whose end a command cannot tell (writing, research), one model
//! call reads the goal, what it must achieve, the summary the model gave with `done` and the
//! evidence it cites, and answers met or not met with a reason.
//!
//! The judge sees only what it is given (it has no tools), so evidence that does not show the
//! goal met makes it not met, and an answer that says neither is read as not met: a check
//! fails closed. A model error is a failed check with the error as its reason; the run goes on.
//! The call's tokens and cost are recorded on the `goal` call's tool message, so the trace's
//! totals and its cost budget count them.

use agent_goal::{CheckResult, Goal, now_rfc3339};
use agent_llm::ChatMessage;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::error::StepError;
use crate::model;

/// The system prompt of a judge call.
pub const JUDGE_PROMPT: &str = "You judge whether one goal of an agent's task is met. You are \
given the goal, what it must achieve, the agent's summary of what it did and the evidence it \
cites. You cannot run anything or read files: judge only from what you are given, and when it \
does not show the goal met, the goal is not met. Answer with MET or NOT MET on the first line, \
then one or two sentences saying why.";

/// The longest evidence, in characters, a judge is given; the rest is cut.
const MAX_EVIDENCE_CHARS: usize = 20_000;

/// What the judge found, with the call's tokens and cost.
pub(crate) struct Judged {
    /// Met or not, with the reason as its output.
    pub(crate) result: CheckResult,
    /// Tokens and cost of the call.
    pub(crate) usage: (u64, f64),
}

/// What one `done` asks the judge to weigh.
pub(crate) struct Claim<'a> {
    /// What the goal must achieve; the goal's description when empty.
    pub(crate) criteria: &'a str,
    /// The summary given with `done`.
    pub(crate) summary: &'a str,
    /// The evidence cited with `done`.
    pub(crate) evidence: Option<&'a str>,
}

/// Asks the judge whether `goal` is met by `claim`.
pub(crate) async fn judge(
    agent: &Agent,
    goal: &Goal,
    claim: &Claim<'_>,
    cancel: &CancellationToken,
) -> Result<Judged, StepError> {
    let started = std::time::Instant::now();
    let spec = &agent.spec;
    let material = material(goal, claim);
    let prompt_tokens = agent_llm::estimate_tokens(&material) + 100;
    let request = model::request(
        spec,
        &spec.model,
        vec![
            ChatMessage::system(JUDGE_PROMPT),
            ChatMessage::user(material),
        ],
        Vec::new(),
    );
    let (passed, output, usage) =
        match model::call(agent.llm.as_ref(), spec, request, None, cancel).await {
            Ok(response) => {
                let usage = model::usage_of(&response, prompt_tokens);
                let cost = agent.engine.root.prices.cost(&spec.model, &usage);
                let tokens = usage.prompt_tokens + usage.completion_tokens;
                let (met, reason) = verdict(response.text.as_deref().unwrap_or_default());
                (met, reason, (tokens, cost))
            }
            Err(StepError::Llm(error)) => (
                false,
                format!("the judge could not be asked: {error}"),
                (0, 0.0),
            ),
            Err(other) => return Err(other),
        };
    Ok(Judged {
        result: CheckResult {
            passed,
            exit_code: None,
            output,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            checked_at: now_rfc3339(),
        },
        usage,
    })
}

/// The judge's user message.
fn material(goal: &Goal, claim: &Claim<'_>) -> String {
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
fn verdict(text: &str) -> (bool, String) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_met_only_when_the_judge_says_so() {
        assert_eq!(
            verdict("MET\nThe README explains installation."),
            (true, "The README explains installation.".to_owned())
        );
        assert_eq!(
            verdict("**NOT MET**: no test output is cited"),
            (false, "no test output is cited".to_owned())
        );
        assert_eq!(verdict("met"), (true, "no reason given".to_owned()));
        assert!(
            !verdict("Methodically checked: fine").0,
            "a word, not a prefix"
        );
        let (met, reason) = verdict("It looks fine to me.");
        assert!(!met);
        assert!(reason.contains("did not say MET"), "{reason}");
    }

    #[test]
    fn the_judge_reads_the_goal_the_summary_and_the_evidence() {
        let goal = Goal::new("2", None, "Write the README", "now");
        let claim = Claim {
            criteria: "",
            summary: "Wrote README.md",
            evidence: Some("README.md: ## Install\npip install ."),
        };
        let text = material(&goal, &claim);
        assert!(text.contains("## What it must achieve\n\nWrite the README\n"));
        assert!(text.contains("## Evidence the agent cites\n\nREADME.md: ## Install"));
        let none = Claim {
            evidence: None,
            ..claim
        };
        assert!(material(&goal, &none).contains("(none cited)"));
    }
}
