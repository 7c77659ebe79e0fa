//! `ApiError`: every way a request or the server can fail, and the one place errors become HTTP
//! responses.
//!
//! A response error is JSON `{"error": {"code", "message"}}` with the status of its variant.
//! Server-side failures (5xx) are logged with their detail and answered with a generic message,
//! so internals never reach a client.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use agent_execution::StoreError;
use agent_runner::RunError;

/// Why a request or the server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// 400 `invalid_trace_id`: a trace id from the path or the query was refused.
    #[error("{0}")]
    InvalidTraceId(String),
    /// 400 with a code (`invalid_json`, `invalid_request`, `invalid_query`, `invalid_path`,
    /// `invalid_workspace`, `invalid_approval`): the request is malformed.
    #[error("{message}")]
    BadRequest {
        /// The error code sent to the client.
        code: &'static str,
        /// What is wrong, for the client.
        message: String,
    },
    /// 401 `unauthorized`: the bearer token is missing or wrong.
    #[error("a valid bearer token is required")]
    Unauthorized,
    /// 403 `forbidden`: the request came from a web page of another origin, or named a host
    /// this server does not answer to.
    #[error("{0}")]
    Forbidden(String),
    /// 403 with a code: the server refuses what the request asks for, and asking again will not
    /// change that. `runs_unavailable`: the server is read-only (it has no runner factory);
    /// `workspace_not_allowed`: the workspace lies outside the server's workspace roots;
    /// `approval_not_allowed`: the request asks for looser approvals than the server's mode;
    /// `not_writable`: the trace folder cannot be written.
    #[error("{message}")]
    Refused {
        /// The error code sent to the client.
        code: &'static str,
        /// Why, for the client.
        message: String,
    },
    /// 404 `not_found`: no such trace, approval or route.
    #[error("{0}")]
    NotFound(String),
    /// 404 with a code: something the trace does not have (`no_checkpoints`: it ran without
    /// checkpoints, or this server keeps none).
    #[error("{message}")]
    Missing {
        /// The error code sent to the client.
        code: &'static str,
        /// What is missing, for the client.
        message: String,
    },
    /// 405 `method_not_allowed`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 409 with a code (`run_in_progress`, `not_running`, `already_completed`,
    /// `already_decided`, `not_waiting`, `trace_locked`): the request conflicts with the trace's
    /// state.
    #[error("{message}")]
    Conflict {
        /// The error code sent to the client.
        code: &'static str,
        /// What conflicts, for the client.
        message: String,
    },
    /// 410 `trace_unreadable`: the trace exists but its files cannot be read (a damaged event
    /// log, a `meta.json` that does not parse, a file the server may not read). The message
    /// says which file and why; the trace's other routes answer the same until it is repaired.
    #[error("{0}")]
    TraceUnreadable(String),
    /// 413 `payload_too_large`: the body is over the configured limit.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 415 `unsupported_media_type`: a body that is not `application/json`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 503 `runs_unavailable`: this server is shutting down and takes no new runs (a server
    /// that never runs anything answers [`ApiError::Refused`] instead).
    #[error("{0}")]
    RunsUnavailable(String),
    /// 500 `internal`: a failure on the server's side; logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
    /// The server refused to start: its configuration is unsafe or inconsistent.
    #[error("invalid server configuration: {0}")]
    Config(String),
    /// The server could not listen on its address.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl ApiError {
    /// A 400 error with this code.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::BadRequest {
            code,
            message: message.into(),
        }
    }

    /// A 403 error with this code: the server refuses, for good.
    pub fn refused(code: &'static str, message: impl Into<String>) -> Self {
        Self::Refused {
            code,
            message: message.into(),
        }
    }

    /// A 404 error with this code.
    pub fn missing(code: &'static str, message: impl Into<String>) -> Self {
        Self::Missing {
            code,
            message: message.into(),
        }
    }

    /// A 409 error with this code.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::Conflict {
            code,
            message: message.into(),
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::InvalidTraceId(_) | Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) | Self::Refused { .. } => StatusCode::FORBIDDEN,
            Self::NotFound(_) | Self::Missing { .. } => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::TraceUnreadable(_) => StatusCode::GONE,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RunsUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) | Self::Config(_) | Self::Bind { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    /// The machine-readable code sent as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidTraceId(_) => "invalid_trace_id",
            Self::BadRequest { code, .. }
            | Self::Refused { code, .. }
            | Self::Conflict { code, .. }
            | Self::Missing { code, .. } => code,
            Self::Unauthorized => "unauthorized",
            Self::Forbidden(_) => "forbidden",
            Self::NotFound(_) => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::TraceUnreadable(_) => "trace_unreadable",
            Self::PayloadTooLarge(_) => "payload_too_large",
            Self::UnsupportedMediaType(_) => "unsupported_media_type",
            Self::RunsUnavailable(_) => "runs_unavailable",
            Self::Internal(_) | Self::Config(_) | Self::Bind { .. } => "internal",
        }
    }
}

/// The JSON body of every error response.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody {
    pub(crate) error: ErrorDetail,
}

