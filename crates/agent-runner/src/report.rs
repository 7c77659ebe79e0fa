//! What sub-agent calls report: the outcome of a call (result, metadata, whether a cancel
//! interrupted it); how each sub-trace ended is `agent_execution::sub_trace_report`'s.

use serde_json::{Map, Value, json};

use agent_execution::meta;
use agent_execution::sub_trace_report::SubTraceReport;
use agent_execution::trace::TraceStats;
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
        let sub_traces: Vec<meta::SubTraceRef> = reports
            .iter()
            .map(|r| meta::SubTraceRef {
                trace_id: r.trace_id.clone(),
                status: Some(r.status),
                stats: Some(r.stats.clone()),
            })
            .collect();
        let mut metadata = Map::new();
        metadata.insert(meta::SUB_TRACES.into(), json!(sub_traces));
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
            usage: None,
        })
    }
}
