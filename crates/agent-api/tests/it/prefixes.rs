//! Trace ids by unique prefix on every route that takes one: the routes answer for the full
//! id, an ambiguous prefix is 400 `ambiguous_trace_id` naming the candidates, a prefix that
//! names nothing is 404.

use std::sync::Arc;

use crate::common::{get, post_json, read_only};
use agent_execution::{InMemoryTraceStore, NewTrace, TraceStore};
use axum::http::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_unique_prefix_stands_for_the_id_and_an_ambiguous_one_names_the_candidates() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    for id in ["abcd1111", "abcd2222", "ffff0000"] {
        store
            .create_trace(NewTrace::agent(format!("Task {id}")).with_id(id))
            .await
            .unwrap();
    }
    let state = read_only(store.clone());

    // Unique: every route answers for the full id.
    let answer = get(&state, "/api/traces/abcd1").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.json["trace"]["trace_id"], "abcd1111");
    for route in ["messages", "events"] {
        let answer = get(&state, &format!("/api/traces/ff/{route}")).await;
        assert_eq!(answer.status, StatusCode::OK, "{route}: {}", answer.text);
    }
    // (A write through a prefix, `POST .../rewind`, is in `rewind.rs`.)
    // The exact id wins over a longer id that starts with it.
    store
        .create_trace(NewTrace::agent("Longer").with_id("abcd11112"))
        .await
        .unwrap();
    let answer = get(&state, "/api/traces/abcd1111").await;
    assert_eq!(answer.json["trace"]["trace_id"], "abcd1111");

    // Ambiguous: 400 with the candidates.
    let answer = get(&state, "/api/traces/abcd").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
    assert_eq!(answer.code(), "ambiguous_trace_id");
    for candidate in ["abcd1111", "abcd11112", "abcd2222"] {
        assert!(answer.text.contains(candidate), "{}", answer.text);
    }
    let answer = post_json(&state, "/api/traces/abcd/fork", json!({"goal": "1"})).await;
    assert_eq!(answer.code(), "ambiguous_trace_id", "{}", answer.text);

    // Nothing: 404.
    let answer = get(&state, "/api/traces/0123").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text);
    // A sub-trace's id is named by its main part's prefix, `@`, and the rest's prefix; a plain
    // prefix names main traces only.
    store
        .create_trace(NewTrace::agent("Branch").with_id("ffff0000@explore-20260101000000-001"))
        .await
        .unwrap();
    let answer = get(&state, "/api/traces/ffff@explore").await;
    assert_eq!(
        answer.json["trace"]["trace_id"], "ffff0000@explore-20260101000000-001",
        "{}",
        answer.text
    );
    let answer = get(&state, "/api/traces/ffff").await;
    assert_eq!(answer.json["trace"]["trace_id"], "ffff0000");
}
