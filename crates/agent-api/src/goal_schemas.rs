//! Documentation-only mirrors of the goal tree of `agent-goal` (the `goal.json` of a trace and
//! the API's `goal_tree`), which stays serde-only; `schemas.rs` holds the rest. Each mirror has
//! the serde shape of its model, field for field; a test checks real responses against them.

#![allow(dead_code)]

use utoipa::ToSchema;

/// Where a goal is in its life.
#[derive(ToSchema)]
#[schema(as = GoalStatus)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GoalStatusDoc {
    Pending,
    InProgress,
    Completed,
    Abandoned,
}

/// What kind of node a goal is.
#[derive(ToSchema)]
#[schema(as = GoalType)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GoalTypeDoc {
    Normal,
    ExploreStart,
    ExploreMerge,
}

/// Message statistics of a goal.
#[derive(ToSchema)]
#[schema(as = GoalStats)]
pub(crate) struct GoalStatsDoc {
    message_count: u64,
    total_tokens: u64,
    total_cost: f64,
    /// The tool-call sequence with runs collapsed, e.g. `glob_files → read_file × 2`.
    #[schema(required = true)]
    preview: Option<String>,
}

/// One node of the goal tree.
#[derive(ToSchema)]
#[schema(as = Goal)]
pub(crate) struct GoalDoc {
    /// Internal id, an auto-increment within the tree ("1", "2", ...).
    id: String,
    #[schema(required = true)]
    parent_id: Option<String>,
    /// `null` is the main line.
    #[schema(required = true)]
    branch_id: Option<String>,
    #[serde(rename = "type")]
    goal_type: GoalTypeDoc,
    description: String,
    /// Why it was created.
    reason: String,
    status: GoalStatusDoc,
    /// Set on done or abandon.
    #[schema(required = true)]
    summary: Option<String>,
    /// `explore_start` only: the sub-traces it spawned.
    branch_ids: Option<Vec<String>>,
    /// `explore_merge` only.
    explore_start_id: Option<String>,
    /// `explore_merge` only.
    merge_summary: Option<String>,
    /// `explore_merge` only.
    selected_branch: Option<String>,
    /// The agent profile that carries this goal out, when one is named.
    agent: Option<String>,
    /// The check that gates `done` on this goal, when it has one.
    check: Option<GoalCheckDoc>,
    /// The latest run of its check.
    check_result: Option<CheckResultDoc>,
    /// What the goal may spend before it is wound up.
    budget: Option<GoalBudgetDoc>,
    /// Messages attached directly to this goal.
    self_stats: GoalStatsDoc,
    /// This goal and all its descendants.
    cumulative_stats: GoalStatsDoc,
    created_at: String,
    updated_at: String,
}

/// One edit of a plan by a person, chosen by `op`. Only a pending goal (never started) can be
/// reworded, given an agent, moved or deleted; a goal that started can only be abandoned.
#[derive(ToSchema)]
#[schema(as = PlanEdit)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum PlanEditDoc {
    /// A new pending goal.
    Add {
        /// What the goal is.
        description: String,
        /// The goal it goes under; top level when absent.
        parent_id: Option<String>,
        /// Its place among its siblings, from 0; last when absent or past the end.
        index: Option<usize>,
        /// The agent profile that carries it out.
        agent: Option<String>,
        /// A shell command that must exit 0 before the goal can be marked done.
        check: Option<String>,
        /// What a judge must find before the goal can be marked done (empty: its
        /// description); not with `check`.
        judge: Option<String>,
        /// What the goal may spend.
        budget: Option<GoalBudgetDoc>,
    },
    /// Rewords a pending goal and/or names its agent, its check or its budget (an empty
    /// `agent` or `check` clears it, a `budget` that sets nothing clears it).
    Update {
        /// The goal's id.
        goal_id: String,
        /// The new description.
        description: Option<String>,
        /// The agent profile that carries it out.
        agent: Option<String>,
        /// The command that gates `done`.
        check: Option<String>,
        /// The criteria of a judge that gates `done` instead; not with `check`.
        judge: Option<String>,
        /// What the goal may spend.
        budget: Option<GoalBudgetDoc>,
    },
    /// Moves a pending goal, with its sub-goals.
    Move {
        /// The goal's id.
        goal_id: String,
        /// The new parent; top level when absent.
        parent_id: Option<String>,
        /// Its place among its new siblings, from 0; last when absent or past the end.
        index: Option<usize>,
    },
    /// Deletes a pending goal and its sub-goals.
    Delete {
        /// The goal's id.
        goal_id: String,
    },
    /// Abandons a goal that is not finished, with its unfinished sub-goals.
    Abandon {
        /// The goal's id.
        goal_id: String,
        /// Why it is given up.
        reason: String,
    },
}

/// The plan of one trace: a mission and a flat list of goals linked by `parent_id` (the
/// `goal.json` of the trace).
#[derive(ToSchema)]
#[schema(as = GoalTree)]
pub(crate) struct GoalTreeDoc {
    mission: String,
    #[schema(required = true)]
    current_id: Option<String>,
    /// Every goal, abandoned ones included; siblings are in plan order (creation order unless
    /// a person moved one).
    goals: Vec<GoalDoc>,
    /// The next id to hand out.
    next_id: u64,
}

/// A check that gates `done` on a goal: exactly one of `command` and `judge`.
#[derive(ToSchema)]
#[schema(as = GoalCheck)]
pub(crate) struct GoalCheckDoc {
    /// A shell command run in the run's sandbox when the model marks the goal done; the goal is
    /// met when it exits 0.
    command: Option<String>,
    /// What a judge (one model call reading the goal, its summary and the evidence the model
    /// cites) must find; empty means the goal's description.
    judge: Option<String>,
    /// How long the command may run, in seconds; the run's tool timeout when absent.
    timeout_secs: Option<u64>,
    /// Who set it: a person's command runs without asking, a model's only as its `bash` call
    /// would be approved.
    set_by: CheckAuthorDoc,
}

/// Who set a check.
#[derive(ToSchema)]
#[schema(as = CheckAuthor)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CheckAuthorDoc {
    Model,
    Person,
}

/// The result of one run of a goal's check.
#[derive(ToSchema)]
#[schema(as = CheckResult)]
pub(crate) struct CheckResultDoc {
    /// Whether the goal was found met.
    passed: bool,
    /// The command's exit code; absent for a judge, or a command killed by a signal or its
    /// timeout.
    exit_code: Option<i32>,
    /// The tail of the command's output, or the judge's reason.
    output: String,
    duration_ms: u64,
    checked_at: String,
}

/// What a goal (with its sub-goals) may spend: the model is told once to finish or abandon it,
/// then it is abandoned with the reason `budget spent`. Unset parts are unlimited.
#[derive(ToSchema)]
#[schema(as = GoalBudget)]
pub(crate) struct GoalBudgetDoc {
    /// Model calls made while it (or a sub-goal) was current.
    #[schema(minimum = 1)]
    iterations: Option<u32>,
    /// Tokens of its messages.
    #[schema(minimum = 1)]
    tokens: Option<u64>,
    /// Seconds its model and tool calls took.
    #[schema(minimum = 1)]
    seconds: Option<u64>,
}
