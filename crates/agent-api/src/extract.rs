//! Extractors whose rejections are [`ApiError`]s, so a malformed body, query or path gets the
//! same `{"error": {"code", "message"}}` shape as every other error. A trace id of a path may
//! be a unique prefix of one (as on the command line).

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use agent_execution::lookup::{Lookup, find_trace};
use agent_execution::validate_trace_id;

use crate::error::ApiError;
use crate::state::AppState;

/// A JSON body. Requires `Content-Type: application/json`, which also keeps web pages of other
/// origins from posting without a CORS preflight.
#[derive(Debug, Clone)]
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

/// The error of a body the JSON extractor refused.
pub(crate) fn json_rejection(rejection: &JsonRejection) -> ApiError {
    let text = rejection.body_text();
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::PayloadTooLarge("the request body is over the size limit".into())
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType(
            "the request body must be JSON with `Content-Type: application/json`".into(),
        ),
        StatusCode::UNPROCESSABLE_ENTITY => ApiError::bad_request("invalid_request", text),
        _ => match rejection {
            JsonRejection::JsonSyntaxError(_) => ApiError::bad_request("invalid_json", text),
            _ => ApiError::bad_request("invalid_request", text),
        },
    }
}

/// A query string.
#[derive(Debug, Clone)]
pub(crate) struct ApiQuery<T>(pub(crate) T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(query_rejection(&rejection)),
        }
    }
}

fn query_rejection(rejection: &QueryRejection) -> ApiError {
    ApiError::bad_request("invalid_query", rejection.body_text())
}

/// The `{trace_id}` of a path, percent-decoded, validated (so `..%2F` is refused) and
/// resolved: a unique prefix of a trace's id stands for that id.
#[derive(Debug, Clone)]
pub(crate) struct TraceIdPath(pub(crate) String);

impl FromRequestParts<AppState> for TraceIdPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Path(trace_id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| path_rejection(&rejection))?;
        Ok(Self(resolve(state, trace_id).await?))
    }
}

/// How many candidates an ambiguous prefix's error names.
const SHOWN_CANDIDATES: usize = 10;

/// A trace id from a path, validated, with a unique prefix replaced by the full id. An
/// ambiguous prefix is 400 `ambiguous_trace_id` naming the candidates; an id that names nothing
/// is left as it is, for the route to answer 404 (and a trace the store cannot read, 410).
pub(crate) async fn resolve(state: &AppState, given: String) -> Result<String, ApiError> {
    validate_trace_id(&given)?;
    match find_trace(state.store().as_ref(), &given).await {
        Ok(Lookup::Found(trace_id)) => Ok(trace_id),
        Ok(Lookup::NotFound) | Err(_) => Ok(given),
        Ok(Lookup::Ambiguous(candidates)) => {
            let mut named = candidates
                .iter()
                .take(SHOWN_CANDIDATES)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if candidates.len() > SHOWN_CANDIDATES {
                named.push_str(&format!(
                    " and {} more",
                    candidates.len() - SHOWN_CANDIDATES
                ));
            }
            Err(ApiError::bad_request(
                "ambiguous_trace_id",
                format!(
                    "the trace id {given:?} is the start of {} traces' ids: {named}",
                    candidates.len()
                ),
            ))
        }
    }
}

/// The `{trace_id}` and `{tool_call_id}` of an approval path, both decoded; the trace id is
/// validated and resolved as [`TraceIdPath`]'s.
#[derive(Debug, Clone)]
pub(crate) struct ApprovalPath {
    pub(crate) trace_id: String,
    pub(crate) tool_call_id: String,
}

impl FromRequestParts<AppState> for ApprovalPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Path((trace_id, tool_call_id)) =
            Path::<(String, String)>::from_request_parts(parts, state)
                .await
                .map_err(|rejection| path_rejection(&rejection))?;
        Ok(Self {
            trace_id: resolve(state, trace_id).await?,
            tool_call_id,
        })
    }
}

/// The `{trace_id}` and `{elicitation_id}` of an elicitation's path, both decoded; the trace id
/// is validated and resolved as [`TraceIdPath`]'s.
#[derive(Debug, Clone)]
pub(crate) struct ElicitationPath {
    pub(crate) trace_id: String,
    pub(crate) elicitation_id: String,
}

impl FromRequestParts<AppState> for ElicitationPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let ApprovalPath {
            trace_id,
            tool_call_id,
        } = ApprovalPath::from_request_parts(parts, state).await?;
        Ok(Self {
            trace_id,
            elicitation_id: tool_call_id,
        })
    }
}

/// The `{trace_id}` and `{goal_id}` of a goal's path, both decoded; the trace id is validated
/// and resolved as [`TraceIdPath`]'s (a goal id is only looked up in the trace's tree).
#[derive(Debug, Clone)]
pub(crate) struct GoalPath {
    pub(crate) trace_id: String,
    pub(crate) goal_id: String,
}

impl FromRequestParts<AppState> for GoalPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Path((trace_id, goal_id)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| path_rejection(&rejection))?;
        Ok(Self {
            trace_id: resolve(state, trace_id).await?,
            goal_id,
        })
    }
}

pub(crate) fn path_rejection(rejection: &PathRejection) -> ApiError {
    match rejection {
        // A path whose percent-encoding does not decode to UTF-8 cannot be a valid trace id.
        PathRejection::FailedToDeserializePathParams(_) => {
            ApiError::InvalidTraceId(format!("invalid path: {}", rejection.body_text()))
        }
        _ => ApiError::Internal(rejection.body_text()),
    }
}
