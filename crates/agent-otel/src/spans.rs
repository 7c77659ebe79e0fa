//! The spans of a stored trace and its sub-traces.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use agent_execution::meta::MessageMeta;
use agent_execution::{Content, Message, StoreError, Trace, TraceFilter, TraceStatus, TraceStore};
use agent_goal::{GoalStatus, GoalTree};
use agent_llm::Role;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use serde_json::Value;

use crate::ids;
use crate::records::{
    Range, as_message, at, calls_by_id, compaction_event, first_line, is_compaction, started,
    sub_traces,
};

/// What the spans carry beyond the records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpanOptions {
    /// Record message contents (`gen_ai.input.messages`, `gen_ai.output.messages`, tool
    /// arguments and results); off by default, as the conventions advise.
    pub capture_content: bool,
    /// The model provider (`gen_ai.provider.name`, e.g. `openai`), when known.
    pub provider: Option<String>,
}

impl SpanOptions {
    /// Contents as [`crate::CAPTURE_CONTENT_VAR`] says; no provider.
    pub fn from_env() -> Self {
        let capture = std::env::var(crate::CAPTURE_CONTENT_VAR)
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
        Self {
            capture_content: capture,
            provider: None,
        }
    }
}

/// The spans of `trace_id` and of its sub-traces, the trace's own `invoke_agent` span first.
///
/// # Errors
///
/// [`StoreError::NotFound`] for an unknown trace, or what the store fails with.
pub async fn spans_of(
    store: &dyn TraceStore,
    trace_id: &str,
    options: &SpanOptions,
) -> Result<Vec<SpanData>, StoreError> {
    let main = store
        .get_trace(trace_id)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    let otel_trace = ids::trace_id(&main.trace_id);
    let mut spans = Vec::new();
    let mut queue: Vec<(String, Option<SpanId>)> = vec![(main.trace_id.clone(), None)];
    let mut seen = HashSet::new();
    while let Some((id, parent)) = queue.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        let Some(trace) = store.get_trace(&id).await? else {
            continue;
        };
        let messages = store.get_trace_messages_shared(&id).await?;
        let tree = store.get_goal_tree(&id).await?.unwrap_or_default();
        let builder = Builder {
            trace: &trace,
            main_id: &main.trace_id,
            otel_trace,
            options,
        };
        let (built, children) = builder.build(&messages, &tree, parent);
        spans.extend(built);
        queue.extend(children);
        // A sub-trace no tool result names (one still running, say) hangs under its agent.
        let filter = TraceFilter {
            parent_trace_id: Some(id.clone()),
            ..TraceFilter::default()
        };
        for sub in store.list_traces(&filter).await? {
            if !seen.contains(&sub.trace_id) && !queue.iter().any(|(q, _)| *q == sub.trace_id) {
                queue.push((sub.trace_id, Some(ids::span_id(&["trace", &id]))));
            }
        }
    }
    Ok(spans)
}

/// Builds the spans of one trace.
struct Builder<'a> {
    trace: &'a Trace,
    main_id: &'a str,
    otel_trace: TraceId,
    options: &'a SpanOptions,
}

