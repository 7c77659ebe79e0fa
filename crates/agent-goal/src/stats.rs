//! Message statistics: attaching one message to a goal and rolling it up to every ancestor.
//!
//! A message adds to its goal's `self_stats` and to the `cumulative_stats` of the goal and of
//! every ancestor, so the cost is O(depth) per message. The `preview` of a goal's statistics is
//! the sequence of tool calls with runs collapsed (`glob_files → read_file × 2 → edit_file`),
//! updated incrementally and capped at [`PREVIEW_MAX_SEGMENTS`] segments.

use std::fmt::Write as _;

use crate::error::GoalError;
use crate::model::{GoalStats, GoalTree};

/// How many segments a preview keeps; older ones are replaced by a leading `…`.
pub const PREVIEW_MAX_SEGMENTS: usize = 10;

/// Separator between the segments of a preview.
const ARROW: &str = " → ";
/// The arrow character of [`ARROW`].
const ARROW_CHAR: char = '→';
/// The length of [`ARROW`] from its arrow character on.
const AFTER_ARROW: usize = ARROW_CHAR.len_utf8() + 1;
/// Separator between a tool name and its run length.
const TIMES: &str = " × ";
/// The start of a preview whose oldest segments were dropped.
const DROPPED: &str = "… → ";

/// One message's contribution to the statistics of its goal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsDelta {
    /// The message's tokens.
    pub tokens: u64,
    /// The message's cost in US dollars.
    pub cost: f64,
    /// The names of the tools an assistant message called, in order; empty for other messages.
    pub tools: Vec<String>,
}

impl GoalStats {
    /// Adds one message: its count, tokens, cost and tool calls.
    pub fn add(&mut self, delta: &StatsDelta) {
        self.message_count += 1;
        self.total_tokens += delta.tokens;
        self.total_cost += delta.cost;
        for tool in &delta.tools {
            push_tool(&mut self.preview, tool);
        }
    }
}

impl GoalTree {
    /// Attaches one message to goal `goal_id`: adds it to that goal's `self_stats` and to the
    /// `cumulative_stats` of the goal and every ancestor, and sets their `updated_at` to `now`.
    ///
    /// Returns the ids of the goals whose statistics changed: the goal first, then its
    /// ancestors from the parent up. Costs O(depth · log n). Any goal may receive messages,
    /// finished ones included (a late tool result still belongs to the goal it served).
    pub fn record_message(
        &mut self,
        goal_id: &str,
        delta: &StatsDelta,
        now: &str,
    ) -> Result<Vec<String>, GoalError> {
        let index = self.index_of(goal_id).ok_or_else(|| GoalError::UnknownId {
            id: goal_id.to_owned(),
        })?;
        let mut chain = vec![index];
        chain.extend(self.ancestor_indices(index));
        self.goals[index].self_stats.add(delta);
        let mut affected = Vec::with_capacity(chain.len());
        for i in chain {
            let goal = &mut self.goals[i];
            goal.cumulative_stats.add(delta);
            goal.updated_at.clear();
            goal.updated_at.push_str(now);
            affected.push(goal.id.clone());
        }
        Ok(affected)
    }
}

/// Appends one tool call to a preview, extending the last run when it is the same tool.
///
/// Works in place on the string: no allocation beyond its growth, and at most one segment is
/// dropped per call, so a capped preview stays at the cap.
pub(crate) fn push_tool(preview: &mut Option<String>, tool: &str) {
    let tool = tool.trim();
    if tool.is_empty() {
        return;
    }
    // Tool names are identifiers; one containing a separator would corrupt the run counts.
    let cleaned;
    let tool = if tool.contains(['→', '×', '…']) {
        cleaned = tool.replace(['→', '×', '…'], "_");
        cleaned.as_str()
    } else {
        tool
    };
    let Some(text) = preview.as_mut() else {
        *preview = Some(tool.to_owned());
        return;
    };
    // Separators are found by their arrow character, which a cleaned tool name never holds;
    // a char search is much cheaper than a substring search on this hot path.
    let last_start = text.rfind(ARROW_CHAR).map_or(0, |at| at + AFTER_ARROW);
    let last = &text[last_start..];
    let run = if last == tool {
        Some(1)
    } else {
        last.rsplit_once(TIMES)
            .filter(|(name, _)| *name == tool)
            .and_then(|(_, count)| count.parse::<u64>().ok())
    };
    if let Some(count) = run {
        text.truncate(last_start);
        let _ = write!(text, "{tool}{TIMES}{}", count + 1);
        return;
    }
    text.push_str(ARROW);
    text.push_str(tool);
    let dropped_before = text.starts_with(DROPPED);
    let segments = text.matches(ARROW_CHAR).count() + 1 - usize::from(dropped_before);
    if segments > PREVIEW_MAX_SEGMENTS {
        let from = if dropped_before { DROPPED.len() } else { 0 };
        if let Some(at) = text[from..].find(ARROW_CHAR) {
            text.replace_range(..from + at + AFTER_ARROW, DROPPED);
        }
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
