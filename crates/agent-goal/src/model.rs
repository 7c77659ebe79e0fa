//! The goal tree's data model: `Goal`, `GoalTree`, `GoalStats` and their JSON form.
//!
//! The serde field names here are a Contract: they are the `goal.json` file of every trace and
//! the `goal_tree` field of the HTTP API. Extend, never rename.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::gate::{CheckResult, GoalBudget, GoalCheck};

/// Where a goal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Planned, never started.
    Pending,
    /// Started: the current goal or one of its ancestors.
    InProgress,
    /// Finished with a summary.
    Completed,
    /// Given up, with a reason; hidden from numbering and from the prompt.
    Abandoned,
}

impl GoalStatus {
    /// True for `Completed` and `Abandoned`: the goal will not change any more.
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Completed | Self::Abandoned)
    }

    /// True for `Pending` and `InProgress`: the goal still has work left.
    pub fn is_open(self) -> bool {
        !self.is_finished()
    }
}

impl fmt::Display for GoalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pending => "pending",
            Self::InProgress => "in progress",
            Self::Completed => "completed",
            Self::Abandoned => "abandoned",
        })
    }
}

/// What kind of node a goal is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalType {
    /// An ordinary goal the agent planned.
    #[default]
    Normal,
    /// The start of a parallel exploration: its `branch_ids` are the sub-traces it spawned.
    ExploreStart,
    /// The end of a parallel exploration: its `merge_summary` is what was learned.
    ExploreMerge,
}

/// Message statistics of a goal, either of its own messages or including its descendants'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GoalStats {
    /// Number of messages.
    pub message_count: u64,
    /// Sum of the messages' tokens.
    pub total_tokens: u64,
    /// Sum of the messages' cost in US dollars.
    pub total_cost: f64,
    /// The tool-call sequence with runs collapsed, e.g. `glob_files → read_file × 2 → edit_file`.
    pub preview: Option<String>,
}

/// One node of the goal tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// Internal id: a decimal auto-increment within the tree ("1", "2", ...), never reused.
    pub id: String,
    /// The parent goal's id; `None` at top level.
    pub parent_id: Option<String>,
    /// The branch this goal belongs to; `None` is the main line.
    pub branch_id: Option<String>,
    /// What kind of node this is.
    #[serde(rename = "type", default)]
    pub goal_type: GoalType,
    /// What the goal is.
    pub description: String,
    /// Why it was created (may be empty).
    #[serde(default)]
    pub reason: String,
    /// Where the goal is in its life.
    pub status: GoalStatus,
    /// Set when the goal is completed (its summary) or abandoned (the reason).
    pub summary: Option<String>,
    /// `explore_start` only: the sub-trace ids it spawned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_ids: Option<Vec<String>>,
    /// `explore_merge` only: the id of the matching `explore_start` goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explore_start_id: Option<String>,
    /// `explore_merge` only: the merged report of all branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_summary: Option<String>,
    /// `explore_merge` only, optional: the branch whose approach was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_branch: Option<String>,
    /// Extension, optional: the agent profile that carries this goal out. When such a goal is
    /// focused, the runner hands it to a sub-trace of that profile (plan text: `Review it
    /// @reviewer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Extension, optional: the check that gates `done` on this goal (see [`crate::gate`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<GoalCheck>,
    /// Extension, optional: the result of the latest run of its check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_result: Option<CheckResult>,
    /// Extension, optional: what the goal may spend before it is wound up (see
    /// [`GoalBudget`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<GoalBudget>,
    /// Statistics of the messages attached directly to this goal.
    #[serde(default)]
    pub self_stats: GoalStats,
    /// Statistics of this goal's messages and all its descendants'.
    #[serde(default)]
    pub cumulative_stats: GoalStats,
    /// When the goal was created (RFC 3339).
    pub created_at: String,
    /// When the goal last changed (RFC 3339).
    pub updated_at: String,
}

impl Goal {
    /// A new pending, normal goal with empty reason and statistics, created and updated at `now`.
    pub fn new(
        id: impl Into<String>,
        parent_id: Option<String>,
        description: impl Into<String>,
        now: &str,
    ) -> Self {
        Self {
            id: id.into(),
            parent_id,
            branch_id: None,
            goal_type: GoalType::Normal,
            description: description.into(),
            reason: String::new(),
            status: GoalStatus::Pending,
            summary: None,
            branch_ids: None,
            explore_start_id: None,
            merge_summary: None,
            selected_branch: None,
            agent: None,
            check: None,
            check_result: None,
            budget: None,
            self_stats: GoalStats::default(),
            cumulative_stats: GoalStats::default(),
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
        }
    }
}

/// The plan of one trace: a mission and a flat list of goals linked by `parent_id`.
///
/// The fields are private: they are read through [`GoalTree::mission`],
/// [`GoalTree::current_id`], [`GoalTree::goals`] and [`GoalTree::next_id`], and a tree changes
/// only through this crate's operations — the goal tool ([`GoalTree::apply`]), explorations,
/// message statistics, [`GoalTree::insert`], [`GoalTree::replace`], [`GoalTree::replan`] — so
/// ids stay unique and are never handed out twice, and every parent exists. The JSON form is
/// unchanged by this (it is the `goal.json` Contract); a tree read from JSON is taken as it
/// is, and every operation stays correct on a damaged one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GoalTree {
    /// The overall task.
    pub(crate) mission: String,
    /// The goal the agent is working on, if any.
    pub(crate) current_id: Option<String>,
    /// Every goal ever created, abandoned ones included, in creation order.
    pub(crate) goals: Vec<Goal>,
    /// The next id to hand out; ids are never reused, even after a pending goal is deleted.
    #[serde(default)]
    pub(crate) next_id: u64,
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
