//! Documentation-only mirrors of the models of `agent-execution`, which stay serde-only (the
//! goal tree's are `goal_schemas.rs`'s). Each mirror has the serde shape of its model, field for field; a test checks
//! real responses against these schemas so the two cannot drift apart silently.

#![allow(dead_code)]
use std::collections::BTreeMap;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, schema};
use utoipa::{PartialSchema, ToSchema};

pub(crate) use crate::goal_schemas::{GoalTreeDoc, PlanEditDoc};
pub(crate) use crate::metadata_doc::MessageMetadataDoc;

/// Single model call or agent loop.
#[derive(ToSchema)]
#[schema(as = TraceMode)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TraceModeDoc {
    Call,
    Agent,
}

/// Where a trace is in its life.
#[derive(ToSchema)]
#[schema(as = TraceStatus)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TraceStatusDoc {
    Running,
    Completed,
    Failed,
    Waiting,
    Cancelled,
    /// Plan mode: the plan waits to be reviewed, edited and run.
    Planned,
    /// The run ended with goals of its plan still open (the model stopped working on them
    /// after being sent back to them); its `error` names them, and a resume takes them up.
    Incomplete,
}

/// One run: a main trace, or a sub-trace spawned by `explore` or `delegate` (the `meta.json`
/// of the trace).
#[derive(ToSchema)]
#[schema(as = Trace)]
pub(crate) struct TraceDoc {
    /// A UUID v4 for a main trace, `{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}` for a
    /// sub-trace.
    trace_id: String,
    mode: TraceModeDoc,
    /// The task the run was given.
    task: String,
    /// Sub-traces only: the trace that spawned this one.
    #[schema(required = true)]
    parent_trace_id: Option<String>,
    /// Sub-traces only: the goal of the parent trace that spawned this one.
    #[schema(required = true)]
    parent_goal_id: Option<String>,
    /// The agent profile: why a sub-trace was spawned (`explore`, `delegate`, or a profile an
    /// `explore` or `delegate` call named); for a main trace the profile it was started with,
    /// unless that is `default`.
    #[schema(required = true)]
    agent_type: Option<String>,
    status: TraceStatusDoc,
    /// Number of messages recorded.
    total_messages: u64,
    /// Sum of the messages' tokens.
    total_tokens: u64,
    /// Sum of the messages' cost in US dollars.
    total_cost: f64,
    /// The goal the agent is working on.
    #[schema(required = true)]
    current_goal_id: Option<String>,
    /// RFC 3339.
    created_at: String,
    /// RFC 3339.
    updated_at: String,
    /// The model the run uses, if known.
    #[schema(required = true)]
    model: Option<String>,
    /// Why the run failed or stopped, if it did.
    #[schema(required = true)]
    error: Option<String>,
    /// The final answer or summary; present once the trace is finished with one.
    summary: Option<String>,
    /// The limits a main trace was started with, which a resume applies unless its request
    /// sets others; absent on sub-traces and on traces written before limits were stored.
    limits: Option<TraceLimitsDoc>,
    /// A fork only (`POST /api/traces/{trace_id}/fork`): the trace it was forked from.
    forked_from: Option<ForkOriginDoc>,
    /// How the model was reached when the trace was created, which a resume from the command
    /// line uses unless told otherwise; absent on sub-traces and older traces. `model` above is
    /// the model that answered.
    model_settings: Option<ModelSettingsDoc>,
}

/// How a trace's model was reached (no key is kept).
#[derive(ToSchema)]
#[schema(as = ModelSettings)]
pub(crate) struct ModelSettingsDoc {
    /// The provider (`openai`, `openai-responses`, `anthropic`, `scripted`, ...).
    provider: Option<String>,
    /// The model name the run asked for.
    model: Option<String>,
    /// The provider's base URL, when one was configured.
    base_url: Option<String>,
    /// The context window in tokens, when one was configured.
    context_window: Option<u64>,
    /// The completion token cap per call, when one was configured.
    max_tokens: Option<u32>,
}

/// Where a forked trace came from.
#[derive(ToSchema)]
#[schema(as = ForkOrigin)]
pub(crate) struct ForkOriginDoc {
    /// The original trace, which the fork left untouched.
    trace_id: String,
    /// The goal the fork was made at (pending again in the fork); `null` for a fork made after
    /// a message.
    #[schema(required = true)]
    goal_id: Option<String>,
    /// The message the fork was made after, for a fork made after a message.
    message_sequence: Option<u64>,
}

/// The limits stored with a trace.
#[derive(ToSchema)]
#[schema(as = TraceLimits)]
pub(crate) struct TraceLimitsDoc {
    /// Model calls per run of the trace.
    max_iterations: Option<u32>,
    /// Cost budget in US dollars of the trace and its sub-traces, across all its runs.
    max_cost: Option<f64>,
}

/// The totals of a trace.
#[derive(ToSchema)]
#[schema(as = TraceStats)]
pub(crate) struct TraceStatsDoc {
    /// Number of messages.
    total_messages: u64,
    /// Sum of the messages' tokens.
    total_tokens: u64,
    /// Sum of the messages' cost in US dollars.
    total_cost: f64,
}

