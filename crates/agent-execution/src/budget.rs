//! Spending across the traces of a run: a [`Budget`] keeps the running cost and the model calls
//! of one trace and all its sub-traces, and checks them against the trace's own `max_cost` and
//! `max_iterations` and against the budgets of every trace above it; [`Budgets`] is the engine's
//! table of the budgets of traces being run, through which a sub-trace finds its parent's.
//!
//! Model calls count per run: a run's count starts at zero, and every step of the loop of the
//! run or of a sub-trace under it adds one to its budget and to every one above it, so a
//! delegate, or a delegate's delegate, cannot make more calls than the main run's
//! `max_iterations` allows.
//!
//! A budget starts from what the store says its trace and sub-traces spent (one read when the
//! run starts) and is then fed in memory by every model call the loop records, so checking it
//! before a model call reads nothing. A model call of an explore branch adds to the branch's
//! budget and to those of every trace above it: branches that spend the main trace's budget stop,
//! and so does the main trace, before its next model call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::lineage::{recorded_agents, stats_with_sub_traces};
use crate::{StoreError, TraceLimits, TraceOutcome, TraceStore};

/// The spending of a trace and its sub-traces against its budget, and the budget above it.
#[derive(Debug)]
pub struct Budget {
    trace_id: String,
    max_cost: Option<f64>,
    spent: Mutex<f64>,
    /// The most model calls of this run and the runs under it, and how many they made.
    max_calls: Option<u32>,
    calls: AtomicU32,
    parent: Option<Arc<Budget>>,
}

impl Budget {
    /// Adds the cost of a model call of this trace to its budget and every one above it.
    pub fn add(&self, cost: f64) {
        if cost <= 0.0 {
            return;
        }
        let mut next = Some(self);
        while let Some(budget) = next {
            *budget.spent.lock().unwrap_or_else(PoisonError::into_inner) += cost;
            next = budget.parent.as_deref();
        }
    }

    /// Counts a model call of this trace in its budget and every one above it.
    pub fn add_call(&self) {
        let mut next = Some(self);
        while let Some(budget) = next {
            budget.calls.fetch_add(1, Ordering::Relaxed);
            next = budget.parent.as_deref();
        }
    }

    /// How the run ends when this budget or one above it has made all the model calls its
    /// `max_iterations` allows; `None` while every one may call again.
    pub fn calls_exceeded(&self) -> Option<TraceOutcome> {
        let mut next = Some(self);
        let mut own = true;
        while let Some(budget) = next {
            let calls = budget.calls.load(Ordering::Relaxed);
            if let Some(max) = budget.max_calls
                && calls >= max
            {
                let error = if own {
                    format!("max_iterations: reached the limit of {max} model calls")
                } else {
                    format!(
                        "max_iterations: the run of trace {} and its sub-traces reached its \
                         limit of {max} model calls",
                        budget.trace_id
                    )
                };
                return Some(TraceOutcome::failed(error));
            }
            own = false;
            next = budget.parent.as_deref();
        }
        None
    }

    /// How the run ends when this budget or one above it is spent; `None` while every one has
    /// money left.
    pub fn exceeded(&self) -> Option<TraceOutcome> {
        let mut next = Some(self);
        let mut own = true;
        while let Some(budget) = next {
            let spent = *budget.spent.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(max) = budget.max_cost
                && spent >= max
            {
                let error = if own {
                    format!("max_cost: spent ${spent:.4} of the ${max:.4} budget")
                } else {
                    format!(
                        "max_cost: trace {} and its sub-traces spent ${spent:.4} of its \
                         ${max:.4} budget",
                        budget.trace_id
                    )
                };
                return Some(TraceOutcome::failed(error));
            }
            own = false;
            next = budget.parent.as_deref();
        }
        None
    }
}

/// The budgets of the traces an engine is running, by trace id.
#[derive(Debug, Default)]
pub struct Budgets {
    running: Mutex<HashMap<String, Weak<Budget>>>,
}

impl Budgets {
    fn get(&self, trace_id: &str) -> Option<Arc<Budget>> {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.get(trace_id).and_then(Weak::upgrade)
    }

    fn insert(&self, budget: &Arc<Budget>) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        // Budgets of runs that ended are dropped here, so the table holds running traces only.
        running.retain(|_, budget| budget.strong_count() > 0);
        running.insert(budget.trace_id.clone(), Arc::downgrade(budget));
    }
}

