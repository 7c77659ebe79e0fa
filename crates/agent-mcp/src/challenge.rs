//! The HTTP client of streamable HTTP servers, keeping the `WWW-Authenticate` challenge of a
//! `403 insufficient_scope`: rmcp 3.9's transport worker turns a refused call into the bare text
//! `Insufficient scope`, so the scope the server asks for is kept here, where the refusal is
//! still whole, for the server's scope step-up to read (`McpServer::step_up`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};

/// The last `insufficient_scope` challenge a server sent, taken once read.
#[derive(Debug, Default)]
pub(crate) struct Challenge(Mutex<Option<String>>);

impl Challenge {
    /// The challenge kept since the last call, if any.
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn keep<T>(&self, result: &Result<T, StreamableHttpError<reqwest::Error>>) {
        if let Err(StreamableHttpError::InsufficientScope(refusal)) = result {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(refusal.www_authenticate_header.clone());
        }
    }
}

/// reqwest's client for rmcp, noting each `insufficient_scope` challenge in `challenge`.
#[derive(Debug, Clone)]
pub(crate) struct KeepingClient {
    pub(crate) inner: reqwest::Client,
    pub(crate) challenge: Arc<Challenge>,
}

type Events = BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;
type Outcome<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for KeepingClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<StreamableHttpPostResponse> {
        let result = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.challenge.keep(&result);
        result
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Outcome<StreamableHttpPostResponse> {
        let result = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.challenge.keep(&result);
        result
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<()> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<Events> {
        let result = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.challenge.keep(&result);
        result
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Outcome<Events> {
        let result = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.challenge.keep(&result);
        result
    }
}
