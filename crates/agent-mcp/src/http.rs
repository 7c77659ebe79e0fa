//! Streamable HTTP servers: the reqwest client (rustls on ring, no redirects), the configured
//! headers, and the token of a server signed in to (see [`crate::auth`]).

use std::collections::HashMap;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::config::{ServerConfig, expand_env};
use crate::error::McpError;

/// How long connecting to an HTTP server may take.
const HTTP_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The transport of an HTTP server: plain, or adding the token of a server signed in to.
pub(crate) enum HttpTransport {
    /// Without a token (the configured headers only).
    Plain(StreamableHttpClientTransport<reqwest::Client>),
    /// With the token on file, refreshed when it expires.
    #[cfg(feature = "oauth")]
    SignedIn(
        StreamableHttpClientTransport<
            rmcp::transport::auth::AuthClient<crate::challenge::KeepingClient>,
        >,
    ),
}

/// A streamable HTTP transport over a reqwest client with rustls on ring, with the server's
/// token when `tokens` holds one.
pub(crate) async fn http_transport(
    name: &str,
    config: &ServerConfig,
    tokens: Option<&crate::client::Tokens>,
    challenge: &std::sync::Arc<crate::challenge::Challenge>,
) -> Result<HttpTransport, McpError> {
    let invalid = |message: String| McpError::Config {
        server: name.to_owned(),
        message,
    };
    let url = config.url.clone().unwrap_or_default();
    let mut headers = HashMap::new();
    for (key, value) in &config.headers {
        let header = HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| invalid(format!("{key:?} is not a valid header name")))?;
        let value = HeaderValue::from_str(&expand_env(name, value)?)
            .map_err(|_| invalid(format!("the value of header {key} is not valid")))?;
        headers.insert(header, value);
    }
    crate::config::install_crypto();
    let client = reqwest::Client::builder()
        .connect_timeout(HTTP_CONNECT_TIMEOUT)
        // Idle pooled connections stall on delayed ACKs after partly read SSE bodies.
        .pool_max_idle_per_host(0)
        // A redirect would replay the session id and headers, maybe to another host.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| McpError::Start {
            server: name.to_owned(),
            message: format!("cannot build the HTTP client: {error}"),
            stderr: String::new(),
        })?;
    let transport_config =
        StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(headers);
    #[cfg(feature = "oauth")]
    if let Some(tokens) = tokens
        && let Some(client) =
            crate::auth::signed_in_client(name, &url, tokens, keeping(client.clone(), challenge))
                .await?
    {
        return Ok(HttpTransport::SignedIn(
            StreamableHttpClientTransport::with_client(client, transport_config),
        ));
    }
    #[cfg(not(feature = "oauth"))]
    let _ = (tokens, challenge);
    Ok(HttpTransport::Plain(
        StreamableHttpClientTransport::with_client(client, transport_config),
    ))
}

/// `client`, keeping the challenge of a `403 insufficient_scope` in `challenge`.
#[cfg(feature = "oauth")]
fn keeping(
    client: reqwest::Client,
    challenge: &std::sync::Arc<crate::challenge::Challenge>,
) -> crate::challenge::KeepingClient {
    crate::challenge::KeepingClient {
        inner: client,
        challenge: challenge.clone(),
    }
}
