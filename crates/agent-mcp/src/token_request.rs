//! One request to an OAuth token endpoint, as the grants built beside the SDK's make it: a
//! form `POST`, no redirects, HTTPS unless the endpoint is on this machine, the client
//! authenticated with HTTP Basic when it has a secret (RFC 6749 section 2.3.1), and the
//! endpoint's `error` answer said in one line.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// `pairs` posted as a form to `endpoint`, the client authenticated with `basic` (its id and
/// secret) when given; the endpoint's JSON answer.
pub(crate) async fn post(
    endpoint: &str,
    pairs: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Result<serde_json::Value, String> {
    let endpoint = reqwest::Url::parse(endpoint)
        .map_err(|error| format!("the token endpoint {endpoint:?} is not a URL: {error}"))?;
    if !secure(&endpoint) {
        return Err(format!(
            "the token endpoint {endpoint} is neither HTTPS nor on this machine"
        ));
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|error| error.to_string())?;
    let mut request = client
        .post(endpoint.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(form(pairs)?);
    if let Some((id, secret)) = basic {
        let pair = format!("{}:{}", form_value(id)?, form_value(secret)?);
        request = request.header("authorization", format!("Basic {}", STANDARD.encode(pair)));
    }
    let response = request
        .send()
        .await
        .map_err(|error| format!("the request to {endpoint} failed: {error}"))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|error| error.to_string())?;
    let answer: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "{endpoint} answered {status}: {} {}",
            answer["error"].as_str().unwrap_or("(no error code)"),
            answer["error_description"].as_str().unwrap_or_default()
        ));
    }
    if !answer["access_token"].is_string() {
        return Err(format!("{endpoint} answered without an access_token"));
    }
    Ok(answer)
}

/// `pairs` as `application/x-www-form-urlencoded`.
fn form(pairs: &[(&str, &str)]) -> Result<String, String> {
    let mut form = reqwest::Url::parse("form:").map_err(|error| error.to_string())?;
    form.query_pairs_mut().extend_pairs(pairs);
    Ok(form.query().unwrap_or_default().to_owned())
}

/// One value form-encoded, as HTTP Basic wants a client's id and secret.
fn form_value(value: &str) -> Result<String, String> {
    let encoded = form(&[("v", value)])?;
    Ok(encoded.trim_start_matches("v=").to_owned())
}

/// HTTPS, or plain HTTP to this machine.
fn secure(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let local = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    url.scheme() == "https" || (url.scheme() == "http" && local)
}

/// Seconds since the epoch.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_this_machine_is_trusted_with_credentials() {
        for (url, trusted) in [
            ("https://auth.example/token", true),
            ("http://127.0.0.1:8080/token", true),
            ("http://localhost/token", true),
            ("http://[::1]:9/token", true),
            ("http://auth.example/token", false),
            ("http://127.0.0.1.evil.example/token", false),
        ] {
            assert_eq!(secure(&reqwest::Url::parse(url).unwrap()), trusted, "{url}");
        }
        assert_eq!(form_value("a b&c").unwrap(), "a+b%26c");
    }
}
