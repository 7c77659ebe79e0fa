//! `agent traces` and `agent show`: what is in the trace folder, for people and for scripts.
//!
//! `show` prints a trace as a tree in the spirit of a debug dump: the trace's fields, then its
//! goals with status, summary and stats, each goal's messages under it, then its sub-traces.

use std::collections::HashSet;
use std::sync::Arc;

use agent_execution::{Message, Role, Trace, TraceFilter, TraceStats, TraceStatus, TraceStore};
use agent_goal::{Goal, GoalStats, GoalStatus, GoalTree};
use anyhow::Result;
use serde_json::{Value, json};

use crate::cli::{ShowArgs, TracesArgs};
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, one_line, print, truncate};
use crate::progress::status_word;

/// `agent traces`.
pub(crate) async fn traces(args: TracesArgs) -> Result<ExitCode> {
    let store = crate::settings::store_for(&args.trace_dir).await?;
    let status = match &args.status {
        Some(word) => Some(
            serde_json::from_value::<TraceStatus>(json!(word)).map_err(|_| {
                UsageError(format!(
                    "unknown status {word:?}; use running, completed, failed, waiting, cancelled or planned"
                ))
            })?,
        ),
        None => None,
    };
    let filter = TraceFilter {
        status,
        ..TraceFilter::default()
    };
    let all = store.list_traces(&filter).await?;
    // Totals with sub-traces add up every sub-trace, whatever its status.
    let everything = match status {
        Some(_) => store.list_traces(&TraceFilter::default()).await?,
        None => all.clone(),
    };
    // A trace that failed before the model answered anything is hidden unless asked for.
    let hidden = all
        .iter()
        .filter(|t| !args.all && crate::ids::never_answered(t))
        .count();
    let mains: Vec<&Trace> = all
        .iter()
        .filter(|t| t.parent_trace_id.is_none())
        .filter(|t| args.all || !crate::ids::never_answered(t))
        .take(args.limit)
        .collect();
    let interrupted = interrupted(store.as_ref(), &all).await?;
    if args.json {
        let shown: Vec<Value> = all
            .iter()
            .filter(|t| match &t.parent_trace_id {
                None => mains.iter().any(|m| m.trace_id == t.trace_id),
                Some(parent) => mains.iter().any(|m| &m.trace_id == parent),
            })
            .map(|t| with_interrupted(t, &interrupted))
            .collect();
        print(&serde_json::to_string_pretty(&shown)?);
        return Ok(ExitCode::Completed);
    }
    let hidden_note = || {
        if hidden > 0 {
            let traces = if hidden == 1 { "trace" } else { "traces" };
            note(&format!(
                "{hidden} {traces} that failed before the model answered not shown (--all shows them)"
            ));
        }
    };
    if mains.is_empty() {
        print("no traces");
        hidden_note();
        return Ok(ExitCode::Completed);
    }
    let now = chrono::Utc::now();
    print(&format!(
        "{:<38} {:<11} {:>4}  {:<20} {:>9} {:>9} {:>9} {:>11}  TASK",
        "TRACE", "STATUS", "AGE", "MODEL", "MESSAGES", "TOKENS", "COST", "+SUB-TRACES"
    ));
    for main in mains {
        let total = tree_total(&everything, main);
        print(&row(main, "", Some(total.total_cost), &interrupted, now));
        for sub in all
            .iter()
            .filter(|t| t.parent_trace_id.as_deref() == Some(main.trace_id.as_str()))
        {
            print(&row(sub, "  └ ", None, &interrupted, now));
        }
    }
    hidden_note();
    if !interrupted.is_empty() {
        note(
            "interrupted: the process that ran it is gone (no one holds its lock); \
             `agent resume <TRACE>` continues it",
        );
    }
    Ok(ExitCode::Completed)
}

/// The traces among `traces` stored as running or waiting whose writer is gone.
async fn interrupted(store: &dyn TraceStore, traces: &[Trace]) -> Result<HashSet<String>> {
    let mut gone = HashSet::new();
    for trace in traces {
        if matches!(trace.status, TraceStatus::Running | TraceStatus::Waiting)
            && store.writer_alive(&trace.trace_id).await? == Some(false)
        {
            gone.insert(trace.trace_id.clone());
        }
    }
    Ok(gone)
}

/// A trace as JSON, with `"interrupted": true` when its writer is gone.
fn with_interrupted(trace: &Trace, interrupted: &HashSet<String>) -> Value {
    let mut value = json!(trace);
    if interrupted.contains(&trace.trace_id) {
        value["interrupted"] = json!(true);
    }
    value
}

/// The totals of `trace` and all its sub-traces among `traces`.
fn tree_total(traces: &[Trace], trace: &Trace) -> TraceStats {
    let mut total = trace.stats();
    let mut pending = vec![trace.trace_id.as_str()];
    while let Some(id) = pending.pop() {
        for sub in traces
            .iter()
            .filter(|t| t.parent_trace_id.as_deref() == Some(id))
        {
            total.total_messages += sub.total_messages;
            total.total_tokens += sub.total_tokens;
            total.total_cost += sub.total_cost;
            pending.push(&sub.trace_id);
        }
    }
    total
}

