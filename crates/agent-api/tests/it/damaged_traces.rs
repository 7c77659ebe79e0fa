//! Damaged traces: when the store cannot read a trace (a corrupt file, a file the server may not
//! read), every route that reads it answers 410 `trace_unreadable` with the reason — which file,
//! what is wrong, never the server's folders — and never a 500; the list and other traces are
//! unaffected. (The agent-cli tests damage real trace folders under `agent serve`.)

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::common::{
    Answer, get, post_empty, post_json, short_script, state_with, wait_for_status,
};
use agent_api::{ApiConfig, AppState};
use agent_execution::{
    Event, EventBus, GoalTree, InMemoryTraceStore, Message, StoreError, Trace, TraceFilter,
    TraceStatus, TraceStore, TraceTxn, async_trait,
};
use axum::http::StatusCode;
use serde_json::json;

/// A store whose reads of some traces fail as a damaged trace folder's would.
struct DamagedStore {
    inner: Arc<InMemoryTraceStore>,
    damaged: HashMap<String, fn(&str) -> StoreError>,
}

impl DamagedStore {
    fn check(&self, trace_id: &str) -> Result<(), StoreError> {
        match self.damaged.get(trace_id) {
            Some(damage) => Err(damage(trace_id)),
            None => Ok(()),
        }
    }
}

#[async_trait]
impl TraceStore for DamagedStore {
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        self.check(trace_id)?;
        self.inner.begin(trace_id).await
    }

    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        self.inner.begin_new(trace_id).await
    }

    fn event_bus(&self) -> &EventBus {
        self.inner.event_bus()
    }

    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError> {
        self.check(trace_id)?;
        self.inner.get_trace(trace_id).await
    }

    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
        // As the filesystem store does: what cannot be read is left out.
        let traces = self.inner.list_traces(filter).await?;
        Ok(traces
            .into_iter()
            .filter(|trace| !self.damaged.contains_key(&trace.trace_id))
            .collect())
    }

    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError> {
        self.check(trace_id)?;
        self.inner.get_goal_tree(trace_id).await
    }

    async fn get_trace_messages(&self, trace_id: &str) -> Result<Vec<Message>, StoreError> {
        self.check(trace_id)?;
        self.inner.get_trace_messages(trace_id).await
    }

    async fn get_messages_by_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Message>, StoreError> {
        self.check(trace_id)?;
        self.inner.get_messages_by_goal(trace_id, goal_id).await
    }

    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError> {
        self.inner.get_message(message_id).await
    }

    async fn get_events(&self, trace_id: &str, since: u64) -> Result<Vec<Event>, StoreError> {
        self.check(trace_id)?;
        self.inner.get_events(trace_id, since).await
    }
}

/// Where the server keeps traces: its clients must never see it.
const BASE: &str = "/srv/private/traces";

fn file(trace_id: &str, name: &str) -> PathBuf {
    PathBuf::from(BASE).join(trace_id).join(name)
}

/// A damage, the file its message names, and a word of the reason.
type Damage = (fn(&str) -> StoreError, &'static str, &'static str);

fn damages() -> Vec<Damage> {
    vec![
        (
            |id| StoreError::Corrupt {
                path: file(id, "events.jsonl"),
                detail: "line 2: not an event: expected value at line 1 column 1".into(),
            },
            "events.jsonl",
            "line 2",
        ),
        (
            |id| StoreError::Corrupt {
                path: file(id, "meta.json"),
                detail: "EOF while parsing an object".into(),
            },
            "meta.json",
            "EOF",
        ),
        (
            |id| {
                let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
                StoreError::io(file(id, "meta.json"), denied)
            },
            "meta.json",
            "may not read",
        ),
        (
            |id| {
                let folder = std::io::Error::from(std::io::ErrorKind::IsADirectory);
                StoreError::io(file(id, "events.jsonl"), folder)
            },
            "events.jsonl",
            "folder",
        ),
    ]
}

fn assert_unreadable(route: &str, answer: &Answer, file: &str, reason: &str) {
    assert_eq!(answer.status, StatusCode::GONE, "{route}: {}", answer.text);
    assert_eq!(answer.code(), "trace_unreadable", "{route}");
    let message = answer.json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(file) && message.contains(reason),
        "{route}: the reason is given: {message}"
    );
    assert!(!message.contains(BASE), "{route}: {message}");
}

