//! `explore(branches, background?, agent?)`: parallel branches as sub-traces, merged into one
//! report. The branches run as the `explore` profile, or as the profile `agent` names.
//!
//! 1. The branch ids are planned — `{parent}@{profile}-{YYYYMMDDHHMMSS}-{seq:03}`, numbered
//!    after the parent's sub-traces — and one commit to the parent creates the `explore_start` goal
//!    under the current focus with those ids as its `branch_ids`, and makes it current.
//! 2. Each branch sub-trace is created under its planned id with `parent_goal_id` = that goal
//!    (appending `sub_trace_started` to the parent), then its first message: the background
//!    (`background`, or the main line's compacted context rendered as text) and its branch.
//! 3. The branches run side by side, at most `max_concurrency` at once, each with its own goal
//!    tree, context, tools and limits. One failing or hitting a limit does not stop the others.
//! 4. When all are done, one commit records the `explore_merge` goal with the merged report,
//!    which is also the tool result; focus returns to the goal that explored.
//!
//! Every step is its own commit, so a crash between two leaves a loadable trace in which the
//! goal already names every branch: resuming finishes the exploration, creating branches that
//! do not exist yet under the planned ids.

use agent_goal::{GoalTree, GoalType, branch_label as label};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agents::EXPLORE;
use crate::context::{ContextInput, build_context, conversation, render_transcript};
use crate::engine::Start;
use crate::model::budget_for;
use crate::report::CallOutcome;
use crate::subagents::{Adoption, SubAgents};
use agent_execution::ids::sub_trace_id;
use agent_execution::store::StoreError;
use agent_execution::sub_trace_report::{SubTraceReport, stats_text};
use agent_execution::trace::{NewTrace, TraceStats, TraceStatus};
use agent_tools::{Keep, ToolContext, truncate_output};

/// The longest `explore_start` description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 300;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExploreArgs {
    branches: Vec<String>,
    #[serde(default)]
    background: Option<String>,
    #[serde(default)]
    agent: Option<String>,
}

/// One branch: its label, task and sub-trace.
struct Branch {
    label: String,
    task: String,
    trace_id: String,
}

/// Runs an `explore` call; never fails, every problem becomes an error result.
pub(crate) async fn run(
    agents: &SubAgents,
    args: Value,
    ctx: &ToolContext,
    adoption: Option<&mut Adoption>,
) -> CallOutcome {
    match explore(agents, args, ctx, adoption).await {
        Ok(outcome) => outcome,
        Err(error) => CallOutcome::error(format!("explore could not be recorded: {error}")),
    }
}

