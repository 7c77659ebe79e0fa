//! Trace and message ids: generation, the one validator every id from outside goes through, and
//! the timestamps stored in traces and messages.
//!
//! A main trace id is a UUID v4. A sub-trace id names its parent:
//! `{parent_id}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}`. A message id is `{trace_id}-{sequence:04}`,
//! so the trace a message belongs to can be read from its id.

use chrono::{DateTime, SecondsFormat, Utc};

/// The longest trace id accepted, in bytes: a trace id is a folder name on disk.
pub const MAX_TRACE_ID_LEN: usize = 255;

/// Why a trace or message id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid id {id:?}: {reason}")]
pub struct InvalidId {
    /// The id that was given.
    pub id: String,
    /// What is wrong with it, as the end of a sentence ("contains a path separator").
    pub reason: &'static str,
}

/// Checks an id that arrives from outside (API path, CLI argument, a file name) before it is used
/// as a folder name or a key.
///
/// Rejects the empty id, ids over [`MAX_TRACE_ID_LEN`] bytes, path separators (`/`, `\`), `..`,
/// a leading dot (names starting with a dot are reserved for the store's own files), and NUL or
/// any other control character.
///
/// ```
/// use agent_execution::validate_trace_id;
/// assert!(validate_trace_id("2f8d3a1c-4b6e-4f9a-8c2d-1e5b7a9f3c4d").is_ok());
/// assert!(validate_trace_id("../etc").is_err());
/// ```
pub fn validate_trace_id(id: &str) -> Result<(), InvalidId> {
    let reason = if id.is_empty() {
        Some("is empty")
    } else if id.len() > MAX_TRACE_ID_LEN {
        Some("is longer than 255 bytes")
    } else if id.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if id.contains("..") {
        Some("contains `..`")
    } else if id.starts_with('.') {
        Some("starts with a dot")
    } else if id.chars().any(char::is_control) {
        Some("contains a control character")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(InvalidId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A fresh main trace id: a random UUID v4.
pub fn new_trace_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The id of a sub-trace: `{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}`.
///
/// ```
/// use agent_execution::ids::sub_trace_id;
/// let at = chrono::DateTime::from_timestamp(1_770_242_412, 0).unwrap();
/// assert_eq!(sub_trace_id("p", "explore", at, 1), "p@explore-20260204220012-001");
/// ```
pub fn sub_trace_id(parent: &str, agent_type: &str, at: DateTime<Utc>, seq: u64) -> String {
    format!(
        "{parent}@{agent_type}-{}-{seq:03}",
        at.format("%Y%m%d%H%M%S")
    )
}

/// The id of the message with this sequence number in this trace: `{trace_id}-{sequence:04}`.
pub fn message_id(trace_id: &str, sequence: u64) -> String {
    format!("{trace_id}-{sequence:04}")
}

/// Splits a message id into its trace id and sequence number, validating the trace id.
pub fn split_message_id(message_id: &str) -> Result<(&str, u64), InvalidId> {
    let invalid = |reason| InvalidId {
        id: message_id.to_owned(),
        reason,
    };
    let (trace_id, sequence) = message_id
        .rsplit_once('-')
        .ok_or_else(|| invalid("is not of the form <trace_id>-<sequence>"))?;
    if sequence.is_empty() || !sequence.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("does not end in a sequence number"));
    }
    let sequence = sequence
        .parse()
        .map_err(|_| invalid("has a sequence number that is too large"))?;
    validate_trace_id(trace_id).map_err(|e| invalid(e.reason))?;
    Ok((trace_id, sequence))
}

/// The current UTC time as RFC 3339 with microsecond precision, e.g. `2026-02-04T22:00:12.345678Z`.
///
/// Every timestamp of a trace and its messages has this fixed width, so timestamps sort as text.
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validator_rejects_what_could_escape_the_base_folder() {
        for (id, reason) in [
            ("", "is empty"),
            ("a/b", "contains a path separator"),
            ("a\\b", "contains a path separator"),
            ("..", "contains `..`"),
            ("a..b", "contains `..`"),
            (".lock", "starts with a dot"),
            ("a\0b", "contains a control character"),
            ("a\nb", "contains a control character"),
        ] {
            assert_eq!(validate_trace_id(id).unwrap_err().reason, reason, "{id:?}");
        }
        assert!(validate_trace_id(&"x".repeat(255)).is_ok());
        assert!(validate_trace_id(&"x".repeat(256)).is_err());
        assert!(validate_trace_id("2f8d@explore-20260204220012-001").is_ok());
    }

    #[test]
    fn message_ids_round_trip() {
        let trace = new_trace_id();
        let id = message_id(&trace, 7);
        assert!(id.ends_with("-0007"));
        assert_eq!(split_message_id(&id).unwrap(), (trace.as_str(), 7));
        assert_eq!(
            split_message_id("t-123456").unwrap(),
            ("t", 123_456),
            "sequences wider than four digits"
        );
        assert!(split_message_id("nodash").is_err());
        assert!(split_message_id("t-12a").is_err());
        assert!(split_message_id("../x-0001").is_err());
    }

    #[test]
    fn timestamps_have_a_fixed_width() {
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-02-04T22:00:12.345678Z".len(), "{now}");
    }
}
