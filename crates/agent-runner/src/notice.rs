//! Notices: what a run tells a person where it happens, recorded as `notice` events so that
//! every front end shows them (the line mode on stderr, the full-screen UI, the viewer) and the
//! trace keeps them. The model's context window is the first: learned from its server when the
//! run starts (and recorded in the trace), or said to be assumed, or learned from a refusal.

use agent_execution::store::WriteOp;
use agent_execution::{EventKind, NoticeKind};
use agent_llm::{ContextWindow, LlmError, WindowSource, stated_window};

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;
use crate::window::thousands;

/// Records a notice on the trace.
pub(crate) async fn notice(
    agent: &Agent,
    trace_id: &str,
    kind: NoticeKind,
    message: String,
    tokens: Option<usize>,
) -> Result<(), StepError> {
    let event = EventKind::Notice {
        kind,
        message,
        tokens: tokens.map(|tokens| tokens as u64),
    };
    record(agent.store(), trace_id, vec![WriteOp::AppendEvent(event)]).await?;
    Ok(())
}

/// Asks the agent's client for its model's window when none is configured (once per client and
/// model: the client remembers), and records what it learned, or that it learned nothing and
/// assumes a window, as a `context_window` notice. A window from the configuration or the
/// table of known models is not told.
pub(crate) async fn learn_window(agent: &Agent, trace_id: &str) -> Result<(), StepError> {
    let spec = &agent.spec;
    if spec.context_window.is_some() {
        return Ok(());
    }
    let Some(window) = agent.llm.learn_window(&spec.model).await else {
        return Ok(());
    };
    if let Some(message) = window_message(&spec.model, window) {
        let kind = NoticeKind::ContextWindow;
        notice(agent, trace_id, kind, message, Some(window.tokens)).await?;
    }
    Ok(())
}

/// What a run says of a window it learned from its server, or assumes.
fn window_message(model: &str, window: ContextWindow) -> Option<String> {
    let tokens = thousands(window.tokens);
    Some(match window.source {
        WindowSource::OllamaDefault { trained } => format!(
            "Ollama does not say the num_ctx of {model}: assuming its default window of {tokens} \
             tokens (the model takes up to {}); Ollama cuts longer prompts without saying so, so \
             set num_ctx (PARAMETER num_ctx in a Modelfile, or OLLAMA_CONTEXT_LENGTH) and \
             --context-window to the same value to use more",
            thousands(trained)
        ),
        WindowSource::Assumed => format!(
            "the server does not say the context window of {model} (asked /props, /v1/models \
             and /api/show): assuming {tokens} tokens until it refuses a request; set \
             --context-window or [models.\"{model}\"] context_window to the window the server \
             runs it with"
        ),
        source if source.is_server() => format!(
            "the context window of {model} is {tokens} tokens (from {})",
            source.describe()
        ),
        _ => return None,
    })
}

/// After a refusal of a request of about `request` tokens as over the window `was`: when the
/// refusal states a smaller window, the run keeps to it (`refused`) and says so.
pub(crate) async fn after_refusal(
    agent: &Agent,
    trace_id: &str,
    error: &LlmError,
    (was, request): (ContextWindow, usize),
    refused: &mut Option<ContextWindow>,
) -> Result<(), StepError> {
    let LlmError::ContextWindowExceeded { message } = error else {
        return Ok(());
    };
    let Some(stated) = stated_window(message).filter(|&stated| stated < was.tokens) else {
        return Ok(());
    };
    *refused = Some(ContextWindow {
        tokens: stated,
        source: WindowSource::Refusal,
    });
    let told = refusal_message(stated, was, request);
    notice(
        agent,
        trace_id,
        NoticeKind::ContextWindow,
        told,
        Some(stated),
    )
    .await
}

/// What a run says when a refusal states a window smaller than the one it used.
fn refusal_message(refused: usize, was: ContextWindow, request: usize) -> String {
    format!(
        "the server refused a request of about {} tokens as over its window of {} tokens \
         (the run assumed {} from {}): the run keeps to {} tokens from now on",
        thousands(request),
        thousands(refused),
        thousands(was.tokens),
        was.source.describe(),
        thousands(refused),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learned_and_assumed_windows_are_told_and_known_ones_are_not() {
        let told = |source| {
            window_message(
                "smollm2",
                ContextWindow {
                    tokens: 4_096,
                    source,
                },
            )
        };
        let props = told(WindowSource::LlamaCppProps).unwrap();
        assert!(
            props.contains("4,096 tokens (from the server's /props)"),
            "{props}"
        );
        let assumed = told(WindowSource::Assumed).unwrap();
        assert!(assumed.contains("does not say"), "{assumed}");
        assert!(assumed.contains("--context-window"), "{assumed}");
        let ollama = told(WindowSource::OllamaDefault { trained: 131_072 }).unwrap();
        assert!(
            ollama.contains("num_ctx") && ollama.contains("131,072"),
            "{ollama}"
        );
        assert_eq!(told(WindowSource::Table), None);
        assert_eq!(told(WindowSource::Configured), None);
    }
}
