//! `POST /api/traces/{trace_id}/rewind` and `GET /api/traces/{trace_id}/goals/{goal_id}/diff`:
//! the workspace's files put back as they were when a goal started (and the trace forked
//! there), and a goal's file changes as a unified diff, from the checkpoints its runs took —
//! what `agent rewind` and `agent diff` do.
//!
//! Both read the checkpoints the composition root gave the state
//! ([`AppStateBuilder::checkpoints`](crate::AppStateBuilder::checkpoints)); a rewind only
//! writes a workspace under the server's workspace roots, and so does a diff that reads one.

use std::path::Path;
use std::sync::Arc;

use agent_checkpoint::{
    Changes, CheckpointError, CheckpointStore, DiffTarget, EntriesExt, RestoreOptions, SnapshotId,
};
use agent_execution::GoalTree;
use agent_execution::fork::{self, ForkPoint};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, GoalPath, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::fork::fork_error;
use crate::routes::traces::not_found;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/traces/{trace_id}/rewind", post(rewind_trace))
        .route(
            "/api/traces/{trace_id}/goals/{goal_id}/diff",
            get(goal_diff),
        )
}

/// What to rewind to, and how.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RewindRequest {
    /// The goal (its display number, e.g. `"2.1"`): the files are put back as they were when it
    /// started, and the trace is forked just before it (as `POST .../fork` with `goal`).
    goal: String,
    /// Put the files back without forking the trace.
    #[serde(default)]
    files_only: bool,
    /// Change nothing: say which files would change.
    #[serde(default)]
    dry_run: bool,
    /// Overwrite files changed since the run's last checkpoint too (by default such files make
    /// the rewind fail with 409 `files_changed`, and nothing is changed).
    #[serde(default)]
    force: bool,
}

/// Files of the workspace, relative to it, sorted.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FileChanges {
    /// Files brought back that were not there.
    added: Vec<String>,
    /// Files whose content (or mode) is put back.
    modified: Vec<String>,
    /// Files removed because they did not exist when the goal started.
    deleted: Vec<String>,
}

impl From<Changes> for FileChanges {
    fn from(changes: Changes) -> Self {
        Self {
            added: changes.added,
            modified: changes.modified,
            deleted: changes.deleted,
        }
    }
}

/// What a rewind did (or, with `dry_run`, would do).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Rewound {
    /// The fork, continued like any stopped trace; absent with `files_only` or `dry_run`.
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<String>,
    /// Whether nothing was changed.
    dry_run: bool,
    /// The files put back (or that would be).
    changes: FileChanges,
}

/// A goal's file changes.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct GoalDiff {
    /// The goal's id.
    goal_id: String,
    /// `snapshot` when the goal has ended (its start to its end), `workspace` when it has not
    /// (its start to the workspace as it is now).
    to: DiffEnd,
    /// The unified diff (`git diff` format); empty when nothing changed.
    diff: String,
}

/// The later side of a goal's diff.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DiffEnd {
    /// The checkpoint taken when the goal ended.
    Snapshot,
    /// The workspace now.
    Workspace,
}

