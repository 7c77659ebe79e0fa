//! A run that failed, said for people: what to fix when the model could not be reached (the
//! key, the model name with the server's list of models, the base URL), and how to go on (`agent
//! resume` after a run, typing again in a chat) only where going on can help.

use agent_llm::LlmError;
use agent_runner::RunOutcome;

use agent_app::provider::ProviderConfig;
use agent_llm::ProviderKind;

use crate::progress::status_word;

/// The lines that say how the run ended and what to do about it.
pub(crate) fn explain(outcome: &RunOutcome, provider: &ProviderConfig) -> String {
    let resume = format!(
        "  trace {} can be continued with `agent resume {}`",
        outcome.trace_id,
        crate::ids::short(&outcome.trace_id)
    );
    said(outcome, provider, &resume)
}

/// How a turn of a chat ended and what to do about it: what `run` says, where the way to go
/// on is to type again (the session continues the trace) rather than `agent resume`.
pub(crate) fn explain_turn(outcome: &RunOutcome, provider: &ProviderConfig) -> String {
    said(
        outcome,
        provider,
        "  the trace is kept: type a message to try again",
    )
}

/// What went wrong, then `go_on` (how to continue the trace) where continuing can help.
fn said(outcome: &RunOutcome, provider: &ProviderConfig, go_on: &str) -> String {
    let error = outcome.error.as_deref().unwrap_or("no error recorded");
    if outcome.stop == agent_runner::StopReason::Incomplete {
        return format!("{}\n{go_on}", left_open(outcome));
    }
    let Some(model_error) = &outcome.model_error else {
        return format!(
            "agent: the run ended {}: {error}\n{go_on}",
            status_word(outcome.status)
        );
    };
    match fix(model_error, provider) {
        Some(Fix { what, resumable }) => {
            let mut text = format!("agent: {what}");
            if resumable {
                text.push('\n');
                text.push_str(go_on);
            }
            text
        }
        None => format!("agent: the run failed: {error}\n{go_on}"),
    }
}

/// The goals a run left open, one a line under what happened.
pub(crate) fn left_open(outcome: &RunOutcome) -> String {
    let mut text = format!(
        "agent: the run ended incomplete: the model stopped with {} goal(s) of its plan open",
        outcome.pending_goals.len()
    );
    for goal in &outcome.pending_goals {
        let dot = if goal.number.contains('.') { "" } else { "." };
        text.push_str(&format!(
            "\n  {}{dot} {} ({})",
            goal.number,
            crate::output::one_line(&goal.description),
            goal.status
        ));
    }
    text
}

/// What to fix, and whether resuming the trace afterwards makes sense.
struct Fix {
    what: String,
    resumable: bool,
}

/// What to fix for a model error people can fix; `None` for the others.
fn fix(error: &LlmError, provider: &ProviderConfig) -> Option<Fix> {
    if provider.kind == ProviderKind::Scripted {
        // A script plays the errors: there is no key, model or server to fix.
        return None;
    }
    let url = provider
        .base_url
        .as_deref()
        .unwrap_or("the provider's default address");
    match error {
        LlmError::Authentication { status, message } => {
            let key = match provider.kind.account() {
                ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
                _ => "OPENAI_API_KEY",
            };
            Some(Fix {
                what: format!(
                    "the server at {url} refused the API key ({status}: {}). Set {key} (or \
                     --api-key, or api_key in agent.toml) to a key it accepts",
                    crate::output::one_line(message)
                ),
                resumable: false,
            })
        }
        LlmError::BadRequest { status, message } if unknown_model(*status, message) => {
            let listed = served(provider);
            Some(Fix {
                what: format!(
                    "the server at {url} does not serve the model {:?}{listed}. Name one with \
                     --model (or model in agent.toml)",
                    provider.model
                ),
                resumable: false,
            })
        }
        LlmError::Network { message } if refused(message) => Some(Fix {
            what: format!(
                "nothing answers at {url} (connection refused). Start the server, or point \
                 --base-url (or the provider's base URL variable) at it"
            ),
            resumable: true,
        }),
        _ => None,
    }
}

/// Whether a refusal says the model does not exist (OpenAI's `model_not_found`, a 404, or the
/// words of the servers that answer 400).
fn unknown_model(status: u16, message: &str) -> bool {
    let message = message.to_lowercase();
    status == 404
        || message.contains("model_not_found")
        || (message.contains("model")
            && (message.contains("not found") || message.contains("does not exist")))
}

/// Whether a network error is a refused connection.
fn refused(message: &str) -> bool {
    let message = message.to_lowercase();
    message.contains("connection refused")
        || message.contains("connect error")
        || message.contains("error trying to connect")
}

/// `; it serves: a, b` from the server's own list, for OpenAI-compatible servers that give one.
fn served(provider: &ProviderConfig) -> String {
    if provider.kind != ProviderKind::Openai {
        return String::new();
    }
    let base = provider
        .base_url
        .clone()
        .unwrap_or_else(|| agent_llm::OPENAI_DEFAULT_BASE_URL.to_owned());
    match agent_app::provider::served_models(&base, provider.api_key.clone()) {
        Ok(models) if !models.is_empty() => {
            let mut shown: Vec<&str> = models.iter().map(String::as_str).take(20).collect();
            if models.len() > shown.len() {
                shown.push("…");
            }
            format!("; it serves: {}", shown.join(", "))
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_of_a_model_name_are_told_from_other_refusals() {
        assert!(unknown_model(404, "Not Found"));
        assert!(unknown_model(
            400,
            r#"{"error":{"code":"model_not_found","message":"The model `x` does not exist"}}"#
        ));
        assert!(unknown_model(
            400,
            "model 'llama9' not found, try pulling it first"
        ));
        assert!(!unknown_model(400, "messages: field required"));
        assert!(refused(
            "error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)"
        ));
        assert!(!refused(
            "the stream ended before the response was complete"
        ));
    }
}
