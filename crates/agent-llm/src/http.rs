//! The HTTP transport shared by the HTTP providers: the TLS setup, sending with retries and
//! timeouts, mapping error statuses, and turning a server-sent-events body into a
//! [`ChatStream`].

use std::time::Duration;

use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Response, StatusCode};

use crate::client::ChatStream;
use crate::error::{LlmError, TimeoutKind};
use crate::formats::ErrorInfo;
use crate::formats::sse::{SseDecoder, decode_sse};
use crate::notice::Notice;
use crate::retry::{RetryPolicy, retry_after};

/// The `tracing` target of the notices a client gives while it works around a server: a retry
/// after a failed request, streaming turned off for a model. Each is one plain sentence (its
/// `message`) meant for the user, at `WARN` (a retry) or `INFO` (a change of course); a program
/// may show the events of this target as plain lines and leave the rest to its logs.
pub const NOTICE_TARGET: &str = "agent_llm::notice";

/// The base URL of OpenAI's API, for both of its wire formats.
pub(crate) const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The deadlines of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing a connection.
    pub connect: Duration,
    /// From sending a request to its response headers; without streaming, to the end of its
    /// body.
    pub request: Duration,
    /// The longest silence inside a streaming response.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            request: Duration::from_secs(300),
            idle: Duration::from_secs(120),
        }
    }
}

/// Makes sure rustls has a process-wide crypto provider: ring, unless the program installed
/// another one first.
///
/// The HTTP clients of this crate call it when they are built. A program that builds its own
/// `reqwest` clients in the same process (this workspace builds reqwest without a default
/// provider) calls it before doing so.
///
/// This is the workspace's one place that names a crypto provider. rustls 0.23.48 deprecates
/// `ring::default_provider` for its lack of post-quantum key exchange; ring stays the choice here
/// because it builds without a C toolchain (aws-lc-rs needs cmake and a C compiler), and a
/// program that wants aws-lc-rs installs it before the first client is built.
pub fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race against another installer is fine: a provider is installed either way.
        #[allow(deprecated)]
        let provider = rustls::crypto::ring::default_provider();
        let _ = provider.install_default();
    }
}

/// A reqwest client with rustls on ring, the platform's certificate verifier and the connect
/// timeout.
pub(crate) fn build_http_client(timeouts: &Timeouts) -> Result<reqwest::Client, LlmError> {
    ensure_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .build()
        .map_err(|err| LlmError::config(format!("cannot build the HTTP client: {}", chain(&err))))
}

/// An error and its sources as one line.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The error for a failed send or body read.
pub(crate) fn transport_error(err: &reqwest::Error, timeouts: &Timeouts) -> LlmError {
    if err.is_timeout() {
        LlmError::Timeout {
            kind: TimeoutKind::Request,
            after: timeouts.request,
        }
    } else if err.is_builder() {
        LlmError::config(chain(err))
    } else {
        LlmError::network(chain(err))
    }
}

/// Maps an error status and what the body says to an error.
pub(crate) fn classify(status: StatusCode, headers: &HeaderMap, info: ErrorInfo) -> LlmError {
    let code = status.as_u16();
    let message = info.message;
    match code {
        400 | 413 | 422 if info.context_overflow || code == 413 => {
            LlmError::ContextWindowExceeded { message }
        }
        401 | 403 => LlmError::Authentication {
            status: code,
            message,
        },
        429 => LlmError::RateLimited {
            retry_after: retry_after(headers),
            message,
        },
        // A server that refuses what it cannot parse with a 5xx (llama.cpp's Python server,
        // other FastAPI servers) refuses it again however often it is sent.
        500..=599 if info.invalid_request => LlmError::BadRequest {
            status: code,
            message,
        },
        408 | 409 | 500..=599 => LlmError::Server {
            status: code,
            message,
        },
        _ => LlmError::BadRequest {
            status: code,
            message,
        },
    }
}

/// The endpoint `{base_url}{path}`, checked to be an http(s) URL.
pub(crate) fn endpoint(base_url: &str, path: &str) -> Result<String, LlmError> {
    let endpoint = format!("{}{path}", base_url.trim_end_matches('/'));
    let url = reqwest::Url::parse(&endpoint)
        .map_err(|err| LlmError::config(format!("invalid base URL {base_url:?}: {err}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlmError::config(format!(
            "the base URL {base_url:?} is not http(s)"
        )));
    }
    Ok(endpoint)
}

/// Checks that every extra header is a valid HTTP header.
pub(crate) fn check_headers(headers: &[(String, String)]) -> Result<(), LlmError> {
    for (name, value) in headers {
        reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|err| LlmError::config(format!("invalid header name {name:?}: {err}")))?;
        reqwest::header::HeaderValue::from_str(value)
            .map_err(|err| LlmError::config(format!("invalid value of header {name:?}: {err}")))?;
    }
    Ok(())
}

/// Whether a response declares a JSON body.
pub(crate) fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"))
}

/// Sends requests with retries and deadlines.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    pub(crate) client: reqwest::Client,
    pub(crate) retry: RetryPolicy,
    pub(crate) timeouts: Timeouts,
}

