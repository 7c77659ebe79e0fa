//! Request guards applied to every route: the bearer token, the origin of browser requests,
//! the host name, and CORS.
//!
//! - **Token.** When a token is configured, every request needs `Authorization: Bearer
//!   <token>`. Browsers cannot set that header on a page load, a WebSocket or an `<img>`, so
//!   `GET /`, the watch route and a trace's pictures also accept `?token=<token>`. Wrong or missing: 401 `unauthorized`. The
//!   viewer's script and style sheet need none (they hold no trace data).
//! - **Origin.** A request carrying an `Origin` header (every cross-origin browser request,
//!   and every browser WebSocket) must come from the server's own origin or a configured CORS
//!   origin; otherwise 403 `forbidden`. This stops other web pages from starting runs or
//!   reading traces through the user's browser.
//! - **Host.** Without a token the server answers only to loopback host names (`localhost`,
//!   `127.0.0.1`, `[::1]`), which defeats DNS rebinding; otherwise 403 `forbidden`.
//! - **CORS** is off unless origins are configured.

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::config::ApiConfig;
use crate::error::ApiError;
use crate::state::AppState;

/// The guards, as one middleware.
pub(crate) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    match check(state.config(), &request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

fn check(config: &ApiConfig, request: &Request) -> Result<(), ApiError> {
    let headers = request.headers();
    if config.token.is_none() {
        check_host(headers)?;
    }
    check_origin(config, headers)?;
    if let Some(token) = &config.token
        && !is_public_asset(request)
    {
        check_token(token, request)?;
    }
    Ok(())
}

fn check_host(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(host) = headers.get(header::HOST) else {
        return Ok(());
    };
    let host = host.to_str().unwrap_or("");
    let name = strip_port(host);
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name.to_ascii_lowercase().ends_with(".localhost")
        || name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!(
            "this server answers only to loopback host names without a token, not {host:?}"
        )))
    }
}

/// `host:port` → `host`, keeping IPv6 brackets.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host
            .split_once(']')
            .map_or(host, |(ip, _)| &host[..=ip.len()]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

fn check_origin(config: &ApiConfig, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("");
    if config.cors_origins.iter().any(|o| o == "*" || o == origin) {
        return Ok(());
    }
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    match (authority, host) {
        (Some(authority), Some(host)) if authority.eq_ignore_ascii_case(host) => Ok(()),
        _ => Err(ApiError::Forbidden(format!(
            "requests from the web origin {origin:?} are not allowed; configure it as a CORS \
             origin to allow it"
        ))),
    }
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

fn check_token(expected: &str, request: &Request) -> Result<(), ApiError> {
    let from_header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_owned())
        });
    let given = match from_header {
        Some(token) => Some(token),
        None if accepts_query_token(request) => Query::<TokenQuery>::try_from_uri(request.uri())
            .ok()
            .and_then(|Query(query)| query.token),
        None => None,
    };
    match given {
        Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
        _ => Err(ApiError::Unauthorized),
    }
}

/// `GET /`, `GET /api/traces/{id}/watch` and `GET /api/traces/{id}/pictures/{picture}`: what a
/// browser loads without setting headers.
fn accepts_query_token(request: &Request) -> bool {
    let path = request.uri().path();
    let below_trace = path
        .strip_prefix("/api/traces/")
        .and_then(|rest| rest.split_once('/'))
        .map(|(_, rest)| rest);
    let browser_loads =
        below_trace.is_some_and(|rest| rest == "watch" || rest.starts_with("pictures/"));
    request.method() == Method::GET && (path == "/" || browser_loads)
}

/// The viewer's script and style sheet: a page loaded with `?token=` cannot pass the token on
/// to them, and they hold no trace data.
fn is_public_asset(request: &Request) -> bool {
    matches!(*request.method(), Method::GET | Method::HEAD)
        && crate::routes::viewer::is_public_asset(request.uri().path())
}

/// Compares without returning early, so the time taken does not reveal the matching prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut difference = a.len() ^ b.len();
    for (i, byte) in a.iter().enumerate() {
        difference |= usize::from(byte ^ b.get(i % b.len().max(1)).copied().unwrap_or(0));
    }
    difference == 0
}

/// The CORS layer for the configured origins; `None` when CORS is off.
pub(crate) fn cors_layer(config: &ApiConfig) -> Option<CorsLayer> {
    if config.cors_origins.is_empty() {
        return None;
    }
    let allow = if config.cors_origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            config
                .cors_origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o).ok()),
        )
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stripped_from_host_names() {
        assert_eq!(strip_port("localhost:8000"), "localhost");
        assert_eq!(strip_port("127.0.0.1"), "127.0.0.1");
        assert_eq!(strip_port("[::1]:8000"), "[::1]");
        assert_eq!(strip_port("[::1]"), "[::1]");
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"secre", b"secret"));
        assert!(!constant_time_eq(b"", b"secret"));
        assert!(!constant_time_eq(b"Secret", b"secret"));
    }
}
