//! What sub-agent calls report: the outcome of a call (result, metadata, whether a cancel
//! interrupted it), how each sub-trace ended, and the totals of a trace with its sub-traces.

use serde_json::{Map, Value, json};

use agent_execution::meta;
use agent_execution::trace::{TraceStats, TraceStatus};
use agent_tools::ToolResult;

use crate::record::Answer;

/// The result of a sub-agent call.
#[derive(Debug)]
pub(crate) struct CallOutcome {
    /// What the model sees.
    pub(crate) result: ToolResult,
    /// A cancel stopped the call, before it started or with sub-traces that resuming the run
    /// continues: the call is left without a result so that the resumed run finishes it.
    pub(crate) interrupted: bool,
    /// Metadata of the tool message: sub-trace ids, statuses and statistics.
    pub(crate) metadata: Map<String, Value>,
}

impl CallOutcome {
    /// A failed call.
    pub(crate) fn error(message: impl std::fmt::Display) -> Self {
        Self {
            result: ToolResult::new(format!("error: {message}"), true),
            interrupted: false,
            metadata: Map::new(),
        }
    }

    /// A call a cancel interrupted, to be finished by a resume.
    pub(crate) fn interrupted(message: impl std::fmt::Display) -> Self {
        Self {
            interrupted: true,
            ..Self::error(message)
        }
    }

    /// A call that ran its sub-traces to their end.
    pub(crate) fn done(content: String, is_error: bool, reports: &[&SubTraceReport]) -> Self {
        let total = reports.iter().fold(TraceStats::default(), |mut sum, r| {
            sum.add(&r.stats);
            sum
        });
        let sub_traces: Vec<Value> = reports
            .iter()
            .map(|r| json!({"trace_id": r.trace_id, "status": r.status, "stats": r.stats}))
            .collect();
        let mut metadata = Map::new();
        metadata.insert(meta::SUB_TRACES.into(), Value::Array(sub_traces));
        metadata.insert(meta::SUB_TRACE_STATS.into(), json!(total));
        Self {
            result: ToolResult::new(content, is_error),
            interrupted: false,
            metadata,
        }
    }

    /// The answer to record, or `None` for an interrupted call.
    pub(crate) fn into_answer(self) -> Option<Answer> {
        (!self.interrupted).then_some(Answer {
            result: self.result,
            metadata: self.metadata,
            duration_ms: None,
        })
    }
}

/// How a sub-trace ended, as the parent is told.
#[derive(Debug, Clone)]
pub(crate) struct SubTraceReport {
    pub(crate) trace_id: String,
    pub(crate) status: TraceStatus,
    pub(crate) summary: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) stats: TraceStats,
    /// Its plan, one line per visible goal, with the summaries of completed goals.
    pub(crate) plan: Vec<String>,
}

impl SubTraceReport {
    /// `completed`, `failed: <why>`, `cancelled` or `running`.
    pub(crate) fn status_line(&self) -> String {
        match (self.status, &self.error) {
            (TraceStatus::Completed, _) => "completed".into(),
            (TraceStatus::Failed, Some(error)) => format!("failed: {error}"),
            (TraceStatus::Failed, None) => "failed".into(),
            (TraceStatus::Cancelled, _) => "cancelled".into(),
            (TraceStatus::Running | TraceStatus::Waiting | TraceStatus::Planned, _) => {
                "did not finish".into()
            }
        }
    }

    /// The final answer, the plan with its summaries, and the sub-trace's id and totals.
    pub(crate) fn body(&self) -> String {
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

/// A plan as lines: `[✓] 1. Read the code → <summary>`, sub-goals indented.
pub(crate) fn plan_lines(tree: &agent_goal::GoalTree) -> Vec<String> {
    tree.numbered()
        .into_iter()
        .map(|(number, goal)| {
            let depth = number.matches('.').count();
            let marker = match goal.status {
                agent_goal::GoalStatus::Completed => "[✓]",
                agent_goal::GoalStatus::InProgress => "[→]",
                _ => "[ ]",
            };
            let mut line = format!(
                "{}{marker} {number} {}",
                "  ".repeat(depth),
                goal.description
            );
            if let Some(summary) = goal.summary.as_deref().filter(|s| !s.trim().is_empty()) {
                line.push_str(" → ");
                line.push_str(&summary.replace('\n', " "));
            }
            line
        })
        .collect()
}

/// `12 messages, 3,400 tokens, $0.0123`.
pub(crate) fn stats_text(stats: &TraceStats) -> String {
    format!(
        "{} messages, {} tokens, ${:.4}",
        stats.total_messages, stats.total_tokens, stats.total_cost
    )
}