async fn explore(
    agents: &SubAgents,
    args: Value,
    ctx: &ToolContext,
    adoption: Option<&mut Adoption>,
) -> Result<CallOutcome, StoreError> {
    let parent = ctx.trace_id.as_str();
    let args: ExploreArgs = match serde_json::from_value(args) {
        Ok(args) => args,
        Err(e) => {
            return Ok(CallOutcome::error(format!(
                "invalid arguments for explore: {e}; send {{\"branches\": [\"<approach>\", ...], \
                 \"background\"?: \"<what every branch should know>\"}}"
            )));
        }
    };
    let tasks: Vec<String> = args.branches.iter().map(|b| b.trim().to_owned()).collect();
    let max = agents.root_sub_agents().max_branches;
    if tasks.is_empty() || tasks.iter().any(String::is_empty) {
        return Ok(CallOutcome::error(
            "explore needs at least one branch, each a non-empty description",
        ));
    }
    if tasks.len() > max {
        return Ok(CallOutcome::error(format!(
            "explore takes at most {max} branches, not {}",
            tasks.len()
        )));
    }
    let profile = match agents.profile_for(EXPLORE, args.agent.as_deref()) {
        Ok(profile) => profile,
        Err(message) => return Ok(CallOutcome::error(message)),
    };

    let tree = agents
        .store
        .get_goal_tree(parent)
        .await?
        .unwrap_or_default();
    let adopted = match adoption {
        Some(adoption) => adopt(agents, &tree, &tasks, adoption).await?,
        None => None,
    };
    if let Some((start_id, ids)) = &adopted
        && let Some(merge) = tree
            .goals()
            .iter()
            .find(|g| g.explore_start_id.as_deref() == Some(start_id.as_str()))
    {
        // The exploration was merged, but the run stopped before recording the result.
        let mut reports = Vec::new();
        for id in ids {
            if agents.store.get_trace(id).await?.is_some() {
                reports.push(agents.report(id).await?);
            }
        }
        let report = merge.merge_summary.clone().unwrap_or_default();
        return Ok(CallOutcome::done(
            agents.bounded(&report),
            false,
            &reports.iter().collect::<Vec<_>>(),
        ));
    }

    let background = match args.background.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => text.to_owned(),
        _ => main_context(agents, parent, &tree).await?,
    };
    let (start_id, ids, fresh) = match adopted {
        Some((start_id, ids)) => (start_id, ids, false),
        None => {
            let ids = plan_ids(agents, parent, &profile, tasks.len()).await?;
            match agents
                .store
                .start_explore(parent, &description(&tasks), ids.clone())
                .await
            {
                Ok(start_id) => (start_id, ids, true),
                Err(StoreError::Goal(error)) => {
                    return Ok(CallOutcome::error(format!("explore cannot start: {error}")));
                }
                Err(other) => return Err(other),
            }
        }
    };

    let branches: Vec<Branch> = ids
        .into_iter()
        .zip(tasks)
        .enumerate()
        .map(|(index, (trace_id, task))| Branch {
            label: label(index),
            task,
            trace_id,
        })
        .collect();
    let count = branches.len();
    let read_only = agents
        .config(&profile)
        .is_some_and(|c| c.tools.is_read_only());
    let ids: Vec<String> = branches.iter().map(|b| b.trace_id.clone()).collect();
    let apart = crate::branch_copies::give_copies(agents, parent, &ids, read_only).await;
    let workspace = if read_only {
        Workspace::ReadOnly
    } else if apart {
        Workspace::Copy
    } else {
        Workspace::Shared
    };
    let mut starts = Vec::with_capacity(count);
    for branch in &branches {
        let message = || first_message(&background, branch, count, workspace);
        let exists = !fresh && agents.store.get_trace(&branch.trace_id).await?.is_some();
        let start = if exists {
            agents.continue_sub_trace(&branch.trace_id, message).await?
        } else {
            let new = NewTrace::sub_trace(parent, Some(start_id.clone()), &profile, &branch.task)
                .with_id(&branch.trace_id);
            agents.create_sub_trace(new, message()).await?;
            Start::Fresh
        };
        starts.push(start);
    }

    run_branches(agents, &profile, &branches, starts, &ctx.cancel).await;

    let mut reports = Vec::with_capacity(count);
    for branch in &branches {
        reports.push(agents.report(&branch.trace_id).await?);
    }
    let stopped = reports
        .iter()
        .filter(|r| r.status == TraceStatus::Cancelled)
        .count();
    if ctx.cancel.is_cancelled() && stopped > 0 {
        return Ok(CallOutcome::interrupted(format!(
            "explore was cancelled: {stopped} of {count} branches were stopped; resuming the run \
             resumes them and finishes the exploration"
        )));
    }
    let mut report = merged_report(&branches, &reports);
    if apart {
        report = with_changed_files(agents, parent, &branches, report).await;
    }
    agents
        .store
        .finish_explore(parent, &start_id, &report, None)
        .await?;
    Ok(CallOutcome::done(
        agents.bounded(&report),
        false,
        &reports.iter().collect::<Vec<_>>(),
    ))
}

/// Runs the branches side by side as `profile`, at most `max_concurrency` at once, until all
/// have ended.
async fn run_branches(
    agents: &SubAgents,
    profile: &str,
    branches: &[Branch],
    starts: Vec<Start>,
    cancel: &CancellationToken,
) {
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(
        agents.root_sub_agents().max_concurrency.max(1),
    ));
    let handles: Vec<_> = branches
        .iter()
        .zip(starts)
        .map(|(branch, start)| {
            agents.spawn(
                profile,
                branch.trace_id.clone(),
                start,
                cancel.child_token(),
                Some(permits.clone()),
            )
        })
        .collect();
    for handle in handles {
        // A panicked branch leaves its trace as it was; the report shows it unfinished.
        let _ = handle.await;
    }
}

/// Finds the exploration an interrupted call started: an `explore_start` goal created since the
/// interrupted turn, not taken by another call, whose branches match `tasks`.
async fn adopt(
    agents: &SubAgents,
    tree: &GoalTree,
    tasks: &[String],
    adoption: &mut Adoption,
) -> Result<Option<(String, Vec<String>)>, StoreError> {
    for goal in tree.goals() {
        let Some(ids) = goal.branch_ids.as_ref() else {
            continue;
        };
        if goal.goal_type != GoalType::ExploreStart
            || goal.created_at < adoption.since
            || adoption.claimed.contains(&goal.id)
            || ids.len() != tasks.len()
        {
            continue;
        }
        let mut matches = true;
        for (id, task) in ids.iter().zip(tasks) {
            if let Some(trace) = agents.store.get_trace(id).await?
                && trace.task.trim() != task
            {
                matches = false;
                break;
            }
        }
        if matches {
            adoption.claimed.insert(goal.id.clone());
            return Ok(Some((goal.id.clone(), ids.clone())));
        }
    }
    Ok(None)
}

