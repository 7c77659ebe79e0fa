//! Goal compaction: the messages of finished goals outside the current branch become one
//! summary line each, placed where the goal's messages were.

use std::collections::{HashMap, HashSet};

use agent_execution::message::{Message, Role};
use agent_goal::{GoalStatus, GoalTree};

use super::{CompactionStrategy, is_compaction};

/// One element of the view while it is built: a stored message or a goal summary.
pub(crate) enum Item<'a> {
    /// A stored message, shown as it is.
    Stored(&'a Message),
    /// A summary standing for a finished goal's messages.
    Summary(String),
}

/// Which finished goal's summary stands for the messages of each goal, for one state of the tree.
pub(crate) struct Reps<'a> {
    tree: &'a GoalTree,
    /// The current goal and its ancestors.
    chain: HashSet<&'a str>,
    cache: HashMap<&'a str, Option<&'a str>>,
}

impl<'a> Reps<'a> {
    /// The representatives of `tree` as it is.
    pub(crate) fn new(tree: &'a GoalTree) -> Self {
        let mut chain: HashSet<&str> = HashSet::new();
        if let Some(current) = tree.current() {
            chain.insert(current.id.as_str());
            chain.extend(
                tree.ancestors(&current.id)
                    .into_iter()
                    .map(|g| g.id.as_str()),
            );
        }
        Self {
            tree,
            chain,
            cache: HashMap::new(),
        }
    }

    /// The goal whose summary stands for a message of `goal_id`: the highest finished goal on
    /// its path that is not on the current branch; `None` when its messages are shown.
    pub(crate) fn of(&mut self, goal_id: &'a str) -> Option<&'a str> {
        if let Some(found) = self.cache.get(goal_id) {
            return *found;
        }
        let mut path = self.tree.ancestors(goal_id);
        path.reverse();
        path.extend(self.tree.get(goal_id));
        let found = path
            .into_iter()
            .find(|g| g.status.is_finished() && !self.chain.contains(g.id.as_str()))
            .map(|g| g.id.as_str());
        self.cache.insert(goal_id, found);
        found
    }
}

/// What goal compaction of stored messages depends on in the goal tree: while it stays the same,
/// each message is compacted the same way and an incremental view can be extended.
#[derive(Debug, PartialEq)]
pub(crate) struct GoalKey {
    pub(crate) strategy: CompactionStrategy,
    /// Goal id → the finished goal whose summary stands for its messages.
    pub(crate) reps: HashMap<String, String>,
    /// The summary line of each goal that stands for messages.
    pub(crate) summaries: HashMap<String, String>,
}

impl GoalKey {
    /// The key of `tree` under `strategy`.
    pub(crate) fn of(tree: &GoalTree, strategy: CompactionStrategy) -> Self {
        let mut key = GoalKey {
            strategy,
            reps: HashMap::new(),
            summaries: HashMap::new(),
        };
        if strategy != CompactionStrategy::GoalsAndPrune {
            return key;
        }
        let mut reps = Reps::new(tree);
        for goal in tree.goals() {
            if let Some(rep) = reps.of(&goal.id) {
                key.reps.insert(goal.id.clone(), rep.to_owned());
                if !key.summaries.contains_key(rep) {
                    key.summaries
                        .insert(rep.to_owned(), goal_summary(tree, rep));
                }
            }
        }
        key
    }
}

/// Replaces the messages of finished goals outside the current branch by one summary each.
pub(crate) fn compact_goals<'a>(
    tree: &'a GoalTree,
    visible: &[&'a Message],
    task: Option<&Message>,
) -> (Vec<Item<'a>>, Vec<String>) {
    let mut reps = Reps::new(tree);
    let mut rep_of = |goal_id: &'a str| reps.of(goal_id);

    // Tool results follow the decision of the assistant message that made the call.
    let mut unit_rep: HashMap<&'a str, Option<&'a str>> = HashMap::new();
    let mut items = Vec::with_capacity(visible.len());
    let mut summarised: Vec<String> = Vec::new();
    for message in visible {
        let rep = if is_same(message, task) || is_compaction(message) {
            None
        } else if message.role == Role::Tool {
            match message
                .tool_call_id
                .as_deref()
                .and_then(|id| unit_rep.get(id))
            {
                Some(rep) => *rep,
                None => message.goal_id.as_deref().and_then(&mut rep_of),
            }
        } else {
            let rep = message.goal_id.as_deref().and_then(&mut rep_of);
            if message.role == Role::Assistant {
                for id in message.content.tool_calls().iter().map(|c| c.id.as_str()) {
                    unit_rep.insert(id, rep);
                }
            }
            rep
        };
        match rep {
            None => items.push(Item::Stored(message)),
            Some(goal_id) => {
                if !summarised.iter().any(|s| s == goal_id) {
                    items.push(Item::Summary(goal_summary(tree, goal_id)));
                    summarised.push(goal_id.to_owned());
                }
            }
        }
    }
    (items, summarised)
}

/// The summary line that stands for a finished goal's messages.
pub fn goal_summary(tree: &GoalTree, goal_id: &str) -> String {
    let Some(goal) = tree.get(goal_id) else {
        return format!("Goal {goal_id} finished.");
    };
    let summary = goal.summary.as_deref().unwrap_or("").trim();
    match goal.status {
        GoalStatus::Abandoned => format!(
            "Goal '{}' abandoned: {}. Its work was removed from the context; the plan above \
             shows what replaces it.",
            goal.description, summary
        ),
        _ => match tree.display_number(goal_id) {
            Some(number) => format!("Goal {number} '{}' completed: {summary}", goal.description),
            None => format!("Goal '{}' completed: {summary}", goal.description),
        },
    }
}

/// True when `message` is `other`.
pub(crate) fn is_same(message: &Message, other: Option<&Message>) -> bool {
    other.is_some_and(|o| o.sequence == message.sequence)
}
