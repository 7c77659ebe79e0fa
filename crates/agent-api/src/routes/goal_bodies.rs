//! The bodies of people's edits of a plan (`routes/goals.rs`): a whole new plan, a new goal,
//! a change of a goal, an abandon.

use agent_plan::goal_command::GoalBudget;
use agent_plan::plan_edits::PlanEdit;
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;

use crate::goal_schemas::GoalBudgetDoc;
use crate::schemas::PlanEditDoc;

/// A change of the whole plan: exactly one of `edits` and `plan_text`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanChange {
    /// Edits applied in order, all or none (the first refused one is named by its position).
    #[schema(value_type = Option<Vec<PlanEditDoc>>)]
    pub(crate) edits: Option<Vec<PlanEdit>>,
    /// The plan as text (one goal a line, two spaces per level, `@<profile>` at the end naming
    /// the agent): replaces the pending goals of a stored plan (status `planned`) only.
    pub(crate) plan_text: Option<String>,
}

/// A new pending goal.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewGoal {
    /// What the goal is.
    pub(crate) description: String,
    /// The goal it goes under (not a finished one); top level when absent.
    pub(crate) parent_id: Option<String>,
    /// Its place among its siblings, from 0; last when absent or past the end.
    pub(crate) index: Option<usize>,
    /// The agent profile that carries it out.
    pub(crate) agent: Option<String>,
    /// A shell command that must exit 0 before the goal is done (run without asking, sandboxed).
    pub(crate) check: Option<String>,
    /// Instead of `check`: what a judge must find (empty: the goal's description).
    pub(crate) judge: Option<String>,
    /// What the goal may spend.
    #[schema(value_type = Option<GoalBudgetDoc>)]
    pub(crate) budget: Option<GoalBudget>,
}

/// A change of a pending goal: its text, agent, check or budget, and/or its place.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GoalChange {
    /// The new description.
    pub(crate) description: Option<String>,
    /// The agent profile that carries it out; an empty text clears it.
    pub(crate) agent: Option<String>,
    /// The command that gates `done`; an empty text clears the check.
    pub(crate) check: Option<String>,
    /// Instead of `check`: what a judge must find.
    pub(crate) judge: Option<String>,
    /// What the goal may spend; one that sets nothing clears it.
    #[schema(value_type = Option<GoalBudgetDoc>)]
    pub(crate) budget: Option<GoalBudget>,
    /// Moves the goal under this parent; `null` moves it to the top level; absent keeps its
    /// parent.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub(crate) parent_id: Option<Option<String>>,
    /// Moves the goal to this place among its siblings, from 0 (last when past the end).
    pub(crate) index: Option<usize>,
}

/// Why a goal is given up.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AbandonGoal {
    /// The reason, kept as the goal's summary.
    pub(crate) reason: String,
}

/// A field given, even as `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}
