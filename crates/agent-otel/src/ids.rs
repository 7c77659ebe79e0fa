//! Span and trace ids derived from the trace's own ids, so an export is repeatable.

use std::hash::{DefaultHasher, Hash, Hasher};

use opentelemetry::trace::{SpanId, TraceId};

/// A 64-bit hash of `parts` with `seed` (`DefaultHasher::new` has fixed keys).
fn hash(seed: u8, parts: &[&str]) -> u64 {
    let mut hasher = DefaultHasher::new();
    seed.hash(&mut hasher);
    parts.hash(&mut hasher);
    hasher.finish()
}

/// The OpenTelemetry trace id of the main trace `trace_id` (never the invalid all-zero id).
pub(crate) fn trace_id(trace_id: &str) -> TraceId {
    let high = u128::from(hash(1, &[trace_id]));
    let low = u128::from(hash(2, &[trace_id]));
    TraceId::from(((high << 64) | low).max(1))
}

/// The span id of what `parts` names (a trace, a goal, a message), never zero.
pub(crate) fn span_id(parts: &[&str]) -> SpanId {
    SpanId::from(hash(3, parts).max(1))
}
