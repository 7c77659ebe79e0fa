//! `agent cancel`: asks a server (`agent serve`, `agent run --serve`) to cancel a run. The trace
//! may be named by a unique prefix of its id: when the server does not know the id as given, it
//! is looked for in the server's list of traces.

use anyhow::{Context, Result, bail};
use reqwest::StatusCode;

use crate::cli::CancelArgs;
use crate::exit::{ExitCode, UsageError};
use crate::output::note;

/// The most traces asked of the server to find a prefix among.
const LISTED: usize = 10_000;

/// Sends `POST /api/traces/{id}/cancel` to the server.
pub(crate) async fn cancel(args: CancelArgs) -> Result<ExitCode> {
    agent_execution::validate_trace_id(&args.trace_id)?;
    agent_llm::ensure_crypto_provider();
    let server = Server {
        client: reqwest::Client::new(),
        base: args.server.trim_end_matches('/').to_owned(),
        token: args.token.clone(),
    };
    let (mut status, mut body) = server.cancel(&args.trace_id).await?;
    let mut trace_id = args.trace_id.clone();
    if status == StatusCode::NOT_FOUND {
        trace_id = server.resolve(&args.trace_id).await?;
        (status, body) = server.cancel(&trace_id).await?;
    }
    if !status.is_success() {
        bail!("the server refused to cancel {trace_id}: {status} {body}");
    }
    note(&format!("cancelling {trace_id}"));
    Ok(ExitCode::Completed)
}

/// A server and how to reach it.
struct Server {
    client: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Server {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.client.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Asks the server to cancel `trace_id`: its status and body.
    async fn cancel(&self, trace_id: &str) -> Result<(StatusCode, String)> {
        let response = self
            .request(
                reqwest::Method::POST,
                &format!("/api/traces/{trace_id}/cancel"),
            )
            .send()
            .await
            .with_context(|| format!("cannot reach the server at {}", self.base))?;
        let status = response.status();
        Ok((status, response.text().await.unwrap_or_default()))
    }

    /// The one trace of the server whose id `given` is a prefix of, by the same rule as local
    /// ids (see `crate::ids`); none or several is a usage error.
    async fn resolve(&self, given: &str) -> Result<String> {
        let response = self
            .request(reqwest::Method::GET, &format!("/api/traces?limit={LISTED}"))
            .send()
            .await
            .with_context(|| format!("cannot reach the server at {}", self.base))?;
        if !response.status().is_success() {
            bail!(
                "the server at {} cannot list its traces: {}",
                self.base,
                response.status()
            );
        }
        let list: serde_json::Value = response.json().await?;
        let ids: Vec<String> = list["traces"]
            .as_array()
            .map(|traces| {
                traces
                    .iter()
                    .filter_map(|t| t["trace_id"].as_str())
                    .filter(|id| agent_execution::lookup::prefix_names(id, given))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        match ids.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(UsageError(format!(
                "the server at {} has no trace {given} (see its /api/traces)",
                self.base
            ))
            .into()),
            several => Err(UsageError(format!(
                "the trace id {given} is ambiguous on the server; it could be: {}",
                several.join(", ")
            ))
            .into()),
        }
    }
}