/// Puts the workspace's files back as they were when a goal started and forks the trace there,
/// as `agent rewind` does: after a dry run that found no file changed since the run's last
/// checkpoint (unless `force`), then the fork, then the files.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/rewind",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace to rewind")),
    request_body = RewindRequest,
    responses(
        (status = 200, description = "The files were put back (`files_only`), or would be (`dry_run`)", body = Rewound),
        (status = 201, description = "The files were put back and the trace forked", body = Rewound),
        (status = 400, description = "The trace id or body is invalid, or the trace has no such goal (`unknown_goal`)", body = ErrorResponse),
        (status = 403, description = "`workspace_not_allowed`: the trace's workspace is outside the server's workspace roots; `not_writable`: the trace folder is read-only", body = ErrorResponse),
        (status = 404, description = "No such trace, or it has no checkpoints (`no_checkpoints`)", body = ErrorResponse),
        (status = 409, description = "`files_changed`: files changed since the last checkpoint would be overwritten (give `force`); `no_checkpoint`: the goal never started, or its start was not snapshotted; `run_in_progress`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn rewind_trace(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiJson(request): ApiJson<RewindRequest>,
) -> Result<Response, ApiError> {
    let tree = goal_tree(&state, &trace_id).await?;
    if state.runs().is_running(&trace_id) {
        return Err(ApiError::conflict(
            "run_in_progress",
            format!("trace {trace_id} is running in this server; cancel it or wait"),
        ));
    }
    let checkpoints = open(&state, &trace_id)?;
    let goal_id = tree
        .find_by_display(&request.goal)
        .map(|goal| goal.id.clone())
        .ok_or_else(|| {
            ApiError::bad_request(
                "unknown_goal",
                format!("trace {trace_id} has no goal {:?}", request.goal),
            )
        })?;
    check_workspace(&state, checkpoints.workspace())?;
    let start = goal_start(&checkpoints, &trace_id, &goal_id, &request.goal).await?;
    let check = RestoreOptions {
        force: request.force,
        dry_run: true,
    };
    let changes = restore(&checkpoints, &start, check).await?;
    if request.dry_run {
        let body = Rewound {
            trace_id: None,
            dry_run: true,
            changes: changes.into(),
        };
        return Ok(Json(body).into_response());
    }
    let forked = if request.files_only {
        None
    } else {
        let point = ForkPoint::Goal(request.goal.clone());
        let forked = fork::fork(state.store().as_ref(), &trace_id, &point)
            .await
            .map_err(|error| fork_error(&trace_id, error))?;
        Some(forked.trace_id)
    };
    let apply = RestoreOptions {
        force: request.force,
        dry_run: false,
    };
    let changes = restore(&checkpoints, &start, apply).await?;
    tracing::info!(%trace_id, goal = %request.goal, fork = ?forked, "trace rewound over HTTP");
    let mut headers = HeaderMap::new();
    let status = match &forked {
        Some(fork) => {
            if let Ok(location) = HeaderValue::from_str(&format!("/api/traces/{fork}")) {
                headers.insert(header::LOCATION, location);
            }
            StatusCode::CREATED
        }
        None => StatusCode::OK,
    };
    let body = Rewound {
        trace_id: forked,
        dry_run: false,
        changes: changes.into(),
    };
    Ok((status, headers, Json(body)).into_response())
}

/// A goal's file changes as a unified diff: from the checkpoint of its start to the one of its
/// end, or to the workspace as it is now while it has not ended.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}/goals/{goal_id}/diff",
    tag = "traces",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("goal_id" = String, Path, description = "The goal's id (not its display number)"),
    ),
    responses(
        (status = 200, description = "The goal's changes", body = GoalDiff),
        (status = 400, description = "The trace id is invalid", body = ErrorResponse),
        (status = 403, description = "`workspace_not_allowed`: the goal has not ended and its workspace is outside the server's workspace roots", body = ErrorResponse),
        (status = 404, description = "No such trace or goal, or the trace has no checkpoints (`no_checkpoints`)", body = ErrorResponse),
        (status = 409, description = "`no_checkpoint`: the goal never started, or its start was not snapshotted", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn goal_diff(
    State(state): State<AppState>,
    path: GoalPath,
) -> Result<Json<GoalDiff>, ApiError> {
    let GoalPath { trace_id, goal_id } = path;
    let tree = goal_tree(&state, &trace_id).await?;
    let goal = tree.get(&goal_id).ok_or_else(|| {
        ApiError::NotFound(format!(
            "trace {trace_id} has no goal with the id {goal_id:?}"
        ))
    })?;
    let shown = goal.id.clone();
    let checkpoints = open(&state, &trace_id)?;
    let from = goal_start(&checkpoints, &trace_id, &goal_id, &shown).await?;
    let entries = blocking(&checkpoints, |store| store.entries()).await?;
    let (to, end) = match entries.goal_end(&goal_id) {
        Some(end) => (DiffTarget::Snapshot(end), DiffEnd::Snapshot),
        None => {
            check_workspace(&state, checkpoints.workspace())?;
            (DiffTarget::Workspace, DiffEnd::Workspace)
        }
    };
    let diff = blocking(&checkpoints, move |store| store.diff(&from, &to)).await?;
    Ok(Json(GoalDiff {
        goal_id,
        to: end,
        diff,
    }))
}

/// The trace's goal tree; 404 when the trace does not exist.
async fn goal_tree(state: &AppState, trace_id: &str) -> Result<GoalTree, ApiError> {
    if state
        .store()
        .get_trace(trace_id)
        .await
        .reading(trace_id)?
        .is_none()
    {
        return Err(not_found(trace_id));
    }
    Ok(state
        .store()
        .get_goal_tree(trace_id)
        .await
        .reading(trace_id)?
        .unwrap_or_default())
}

/// The trace's checkpoint store; 404 `no_checkpoints` when the server keeps none or the trace
/// has none.
fn open(state: &AppState, trace_id: &str) -> Result<Arc<CheckpointStore>, ApiError> {
    let none = || {
        ApiError::missing(
            "no_checkpoints",
            format!("trace {trace_id} has no checkpoints (it ran without them)"),
        )
    };
    let checkpoints = state.checkpoints().ok_or_else(|| {
        ApiError::missing(
            "no_checkpoints",
            "this server keeps no checkpoints: they are kept beside traces in a folder",
        )
    })?;
    match checkpoints.open(trace_id) {
        Ok(Some(store)) => Ok(Arc::new(store)),
        Ok(None) => Err(none()),
        Err(error) => Err(checkpoint_error(error)),
    }
}

/// The checkpoint of the goal's start; 409 `no_checkpoint` when there is none.
async fn goal_start(
    checkpoints: &Arc<CheckpointStore>,
    trace_id: &str,
    goal_id: &str,
    shown: &str,
) -> Result<SnapshotId, ApiError> {
    let entries = blocking(checkpoints, |store| store.entries()).await?;
    entries.goal_start(goal_id).ok_or_else(|| {
        ApiError::conflict(
            "no_checkpoint",
            format!(
                "goal {shown} of {trace_id} has no checkpoint of its start (it never started, \
                 or its snapshot could not be taken)"
            ),
        )
    })
}

async fn restore(
    checkpoints: &Arc<CheckpointStore>,
    id: &SnapshotId,
    options: RestoreOptions,
) -> Result<Changes, ApiError> {
    let id = id.clone();
    blocking(checkpoints, move |store| store.restore(&id, options)).await
}

/// Runs `work` on the store away from the async workers (it runs `git` and reads files).
async fn blocking<T: Send + 'static>(
    checkpoints: &Arc<CheckpointStore>,
    work: impl FnOnce(&CheckpointStore) -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, ApiError> {
    let store = checkpoints.clone();
    tokio::task::spawn_blocking(move || work(&store))
        .await
        .map_err(|error| ApiError::Internal(format!("a checkpoint task failed: {error}")))?
        .map_err(checkpoint_error)
}

fn checkpoint_error(error: CheckpointError) -> ApiError {
    match error {
        CheckpointError::Conflicts { .. } => ApiError::conflict("files_changed", error.to_string()),
        CheckpointError::UnknownSnapshot(_) => {
            ApiError::conflict("no_checkpoint", error.to_string())
        }
        other => ApiError::Internal(format!("checkpoints: {other}")),
    }
}

/// A workspace the request would write or read: it must lie under the server's workspace
/// roots (or, without roots, under the runner factory's workspace); a server with neither
/// changes no workspace.
fn check_workspace(state: &AppState, workspace: &Path) -> Result<(), ApiError> {
    let roots = state.workspace_roots();
    let default = match (roots.is_empty(), state.factory()) {
        (false, _) => workspace.to_path_buf(),
        (true, Some(factory)) => factory.options().workspace,
        (true, None) => {
            return Err(ApiError::refused(
                "workspace_not_allowed",
                "this server names no workspace its clients may change (start it with \
                 --workspace-root or a model)",
            ));
        }
    };
    let shown = workspace.to_string_lossy();
    agent_worker::workspace::resolve(roots, &default, Some(shown.as_ref()))?;
    Ok(())
}
