//! The rules of ids in the document (a picture's `picture_id`: 64 lowercase hex digits): every
//! `trace_id` and `parent_trace_id` parameter
//! says which ids exist, so that clients (and generated tests) send ids the server takes rather
//! than ones it refuses with 400 `invalid_trace_id`; a `trace_id` of a path also says that a
//! unique prefix stands for the id.

use utoipa::Modify;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{OpenApi, RefOr};

/// The trace ids the runtime makes: a UUID, or `{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq}`
/// for a sub-trace. ASCII letters, digits and `_@:+=~,-`, in parts separated by single dots.
/// The server itself refuses only `/`, `\`, `..`, a leading dot, control characters and ids
/// over 255 bytes (`agent_execution::validate_trace_id`).
pub(crate) const TRACE_ID_PATTERN: &str = r"^[A-Za-z0-9_@:+=~,-]+(\.[A-Za-z0-9_@:+=~,-]+)*$";

/// What every `trace_id` of a path says about prefixes.
const PREFIX_NOTE: &str = ": its id, or the start of one that no other trace's id starts \
     with (`<main>@<sub>` for a sub-trace); 400 `ambiguous_trace_id` names the candidates when \
     several do";

/// Puts the trace id rules on every parameter that carries a trace id.
pub(crate) struct TraceIdRules;

impl Modify for TraceIdRules {
    fn modify(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                for parameter in operation.parameters.iter_mut().flatten() {
                    if let RefOr::T(parameter) = parameter
                        && matches!(parameter.name.as_str(), "trace_id" | "parent_trace_id")
                    {
                        parameter.schema = Some(trace_id_schema());
                        if parameter.name == "trace_id" {
                            let said = parameter.description.take().unwrap_or_default();
                            parameter.description = Some(format!("{said}{PREFIX_NOTE}"));
                        }
                    } else if let RefOr::T(parameter) = parameter
                        && parameter.name == "picture_id"
                    {
                        parameter.schema = Some(picture_id_schema());
                    }
                }
            }
        }
    }
}

/// A picture's id: the SHA-256 of its bytes, in lowercase hex.
fn picture_id_schema() -> RefOr<Schema> {
    let schema = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(64))
        .max_length(Some(64))
        .pattern(Some("^[0-9a-f]{64}$"))
        .build();
    RefOr::T(Schema::Object(schema))
}

fn trace_id_schema() -> RefOr<Schema> {
    let schema = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(255))
        .pattern(Some(TRACE_ID_PATTERN))
        .build();
    RefOr::T(Schema::Object(schema))
}
