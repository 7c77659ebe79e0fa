//! The documentation of a message's `metadata`: one property per key of
//! `agent_execution::meta`, with its JSON type and what it says, built from the keys themselves
//! so that the OpenAPI document names every key the runner writes.

use utoipa::PartialSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};

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
        meta::EMPTY_ANSWER => (
            Type::Boolean,
            "`true` on the user message the runner wrote after an empty final answer, asking \
             the model once to go on.",
        ),
        meta::INTERRUPTED => (
            Type::Boolean,
            "`true` on an assistant message the run was cancelled in the middle of: its text is \
             what had arrived.",
        ),
        meta::GOALS_PENDING => (
            Type::Integer,
            "The runner's message sending the model back to the goals it left open: how many \
             times in a row (0 when a resumed run takes them up).",
        ),
        meta::GOAL_BUDGET => (
            Type::Object,
            "The runner's message about a goal's spent budget: `{goal_id, action}`, `action` \
             `warned` (finish or abandon it) or `abandoned` (reason `budget spent`).",
        ),
        meta::OUTCOME => (
            Type::Object,
            "Tool messages: how the call ended, where the tool or the runner said: \
             `{\"kind\": \"exited\", \"code\"}`, `{\"kind\": \"killed\", \"signal\"}`, \
             `{\"kind\": \"refused\"}`, `{\"kind\": \"timed_out\"}` or \
             `{\"kind\": \"cancelled\"}`.",
        ),
        meta::IMAGES => (
            Type::Array,
            "User and tool messages with pictures: `[{id, media_type, width, height, name?, \
             data}]`, `id` the SHA-256 of the bytes and `data` their base64; sent to the model \
             after the message's text.",
        ),
        meta::SHELLS => (
            Type::Array,
            "Tool messages that started, read or stopped background shells: their statuses, \
             `[{id, trace_id, command, state, code?, signal?, error?, output_bytes, \
             started_at}]`, `state` one of `running`, `exited`, `killed`, `failed`.",
        ),
        meta::SHELL_LOGS => (
            Type::Object,
            "The tool message that started background shells, once its run ended: everything \
             each printed (the middle cut past a megabyte), by shell id; its `shells` then \
             hold how each ended.",
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
