//! `agent cancel`: asks a server (`agent serve`, `agent run --serve`) to cancel a run.

use anyhow::{Context, Result, bail};

use crate::cli::CancelArgs;
use crate::exit::ExitCode;
use crate::output::note;

/// Sends `POST /api/traces/{id}/cancel` to the server.
pub(crate) async fn cancel(args: CancelArgs) -> Result<ExitCode> {
    agent_execution::validate_trace_id(&args.trace_id)?;
    agent_llm::ensure_crypto_provider();
    let url = format!(
        "{}/api/traces/{}/cancel",
        args.server.trim_end_matches('/'),
        args.trace_id
    );
    let mut request = reqwest::Client::new().post(&url);
    if let Some(token) = &args.token {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .with_context(|| format!("cannot reach the server at {}", args.server))?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if !status.is_success() {
        bail!(
            "the server refused to cancel {}: {status} {body}",
            args.trace_id
        );
    }
    note(&format!("cancelling {}", args.trace_id));
    Ok(ExitCode::Completed)
}
