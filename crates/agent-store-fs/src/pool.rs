//! How the store's file work leaves the runtime's threads: on the blocking pool, handing a
//! trace's lock there and back, or in place on a multi-threaded runtime's worker.

use agent_execution::StoreError;
use tokio::sync::OwnedMutexGuard;

use crate::trace_files::Slot;

/// Runs blocking work on a locked slot on the blocking thread pool, handing the lock back.
pub(crate) async fn blocking<R: Send + 'static>(
    mut guard: OwnedMutexGuard<Slot>,
    work: impl FnOnce(&mut Slot) -> R + Send + 'static,
) -> Result<(OwnedMutexGuard<Slot>, R), StoreError> {
    tokio::task::spawn_blocking(move || {
        let result = work(&mut guard);
        (guard, result)
    })
    .await
    .map_err(|e| StoreError::Internal(format!("a store task failed: {e}")))
}

/// Whether the caller runs on a multi-threaded runtime's worker, where
/// [`tokio::task::block_in_place`] may block.
pub(crate) fn multi_threaded() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}
