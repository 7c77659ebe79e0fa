//! The `TraceStore` conformance suite against `PgTraceStore`.

use std::sync::{Arc, Mutex};

use agent_store_pg::PgTraceStore;
use agent_test_support::conformance;
use agent_test_support::postgres::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn passes_the_conformance_suite() {
    let cluster = Cluster::start();
    // The suite wants an empty store per check: one database each, connected beforehand.
    let mut stores = Vec::new();
    for check in 0..9 {
        let url = cluster.create_database(&format!("conformance_{check}"));
        stores.push(Arc::new(PgTraceStore::connect(&url).await.unwrap()));
    }
    stores.reverse();
    let stores = Mutex::new(stores);
    conformance::run_all(|| {
        (
            stores.lock().unwrap().pop().expect("one store per check"),
            (),
        )
    })
    .await;
}
