//! How a sub-trace ended, as the trace that started it is told ([`SubTraceReport`]): its status
//! in a line, its final answer, its plan with the summaries, its id and totals.

use crate::trace::{TraceStats, TraceStatus};

/// How a sub-trace ended, as the parent is told.
#[derive(Debug, Clone)]
pub struct SubTraceReport {
    /// The sub-trace.
    pub trace_id: String,
    /// How it ended.
    pub status: TraceStatus,
    /// Its final answer or summary.
    pub summary: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Its totals.
    pub stats: TraceStats,
    /// Its plan, one line per visible goal, with the summaries of completed goals.
    pub plan: Vec<String>,
}

impl SubTraceReport {
    /// `completed`, `failed: <why>`, `cancelled`, `incomplete: goals left open: …` or `did not
    /// finish`.
    pub fn status_line(&self) -> String {
        match (self.status, &self.error) {
            (TraceStatus::Completed, _) => "completed".into(),
            (TraceStatus::Failed, Some(error)) => format!("failed: {error}"),
            (TraceStatus::Failed, None) => "failed".into(),
            (TraceStatus::Cancelled, _) => "cancelled".into(),
            // The error says it: `incomplete: goals left open: …`.
            (TraceStatus::Incomplete, Some(error)) => error.clone(),
            (TraceStatus::Incomplete, None) => "incomplete".into(),
            (TraceStatus::Running | TraceStatus::Waiting | TraceStatus::Planned, _) => {
                "did not finish".into()
            }
        }
    }

    /// What a delegate's caller is told of its end, and whether that is an error.
    pub fn delegate_result(&self) -> (String, bool) {
        match self.status {
            TraceStatus::Completed => (
                format!("The delegated task completed.\n{}", self.body()),
                false,
            ),
            _ => (
                format!(
                    "error: the delegated task did not complete ({}).\n{}",
                    self.status_line(),
                    self.body()
                ),
                true,
            ),
        }
    }

    /// The final answer, the plan with its summaries, and the sub-trace's id and totals.
    pub fn body(&self) -> String {
        let mut out = format!(
            "Sub-trace: {} ({})\n",
            self.trace_id,
            stats_text(&self.stats)
        );
        match self.summary.as_deref().map(str::trim) {
            Some(summary) if !summary.is_empty() => {
                out.push('\n');
                out.push_str(summary);
                out.push('\n');
            }
            _ => out.push_str("\nNo final answer.\n"),
        }
        if !self.plan.is_empty() {
            out.push_str("\nIts plan:\n");
            for line in &self.plan {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

/// `12 messages, 3,400 tokens, $0.0123`.
pub fn stats_text(stats: &TraceStats) -> String {
    format!(
        "{} messages, {} tokens, ${:.4}",
        stats.total_messages, stats.total_tokens, stats.total_cost
    )
}

/// The metadata of a sub-agent call's tool message: [`SUB_TRACES`](crate::meta::SUB_TRACES)
/// (each sub-trace's id, status and statistics) and
/// [`SUB_TRACE_STATS`](crate::meta::SUB_TRACE_STATS) (their sum).
pub fn metadata(reports: &[&SubTraceReport]) -> serde_json::Map<String, serde_json::Value> {
    use crate::meta::{SUB_TRACE_STATS, SUB_TRACES, SubTraceRef};
    let total = reports.iter().fold(TraceStats::default(), |mut sum, r| {
        sum.add(&r.stats);
        sum
    });
    let sub_traces: Vec<SubTraceRef> = reports
        .iter()
        .map(|r| SubTraceRef {
            trace_id: r.trace_id.clone(),
            status: Some(r.status),
            stats: Some(r.stats.clone()),
        })
        .collect();
    let mut metadata = serde_json::Map::new();
    metadata.insert(SUB_TRACES.into(), serde_json::json!(sub_traces));
    metadata.insert(SUB_TRACE_STATS.into(), serde_json::json!(total));
    metadata
}
