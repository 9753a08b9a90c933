//! Locking that survives a panic elsewhere.

use std::sync::{LockResult, Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the data of a lock poisoned by a panic in another thread.
///
/// Recovering is sound because no critical section in this crate runs user code, and each
/// leaves the data consistent wherever it could panic (a `Vec` or `VecDeque` push or pop, a
/// map insert or remove, a counter update is never left half done), so a poisoned lock still
/// holds consistent data. A section added under one of these locks must keep that true.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    recover(mutex.lock())
}

/// The guard of a lock call (`RwLock::read`, `RwLock::write`), past a panic in another
/// thread (as [`lock`] does, for the same reason).
pub(crate) fn recover<G>(result: LockResult<G>) -> G {
    result.unwrap_or_else(PoisonError::into_inner)
}