/// Who a message is from.
#[derive(ToSchema)]
#[schema(as = Role)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RoleDoc {
    System,
    User,
    Assistant,
    Tool,
}

/// One recorded message.
#[derive(ToSchema)]
#[schema(as = Message)]
pub(crate) struct MessageDoc {
    /// `{trace_id}-{sequence:04}`.
    message_id: String,
    trace_id: String,
    #[schema(required = true)]
    branch_id: Option<String>,
    role: RoleDoc,
    /// Position in the trace, from 1.
    sequence: u64,
    /// The goal it served.
    #[schema(required = true)]
    goal_id: Option<String>,
    /// Tool messages: the call they answer.
    #[schema(required = true)]
    tool_call_id: Option<String>,
    /// Tool messages: the tool's name.
    tool_name: Option<String>,
    /// LLM API shape: `{"text", "tool_calls", "reasoning"?}` for assistant messages, a string
    /// otherwise. `reasoning` (only when the provider sent some) lists the model's reasoning as
    /// it came, kept apart from the text: `{"type": "text", "field", "text"}` (an
    /// OpenAI-compatible server's `reasoning_content` or `reasoning`), `{"type": "thinking",
    /// "thinking", "signature"}` and `{"type": "redacted_thinking", "data"}` (Anthropic),
    /// `{"type": "item", "id", "summary"?, "encrypted_content"?}` (OpenAI Responses).
    content: serde_json::Value,
    /// Tool messages: present and true when the call failed.
    is_error: Option<bool>,
    /// A generated one-line description.
    description: String,
    #[schema(required = true)]
    tokens: Option<u64>,
    /// US dollars.
    #[schema(required = true)]
    cost: Option<f64>,
    #[schema(required = true)]
    duration_ms: Option<u64>,
    created_at: String,
    /// Annotations of the message (`agent_execution::meta`); written only when there is one.
    #[schema(value_type = Option<MessageMetadataDoc>)]
    metadata: Option<BTreeMap<String, serde_json::Value>>,
}

/// The name of an event.
#[derive(ToSchema)]
#[schema(as = EventName)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventNameDoc {
    Connected,
    TraceCreated,
    TraceUpdated,
    GoalAdded,
    GoalUpdated,
    GoalRemoved,
    GoalTreeUpdated,
    MessageAdded,
    MessageUpdated,
    SubTraceStarted,
    SubTraceCompleted,
    LoopDetected,
    CompactionFailed,
    Notice,
    GoalChecked,
    HookRan,
    TraceCompleted,
}

/// One event of a trace, as stored in `events.jsonl`.
pub(crate) struct EventDoc;

const EVENT_DESCRIPTION: &str = "One event of a trace: `event_id` (monotonic per trace, from \
1, without holes), `event` (its name) and the payload fields of that name, at the top level. \
Contract payloads: `goal_added {goal, parent_id}`, `goal_updated {goal_id, updates, \
affected_goals}`, `message_added {message, affected_goals}`, `sub_trace_started {trace_id, \
parent_goal_id, agent_type, task}`, `sub_trace_completed {trace_id, status, summary, stats}`, \
`trace_completed {stats, status}`. Extensions clients may ignore: `trace_created {trace, \
goal_tree}`, `trace_updated {trace}`, `goal_removed {goal_id}`, `goal_tree_updated \
{goal_tree}`, `message_updated {message}`, `loop_detected {pattern, detail, action}`, \
`compaction_failed {reason}`, `notice {kind, message, tokens?}` (`kind`: `context_window`, \
`window_floor`, `tools_not_shown`, `results_not_shown`, `empty_answer`, `context_left_out`), \
`goal_checked {goal_id, check, result}` (a goal's check ran when the model marked it done: a pass completed \
it, a failure left it in progress). \
`commit_continues: true` marks every event of a multi-event write but its last.";

impl utoipa::ToSchema for EventDoc {
    fn name() -> std::borrow::Cow<'static, str> {
        "Event".into()
    }
}

impl PartialSchema for EventDoc {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(EVENT_DESCRIPTION))
            .property(
                "event_id",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(schema::SchemaFormat::KnownFormat(
                        schema::KnownFormat::Int64,
                    )))
                    .minimum(Some(1)),
            )
            .required("event_id")
            .property("event", EventNameDoc::schema())
            .required("event")
            .property(
                "commit_continues",
                ObjectBuilder::new().schema_type(Type::Boolean),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .into()
    }
}

/// The first message of a live watch; never stored.
#[derive(ToSchema)]
#[schema(as = ConnectedEvent)]
pub(crate) struct ConnectedEventDoc {
    /// The `since_event_id` the client asked for (0 when absent): the events that follow
    /// have ids above it, so a client that records the id of every message it handles can
    /// reconnect with `since_event_id` set to the last one.
    event_id: u64,
    /// Always `connected`.
    #[schema(pattern = "^connected$")]
    event: String,
    /// The watched trace.
    trace_id: String,
    /// The id of the newest stored event when the watch began. `goal_tree` and `sub_traces`
    /// are at least as new as this event.
    current_event_id: u64,
    goal_tree: GoalTreeDoc,
    sub_traces: Vec<TraceDoc>,
}