/// One line of the table; `with_subs` is the cost of a main trace with its sub-traces.
fn row(
    trace: &Trace,
    prefix: &str,
    with_subs: Option<f64>,
    interrupted: &HashSet<String>,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let id = if prefix.is_empty() {
        trace.trace_id.clone()
    } else {
        format!(
            "{prefix}{}",
            trace.trace_id.rsplit('@').next().unwrap_or(&trace.trace_id)
        )
    };
    let status = if interrupted.contains(&trace.trace_id) {
        "interrupted".to_owned()
    } else {
        status_word(trace.status)
    };
    format!(
        "{:<38} {:<11} {:>4}  {:<20} {:>9} {:>9} {:>9} {:>11}  {}",
        id,
        status,
        crate::pick::age(&trace.created_at, now),
        truncate(trace.model.as_deref().unwrap_or("-"), 20),
        trace.total_messages,
        trace.total_tokens,
        format!("${:.4}", trace.total_cost),
        with_subs
            .map(|cost| format!("${cost:.4}"))
            .unwrap_or_default(),
        truncate(&one_line(&trace.task), 60)
    )
}

/// `agent show`.
pub(crate) async fn show(args: ShowArgs) -> Result<ExitCode> {
    let store = crate::settings::store_for(&args.trace_dir).await?;
    let trace_id = crate::ids::resolve(store.as_ref(), &args.trace_id).await?;
    let trace = store
        .get_trace(&trace_id)
        .await?
        .ok_or_else(|| UsageError(format!("there is no trace {trace_id} in this trace folder")))?;
    let tree = store.get_goal_tree(&trace_id).await?.unwrap_or_default();
    let messages = store.get_trace_messages_shared(&trace_id).await?;
    let subs = store.get_sub_traces(&trace_id).await?;
    let total = agent_runner::stats_with_sub_traces(store.as_ref(), &trace_id).await?;
    let gone = interrupted(store.as_ref(), std::slice::from_ref(&trace)).await?;
    if args.json {
        let value = json!({
            "trace": with_interrupted(&trace, &gone),
            "goal_tree": tree,
            "messages": messages,
            "sub_traces": subs,
            "total_stats_with_sub_traces": total,
            "tokens_estimated": messages.iter().any(|m| agent_runner::usage_is_estimated(m)),
        });
        print(&serde_json::to_string_pretty(&value)?);
    } else {
        let view = View {
            full_reasoning: args.show_reasoning,
            color: crate::output::color(false),
        };
        print(&crate::output::clean(&render(
            &trace, &tree, &messages, &subs, view, &total,
        )));
        if !gone.is_empty() {
            note(&format!(
                "interrupted: the trace is stored as {} but no process runs it any more; \
                 `agent resume {trace_id}` continues it",
                status_word(trace.status)
            ));
        }
    }
    Ok(ExitCode::Completed)
}

/// How `agent show` prints reasoning: in full or summarised, dimmed or not.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct View {
    /// The whole reasoning text instead of a summary.
    pub(crate) full_reasoning: bool,
    /// Whether it may be dimmed.
    pub(crate) color: bool,
}

/// The tree form of a trace.
pub(crate) fn render(
    trace: &Trace,
    tree: &GoalTree,
    messages: &[Arc<Message>],
    subs: &[Trace],
    view: View,
    total: &TraceStats,
) -> String {
    let rule = "=".repeat(60);
    let mut out = format!("{rule}\nTrace {}\n{rule}\n## Trace\n", trace.trace_id);
    let mut field = |name: &str, value: &str| out.push_str(&format!("{name}: {value}\n"));
    field("task", &one_line(&trace.task));
    field("status", &status_word(trace.status));
    if let Some(agent_type) = &trace.agent_type {
        field("agent_type", agent_type);
    }
    if let Some(parent) = &trace.parent_trace_id {
        field("parent", parent);
    }
    if let Some(model) = &trace.model {
        field("model", model);
    }
    field("total_messages", &trace.total_messages.to_string());
    let estimated = messages.iter().any(|m| agent_runner::usage_is_estimated(m));
    let tokens = trace.total_tokens.to_string();
    field(
        "total_tokens",
        &if estimated {
            format!("~{tokens} (estimated: the server reported no counts)")
        } else {
            tokens
        },
    );
    field("total_cost", &format!("{:.4}", trace.total_cost));
    if !subs.is_empty() {
        field(
            "with_sub_traces",
            &format!(
                "{} messages, {} tokens, ${:.4}",
                total.total_messages, total.total_tokens, total.total_cost
            ),
        );
    }
    if let Some(limits) = &trace.limits {
        let mut text = Vec::new();
        if let Some(max) = limits.max_iterations {
            text.push(format!("max_iterations {max}"));
        }
        if let Some(cost) = limits.max_cost {
            text.push(format!("max_cost ${cost:.4}"));
        }
        if !text.is_empty() {
            field("limits", &text.join(", "));
        }
    }
    field("created_at", &trace.created_at);
    if let Some(error) = &trace.error {
        field("error", error);
    }
    if let Some(summary) = &trace.summary {
        field("summary", &truncate(&one_line(summary), 200));
    }

    out.push_str("## Goals\n");
    if tree.goals().is_empty() {
        out.push_str("(no goals)\n");
    }
    goal_level(tree, messages, None, "", view, &mut out);

    let loose: Vec<&Message> = messages
        .iter()
        .map(|m| &**m)
        .filter(|m| m.goal_id.is_none())
        .collect();
    if !loose.is_empty() {
        out.push_str("## Messages outside any goal\n");
        for (i, message) in loose.iter().enumerate() {
            let last = i + 1 == loose.len();
            out.push_str(&format!(
                "{}{}\n",
                if last { "└── " } else { "├── " },
                message_line(message, view)
            ));
        }
    }
    if !subs.is_empty() {
        out.push_str("## Sub-traces\n");
        for sub in subs {
            out.push_str(&format!(
                "- {} [{}] {} · {}\n",
                sub.trace_id,
                status_word(sub.status),
                truncate(&one_line(&sub.task), 80),
                stats_text(&GoalStats {
                    message_count: sub.total_messages,
                    total_tokens: sub.total_tokens,
                    total_cost: sub.total_cost,
                    preview: None,
                })
            ));
        }
    }
    out
}

