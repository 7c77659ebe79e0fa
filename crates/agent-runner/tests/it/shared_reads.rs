//! The runner reads a trace's messages shared, never as copies: over a store that refuses the
//! reads of owned messages, a planned run with a tool call and a continued turn both complete
//! (each starts by reading every message of the trace).

use std::sync::Arc;

use agent_execution::{
    Event, EventBus, GoalTree, InMemoryTraceStore, Message, StoreError, Trace, TraceFilter,
    TraceStatus, TraceStore, TraceTxn, async_trait,
};
use agent_test_support::mock_model::Turn;

use crate::continue_trace::{planned_run, setup_seen_as};

/// The in-memory store, without the reads that copy messages.
struct NoCopies(Arc<InMemoryTraceStore>);

fn copied() -> StoreError {
    StoreError::Internal("a copy of the messages was read".into())
}

#[async_trait]
impl TraceStore for NoCopies {
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        self.0.begin(trace_id).await
    }

    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        self.0.begin_new(trace_id).await
    }

    fn event_bus(&self) -> &EventBus {
        self.0.event_bus()
    }

    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError> {
        self.0.get_trace(trace_id).await
    }

    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
        self.0.list_traces(filter).await
    }

    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError> {
        self.0.get_goal_tree(trace_id).await
    }

    async fn get_trace_messages(&self, _: &str) -> Result<Vec<Message>, StoreError> {
        Err(copied())
    }

    async fn get_messages_by_goal(&self, _: &str, _: &str) -> Result<Vec<Message>, StoreError> {
        Err(copied())
    }

    async fn get_trace_messages_shared(
        &self,
        trace_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.0.get_trace_messages_shared(trace_id).await
    }

    async fn get_messages_by_goal_shared(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.0.get_messages_by_goal_shared(trace_id, goal_id).await
    }

    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError> {
        self.0.get_message(message_id).await
    }

    async fn get_events(&self, trace_id: &str, since: u64) -> Result<Vec<Event>, StoreError> {
        self.0.get_events(trace_id, since).await
    }
}

#[tokio::test]
async fn a_run_and_its_continuation_read_no_copy_of_the_messages() {
    let mut replies = planned_run();
    replies.push(Turn::text("a.txt dit alpha.").into());
    let s = setup_seen_as(
        replies,
        |inner| Arc::new(NoCopies(inner)),
        |options| options,
    )
    .await;
    let runner = &s.runner;

    let first = runner.run("Read a.txt and report").await.unwrap();
    assert_eq!(first.status, TraceStatus::Completed, "{:?}", first.error);
    assert_eq!(first.response.as_deref(), Some("a.txt says alpha."));
    let next = runner
        .continue_trace(&first.trace_id, "Now say it in French")
        .await
        .unwrap();
    assert_eq!(next.status, TraceStatus::Completed, "{:?}", next.error);
    assert_eq!(next.response.as_deref(), Some("a.txt dit alpha."));
    // Every message went through the shared reads and was recorded once.
    let stored = s.store.get_trace_messages(&first.trace_id).await.unwrap();
    assert_eq!(stored.len(), 12, "{stored:#?}");
}