impl Builder<'_> {
    fn span(
        &self,
        id: SpanId,
        parent: Option<SpanId>,
        name: String,
        range: Range,
        attributes: Vec<KeyValue>,
        status: Status,
    ) -> SpanData {
        let kind = if name.starts_with("chat ") {
            SpanKind::Client
        } else {
            SpanKind::Internal
        };
        SpanData {
            span_context: SpanContext::new(
                self.otel_trace,
                id,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent.unwrap_or(SpanId::INVALID),
            parent_span_is_remote: false,
            span_kind: kind,
            name: Cow::Owned(name),
            start_time: range.0,
            end_time: range.1.max(range.0),
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status,
            instrumentation_scope: InstrumentationScope::builder("agent-otel")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        }
    }

    /// The attributes every GenAI span of this trace carries.
    fn common(&self, operation: &'static str) -> Vec<KeyValue> {
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", operation),
            KeyValue::new("gen_ai.conversation.id", self.main_id.to_owned()),
        ];
        if let Some(provider) = &self.options.provider {
            attributes.push(KeyValue::new("gen_ai.provider.name", provider.clone()));
        }
        if let Some(model) = &self.trace.model {
            attributes.push(KeyValue::new("gen_ai.request.model", model.clone()));
        }
        attributes
    }

    /// The trace's spans, and the sub-traces to do next with the span each hangs under.
    fn build(
        &self,
        messages: &[Arc<Message>],
        tree: &GoalTree,
        parent: Option<SpanId>,
    ) -> (Vec<SpanData>, Vec<(String, Option<SpanId>)>) {
        let trace_id = self.trace.trace_id.as_str();
        let agent_span = ids::span_id(&["trace", trace_id]);
        let mut whole = Range(at(&self.trace.created_at), at(&self.trace.updated_at));
        let mut goal_ranges: HashMap<&str, Range> = HashMap::new();
        let parent_of: HashMap<&str, Option<&str>> = tree
            .goals()
            .iter()
            .map(|g| (g.id.as_str(), g.parent_id.as_deref()))
            .collect();
        for message in messages {
            let range = Range(started(message), at(&message.created_at));
            whole.widen(range);
            let mut goal = message.goal_id.as_deref();
            while let Some(id) = goal {
                goal_ranges
                    .entry(id)
                    .and_modify(|r| r.widen(range))
                    .or_insert(range);
                goal = parent_of.get(id).copied().flatten();
            }
        }
        let mut spans = Vec::new();
        let mut children = Vec::new();
        let numbers: HashMap<&str, String> = tree
            .numbered()
            .into_iter()
            .map(|(number, goal)| (goal.id.as_str(), number))
            .collect();
        for goal in tree.goals() {
            let Some(mut range) = goal_ranges.get(goal.id.as_str()).copied() else {
                continue;
            };
            if goal.status.is_finished() {
                range.widen(Range(range.1, at(&goal.updated_at)));
            }
            let number = numbers.get(goal.id.as_str()).map_or("-", String::as_str);
            let mut attributes = vec![
                KeyValue::new("agent.goal.id", goal.id.clone()),
                KeyValue::new("agent.goal.number", number.to_owned()),
                KeyValue::new("agent.goal.description", goal.description.clone()),
                KeyValue::new(
                    "agent.goal.status",
                    format!("{:?}", goal.status).to_lowercase(),
                ),
            ];
            // A finished goal's summary: what it achieved, or why it was given up.
            if let Some(summary) = &goal.summary {
                let key = if goal.status == GoalStatus::Abandoned {
                    "agent.goal.reason"
                } else {
                    "agent.goal.summary"
                };
                attributes.push(KeyValue::new(key, summary.clone()));
            }
            let mut events = Vec::new();
            if goal.status == GoalStatus::Completed {
                // Its messages left the model's view when it was done: only the summary stays.
                attributes.push(KeyValue::new("agent.goal.compacted", true));
                let after = goal
                    .summary
                    .as_deref()
                    .map_or(0, agent_llm::estimate_tokens);
                events.push(compaction_event(
                    "goal compaction",
                    range.1,
                    goal.cumulative_stats.total_tokens,
                    after as u64,
                ));
            }
            if let Some(agent) = &goal.agent {
                attributes.push(KeyValue::new("agent.goal.agent", agent.clone()));
            }
            let parent = goal
                .parent_id
                .as_deref()
                .filter(|p| goal_ranges.contains_key(p))
                .map_or(agent_span, |p| ids::span_id(&["goal", trace_id, p]));
            let description: String = goal.description.chars().take(80).collect();
            let mut span = self.span(
                ids::span_id(&["goal", trace_id, &goal.id]),
                Some(parent),
                format!("goal {number} {description}"),
                range,
                attributes,
                Status::Unset,
            );
            span.events.events = events;
            spans.push(span);
        }
        let calls = calls_by_id(messages);
        let mut compactions: Vec<(SpanId, opentelemetry::trace::Event)> = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            let parent = message
                .goal_id
                .as_deref()
                .filter(|g| goal_ranges.contains_key(g))
                .map_or(agent_span, |g| ids::span_id(&["goal", trace_id, g]));
            let id = ids::span_id(&["message", trace_id, &message.message_id]);
            match (&message.role, &message.content) {
                (Role::User, Content::Text(_)) if is_compaction(message) => {
                    // A full compaction: the summariser's call, and an event on the span the
                    // work was under with the context's weight before and after.
                    let earlier = &messages[..index];
                    spans.push(self.chat(message, earlier, id, parent));
                    let meta = MessageMeta::of(message);
                    compactions.push((
                        parent,
                        compaction_event(
                            "compaction",
                            at(&message.created_at),
                            meta.tokens_before.unwrap_or(0),
                            meta.tokens_after.unwrap_or(0),
                        ),
                    ));
                }
                (Role::Assistant, Content::Assistant(_)) => {
                    let earlier = &messages[..index];
                    spans.push(self.chat(message, earlier, id, parent));
                }
                (Role::Tool, Content::ToolResult(result)) => {
                    let name = message.tool_name.clone().unwrap_or_default();
                    let call_id = message.tool_call_id.clone().unwrap_or_default();
                    let mut attributes = self.common("execute_tool");
                    attributes.push(KeyValue::new("gen_ai.tool.name", name.clone()));
                    attributes.push(KeyValue::new("gen_ai.tool.call.id", call_id.clone()));
                    attributes.push(KeyValue::new("gen_ai.tool.type", "function"));
                    if self.options.capture_content {
                        if let Some(arguments) = calls.get(call_id.as_str()) {
                            attributes.push(KeyValue::new(
                                "gen_ai.tool.call.arguments",
                                (*arguments).to_owned(),
                            ));
                        }
                        attributes.push(KeyValue::new(
                            "gen_ai.tool.call.result",
                            result.output.clone(),
                        ));
                    }
                    let status = if result.is_error {
                        attributes.push(KeyValue::new("error.type", "tool_error"));
                        Status::error(first_line(&result.output))
                    } else {
                        Status::Unset
                    };
                    let range = Range(started(message), at(&message.created_at));
                    spans.push(self.span(
                        id,
                        Some(parent),
                        format!("execute_tool {name}"),
                        range,
                        attributes,
                        status,
                    ));
                    // Only this trace's own sub-traces: a fork copies its origin's results.
                    let own = format!("{trace_id}@");
                    for sub in sub_traces(message) {
                        if sub.starts_with(&own) {
                            children.push((sub, Some(id)));
                        }
                    }
                }
                _ => {}
            }
        }
        let agent = self
            .trace
            .agent_type
            .clone()
            .unwrap_or_else(|| "agent".into());
        let mut attributes = self.common("invoke_agent");
        attributes.push(KeyValue::new("gen_ai.agent.name", agent.clone()));
        attributes.push(KeyValue::new("gen_ai.agent.id", trace_id.to_owned()));
        attributes.push(KeyValue::new(
            "agent.trace.status",
            format!("{:?}", self.trace.status).to_lowercase(),
        ));
        let status = match (&self.trace.status, &self.trace.error) {
            (TraceStatus::Failed, error) => {
                Status::error(error.clone().unwrap_or_else(|| "failed".into()))
            }
            _ => Status::Unset,
        };
        let agent_data = self.span(
            agent_span,
            parent,
            format!("invoke_agent {agent}"),
            whole,
            attributes,
            status,
        );
        spans.insert(0, agent_data);
        for (on, event) in compactions {
            if let Some(span) = spans.iter_mut().find(|s| s.span_context.span_id() == on) {
                span.events.events.push(event);
            }
        }
        (spans, children)
    }

    /// The `chat` span of one model call; its input is what came since the model last spoke.
    fn chat(
        &self,
        message: &Message,
        earlier: &[Arc<Message>],
        id: SpanId,
        parent: SpanId,
    ) -> SpanData {
        let compaction = is_compaction(message);
        let mut attributes = self.common("chat");
        if let Some(usage) = MessageMeta::of(message).usage {
            if let Some(input) = usage.prompt_tokens {
                attributes.push(KeyValue::new("gen_ai.usage.input_tokens", input as i64));
            }
            if let Some(output) = usage.completion_tokens {
                attributes.push(KeyValue::new("gen_ai.usage.output_tokens", output as i64));
            }
            if let Some(cached) = usage.cached_tokens {
                attributes.push(KeyValue::new(
                    "gen_ai.usage.cache_read.input_tokens",
                    cached as i64,
                ));
            }
            if usage.estimated {
                // The server reported no counts: these are the agent's estimate.
                attributes.push(KeyValue::new("agent.usage.estimated", true));
            }
        }
        if compaction {
            attributes.push(KeyValue::new("agent.compaction", true));
        }
        if self.options.capture_content {
            let since = earlier
                .iter()
                .rposition(|m| m.role == Role::Assistant)
                .map_or(0, |i| i + 1);
            let input: Vec<Value> = earlier[since..]
                .iter()
                .filter_map(|m| as_message(m))
                .collect();
            let output: Vec<Value> = as_message(message).into_iter().collect();
            attributes.push(KeyValue::new(
                "gen_ai.input.messages",
                Value::Array(input).to_string(),
            ));
            attributes.push(KeyValue::new(
                "gen_ai.output.messages",
                Value::Array(output).to_string(),
            ));
        }
        let model = self.trace.model.clone().unwrap_or_else(|| "model".into());
        let range = Range(started(message), at(&message.created_at));
        self.span(
            id,
            Some(parent),
            format!("chat {model}"),
            range,
            attributes,
            Status::Unset,
        )
    }
}

#[cfg(test)]
#[path = "spans_tests.rs"]
mod tests;