fn goal_level(
    tree: &GoalTree,
    messages: &[Arc<Message>],
    parent: Option<&str>,
    indent: &str,
    view: View,
    out: &mut String,
) {
    let goals: Vec<&Goal> = tree.children(parent).collect();
    for (i, goal) in goals.iter().enumerate() {
        let last = i + 1 == goals.len();
        let (branch, more) = if last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let child_indent = format!("{indent}{more}");
        out.push_str(&format!("{indent}{branch}{}\n", goal_line(tree, goal)));
        if let Some(summary) = &goal.summary {
            let label = if goal.status == GoalStatus::Abandoned {
                "reason"
            } else {
                "summary"
            };
            out.push_str(&format!(
                "{child_indent}{label}: {}\n",
                truncate(&one_line(summary), 200)
            ));
        }
        if let Some(branches) = &goal.branch_ids {
            out.push_str(&format!(
                "{child_indent}branches: {}\n",
                branches.join(", ")
            ));
        }
        out.push_str(&format!(
            "{child_indent}stats: {}\n",
            stats_text(&goal.cumulative_stats)
        ));
        for message in messages
            .iter()
            .filter(|m| m.goal_id.as_deref() == Some(goal.id.as_str()))
        {
            out.push_str(&format!(
                "{child_indent}· {}\n",
                message_line(message, view)
            ));
        }
        goal_level(tree, messages, Some(&goal.id), &child_indent, view, out);
    }
}

fn goal_line(tree: &GoalTree, goal: &Goal) -> String {
    let mark = match goal.status {
        GoalStatus::Completed => "[✓]",
        GoalStatus::InProgress => "[→]",
        GoalStatus::Pending => "[ ]",
        GoalStatus::Abandoned => "[✗]",
    };
    let number = tree
        .display_number(&goal.id)
        .map(|n| format!("{n}. "))
        .unwrap_or_default();
    let current = if tree.current_id() == Some(goal.id.as_str()) {
        " ← current"
    } else {
        ""
    };
    format!(
        "{mark} {number}{} (id {}){current}",
        one_line(&goal.description),
        goal.id
    )
}

fn stats_text(stats: &GoalStats) -> String {
    let mut text = format!(
        "{} messages · {} tokens · ${:.4}",
        stats.message_count, stats.total_tokens, stats.total_cost
    );
    if let Some(preview) = &stats.preview {
        text.push_str(&format!(" · {preview}"));
    }
    text
}

fn message_line(message: &Message, view: View) -> String {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    // An answer a cancellation cut short says so.
    let cut = if agent_execution::meta::MessageMeta::of(message).interrupted {
        " (interrupted)"
    } else {
        ""
    };
    let mut line = format!(
        "#{} {role}{cut}: {}",
        message.sequence,
        truncate(&one_line(&message.description), 100)
    );
    if let Some(tokens) = message.tokens {
        let about = if agent_runner::usage_is_estimated(message) {
            "~"
        } else {
            ""
        };
        line.push_str(&format!(" ({about}{tokens} tokens)"));
    }
    let reasoning = message
        .content
        .as_assistant()
        .map(agent_execution::AssistantContent::reasoning_text)
        .unwrap_or_default();
    let reasoning = if view.full_reasoning {
        one_line(&reasoning)
    } else {
        reasoning
    };
    if let Some(shown) = crate::reasoning::shown(&reasoning, view.full_reasoning) {
        line.push_str(&crate::reasoning::dim(&format!(" · {shown}"), view.color));
    }
    line
}