/// The budget of a run of `trace_id`, registered in `budgets` (the engine's table) while the
/// caller holds it.
///
/// Its own limit is `max_cost` (the running agent's). Above it is the budget of the parent
/// trace's run when that runs in this engine (an explore branch or a delegate under its caller);
/// for a sub-trace run on its own (a resume of it alone), the main trace's budget read from the
/// store: `main_max_cost` of the limits the main trace stored. `max_calls` is the run's
/// `max_iterations`, counted from zero.
pub async fn open(
    budgets: &Budgets,
    store: &dyn TraceStore,
    trace_id: &str,
    (max_cost, max_calls): (Option<f64>, Option<u32>),
    main_max_cost: impl FnOnce(Option<&TraceLimits>) -> Option<f64>,
) -> Result<Arc<Budget>, StoreError> {
    let trace = store
        .get_trace(trace_id)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    let parent = match &trace.parent_trace_id {
        None => None,
        Some(parent_id) => match budgets.get(parent_id) {
            Some(parent) => Some(parent),
            None => main_budget(store, trace_id, main_max_cost).await?,
        },
    };
    let spent = match max_cost {
        Some(_) => spent_by(store, trace_id).await?,
        // Without a limit of its own the total matters only to the budgets above, which
        // counted it when they opened.
        None => 0.0,
    };
    let budget = Arc::new(Budget {
        trace_id: trace_id.to_owned(),
        max_cost,
        spent: Mutex::new(spent),
        max_calls,
        calls: AtomicU32::new(0),
        parent,
    });
    budgets.insert(&budget);
    Ok(budget)
}

/// The main trace's budget above a sub-trace that runs without its parent's run.
async fn main_budget(
    store: &dyn TraceStore,
    trace_id: &str,
    main_max_cost: impl FnOnce(Option<&TraceLimits>) -> Option<f64>,
) -> Result<Option<Arc<Budget>>, StoreError> {
    let recorded = recorded_agents(store, trace_id).await?;
    let Some(main_id) = recorded.main_trace_id.filter(|id| id != trace_id) else {
        return Ok(None);
    };
    let Some(max_cost) = main_max_cost(recorded.main_limits.as_ref()) else {
        return Ok(None);
    };
    let spent = spent_by(store, &main_id).await?;
    Ok(Some(Arc::new(Budget {
        trace_id: main_id,
        max_cost: Some(max_cost),
        spent: Mutex::new(spent),
        max_calls: None,
        calls: AtomicU32::new(0),
        parent: None,
    })))
}

/// What a trace and all its sub-traces spent, in US dollars.
async fn spent_by(store: &dyn TraceStore, trace_id: &str) -> Result<f64, StoreError> {
    Ok(stats_with_sub_traces(store, trace_id).await?.total_cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(id: &str, max_cost: Option<f64>, parent: Option<Arc<Budget>>) -> Arc<Budget> {
        Arc::new(Budget {
            trace_id: id.into(),
            max_cost,
            spent: Mutex::new(0.0),
            max_calls: None,
            calls: AtomicU32::new(0),
            parent,
        })
    }

    #[test]
    fn calls_below_count_above_and_the_nearest_exhausted_limit_is_named() {
        let mut main = budget("main", None, None);
        Arc::get_mut(&mut main).unwrap().max_calls = Some(3);
        let mut delegate = budget("main@delegate-1", None, Some(main.clone()));
        Arc::get_mut(&mut delegate).unwrap().max_calls = Some(10);
        let inner = budget("main@delegate-1@delegate-2", None, Some(delegate.clone()));
        main.add_call();
        delegate.add_call();
        assert!(inner.calls_exceeded().is_none());
        inner.add_call();
        let error = inner.calls_exceeded().unwrap().error.unwrap();
        assert!(error.contains("trace main and its sub-traces"), "{error}");
        assert_eq!(
            main.calls_exceeded().unwrap().error.unwrap(),
            "max_iterations: reached the limit of 3 model calls"
        );
    }

    #[test]
    fn spending_below_counts_above_and_the_nearest_spent_budget_is_named() {
        let main = budget("main", Some(1.0), None);
        let branch = budget("main@explore-1", Some(0.8), Some(main.clone()));
        let other = budget("main@explore-2", None, Some(main.clone()));
        branch.add(0.5);
        other.add(0.3);
        assert!(branch.exceeded().is_none());
        assert!(main.exceeded().is_none());
        other.add(0.2);
        let error = other.exceeded().unwrap().error.unwrap();
        assert!(
            error.contains("trace main and its sub-traces spent $1.0000"),
            "{error}"
        );
        assert!(
            main.exceeded()
                .unwrap()
                .error
                .unwrap()
                .starts_with("max_cost: spent $1.0000")
        );
        branch.add(0.3);
        let error = branch.exceeded().unwrap().error.unwrap();
        assert_eq!(error, "max_cost: spent $0.8000 of the $0.8000 budget");
    }

    #[test]
    fn the_table_forgets_runs_that_ended() {
        let budgets = Budgets::default();
        let main = budget("main", None, None);
        budgets.insert(&main);
        assert!(budgets.get("main").is_some());
        drop(main);
        assert!(budgets.get("main").is_none());
        budgets.insert(&budget("other", None, None));
        assert_eq!(budgets.running.lock().unwrap().len(), 1);
    }
}
