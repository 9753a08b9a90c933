//! The one counting allocator of the tests, examples and benches that measure allocations.
//!
//! A binary that measures installs [`Counting`] as its `#[global_allocator]` with
//! [`count_allocations!`](crate::count_allocations) at its root; the counters stay at zero
//! in a binary that does not (a library cannot choose the allocator of every test).
//!
//! It wraps `System` and keeps, for the whole process and for each thread apart (so tests
//! running in parallel do not see each other's allocations):
//! - `allocations`: successful `alloc`, `alloc_zeroed` and `realloc` calls, one each;
//! - `bytes`: the sizes they asked for (a `realloc` counts its new size);
//! - `live`: bytes handed out and not yet given back;
//! - `peak`: the most `live` has been since the start or the last reset.
//!
//! A thread's `live` goes below zero when it frees what another thread allocated, so it is
//! signed; differences of two snapshots of one thread are exact either way.
//!
//! C code that calls `malloc` itself (libzstd, libdeflate) is not seen here: `System` is
//! the only way in. `bench/src/bin/allocs.rs` adds its own `malloc` interposer for that
//! share.
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Allocation counters: a snapshot, or what changed between two (see [`Counts::since`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Successful `alloc`, `alloc_zeroed` and `realloc` calls.
    pub allocations: u64,
    /// Bytes those calls asked for (the new size for `realloc`).
    pub bytes: u64,
    /// Bytes allocated and not freed.
    pub live: i64,
    /// The highest `live` since the start or the last peak reset.
    pub peak: i64,
}

impl Counts {
    const ZERO: Counts = Counts {
        allocations: 0,
        bytes: 0,
        live: 0,
        peak: 0,
    };

    /// What changed from `before` to `self` (two snapshots of the same counters, `before`
    /// taken right after a peak reset): allocations, bytes and live bytes made in between,
    /// and the peak as bytes above `before.live`.
    pub fn since(self, before: Counts) -> Counts {
        Counts {
            allocations: self.allocations - before.allocations,
            bytes: self.bytes - before.bytes,
            live: self.live - before.live,
            peak: (self.peak - before.live).max(0),
        }
    }
}

/// The global allocator: `System`, with every successful call counted.
pub struct Counting;

/// Installs [`Counting`](crate::alloc::Counting) as this binary's global allocator.
#[macro_export]
macro_rules! count_allocations {
    () => {
        #[global_allocator]
        static COUNTING_ALLOCATOR: $crate::alloc::Counting = $crate::alloc::Counting;
    };
}

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

thread_local! {
    // `const`-initialised and without a destructor: reading it never allocates, and it
    // stays usable until the thread's end.
    static THREAD: Cell<Counts> = const { Cell::new(Counts::ZERO) };
}

/// Records one event: an allocation of `asked` bytes (if any) and a change of `grown` live
/// bytes. Only atomics and a thread-local `Cell`; wrapping arithmetic, so it cannot panic.
fn record(asked: Option<usize>, grown: i64) {
    if let Some(asked) = asked {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(asked as u64, Ordering::Relaxed);
    }
    let live = LIVE.fetch_add(grown, Ordering::Relaxed).wrapping_add(grown);
    if grown > 0 {
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
    // `try_with`: during the thread's teardown the counters are gone; the call then goes
    // uncounted on this thread (still counted for the process).
    let _ = THREAD.try_with(|cell| {
        let mut c = cell.get();
        if let Some(asked) = asked {
            c.allocations = c.allocations.wrapping_add(1);
            c.bytes = c.bytes.wrapping_add(asked as u64);
        }
        c.live = c.live.wrapping_add(grown);
        c.peak = c.peak.max(c.live);
        cell.set(c);
    });
}

// SAFETY: every method passes its arguments unchanged to `System` and returns what `System`
// returned, so the memory contract is `System`'s. The counting beside it only touches
// atomics and a `const` thread-local `Cell` (no allocation, so no re-entry), uses wrapping
// arithmetic and `try_with` (no panic, so no unwinding out of the allocator), and runs
// only after a call succeeded (a null pointer is returned as is, uncounted).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract; passed on as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            record(Some(layout.size()), layout.size() as i64);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(Some(layout.size()), layout.size() as i64);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by this allocator, that is by `System`, for `layout`.
        unsafe { System.dealloc(ptr, layout) };
        record(None, -(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` is the caller's, under `realloc`'s contract.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(Some(new_size), new_size as i64 - layout.size() as i64);
        }
        new
    }
}

/// The whole process's counters since it started (the peak since the last [`reset_peak`]).
pub fn total() -> Counts {
    Counts {
        allocations: ALLOCATIONS.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
        live: LIVE.load(Ordering::Relaxed),
        peak: PEAK.load(Ordering::Relaxed),
    }
}

/// Restarts the process's peak from the bytes live now; returns the snapshot after it.
pub fn reset_peak() -> Counts {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    total()
}

/// This thread's counters (the peak since the last [`reset_thread_peak`]).
pub fn this_thread() -> Counts {
    THREAD.with(Cell::get)
}

/// Restarts this thread's peak from its bytes live now; returns the snapshot after it, the
/// `before` for [`Counts::since`].
pub fn reset_thread_peak() -> Counts {
    THREAD.with(|cell| {
        let mut c = cell.get();
        c.peak = c.live;
        cell.set(c);
        c
    })
}

/// Runs `f` and returns what it allocated on this thread, with its result.
pub fn on_this_thread<R>(f: impl FnOnce() -> R) -> (Counts, R) {
    let before = reset_thread_peak();
    let result = f();
    (this_thread().since(before), result)
}
