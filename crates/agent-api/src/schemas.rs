//! Documentation-only mirrors of the models of `agent-goal` and `agent-execution`, which stay
//! serde-only. Each mirror has the serde shape of its model, field for field; a test checks
//! real responses against these schemas so the two cannot drift apart silently.

#![allow(dead_code)]
use std::collections::BTreeMap;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, schema};
use utoipa::{PartialSchema, ToSchema};

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

/// Where a goal is in its life.
#[derive(ToSchema)]
#[schema(as = GoalStatus)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GoalStatusDoc {
    Pending,
    InProgress,
    Completed,
    Abandoned,
}

/// What kind of node a goal is.
#[derive(ToSchema)]
#[schema(as = GoalType)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GoalTypeDoc {
    Normal,
    ExploreStart,
    ExploreMerge,
}

/// Message statistics of a goal.
#[derive(ToSchema)]
#[schema(as = GoalStats)]
pub(crate) struct GoalStatsDoc {
    message_count: u64,
    total_tokens: u64,
    total_cost: f64,
    /// The tool-call sequence with runs collapsed, e.g. `glob_files → read_file × 2`.
    #[schema(required = true)]
    preview: Option<String>,
}

/// One node of the goal tree.
#[derive(ToSchema)]
#[schema(as = Goal)]
pub(crate) struct GoalDoc {
    /// Internal id, an auto-increment within the tree ("1", "2", ...).
    id: String,
    #[schema(required = true)]
    parent_id: Option<String>,
    /// `null` is the main line.
    #[schema(required = true)]
    branch_id: Option<String>,
    #[serde(rename = "type")]
    goal_type: GoalTypeDoc,
    description: String,
    /// Why it was created.
    reason: String,
    status: GoalStatusDoc,
    /// Set on done or abandon.
    #[schema(required = true)]
    summary: Option<String>,
    /// `explore_start` only: the sub-traces it spawned.
    branch_ids: Option<Vec<String>>,
    /// `explore_merge` only.
    explore_start_id: Option<String>,
    /// `explore_merge` only.
    merge_summary: Option<String>,
    /// `explore_merge` only.
    selected_branch: Option<String>,
    /// The agent profile that carries this goal out, when one is named.
    agent: Option<String>,
    /// Messages attached directly to this goal.
    self_stats: GoalStatsDoc,
    /// This goal and all its descendants.
    cumulative_stats: GoalStatsDoc,
    created_at: String,
    updated_at: String,
}

/// One edit of a plan by a person, chosen by `op`. Only a pending goal (never started) can be
/// reworded, given an agent, moved or deleted; a goal that started can only be abandoned.
#[derive(ToSchema)]
#[schema(as = PlanEdit)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum PlanEditDoc {
    /// A new pending goal.
    Add {
        /// What the goal is.
        description: String,
        /// The goal it goes under; top level when absent.
        parent_id: Option<String>,
        /// Its place among its siblings, from 0; last when absent or past the end.
        index: Option<usize>,
        /// The agent profile that carries it out.
        agent: Option<String>,
    },
    /// Rewords a pending goal and/or names its agent (an empty `agent` clears it).
    Update {
        /// The goal's id.
        goal_id: String,
        /// The new description.
        description: Option<String>,
        /// The agent profile that carries it out.
        agent: Option<String>,
    },
    /// Moves a pending goal, with its sub-goals.
    Move {
        /// The goal's id.
        goal_id: String,
        /// The new parent; top level when absent.
        parent_id: Option<String>,
        /// Its place among its new siblings, from 0; last when absent or past the end.
        index: Option<usize>,
    },
    /// Deletes a pending goal and its sub-goals.
    Delete {
        /// The goal's id.
        goal_id: String,
    },
    /// Abandons a goal that is not finished, with its unfinished sub-goals.
    Abandon {
        /// The goal's id.
        goal_id: String,
        /// Why it is given up.
        reason: String,
    },
}

/// The plan of one trace: a mission and a flat list of goals linked by `parent_id` (the
/// `goal.json` of the trace).
#[derive(ToSchema)]
#[schema(as = GoalTree)]
pub(crate) struct GoalTreeDoc {
    mission: String,
    #[schema(required = true)]
    current_id: Option<String>,
    /// Every goal, abandoned ones included; siblings are in plan order (creation order unless
    /// a person moved one).
    goals: Vec<GoalDoc>,
    /// The next id to hand out.
    next_id: u64,
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

/// A message's annotations: the keys of `agent_execution::meta`, each present only when it
/// applies; other keys may appear and are kept as written. Built from the keys themselves, so
/// the document names every key the runner writes.
pub(crate) struct MessageMetadataDoc;

impl utoipa::ToSchema for MessageMetadataDoc {
    fn name() -> std::borrow::Cow<'static, str> {
        "MessageMetadata".into()
    }
}

/// Each key of `agent_execution::meta`: its JSON type and what it says.
fn metadata_key(key: &str) -> (Type, &'static str) {
    use agent_execution::meta;
    match key {
        meta::COMPACTION => (
            Type::Boolean,
            "`true` on the stored summary of a full compaction; the model's view starts from it.",
        ),
        meta::TOKENS_BEFORE => (
            Type::Integer,
            "A full compaction's estimate of the view it replaced, in tokens.",
        ),
        meta::TOKENS_AFTER => (
            Type::Integer,
            "A full compaction summary's own estimate, in tokens.",
        ),
        meta::USAGE => (
            Type::Object,
            "Assistant messages: what the provider counted, `{prompt_tokens, \
             completion_tokens, cached_tokens}`.",
        ),
        meta::TURN => (
            Type::String,
            "User messages after the task: `continue` (a new turn of an ended trace) or \
             `queued` (sent while a run was going on).",
        ),
        meta::LOOP_GUARD => (
            Type::String,
            "The loop guard's warning: the name of the pattern it saw.",
        ),
        meta::CLOSING_REPORT => (
            Type::Boolean,
            "`true` on the closing report of a run whose plan is done.",
        ),
        meta::HANDOFF => (
            Type::Boolean,
            "`true` on the assistant messages the runner wrote to hand a goal to another \
             profile.",
        ),
        meta::INTERRUPTED => (
            Type::Boolean,
            "`true` on an assistant message the run was cancelled in the middle of: its text is \
             what had arrived.",
        ),
        meta::SUB_TRACES => (
            Type::Array,
            "`explore` / `delegate` results: `[{trace_id, status, stats}]` of the sub-traces.",
        ),
        _ => (
            Type::Object,
            "`explore` / `delegate` results: the sum of the sub-traces' statistics.",
        ),
    }
}

impl PartialSchema for MessageMetadataDoc {
    fn schema() -> RefOr<Schema> {
        let mut object = ObjectBuilder::new().description(Some(
            "A message's annotations, each key present only when it applies; other keys may \
             appear and are kept as written.",
        ));
        for key in agent_execution::meta::KEYS {
            let (kind, description) = metadata_key(key);
            let property = ObjectBuilder::new()
                .schema_type(kind)
                .description(Some(description));
            object = object.property(*key, property);
        }
        object
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .into()
    }
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
{goal_tree}`, `message_updated {message}`, `loop_detected {pattern, detail, action}`. \
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
