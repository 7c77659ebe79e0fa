//! The pictures of a trace's messages, by id (the SHA-256 of the bytes), as the files they were
//! sent as: what the viewer shows as thumbnails. Any store serves them: the picture is looked up
//! in the trace's messages, and its type is read again from its bytes, never taken from the
//! record.

use agent_execution::message::ChatImage;
use agent_execution::meta;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;

use crate::error::{ApiError, ReadTrace};
use crate::routes::ErrorResponse;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new().route(
        "/api/traces/{trace_id}/pictures/{picture_id}",
        get(get_picture),
    )
}

/// The `{trace_id}` (validated and resolved as every trace path's) and `{picture_id}` (64
/// lowercase hex digits) of a picture's path.
pub(crate) struct PicturePath {
    trace_id: String,
    picture_id: String,
}

impl FromRequestParts<AppState> for PicturePath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Path((trace_id, picture_id)) =
            Path::<(String, String)>::from_request_parts(parts, state)
                .await
                .map_err(|rejection| crate::extract::path_rejection(&rejection))?;
        if !ChatImage::is_id(&picture_id) {
            return Err(ApiError::bad_request(
                "invalid_picture_id",
                "a picture id is the SHA-256 of its bytes: 64 lowercase hex digits",
            ));
        }
        let trace_id = crate::extract::resolve(state, trace_id).await?;
        Ok(Self {
            trace_id,
            picture_id,
        })
    }
}

/// A picture of the trace's messages (a user's, or one a tool returned), as its file.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}/pictures/{picture_id}",
    tag = "traces",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("picture_id" = String, Path, description = "The picture: the SHA-256 of its bytes, as a message's `metadata.images[].id` names it"),
    ),
    responses(
        (status = 200, description = "The picture: the file's bytes, of the type they are", content(
            (String = "image/png"), (String = "image/jpeg"), (String = "image/gif"), (String = "image/webp"),
        )),
        (status = 400, description = "The trace id or picture id is invalid", body = ErrorResponse),
        (status = 404, description = "No such trace, or no such picture in it", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn get_picture(
    State(state): State<AppState>,
    PicturePath {
        trace_id,
        picture_id,
    }: PicturePath,
) -> Result<Response, ApiError> {
    let store = state.store();
    if store
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .is_none()
    {
        return Err(crate::routes::traces::not_found(&trace_id));
    }
    let messages = store
        .get_trace_messages_shared(&trace_id)
        .await
        .reading(&trace_id)?;
    let data = messages.iter().rev().find_map(|message| {
        meta::images(&message.metadata)
            .into_iter()
            .find(|image| image.id == picture_id)
            .and_then(|image| image.data)
    });
    let bytes = data.and_then(|data| {
        base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .ok()
    });
    let checked = bytes.and_then(|bytes| {
        let picture = ChatImage::from_bytes(&bytes, None).ok()?;
        let media_type = HeaderValue::from_str(&picture.media_type).ok()?;
        (picture.id == picture_id).then_some((bytes, media_type))
    });
    let Some((bytes, media_type)) = checked else {
        return Err(ApiError::NotFound(format!(
            "trace {trace_id} has no picture {picture_id}"
        )));
    };
    let headers = [
        (header::CONTENT_TYPE, media_type),
        // The id is the bytes' hash: what it names never changes.
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, max-age=31536000, immutable"),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
    ];
    Ok((headers, bytes).into_response())
}
