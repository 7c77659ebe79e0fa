//! The settings of a run a request may give (a new run's fields, a resume's optional body) and
//! how they land on the runner factory's defaults: limits checked as the command line checks
//! them (400 naming the field), the server's approval mode or a stricter one the request asks
//! for (403 `approval_not_allowed` for a looser one), the same for the sandbox of its commands
//! (403 `sandbox_not_allowed`), streaming, and a workspace under the server's roots
//! (403 `workspace_not_allowed`).

use agent_runner::RunnerOptions;
use agent_worker::{BuildChoices, SandboxMode};
use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;

use crate::config::ApprovalMode;
use crate::error::ApiError;
use crate::extract::json_rejection;
use crate::state::AppState;

/// What a resumed run may change about the server's defaults (the fields of a new run but
/// the task).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSettings {
    /// The model; the server's default when absent.
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    model: Option<String>,
    /// Model calls allowed for this run, a whole number of at least 1; absent: the limit the
    /// trace stored when it was started.
    #[serde(default, deserialize_with = "max_iterations")]
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    max_iterations: Option<u32>,
    /// Cost budget of the trace and its sub-traces in US dollars across all its runs, positive
    /// and finite; absent: the budget the trace stored when it was started.
    #[serde(default, deserialize_with = "max_cost")]
    #[schema(exclusive_minimum = 0)]
    max_cost: Option<f64>,
    /// How risky tool calls (shell, writes, MCP tools not marked read-only) are handled:
    /// `"ask"` (or `true`) waits for `POST /api/traces/{id}/approvals/{tool_call_id}`, `"auto"`
    /// (or `false`) runs them, `"never"` refuses them; absent: the server's mode. A request may
    /// ask for a stricter mode than the server's (`auto` < `ask` < `never`), not a looser one
    /// (403 `approval_not_allowed`).
    approval: Option<RequestedApproval>,
    /// `false` asks the model for whole answers instead of streams, for a model or server that
    /// cannot stream (as `agent run --no-stream`); absent or `true`: the server's setting.
    stream: Option<bool>,
    /// The sandbox of the run's commands: `"workspace-write"`, `"read-only"` or `"off"`;
    /// absent: the server's. A request may ask for a stricter one than the server's (`off` <
    /// `workspace-write` < `read-only`), not a looser one (403 `sandbox_not_allowed`).
    #[schema(value_type = Option<SandboxChoice>)]
    sandbox: Option<SandboxMode>,
    /// The folder the tools work in; a relative path is taken from the server's default
    /// workspace. It must lie under one of the server's workspace roots (after `..` and symbolic
    /// links are resolved): 403 `workspace_not_allowed` otherwise.
    #[schema(
        pattern = r"^[^\u0000]*[^\u0000\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\u0000]*$"
    )]
    workspace: Option<String>,
}

// The schema of a request's `sandbox`: the mode is `SandboxMode`, documented under the name the
// API has always given it.
/// The sandbox of a run's commands as a request names it, from the loosest to the strictest. A
/// node's own sandbox is the loosest a request may ask for.
#[derive(ToSchema)]
#[schema(as = SandboxChoice)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
pub(crate) enum SandboxChoice {
    Off,
    WorkspaceWrite,
    ReadOnly,
}

/// A new run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartRun {
    /// The task.
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    task: String,
    /// The model; the server's default when absent.
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    model: Option<String>,
    /// Model calls allowed for this run, a whole number of at least 1 (stored with the trace: a
    /// resume keeps it).
    #[serde(default, deserialize_with = "max_iterations")]
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    max_iterations: Option<u32>,
    /// Cost budget of the trace and its sub-traces in US dollars, positive and finite (stored
    /// with the trace: a resume keeps it).
    #[serde(default, deserialize_with = "max_cost")]
    #[schema(exclusive_minimum = 0)]
    max_cost: Option<f64>,
    /// How risky tool calls (shell, writes, MCP tools not marked read-only) are handled:
    /// `"ask"` (or `true`) waits for `POST /api/traces/{id}/approvals/{tool_call_id}`, `"auto"`
    /// (or `false`) runs them, `"never"` refuses them; absent: the server's mode. A request may
    /// ask for a stricter mode than the server's (`auto` < `ask` < `never`), not a looser one
    /// (403 `approval_not_allowed`).
    approval: Option<RequestedApproval>,
    /// `false` asks the model for whole answers instead of streams, for a model or server that
    /// cannot stream (as `agent run --no-stream`); absent or `true`: the server's setting.
    stream: Option<bool>,
    /// The sandbox of the run's commands: `"workspace-write"`, `"read-only"` or `"off"`;
    /// absent: the server's. A request may ask for a stricter one than the server's (`off` <
    /// `workspace-write` < `read-only`), not a looser one (403 `sandbox_not_allowed`).
    #[schema(value_type = Option<SandboxChoice>)]
    sandbox: Option<SandboxMode>,
    /// The folder the tools work in; a relative path is taken from the server's default
    /// workspace. It must lie under one of the server's workspace roots (after `..` and symbolic
    /// links are resolved): 403 `workspace_not_allowed` otherwise.
    #[schema(
        pattern = r"^[^\u0000]*[^\u0000\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\u0000]*$"
    )]
    workspace: Option<String>,
    /// Pictures attached to the task, after its text (the model must take images: 400
    /// `no_vision` otherwise). Not carried through a run queue (400 `images_unsupported`).
    #[serde(default)]
    images: Vec<ImageInput>,
}