/// The `error` object of an error response.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorDetail {
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        // Internal failures are logged and never sent; every other message is meant for the
        // client (a 503 says why runs cannot start, which reveals nothing internal).
        let message = match &self {
            Self::Internal(_) | Self::Config(_) | Self::Bind { .. } => {
                tracing::error!(error = %self, "request failed on the server's side");
                "internal server error; the server log has the details".to_owned()
            }
            _ => self.to_string(),
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message,
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        if matches!(self, Self::Unauthorized) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { trace_id } => {
                Self::NotFound(format!("trace {trace_id} not found"))
            }
            StoreError::MessageNotFound { message_id } => {
                Self::NotFound(format!("message {message_id} not found"))
            }
            StoreError::InvalidId { id, reason } => {
                Self::InvalidTraceId(format!("invalid trace id {id:?}: {reason}"))
            }
            StoreError::Locked { trace_id, .. } => Self::conflict(
                "trace_locked",
                format!("trace {trace_id} is being written by another process"),
            ),
            StoreError::AlreadyExists { trace_id } => {
                Self::conflict("already_exists", format!("trace {trace_id} already exists"))
            }
            StoreError::Invalid(message) => Self::bad_request("invalid_request", message),
            StoreError::Corrupt { path, detail } => Self::TraceUnreadable(format!(
                "the trace cannot be read: {} is damaged: {detail}",
                trace_file(&path)
            )),
            StoreError::Io { path, source }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                Self::refused(
                    "not_writable",
                    format!(
                        "the server may not write {}: its trace folder is read-only to it",
                        trace_file(&path)
                    ),
                )
            }
            other => Self::Internal(other.to_string()),
        }
    }
}

impl ApiError {
    /// The error of a failed read of trace `trace_id`: a trace whose files are damaged or cannot
    /// be read is 410 `trace_unreadable` with the reason, never a server error (its files are
    /// data the server was given, not a failure of the server).
    pub(crate) fn reading(trace_id: &str, error: StoreError) -> Self {
        match error {
            StoreError::Corrupt { path, detail } => Self::TraceUnreadable(format!(
                "trace {trace_id} cannot be read: {} is damaged: {detail}",
                trace_file(&path)
            )),
            StoreError::Io { path, source } => Self::TraceUnreadable(format!(
                "trace {trace_id} cannot be read: {}: {}",
                trace_file(&path),
                io_reason(&source)
            )),
            other => other.into(),
        }
    }
}

/// Reads of a trace, whose failures become [`ApiError::reading`].
pub(crate) trait ReadTrace<T> {
    /// This result, its error as a failed read of trace `trace_id`.
    fn reading(self, trace_id: &str) -> Result<T, ApiError>;
}

impl<T> ReadTrace<T> for Result<T, StoreError> {
    fn reading(self, trace_id: &str) -> Result<T, ApiError> {
        self.map_err(|error| ApiError::reading(trace_id, error))
    }
}

/// A file of a trace as a client may see it: its trace folder and name, never the server's
/// folders above them.
fn trace_file(path: &std::path::Path) -> String {
    let mut parts: Vec<String> = path
        .components()
        .rev()
        .take(2)
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.reverse();
    parts.join("/")
}

/// An I/O error as a short reason, without the OS's error number.
fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::PermissionDenied => "the server may not read it".into(),
        std::io::ErrorKind::IsADirectory => "it is a folder, not a file".into(),
        std::io::ErrorKind::NotADirectory => "it is a file, not a folder".into(),
        kind => format!("it cannot be read ({kind})"),
    }
}

impl From<RunError> for ApiError {
    fn from(error: RunError) -> Self {
        match error {
            RunError::Store(error) => error.into(),
            RunError::Workspace { path, message } => Self::bad_request(
                "invalid_workspace",
                format!("workspace {}: {message}", path.display()),
            ),
            RunError::AlreadyCompleted { trace_id } => Self::conflict(
                "already_completed",
                format!("trace {trace_id} has already completed; start a new run instead"),
            ),
            RunError::Running { trace_id } => Self::conflict(
                "run_in_progress",
                format!("trace {trace_id} is already running in this server"),
            ),
            RunError::EmptyMessage => Self::bad_request("invalid_request", "the message is empty"),
            RunError::NoVision(message) => Self::bad_request("no_vision", message),
            RunError::Picture(message) => Self::bad_request("invalid_picture", message),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<agent_execution::InvalidId> for ApiError {
    fn from(error: agent_execution::InvalidId) -> Self {
        Self::InvalidTraceId(error.to_string())
    }
}

impl From<agent_worker::WorkspaceError> for ApiError {
    fn from(error: agent_worker::WorkspaceError) -> Self {
        use agent_worker::WorkspaceError;
        match error {
            WorkspaceError::Outside(_) => ApiError::refused(
                "workspace_not_allowed",
                format!(
                    "workspace {error}; this server lets runs work only under its workspace roots"
                ),
            ),
            WorkspaceError::Missing(_) | WorkspaceError::NotAFolder(_) => {
                ApiError::bad_request("invalid_workspace", format!("workspace {error}"))
            }
            WorkspaceError::Malformed | WorkspaceError::OwnUnusable(_) => {
                ApiError::bad_request("invalid_workspace", error.to_string())
            }
            WorkspaceError::BadRoot { .. } => ApiError::Config(error.to_string()),
        }
    }
}
