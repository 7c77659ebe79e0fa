//! What a trace ran with — its profile, provider, model, base URL, context window and limits —
//! applied to the overrides of a later run of it (`agent resume`, `--continue`, a chat that
//! goes on): what the overrides leave unset comes from the trace, and an override that sets
//! something else wins and is said in one line.

use agent_execution::{ModelSettings, TraceLimits, TraceStore};
use agent_llm::ProviderKind;
use agent_runner::recorded_agents;

use crate::config::Overrides;
use crate::error::{Error, Result};

/// What a trace's main trace recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recorded {
    /// The profile it ran as (`None`: the default one).
    pub profile: Option<String>,
    /// How its model was reached (`None` on traces written before it was stored).
    pub settings: Option<ModelSettings>,
    /// Its stored limits.
    pub limits: Option<TraceLimits>,
}

/// What the main trace of `trace_id` recorded.
pub async fn read(store: &dyn TraceStore, trace_id: &str) -> Result<Recorded> {
    let store_error = |error: agent_execution::StoreError| Error::Store {
        what: format!("cannot read trace {trace_id}"),
        source: Box::new(error),
    };
    let agents = recorded_agents(store, trace_id)
        .await
        .map_err(store_error)?;
    let main = agents.main_trace_id.as_deref().unwrap_or(trace_id);
    let settings = store
        .get_trace(main)
        .await
        .map_err(store_error)?
        .and_then(|trace| trace.model_settings);
    Ok(Recorded {
        profile: agents.main,
        settings,
        limits: agents.main_limits,
    })
}

impl Recorded {
    /// `overrides` with what the trace recorded filling what they leave unset, and the line to
    /// say when they set something else than the trace ran with.
    pub fn apply(&self, overrides: &Overrides) -> (Overrides, Option<String>) {
        let mut args = overrides.clone();
        let mut changed = Vec::new();
        if let Some(settings) = &self.settings {
            apply_settings(settings, &mut args, &mut changed);
        }
        if let Some(limits) = &self.limits {
            if let (Some(flag), Some(stored)) = (args.max_iterations, limits.max_iterations)
                && flag != stored
            {
                changed.push(format!("max iterations {flag} (was {stored})"));
            }
            if let (Some(flag), Some(stored)) = (args.max_cost, limits.max_cost)
                && flag != stored
            {
                changed.push(format!("max cost ${flag} (was ${stored})"));
            }
        }
        let notice = (!changed.is_empty()).then(|| {
            format!(
                "agent: this run overrides what the trace ran with: {}",
                changed.join(", ")
            )
        });
        (args, notice)
    }
}

/// Fills the provider settings of `args` from `settings`, noting in `changed` what flags set
/// otherwise. A flag naming another provider (`--provider`, or `--script` for the scripted one)
/// leaves the trace's model and base URL aside: they belong to its provider.
fn apply_settings(settings: &ModelSettings, args: &mut Overrides, changed: &mut Vec<String>) {
    let llm = &mut args.provider;
    let recorded = settings
        .provider
        .as_deref()
        .and_then(ProviderKind::from_name);
    let chosen = llm
        .kind
        .or_else(|| llm.script.as_ref().map(|_| ProviderKind::Scripted));
    match (chosen, recorded) {
        (Some(chosen), Some(recorded)) if chosen.account() != recorded.account() => {
            changed.push(format!(
                "provider {} (was {})",
                chosen.name(),
                recorded.name()
            ));
            return;
        }
        (None, Some(recorded)) => llm.kind = Some(recorded),
        _ => {}
    }
    fill("model", &mut llm.model, settings.model.clone(), changed);
    fill(
        "base URL",
        &mut llm.base_url,
        settings.base_url.clone(),
        changed,
    );
    let window = settings
        .context_window
        .and_then(|tokens| usize::try_from(tokens).ok());
    fill("context window", &mut llm.context_window, window, changed);
}

/// Sets `flag` to `stored` when the flag is unset; notes a flag that differs.
fn fill<T: PartialEq + std::fmt::Display>(
    what: &str,
    flag: &mut Option<T>,
    stored: Option<T>,
    changed: &mut Vec<String>,
) {
    match (flag.as_ref(), stored) {
        (None, stored) => *flag = stored,
        (Some(given), Some(stored)) if *given != stored => {
            changed.push(format!("{what} {given} (was {stored})"));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Overrides as the flags `args` give them (`-m`, `--max-iterations`, `--script`,
    /// `--provider`).
    fn flags(args: &[&str]) -> Overrides {
        let mut overrides = Overrides::default();
        for pair in args.chunks(2) {
            match pair {
                ["-m", model] => overrides.provider.model = Some((*model).into()),
                ["--max-iterations", n] => overrides.max_iterations = n.parse().ok(),
                ["--script", file] => overrides.provider.script = Some(file.into()),
                ["--provider", name] => overrides.provider.kind = name.parse().ok(),
                other => panic!("no such flag: {other:?}"),
            }
        }
        overrides
    }

    fn recorded() -> Recorded {
        Recorded {
            profile: None,
            settings: Some(ModelSettings {
                provider: Some("openai".into()),
                model: Some("mock-coder".into()),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                context_window: Some(8192),
                max_tokens: None,
            }),
            limits: Some(TraceLimits {
                max_iterations: Some(7),
                max_cost: None,
            }),
        }
    }

    #[test]
    fn the_trace_fills_what_the_flags_leave_unset_and_says_nothing() {
        let (args, notice) = recorded().apply(&flags(&[]));
        assert_eq!(args.provider.kind, Some(ProviderKind::Openai));
        assert_eq!(args.provider.model.as_deref(), Some("mock-coder"));
        assert_eq!(
            args.provider.base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        assert_eq!(args.provider.context_window, Some(8192));
        assert_eq!(notice, None);
    }

    #[test]
    fn a_flag_wins_and_is_said_in_one_line() {
        let (args, notice) = recorded().apply(&flags(&["-m", "bigger", "--max-iterations", "3"]));
        assert_eq!(args.provider.model.as_deref(), Some("bigger"));
        assert_eq!(
            args.provider.base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        let notice = notice.unwrap();
        assert!(notice.contains("model bigger (was mock-coder)"), "{notice}");
        assert!(notice.contains("max iterations 3 (was 7)"), "{notice}");
        assert!(!notice.contains('\n'));
    }

    #[test]
    fn another_provider_leaves_the_model_and_url_aside() {
        let (args, notice) = recorded().apply(&flags(&["--script", "s.json"]));
        assert_eq!(args.provider.model, None);
        assert_eq!(args.provider.base_url, None);
        assert!(notice.unwrap().contains("provider scripted (was openai)"));
        // OpenAI's two APIs share a server and its models.
        let (args, _) = recorded().apply(&flags(&["--provider", "openai-responses"]));
        assert_eq!(args.provider.model.as_deref(), Some("mock-coder"));
    }
}
