//! Navigating the flat goal list: lookup by id, parents, children, ancestors and descendants.
//!
//! Goals are stored in creation order and ids are handed out in increasing order, so the list
//! is sorted by numeric id. Lookups use that for a binary search and fall back to a linear scan
//! when a tree loaded from JSON does not follow the rule, so they are fast in the normal case and
//! correct in every case. Walks up the tree are bounded by the number of goals, so a damaged
//! tree with a parent cycle cannot loop forever.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::model::{Goal, GoalStatus, GoalTree};

impl GoalTree {
    /// An empty plan for `mission`, with nothing focused.
    pub fn new(mission: impl Into<String>) -> Self {
        Self {
            mission: mission.into(),
            current_id: None,
            goals: Vec::new(),
            next_id: 1,
        }
    }

    /// The overall task the plan serves.
    pub fn mission(&self) -> &str {
        &self.mission
    }

    /// The internal id of the goal the agent is working on, if any.
    pub fn current_id(&self) -> Option<&str> {
        self.current_id.as_deref()
    }

    /// Every goal ever created, abandoned ones included, in creation order, so a parent comes
    /// before its children.
    pub fn goals(&self) -> &[Goal] {
        &self.goals
    }

    /// The counter the next id is taken from: every numeric id of the tree is below it (for a
    /// tree built by this crate). Ids are never reused, even after a goal is deleted.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The goal with internal id `id`, abandoned ones included.
    pub fn get(&self, id: &str) -> Option<&Goal> {
        self.index_of(id).map(|index| &self.goals[index])
    }

    /// The goal the agent is working on, if any.
    pub fn current(&self) -> Option<&Goal> {
        self.current_id.as_deref().and_then(|id| self.get(id))
    }

    /// The ancestors of goal `id`: its parent first, up to the top-level goal.
    ///
    /// An unknown id has no ancestors.
    pub fn ancestors(&self, id: &str) -> Vec<&Goal> {
        match self.index_of(id) {
            Some(index) => self
                .ancestor_indices(index)
                .into_iter()
                .map(|i| &self.goals[i])
                .collect(),
            None => Vec::new(),
        }
    }

    /// The direct children of `parent_id` (`None` for the top level), in creation order,
    /// abandoned ones included.
    pub fn children<'a>(
        &'a self,
        parent_id: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Goal> + 'a {
        self.goals
            .iter()
            .filter(move |goal| goal.parent_id.as_deref() == parent_id)
    }

    /// The position of goal `id` in `goals`.
    pub(crate) fn index_of(&self, id: &str) -> Option<usize> {
        match self.goals.binary_search_by(|goal| id_order(&goal.id, id)) {
            Ok(index) => Some(index),
            Err(_) => self.goals.iter().position(|goal| goal.id == id),
        }
    }

    /// The position of the parent of the goal at `index`.
    pub(crate) fn parent_index(&self, index: usize) -> Option<usize> {
        self.goals[index]
            .parent_id
            .as_deref()
            .and_then(|parent| self.index_of(parent))
    }

    /// The positions of the ancestors of the goal at `index`, parent first.
    pub(crate) fn ancestor_indices(&self, index: usize) -> Vec<usize> {
        let mut result = Vec::new();
        let mut at = index;
        while let Some(parent) = self.parent_index(at) {
            if parent == index || result.len() >= self.goals.len() {
                break;
            }
            result.push(parent);
            at = parent;
        }
        result
    }

    /// The positions of the direct children of the goal at `index`, in creation order.
    pub(crate) fn child_indices(&self, index: usize) -> Vec<usize> {
        let id = self.goals[index].id.as_str();
        self.goals
            .iter()
            .enumerate()
            .filter(|(_, goal)| goal.parent_id.as_deref() == Some(id))
            .map(|(i, _)| i)
            .collect()
    }

    /// The positions of every descendant of the goal at `index`, in list order.
    pub(crate) fn descendant_indices(&self, index: usize) -> Vec<usize> {
        let mut inside: HashSet<&str> = HashSet::from([self.goals[index].id.as_str()]);
        let mut taken = vec![false; self.goals.len()];
        taken[index] = true;
        let mut result = Vec::new();
        // Parents normally precede their children, so one pass suffices; the loop only repeats
        // for a tree whose list order was changed by hand.
        loop {
            let mut grew = false;
            for (i, goal) in self.goals.iter().enumerate() {
                let under = goal
                    .parent_id
                    .as_deref()
                    .is_some_and(|parent| inside.contains(parent));
                if !taken[i] && under {
                    taken[i] = true;
                    inside.insert(goal.id.as_str());
                    result.push(i);
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        result.sort_unstable();
        result
    }

    /// Where focus goes when the goal at `index` is finished: the nearest ancestor that is not
    /// completed, if that one is in progress.
    pub(crate) fn next_focus_after(&self, index: usize) -> Option<usize> {
        self.ancestor_indices(index)
            .into_iter()
            .find(|&i| self.goals[i].status != GoalStatus::Completed)
            .filter(|&i| self.goals[i].status == GoalStatus::InProgress)
    }

    /// Hands out a fresh id, never one that was used before in this tree.
    pub(crate) fn alloc_id(&mut self) -> String {
        let highest = self
            .goals
            .iter()
            .filter_map(|goal| goal.id.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        let id = self.next_id.max(highest + 1);
        self.next_id = id + 1;
        id.to_string()
    }
}

/// Orders decimal ids numerically (shorter first, then digit by digit), and any other strings
/// by the same total order.
fn id_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}