/// A picture sent with a task or a message: PNG, JPEG, GIF or WebP, at most 5 MiB.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImageInput {
    /// The picture's bytes, base64 (standard alphabet); its type is read from them.
    data: String,
    /// A name for people (a file name), shown in place of the picture in a terminal.
    name: Option<String>,
}

/// The pictures of a request; one that is not a picture a model takes is refused (400
/// `invalid_picture`, naming it by its place).
pub(crate) fn pictures(
    images: &[ImageInput],
) -> Result<Vec<agent_execution::message::ChatImage>, ApiError> {
    (images.iter().enumerate())
        .map(|(at, image)| {
            agent_execution::message::ChatImage::from_base64(&image.data, image.name.as_deref())
                .map_err(|error| {
                    ApiError::bad_request("invalid_picture", format!("images[{at}]: {error}"))
                })
        })
        .collect()
}

/// The `approval` of a request: a mode, or the older boolean form (`true`: `ask`, `false`:
/// `auto`).
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum RequestedApproval {
    /// `true`: `ask`; `false`: `auto`.
    Flag(bool),
    /// The mode asked for.
    Mode(ApprovalMode),
}

impl RequestedApproval {
    fn mode(self) -> ApprovalMode {
        match self {
            Self::Flag(true) => ApprovalMode::Ask,
            Self::Flag(false) => ApprovalMode::Auto,
            Self::Mode(mode) => mode,
        }
    }
}

/// `max_iterations`, checked as the command line checks it; the error names the field.
fn max_iterations<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    let Some(value) = Option::<serde_json::Value>::deserialize(deserializer)? else {
        return Ok(None);
    };
    value
        .as_u64()
        .and_then(|max| u32::try_from(max).ok())
        .ok_or_else(|| agent_runner::LimitError::MaxIterations(value.to_string()))
        .and_then(agent_runner::check_max_iterations)
        .map(Some)
        .map_err(D::Error::custom)
}

/// `max_cost`, checked as the command line checks it; the error names the field.
fn max_cost<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    let Some(value) = Option::<serde_json::Value>::deserialize(deserializer)? else {
        return Ok(None);
    };
    value
        .as_f64()
        .ok_or_else(|| agent_runner::LimitError::MaxCost(value.to_string()))
        .and_then(agent_runner::check_max_cost)
        .map(Some)
        .map_err(D::Error::custom)
}

impl StartRun {
    /// The pictures of the task (see [`pictures`]).
    pub(crate) fn images(&self) -> Result<Vec<agent_execution::message::ChatImage>, ApiError> {
        pictures(&self.images)
    }

    /// The task and the run's settings; an empty task is refused (400 `invalid_request`).
    pub(crate) fn settings(self) -> Result<(String, RunSettings), ApiError> {
        if self.task.trim().is_empty() {
            return Err(ApiError::bad_request(
                "invalid_request",
                "the task is empty",
            ));
        }
        let settings = RunSettings {
            model: self.model,
            max_iterations: self.max_iterations,
            max_cost: self.max_cost,
            approval: self.approval,
            stream: self.stream,
            sandbox: self.sandbox,
            workspace: self.workspace,
        };
        Ok((self.task, settings))
    }
}