impl Transport {
    /// A transport with its own HTTP client.
    pub(crate) fn new(retry: RetryPolicy, timeouts: Timeouts) -> Result<Self, LlmError> {
        Ok(Transport {
            client: build_http_client(&timeouts)?,
            retry,
            timeouts,
        })
    }

    /// Sends the request `build` makes until it gets a success status, retrying per the policy.
    /// `parse_error` reads a provider's error body.
    pub(crate) async fn send(
        &self,
        build: impl Fn(&reqwest::Client) -> RequestBuilder,
        parse_error: fn(&str) -> ErrorInfo,
    ) -> Result<Response, LlmError> {
        let mut attempt = 1;
        loop {
            let error = match self.send_once(&build, parse_error).await {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            let Some(wait) = self.retry.delay_after(&error, attempt) else {
                return Err(error);
            };
            let notice = Notice::Retrying {
                error: error.to_string(),
                rate_limited: matches!(error, LlmError::RateLimited { .. }),
                wait,
                attempt: attempt + 1,
                attempts: self.retry.max_attempts,
            };
            tracing::warn!(target: NOTICE_TARGET, attempt, ?wait, "{notice}");
            crate::notice::give(&notice);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn send_once(
        &self,
        build: &impl Fn(&reqwest::Client) -> RequestBuilder,
        parse_error: fn(&str) -> ErrorInfo,
    ) -> Result<Response, LlmError> {
        let deadline = self.timeouts.request;
        let timed_out = || LlmError::Timeout {
            kind: TimeoutKind::Request,
            after: deadline,
        };
        let response = tokio::time::timeout(deadline, build(&self.client).send())
            .await
            .map_err(|_| timed_out())?
            .map_err(|err| transport_error(&err, &self.timeouts))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let body = tokio::time::timeout(deadline, response.text())
            .await
            .map_err(|_| timed_out())?
            .unwrap_or_default();
        Err(classify(status, &headers, parse_error(&body)))
    }

    /// Reads a whole response body within the request deadline.
    pub(crate) async fn read_body(&self, response: Response) -> Result<String, LlmError> {
        let deadline = self.timeouts.request;
        tokio::time::timeout(deadline, response.text())
            .await
            .map_err(|_| LlmError::Timeout {
                kind: TimeoutKind::Request,
                after: deadline,
            })?
            .map_err(|err| transport_error(&err, &self.timeouts))
    }
}

/// The body of `response` as a stream of byte chunks that fails when no chunk arrives for
/// `idle`.
fn idle_limited(
    response: Response,
    idle: Duration,
) -> impl Stream<Item = Result<impl AsRef<[u8]>, LlmError>> + Send {
    let bytes = Box::pin(response.bytes_stream());
    futures::stream::unfold((bytes, false), move |(mut bytes, failed)| async move {
        if failed {
            return None;
        }
        match tokio::time::timeout(idle, bytes.next()).await {
            Ok(Some(Ok(chunk))) => Some((Ok(chunk), (bytes, false))),
            Ok(Some(Err(err))) => {
                let error = LlmError::network(format!("the stream broke: {}", chain(&err)));
                Some((Err(error), (bytes, true)))
            }
            Ok(None) => None,
            Err(_) => {
                let error = LlmError::Timeout {
                    kind: TimeoutKind::Idle,
                    after: idle,
                };
                Some((Err(error), (bytes, true)))
            }
        }
    })
}

/// The chat events of a streaming response, decoded by `decoder`.
pub(crate) fn sse_stream<D: SseDecoder>(
    response: Response,
    idle: Duration,
    decoder: D,
) -> ChatStream {
    decode_sse(idle_limited(response, idle), decoder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(message: &str, context_overflow: bool) -> ErrorInfo {
        ErrorInfo {
            message: message.to_string(),
            context_overflow,
            invalid_request: false,
        }
    }

    #[test]
    fn statuses_map_to_variants() {
        let headers = HeaderMap::new();
        let status = |code| StatusCode::from_u16(code).unwrap();
        assert!(matches!(
            classify(status(400), &headers, info("x", true)),
            LlmError::ContextWindowExceeded { .. }
        ));
        assert!(matches!(
            classify(status(400), &headers, info("x", false)),
            LlmError::BadRequest { .. }
        ));
        assert!(matches!(
            classify(status(403), &headers, info("x", false)),
            LlmError::Authentication { status: 403, .. }
        ));
        assert!(matches!(
            classify(status(529), &headers, info("x", false)),
            LlmError::Server { .. }
        ));
        let pydantic = ErrorInfo::new(
            "1 validation error: {'msg': 'Input should be a valid string'}".into(),
            None,
        );
        assert!(matches!(
            classify(status(500), &headers, pydantic),
            LlmError::BadRequest { status: 500, .. }
        ));
        assert!(matches!(
            classify(status(429), &headers, info("too many tokens per min", true)),
            LlmError::RateLimited { .. }
        ));
    }

    #[test]
    fn an_https_client_builds_without_panicking() {
        let transport = Transport::new(RetryPolicy::none(), Timeouts::default()).unwrap();
        let request = transport
            .client
            .get("https://api.openai.com/v1/models")
            .build()
            .unwrap();
        assert_eq!(request.url().scheme(), "https");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
