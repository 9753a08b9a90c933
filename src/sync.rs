//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard};
#[cfg(feature = "dcz")]
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, taking the data of a lock poisoned by a panic in another thread.
///
/// Recovering is sound because no critical section in this crate runs user code, and each
/// leaves the data consistent wherever it could panic (a `Vec` or `VecDeque` push or pop, a
/// map insert or remove, a counter update is never left half done), so a poisoned lock still
/// holds consistent data. A section added under one of these locks must keep that true.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(feature = "dcz")]
/// Reads `lock`, past a panic in another thread (as [`lock`] does, for the same reason).
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(feature = "dcz")]
/// Writes `lock`, past a panic in another thread (as [`lock`] does, for the same reason).
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