impl RunSettings {
    /// The settings as a queued run carries them (see [`agent_worker::queue`]): the model, the limits,
    /// the approval mode (the server's or a stricter one) and a workspace relative to the
    /// workers' workspace (403 `workspace_not_allowed` for an absolute path or one that climbs
    /// out with `..`: the workers resolve it under their own folder).
    pub(crate) fn queued(
        self,
        server: ApprovalMode,
        sandbox: SandboxMode,
    ) -> Result<agent_worker::QueuedSettings, ApiError> {
        if let Some(model) = &self.model
            && model.trim().is_empty()
        {
            return Err(ApiError::bad_request(
                "invalid_request",
                "the model is empty",
            ));
        }
        if let Some(workspace) = &self.workspace {
            let path = std::path::Path::new(workspace);
            let climbs = path.components().any(|part| {
                !matches!(
                    part,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
            if workspace.trim().is_empty() || workspace.contains('\0') || climbs {
                return Err(ApiError::refused(
                    "workspace_not_allowed",
                    format!(
                        "the workspace {workspace:?} is not a folder under the workers' \
                         workspace: give it relative to that folder, without `..`"
                    ),
                ));
            }
        }
        Ok(agent_worker::QueuedSettings {
            model: self.model,
            max_iterations: self.max_iterations,
            max_cost: self.max_cost,
            approval: approval_mode(server, self.approval)?,
            choices: choices(sandbox, self.stream, self.sandbox)?,
            workspace: self.workspace,
        })
    }
}

/// The optional JSON body of a resume: empty means no overrides.
pub(crate) fn optional_settings(
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<RunSettings, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(RunSettings::default());
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !json {
        return Err(ApiError::UnsupportedMediaType(
            "the request body must be JSON with `Content-Type: application/json`".into(),
        ));
    }
    // `null` says "no overrides" as well as an empty body does (the document allows it). Read
    // as the JSON extractor reads bodies, so errors name the field as they do for a new run.
    axum::Json::<Option<RunSettings>>::from_bytes(body)
        .map(|axum::Json(settings)| settings.unwrap_or_default())
        .map_err(|rejection| json_rejection(&rejection))
}

/// The factory's defaults with the request's overrides on top, the approval policy of the
/// server's mode (or the stricter one the request asks for) and a workspace under the roots;
/// and what the request chose about streaming and the sandbox, for
/// [`RunnerFactory::build_with`](agent_worker::RunnerFactory::build_with).
pub(crate) fn settle(
    state: &AppState,
    mut options: RunnerOptions,
    settings: RunSettings,
    trace_model: Option<String>,
) -> Result<(RunnerOptions, BuildChoices), ApiError> {
    let choices = choices(state.config().sandbox, settings.stream, settings.sandbox)?;
    if let Some(model) = settings.model.or(trace_model) {
        if model.trim().is_empty() {
            return Err(ApiError::bad_request(
                "invalid_request",
                "the model is empty",
            ));
        }
        options.model = model;
    }
    // Checked when the body was read; checked again for settings built otherwise.
    if let Some(max_iterations) = settings.max_iterations {
        let max_iterations =
            agent_runner::check_max_iterations(max_iterations).map_err(invalid_limit)?;
        options = options.with_max_iterations(max_iterations);
    }
    if let Some(max_cost) = settings.max_cost {
        let max_cost = agent_runner::check_max_cost(max_cost).map_err(invalid_limit)?;
        options = options.with_max_cost(max_cost);
    }
    let mode = approval_mode(state.config().approval, settings.approval)?;
    agent_worker::approval::apply(&mut options, mode, state.approvals());
    options.workspace = agent_worker::workspace::resolve(
        state.workspace_roots(),
        &options.workspace,
        settings.workspace.as_deref(),
    )?;
    Ok((options, choices))
}

/// What a request chose about streaming and the sandbox: a sandbox looser than the server's
/// is refused (403 `sandbox_not_allowed`), as a looser approval mode is.
fn choices(
    server: SandboxMode,
    stream: Option<bool>,
    sandbox: Option<SandboxMode>,
) -> Result<BuildChoices, ApiError> {
    // Modes are ordered from the strictest: a greater one is looser.
    if let Some(requested) = sandbox
        && requested > server
    {
        return Err(ApiError::refused(
            "sandbox_not_allowed",
            format!(
                "this server's sandbox is `{server}`: a request may ask for a stricter one \
                 (off < workspace-write < read-only), not `{requested}`"
            ),
        ));
    }
    Ok(BuildChoices {
        // Streaming is the server's unless the request turns it off.
        stream: stream.filter(|stream| !stream),
        // The server's own sandbox is no choice.
        sandbox: sandbox.filter(|sandbox| *sandbox != server),
    })
}

fn invalid_limit(error: agent_runner::LimitError) -> ApiError {
    ApiError::bad_request("invalid_request", error.to_string())
}

/// The mode a run gets: the server's, or the stricter one a request asks for. A looser one is
/// refused rather than quietly tightened, so a client never believes its run goes on unattended
/// while it waits for approvals.
fn approval_mode(
    server: ApprovalMode,
    requested: Option<RequestedApproval>,
) -> Result<ApprovalMode, ApiError> {
    let Some(requested) = requested.map(RequestedApproval::mode) else {
        return Ok(server);
    };
    if requested < server {
        return Err(ApiError::refused(
            "approval_not_allowed",
            format!(
                "this server's approval mode is `{server}`: a request may ask for a stricter one \
                 (auto < ask < never), not `{requested}`"
            ),
        ));
    }
    Ok(requested)
}