/// Plans `count` unused sub-trace ids of `profile`, numbered after the parent's sub-traces.
async fn plan_ids(
    agents: &SubAgents,
    parent: &str,
    profile: &str,
    count: usize,
) -> Result<Vec<String>, StoreError> {
    let started = {
        let txn = agents.store.begin(parent).await?;
        txn.state().map_or(0, |state| state.sub_trace_count)
    };
    let now = chrono::Utc::now();
    let mut ids = Vec::with_capacity(count);
    let mut seq = started + 1;
    while ids.len() < count {
        let id = sub_trace_id(parent, profile, now, seq);
        seq += 1;
        // A crash between creating a sub-trace and recording it in the parent leaves an id
        // the count does not know about.
        if agents.store.get_trace(&id).await?.is_none() {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// The main line's context as a branch's background: the conversation as the model sees it
/// (after goal compaction and prune), then the plan; the middle is cut when it is too long.
async fn main_context(
    agents: &SubAgents,
    parent: &str,
    tree: &GoalTree,
) -> Result<String, StoreError> {
    let messages = agents.store.get_trace_messages_shared(parent).await?;
    let budget = budget_for(&agents.spec, agents.llm.as_ref(), &[]);
    let view = build_context(&ContextInput {
        system_prompt: "",
        tree,
        messages: &messages,
        budget: &budget,
        strategy: agents.spec.strategy,
        estimate: &agent_llm::estimate_tokens,
    });
    let conversation = render_transcript(conversation(&view.messages));
    let text = format!(
        "The main agent's conversation so far, as it sees it:\n\n{conversation}\nIts plan:\n\n{}",
        tree.to_prompt()
    );
    Ok(truncate_output(
        &text,
        agents.root_sub_agents().max_background_bytes,
        Keep::HeadAndTail,
    ))
}

/// Where a branch works.
#[derive(Debug, Clone, Copy)]
enum Workspace {
    /// Its tools only read.
    ReadOnly,
    /// In a private copy of the workspace.
    Copy,
    /// In the workspace, beside the other branches.
    Shared,
}

/// The merged report with the files each branch changed in its copy, and how to apply them.
async fn with_changed_files(
    agents: &SubAgents,
    parent: &str,
    branches: &[Branch],
    report: String,
) -> String {
    let mut files = String::from(
        "\n\nEach branch worked in a private copy of the workspace; the workspace is unchanged. \
         Choose a branch with `goal(select=\"<label>\")` to apply its file changes.\n",
    );
    for branch in branches {
        let changed = crate::branch_copies::changed_files(agents, parent, &branch.trace_id).await;
        files.push_str(&format!("Branch {}: {changed}", branch.label));
    }
    report + files.trim_end()
}

/// The first message of a branch: what it is, the background, then its branch (last, so the
/// branch's own assignment is the end of the message).
fn first_message(background: &str, branch: &Branch, count: usize, workspace: Workspace) -> String {
    let workspace = match workspace {
        Workspace::ReadOnly => "Your tools only read: leave the workspace as it is.",
        Workspace::Copy => {
            "You work in a private copy of the workspace: the other branches do not see your \
             changes, nor you theirs. The main agent applies the changes of the branch it \
             chooses."
        }
        Workspace::Shared => "The other branches work in the same workspace at the same time.",
    };
    format!(
        "You are branch {} of {count} of a parallel exploration started by a main agent; the \
         other branches try other approaches at the same time. Explore only your branch. \
         {workspace} Keep a plan with the `goal` tool. When you are done, answer with a final \
         message and no tool calls: what you did, what you found (files, commands, numbers) and \
         how well this approach works. Your final answer is all the main agent will see of your \
         work.\n\n## Background\n\n{}\n\n## Your branch\n\n{}",
        branch.label,
        background.trim(),
        branch.task
    )
}

/// The merged report: every branch's status, final answer and plan, then the totals.
fn merged_report(branches: &[Branch], reports: &[SubTraceReport]) -> String {
    let mut out = String::from("## Exploration results\n");
    let mut total = TraceStats::default();
    let mut completed = 0;
    for (branch, report) in branches.iter().zip(reports) {
        out.push_str(&format!(
            "\n### Branch {}: {}\nStatus: {}\n{}",
            branch.label,
            branch.task,
            report.status_line(),
            report.body()
        ));
        total.add(&report.stats);
        if report.status == TraceStatus::Completed {
            completed += 1;
        }
    }
    let count = branches.len();
    let others = count - completed;
    let outcome = match (completed, others) {
        (_, 0) => format!("all {count} branches completed"),
        (0, _) => format!("none of the {count} branches completed"),
        _ => format!("{completed} of {count} branches completed, {others} did not"),
    };
    out.push_str(&format!(
        "\n---\n{outcome}. The branches used {} (not counted in this trace's totals).",
        stats_text(&total)
    ));
    out
}

/// The `explore_start` goal's description.
fn description(tasks: &[String]) -> String {
    let noun = if tasks.len() == 1 {
        "approach"
    } else {
        "approaches"
    };
    let text = format!("Explore {} {noun}: {}", tasks.len(), tasks.join(" | "));
    if text.chars().count() <= MAX_DESCRIPTION_CHARS {
        return text.replace('\n', " ");
    }
    let cut: String = text.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    format!("{}…", cut.replace('\n', " "))
}
