//! OpenTelemetry: a run's spans sent when it ends (`--otel URL`, else
//! `OTEL_EXPORTER_OTLP_ENDPOINT`), and `agent export --otlp` for a trace that ended before.
//! Behind the default `otel` feature; without it a given `--otel` is a usage error.

use agent_execution::TraceStore;
use anyhow::Result;

use agent_llm::ProviderKind;

use crate::cli::ExportArgs;
use crate::exit::{ExitCode, UsageError};
use crate::output::note;

/// Sends spans to one receiver.
#[cfg(feature = "otel")]
pub(crate) type Exporter = agent_otel::Exporter;

/// Nothing to send with: this build has no OpenTelemetry support.
#[cfg(not(feature = "otel"))]
pub(crate) enum Exporter {}

/// The `gen_ai.provider.name` of a provider.
fn provider_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai | ProviderKind::OpenaiResponses => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Scripted => "scripted",
    }
}

/// The exporter `--otel` names, else the one the environment names, else none.
#[cfg(feature = "otel")]
pub(crate) fn exporter(
    flag: Option<&str>,
    provider: Option<ProviderKind>,
) -> Result<Option<Exporter>> {
    let mut options = agent_otel::SpanOptions::from_env();
    options.provider = provider.map(|kind| provider_name(kind).to_owned());
    let built = match flag {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            agent_otel::Exporter::new(&agent_otel::traces_endpoint(url), "agent", options).map(Some)
        }
        Some(url) => {
            return Err(
                UsageError(format!("--otel {url:?} is not an http:// or https:// URL")).into(),
            );
        }
        None => agent_otel::endpoint_from_env()
            .map(|endpoint| agent_otel::Exporter::new(&endpoint, "agent", options))
            .transpose(),
    };
    built.map_err(|error| UsageError(error.to_string()).into())
}

/// Without the `otel` feature: none, and `--otel` is refused.
#[cfg(not(feature = "otel"))]
pub(crate) fn exporter(
    flag: Option<&str>,
    provider: Option<ProviderKind>,
) -> Result<Option<Exporter>> {
    let _ = provider.map(provider_name);
    match flag {
        Some(_) => {
            Err(UsageError("--otel: this agent was built without the `otel` feature".into()).into())
        }
        None => Ok(None),
    }
}

/// Sends the spans of `trace_id` (and its sub-traces); a receiver that cannot be reached is a
/// warning, never a failed run.
pub(crate) async fn send(exporter: Option<&Exporter>, store: &dyn TraceStore, trace_id: &str) {
    if let Some(exporter) = exporter
        && let Err(error) = push(exporter, store, trace_id).await
    {
        note(&format!(
            "agent: warning: the run's spans were not sent: {error:#}"
        ));
    }
}

/// Sends the spans; how many went, and where.
#[cfg(feature = "otel")]
async fn push(
    exporter: &Exporter,
    store: &dyn TraceStore,
    trace_id: &str,
) -> Result<(usize, String)> {
    let sent = exporter.export(store, trace_id).await?;
    Ok((sent, exporter.endpoint().to_owned()))
}

/// Without the `otel` feature there is no exporter to send with.
#[cfg(not(feature = "otel"))]
async fn push(exporter: &Exporter, _: &dyn TraceStore, _: &str) -> Result<(usize, String)> {
    match *exporter {}
}

/// `agent export --otlp <ID>`: sends a stored trace's spans.
pub(crate) async fn export(args: ExportArgs) -> Result<ExitCode> {
    if !args.otlp {
        return Err(UsageError("agent export needs a format: --otlp".into()).into());
    }
    let store = crate::settings::store_for(&args.trace_dir).await?;
    let trace_id = crate::ids::resolve(store.as_ref(), &args.trace_id).await?;
    let exporter = exporter(args.otel.as_deref(), None)?.ok_or_else(|| {
        UsageError(
            "agent export --otlp needs a receiver: --otel URL or OTEL_EXPORTER_OTLP_ENDPOINT"
                .into(),
        )
    })?;
    let (sent, endpoint) = push(&exporter, store.as_ref(), &trace_id).await?;
    note(&format!("sent {sent} spans of {trace_id} to {endpoint}"));
    Ok(ExitCode::Completed)
}
