//! What the mock answers to a request it refuses: the HTTP rules (route, method, JSON body),
//! the providers' documented request rules, a prompt over the model's window; and the error
//! bodies and plain responses, in the request's format.

use axum::body::Body;
use axum::response::Response;
use serde_json::{Value, json};

use super::{RecordedRequest, Shared, WireFormat, responses, rules};

/// The answer to a request that breaks the HTTP rules (route, method, JSON body) or the
/// provider's documented request rules.
pub(super) fn refusal(request: &RecordedRequest, shared: &Shared) -> Option<Response> {
    let Some(format) = request.format() else {
        return Some(plain(404, "no such route on the mock model server"));
    };
    if request.method != "POST" {
        return Some(plain(405, "method not allowed"));
    }
    if !request
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json"))
    {
        return Some(plain(415, "expected content-type: application/json"));
    }
    if !request.body.is_object() {
        return Some(json_response(
            400,
            &[],
            &error_body(
                request,
                "invalid_request_error",
                "the body is not a JSON object",
            ),
        ));
    }
    let broken = match format {
        WireFormat::OpenAi => rules::openai(request),
        WireFormat::Anthropic => rules::anthropic(request),
        WireFormat::Responses => responses::rules(request, &shared.issued),
    }
    .and_then(|()| shared.reasoning.check(request));
    broken.err().map(|message| {
        json_response(
            400,
            &[],
            &error_body(request, "invalid_request_error", &message),
        )
    })
}

/// The error of a prompt over the window, in the request's format.
pub(super) fn too_long(request: &RecordedRequest, tokens: usize, window: usize) -> Value {
    match request.format() {
        Some(WireFormat::Anthropic) => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": format!("prompt is too long: {tokens} tokens > {window} maximum"),
        }}),
        _ => json!({"error": {
            "message": format!(
                "This model's maximum context length is {window} tokens. However, your \
                 messages resulted in {tokens} tokens. Please reduce the length of the messages."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }}),
    }
}

/// An error body in the request's format.
pub(super) fn error_body(request: &RecordedRequest, kind: &str, message: &str) -> Value {
    match request.format() {
        Some(WireFormat::Anthropic) => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        _ => json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
    }
}

pub(super) fn plain(status: u16, text: &'static str) -> Response {
    Response::builder()
        .status(status)
        .body(Body::from(text))
        .expect("a valid plain response")
}

pub(super) fn json_response(status: u16, headers: &[(String, String)], body: &Value) -> Response {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(Body::from(body.to_string()))
        .expect("a valid JSON response")
}
