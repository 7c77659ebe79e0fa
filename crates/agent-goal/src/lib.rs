//! The goal tree: a structured, hierarchical plan that an agent edits itself.
//!
//! This crate owns [`Goal`], [`GoalTree`] and [`GoalStats`], display numbering, the plan text
//! appended to every system prompt ([`GoalTree::to_prompt`]), the goal tool's semantics
//! ([`GoalTree::apply`] with a [`GoalCommand`], described there), cascade completion,
//! exploration goals, the O(depth) roll-up of message statistics
//! ([`GoalTree::record_message`]), the direct edits of a store ([`GoalTree::insert`],
//! [`GoalTree::replace`]), the plan's text form for people ([`GoalTree::plan_text`],
//! [`parse_plan`], [`GoalTree::replan`]) and what holds a goal to its word ([`gate`]: a check
//! that gates `done`, a budget, the goals still open).
//!
//! A tree's fields are private, so these operations are the only way to change one, and the
//! invariants they all keep — ids unique and never handed out twice, parents that exist — hold
//! for every tree built through them.
//!
//! It is pure: no I/O and no async runtime, and it depends on nothing but serde. It must not
//! depend on any other crate of the workspace.
//!
//! ```
//! use agent_goal::{GoalCommand, GoalTree};
//!
//! let mut tree = GoalTree::new("Add user login");
//! let outcome = tree.apply(&GoalCommand {
//!     add: Some("Read the code, Implement login, Test".into()),
//!     focus: Some("1".into()),
//!     ..GoalCommand::default()
//! })?;
//! assert_eq!(outcome.added, ["1", "2", "3"]);
//! println!("{}", tree.to_prompt());
//! assert!(tree.to_prompt().contains("[→] 1. Read the code ← current"));
//! # Ok::<(), agent_goal::GoalError>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod command;
mod edits;
mod error;
mod explore;
pub mod gate;
mod model;
mod numbering;
mod open_goals;
mod plan_edits;
mod plan_text;
mod prompt;
mod stats;
mod steps;
mod summary;
mod system_prompts;
mod time;
mod tool;
mod tree;
mod verdicts;

#[cfg(test)]
mod test_support;

pub use command::{GoalCommand, GoalOutcome};
pub use error::{GoalError, PlanParseError};
pub use explore::{MERGE_DESCRIPTION, branch_label};
pub use gate::{CheckAuthor, CheckKind, CheckResult, GoalBudget, GoalCheck, Verified};
pub use model::{Goal, GoalStats, GoalStatus, GoalTree, GoalType};
pub use open_goals::{PendingGoal, reminder_text};
pub use plan_edits::PlanEdit;
pub use plan_text::{PLANNING_AGENT, PlanItem, is_profile_name, parse_plan, split_agent};
pub use prompt::MERGE_SUMMARY_PROMPT_CHARS;
pub use stats::{PREVIEW_MAX_SEGMENTS, StatsDelta};
pub use summary::{REPORT_MIN_GOALS, REPORT_PROMPT};
pub use system_prompts::{DEFAULT_SYSTEM_PROMPT, PLAN_PROMPT};
pub use time::now_rfc3339;
pub use tool::{
    GOAL_TOOL_DESCRIPTION, GOAL_TOOL_PARAMETERS, MAX_GOAL_TEXT_CHARS, MAX_GOALS_PER_CALL,
    MAX_PLAN_GOALS,
};
pub use verdicts::{
    JUDGE_PROMPT, JudgeClaim, failed_note, judge_material, passed_note, read_verdict, tail,
};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