#[tokio::test]
async fn every_route_that_reads_a_damaged_trace_answers_410_with_the_reason() {
    let workspace = tempfile::tempdir().unwrap();
    let damages = damages();
    // Real traces, run to the end, then served by a store that cannot read them.
    let inner = Arc::new(InMemoryTraceStore::new());
    let mut ids = Vec::new();
    {
        let store: Arc<dyn TraceStore> = inner.clone();
        for _ in 0..=damages.len() {
            let state = state_with(
                store.clone(),
                short_script(),
                workspace.path(),
                ApiConfig::default(),
            );
            let answer = post_json(&state, "/api/traces", json!({"task": "Read"})).await;
            let id = answer.json["trace_id"].as_str().unwrap().to_owned();
            wait_for_status(&store, &id, TraceStatus::Completed).await;
            ids.push(id);
        }
    }
    let damaged = ids
        .iter()
        .zip(&damages)
        .map(|(id, (damage, _, _))| (id.clone(), *damage))
        .collect();
    let store: Arc<dyn TraceStore> = Arc::new(DamagedStore { inner, damaged });
    let state: AppState = state_with(
        store,
        short_script(),
        workspace.path(),
        ApiConfig::default(),
    );
    for (id, (_, file, reason)) in ids.iter().zip(&damages) {
        let url = format!("/api/traces/{id}");
        for route in [
            url.clone(),
            format!("{url}/messages"),
            format!("{url}/messages?goal_id=1"),
            format!("{url}/events"),
            format!("{url}/events?since_event_id=2"),
            format!("{url}/watch"),
        ] {
            assert_unreadable(&route, &get(&state, &route).await, file, reason);
        }
        for (route, body) in [
            (format!("{url}/fork"), Some(json!({"goal": "1"}))),
            (format!("{url}/resume"), None),
            (format!("{url}/resume"), Some(json!({"max_iterations": 5}))),
            (format!("{url}/messages"), Some(json!({"content": "Go on"}))),
            (format!("{url}/cancel"), None),
        ] {
            let answer = match body {
                Some(body) => post_json(&state, &route, body).await,
                None => post_empty(&state, &route).await,
            };
            assert_unreadable(&route, &answer, file, reason);
        }
    }
    // The list leaves them out and the healthy trace reads as ever.
    let list = get(&state, "/api/traces").await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.text);
    let healthy = ids.last().unwrap();
    assert_eq!(list.json["traces"].as_array().unwrap().len(), 1);
    assert_eq!(list.json["traces"][0]["trace_id"], healthy.as_str());
    let answer = get(&state, &format!("/api/traces/{healthy}")).await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn a_trace_folder_the_server_may_not_write_is_a_403_not_a_500() {
    // Writes of the trace fail as on a read-only folder; its reads work.
    let inner = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let store: Arc<dyn TraceStore> = inner.clone();
    let state = state_with(
        store.clone(),
        short_script(),
        workspace.path(),
        ApiConfig::default(),
    );
    let answer = post_json(&state, "/api/traces", json!({"task": "Read"})).await;
    let id = answer.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &id, TraceStatus::Completed).await;
    struct ReadOnly(Arc<InMemoryTraceStore>);
    #[async_trait]
    impl TraceStore for ReadOnly {
        async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
            let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
            Err(StoreError::io(file(trace_id, ".lock"), denied))
        }
        async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
            let denied = std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem);
            Err(StoreError::io(PathBuf::from(BASE).join(trace_id), denied))
        }
        fn event_bus(&self) -> &EventBus {
            self.0.event_bus()
        }
        async fn get_trace(&self, id: &str) -> Result<Option<Trace>, StoreError> {
            self.0.get_trace(id).await
        }
        async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
            self.0.list_traces(filter).await
        }
        async fn get_goal_tree(&self, id: &str) -> Result<Option<GoalTree>, StoreError> {
            self.0.get_goal_tree(id).await
        }
        async fn get_trace_messages(&self, id: &str) -> Result<Vec<Message>, StoreError> {
            self.0.get_trace_messages(id).await
        }
        async fn get_messages_by_goal(
            &self,
            id: &str,
            goal: &str,
        ) -> Result<Vec<Message>, StoreError> {
            self.0.get_messages_by_goal(id, goal).await
        }
        async fn get_message(&self, id: &str) -> Result<Option<Message>, StoreError> {
            self.0.get_message(id).await
        }
        async fn get_events(&self, id: &str, since: u64) -> Result<Vec<Event>, StoreError> {
            self.0.get_events(id, since).await
        }
    }
    let store: Arc<dyn TraceStore> = Arc::new(ReadOnly(inner));
    let state = state_with(
        store,
        short_script(),
        workspace.path(),
        ApiConfig::default(),
    );
    for (route, body) in [
        ("/api/traces".to_owned(), json!({"task": "Write"})),
        (format!("/api/traces/{id}/fork"), json!({"goal": "1"})),
        (
            format!("/api/traces/{id}/messages"),
            json!({"content": "Again"}),
        ),
    ] {
        let answer = post_json(&state, &route, body).await;
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{route}: {}",
            answer.text
        );
        assert_eq!(answer.code(), "not_writable", "{route}");
        let message = answer.json["error"]["message"].as_str().unwrap();
        assert!(!message.contains(BASE), "{route}: {message}");
    }
    let read = get(&state, &format!("/api/traces/{id}")).await;
    assert_eq!(read.status, StatusCode::OK);
}
