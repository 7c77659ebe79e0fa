//! The `TraceStore` conformance suite against `FileSystemTraceStore`, in both durability modes.

use std::sync::Arc;

use agent_store_fs::{Durability, FileSystemTraceStore};
use agent_test_support::conformance;

fn store(durability: Durability) -> (Arc<FileSystemTraceStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSystemTraceStore::open(dir.path())
        .unwrap()
        .with_durability(durability);
    (Arc::new(store), dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn buffered_store_passes_the_conformance_suite() {
    conformance::run_all(|| store(Durability::Buffered)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fsync_store_passes_the_conformance_suite() {
    conformance::run_all(|| store(Durability::Fsync)).await;
}

/// A second store instance over the same folder (as another process would) sees everything the
/// first wrote, once the first is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_conformance_state_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        Arc::new(
            FileSystemTraceStore::open(dir.path())
                .unwrap()
                .with_durability(Durability::Buffered),
        )
    };
    let first = open();
    conformance::concurrent_writers_lose_nothing(first.clone()).await;
    let traces = {
        use agent_execution::{TraceFilter, TraceStore};
        first.list_traces(&TraceFilter::default()).await.unwrap()
    };
    drop(first);
    let second = open();
    for trace in traces {
        conformance::assert_consistent(&*second, &trace.trace_id).await;
    }
}
