//! A trace as OpenTelemetry spans, after the GenAI semantic conventions, exported over OTLP
//! (HTTP/protobuf) to Jaeger, Grafana Tempo, Langfuse, Phoenix, Datadog or a Collector.
//!
//! This crate owns the mapping from a stored trace to spans and their export. The spans are
//! built from the durable record — the same whether the run just ended or ended a month ago —
//! so `agent export --otlp` and the export at the end of each run are one code path:
//!
//! - `invoke_agent {agent}`: one per trace (sub-traces nested under the tool call that started
//!   them), `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.agent.id`,
//!   `gen_ai.conversation.id` (the main trace's id), `gen_ai.request.model`,
//!   `gen_ai.provider.name`;
//! - `goal {number} {description}`: one per goal that did something, nested as the goal tree
//!   is, with its status, summary or reason (`agent.goal.*`); a finished goal's messages leave
//!   the model's view (goal compaction), marked `agent.goal.compacted` and a `goal compaction`
//!   event with `agent.compaction.tokens_before` / `tokens_after`;
//! - `chat {model}`: one per model call, under the goal it served, timed by the call, with
//!   `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`,
//!   `gen_ai.usage.cache_read.input_tokens`; a full compaction's summary call is `chat` with
//!   `agent.compaction = true`, and a `compaction` event with the tokens before and after on
//!   the span it happened under;
//! - `execute_tool {tool}`: one per tool call, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//!   status error when the call failed.
//!
//! Message contents (`gen_ai.input.messages`, `gen_ai.output.messages`,
//! `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) are recorded only with
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, as the conventions advise. Span and
//! trace ids derive from the trace's ids, so exporting a trace twice gives the same spans.
//!
//! It depends on `agent-execution` (the store and its records), `agent-goal` and `agent-llm`
//! (types); it must not depend on the runner, a concrete store or the command line.
//!
//! ```
//! use agent_execution::{InMemoryTraceStore, NewMessage, NewTrace, TraceStore};
//! use agent_otel::{SpanOptions, spans_of};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let store = InMemoryTraceStore::new();
//! let trace = store.create_trace(NewTrace::agent("Say hello").with_model("gpt-4o")).await.unwrap();
//! store.add_message(&trace.trace_id, NewMessage::user("Say hello")).await.unwrap();
//! let spans = spans_of(&store, &trace.trace_id, &SpanOptions::default()).await.unwrap();
//! assert_eq!(spans[0].name, "invoke_agent agent");
//! # });
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod ids;
mod records;
mod spans;

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SpanExporter as _;

use agent_execution::{StoreError, TraceStore};

pub use spans::{SpanOptions, spans_of};

/// The variable that turns message contents on (`true`).
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// Why spans could not be sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The exporter could not be built (a malformed endpoint).
    #[error("cannot set up the OTLP exporter for {endpoint}: {message}")]
    Setup {
        /// The endpoint.
        endpoint: String,
        /// What went wrong.
        message: String,
    },
    /// The trace could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The receiver refused the spans or could not be reached.
    #[error("sending spans to {endpoint} failed: {message}")]
    Export {
        /// The endpoint.
        endpoint: String,
        /// What went wrong.
        message: String,
    },
}

/// Sends traces to one OTLP/HTTP receiver.
pub struct Exporter {
    inner: opentelemetry_otlp::SpanExporter,
    endpoint: String,
    options: SpanOptions,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// The traces endpoint of an OTLP base URL (`http://host:4318` → `http://host:4318/v1/traces`).
pub fn traces_endpoint(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_owned()
    } else {
        format!("{base}/v1/traces")
    }
}

/// The traces endpoint the environment names: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is,
/// else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`; `None` when neither is set.
pub fn endpoint_from_env() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    match (
        var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        var("OTEL_EXPORTER_OTLP_ENDPOINT"),
    ) {
        (Some(traces), _) => Some(traces),
        (None, Some(base)) => Some(traces_endpoint(&base)),
        (None, None) => None,
    }
}

impl Exporter {
    /// An exporter to the traces endpoint `endpoint` (see [`traces_endpoint`]), naming the
    /// service `service` (`OTEL_SERVICE_NAME` wins when set).
    ///
    /// # Errors
    ///
    /// [`OtelError::Setup`] when the exporter cannot be built.
    pub fn new(endpoint: &str, service: &str, options: SpanOptions) -> Result<Self, OtelError> {
        // The workspace builds reqwest without a default TLS provider: install ring first
        // (losing a race against another installer leaves one installed either way).
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // ring builds without a C toolchain; rustls deprecates it only for its lack of
            // post-quantum key exchange (see `agent_llm::ensure_crypto_provider`).
            #[allow(deprecated)]
            let provider = rustls::crypto::ring::default_provider();
            let _ = provider.install_default();
        }
        let mut inner = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint)
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|error| OtelError::Setup {
                endpoint: endpoint.to_owned(),
                message: error.to_string(),
            })?;
        let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| service.to_owned());
        let resource = Resource::builder_empty()
            .with_service_name(service)
            .with_attributes([KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))])
            .build();
        inner.set_resource(&resource);
        Ok(Self {
            inner,
            endpoint: endpoint.to_owned(),
            options,
        })
    }

    /// The exporter the environment asks for (see [`endpoint_from_env`]); `None` when it
    /// names no receiver. Message contents follow [`CAPTURE_CONTENT_VAR`].
    ///
    /// # Errors
    ///
    /// [`OtelError::Setup`] when the exporter cannot be built.
    pub fn from_env(service: &str) -> Result<Option<Self>, OtelError> {
        endpoint_from_env()
            .map(|endpoint| Self::new(&endpoint, service, SpanOptions::from_env()))
            .transpose()
    }

    /// Where the spans go.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Sends the spans of `trace_id` and its sub-traces; returns how many were sent.
    ///
    /// # Errors
    ///
    /// [`OtelError::Store`] when the trace cannot be read, [`OtelError::Export`] when the
    /// receiver cannot be reached or refuses the spans.
    pub async fn export(&self, store: &dyn TraceStore, trace_id: &str) -> Result<usize, OtelError> {
        let spans = spans_of(store, trace_id, &self.options).await?;
        let count = spans.len();
        self.inner
            .export(spans)
            .await
            .map_err(|error| OtelError::Export {
                endpoint: self.endpoint.clone(),
                message: error.to_string(),
            })?;
        Ok(count)
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
