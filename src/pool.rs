//! A shared, bounded pool of deflate compressor and decompressor states.
//!
//! A zlib-rs compressor is ~380 KB of state; allocating and freeing one per response costs
//! time, memory churn and (with glibc, whose large allocations are mmapped) page faults. The
//! pool keeps a bounded number of idle states and hands them out behind a guard that resets
//! the state and puts it back when dropped.
//!
//! The pool holds *raw* deflate states. gzip and zlib framing are written by
//! [`Encoder`](crate::codec::Encoder) and parsed by [`Decoder`](crate::codec::Decoder), so one
//! state serves both formats and resets in nanoseconds (a gzip-mode zlib-rs inflater rebuilds
//! 48 KB of state on reset; a raw one does not).
//!
//! # Design
//!
//! Each kind of state sits in a `Mutex<Vec<_>>`. A checkout or return holds the lock for a
//! `Vec::pop`/`push`, a few nanoseconds, against ~1 µs for resetting a compressor and
//! 5-100 µs of compression work per response; the `contention` group of `benches/response.rs`
//! measures two threads sharing one pool. The lock is never held across user code, and a
//! poisoned lock is recovered (a `Vec` push or pop cannot be left half done).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use flate2::{Compress, Compression, Decompress};

use crate::codec::CompressionLevel;

/// Number of distinct deflate levels (0 through 9).
const LEVELS: usize = 10;

/// A shared, bounded pool of raw deflate states.
///
/// Cloning is cheap: clones share one pool. Layers use [`CodecPool::global`] unless given
/// another pool.
///
/// # Example
///
/// ```
/// use tower_gzip::{CodecPool, CompressionLevel};
///
/// let pool = CodecPool::builder().max_idle(4).build();
/// {
///     let _compressor = pool.compressor(CompressionLevel::Default);
/// } // dropped: reset and returned to the pool
/// let stats = pool.stats();
/// assert_eq!(stats.compressors.created, 1);
/// assert_eq!(stats.compressors.idle, 1);
/// ```
#[derive(Clone)]
pub struct CodecPool {
    inner: Arc<Inner>,
}

struct Inner {
    max_idle: usize,
    compressors: Mutex<CompressorShelf>,
    decompressors: Mutex<Vec<Decompress>>,
    compressor_stats: Counters,
    decompressor_stats: Counters,
}

/// Idle compressors, kept apart by level so a state never serves another level.
#[derive(Default)]
struct CompressorShelf {
    by_level: [Vec<Compress>; LEVELS],
    idle: usize,
}

#[derive(Default)]
struct Counters {
    created: AtomicU64,
    reused: AtomicU64,
    returned: AtomicU64,
    discarded: AtomicU64,
    idle: AtomicUsize,
}

impl Counters {
    fn snapshot(&self) -> KindStats {
        KindStats {
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            returned: self.returned.load(Ordering::Relaxed),
            discarded: self.discarded.load(Ordering::Relaxed),
            idle: self.idle.load(Ordering::Relaxed),
        }
    }

    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A snapshot of the pool's counters, from [`CodecPool::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Counters for compressor states.
    pub compressors: KindStats,
    /// Counters for decompressor states.
    pub decompressors: KindStats,
}

/// Counters for one kind of pooled state.
///
/// Every checkout is either `created` or `reused`; every guard ends either `returned` or
/// `discarded`. So `created + reused - returned - discarded` states are checked out now
/// (see [`KindStats::in_use`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindStats {
    /// States allocated because none was idle.
    pub created: u64,
    /// Checkouts served by an idle state.
    pub reused: u64,
    /// States reset and put back on the shelf.
    pub returned: u64,
    /// States dropped instead of returned: the shelf was full, or the guard was dropped
    /// while panicking, or [`Pooled::discard`] was called.
    pub discarded: u64,
    /// States idle on the shelf now.
    pub idle: usize,
}

impl KindStats {
    /// States checked out and not yet returned or discarded.
    pub fn in_use(&self) -> u64 {
        (self.created + self.reused).saturating_sub(self.returned + self.discarded)
    }
}

/// Builder for a [`CodecPool`].
#[derive(Clone, Debug)]
pub struct CodecPoolBuilder {
    max_idle: usize,
}

impl CodecPoolBuilder {
    /// The most idle states kept per kind (compressors of all levels together, and
    /// decompressors). A state returned past the cap is dropped. Zero disables pooling.
    pub fn max_idle(mut self, max_idle: usize) -> Self {
        self.max_idle = max_idle;
        self
    }

    /// Builds the pool.
    pub fn build(self) -> CodecPool {
        CodecPool {
            inner: Arc::new(Inner {
                max_idle: self.max_idle,
                compressors: Mutex::default(),
                decompressors: Mutex::default(),
                compressor_stats: Counters::default(),
                decompressor_stats: Counters::default(),
            }),
        }
    }
}

impl Default for CodecPoolBuilder {
    fn default() -> Self {
        CodecPoolBuilder {
            max_idle: CodecPool::default_max_idle(),
        }
    }
}

impl CodecPool {
    /// A new pool with the default cap ([`CodecPool::default_max_idle`]).
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder, to set the cap.
    pub fn builder() -> CodecPoolBuilder {
        CodecPoolBuilder::default()
    }

    /// The process-wide pool that layers use unless given another.
    pub fn global() -> &'static CodecPool {
        static GLOBAL: OnceLock<CodecPool> = OnceLock::new();
        GLOBAL.get_or_init(CodecPool::new)
    }

    /// The default cap: four idle states per CPU, at least 8 and at most 256.
    ///
    /// A tokio runtime has one worker per CPU and each worker typically has a few responses
    /// mid-stream, so four per CPU covers the steady state without refilling; at ~380 KB a
    /// compressor, that is ~3 MB of idle compressors on a 2-core machine.
    pub fn default_max_idle() -> usize {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cpus * 4).clamp(8, 256)
    }

    /// The cap on idle states per kind.
    pub fn max_idle(&self) -> usize {
        self.inner.max_idle
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            compressors: self.inner.compressor_stats.snapshot(),
            decompressors: self.inner.decompressor_stats.snapshot(),
        }
    }

    /// Checks out a raw deflate compressor at `level`, reusing an idle one when there is one.
    pub fn compressor(&self, level: CompressionLevel) -> Pooled<Compress> {
        let level = level.as_u32();
        let stats = &self.inner.compressor_stats;
        let idle = {
            let mut shelf = lock(&self.inner.compressors);
            let state = shelf.by_level[level as usize].pop();
            if state.is_some() {
                shelf.idle -= 1;
                stats.idle.store(shelf.idle, Ordering::Relaxed);
            }
            state
        };
        let state = match idle {
            Some(state) => {
                Counters::bump(&stats.reused);
                state
            }
            None => {
                Counters::bump(&stats.created);
                Compress::new(Compression::new(level), false)
            }
        };
        Pooled {
            state: Some(state),
            pool: self.clone(),
            tag: level as u8,
        }
    }

    /// Checks out a raw deflate decompressor, reusing an idle one when there is one.
    pub fn decompressor(&self) -> Pooled<Decompress> {
        let stats = &self.inner.decompressor_stats;
        let idle = {
            let mut shelf = lock(&self.inner.decompressors);
            let state = shelf.pop();
            stats.idle.store(shelf.len(), Ordering::Relaxed);
            state
        };
        let state = match idle {
            Some(state) => {
                Counters::bump(&stats.reused);
                state
            }
            None => {
                Counters::bump(&stats.created);
                Decompress::new(false)
            }
        };
        Pooled {
            state: Some(state),
            pool: self.clone(),
            tag: 0,
        }
    }
}

impl Default for CodecPool {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for CodecPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecPool")
            .field("max_idle", &self.inner.max_idle)
            .field("stats", &self.stats())
            .finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere cannot leave a Vec push/pop half done, so a poisoned lock is safe.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A state that can live in the pool: flate2's [`Compress`] or [`Decompress`].
pub trait PooledState: sealed::Sealed + Send + 'static {}

impl PooledState for Compress {}
impl PooledState for Decompress {}

mod sealed {
    use std::sync::atomic::AtomicU64;

    use super::CodecPool;

    pub trait Sealed: Sized {
        /// Resets the state and shelves it, or drops it if the shelf is full.
        fn give_back(self, pool: &CodecPool, tag: u8);
        /// The `discarded` counter of this kind.
        fn discarded(pool: &CodecPool) -> &AtomicU64;
    }
}

impl sealed::Sealed for Compress {
    fn give_back(mut self, pool: &CodecPool, level: u8) {
        let inner = &pool.inner;
        let stats = &inner.compressor_stats;
        // Reset outside the lock: it is the expensive part (~1 µs).
        self.reset();
        let mut shelf = lock(&inner.compressors);
        if shelf.idle < inner.max_idle {
            shelf.by_level[level as usize].push(self);
            shelf.idle += 1;
            stats.idle.store(shelf.idle, Ordering::Relaxed);
            drop(shelf);
            Counters::bump(&stats.returned);
        } else {
            drop(shelf);
            Counters::bump(&stats.discarded);
        }
    }

    fn discarded(pool: &CodecPool) -> &AtomicU64 {
        &pool.inner.compressor_stats.discarded
    }
}

impl sealed::Sealed for Decompress {
    fn give_back(mut self, pool: &CodecPool, _tag: u8) {
        let inner = &pool.inner;
        let stats = &inner.decompressor_stats;
        // A raw inflater resets in nanoseconds; a gzip-mode one would rebuild its state.
        self.reset(false);
        let mut shelf = lock(&inner.decompressors);
        if shelf.len() < inner.max_idle {
            shelf.push(self);
            stats.idle.store(shelf.len(), Ordering::Relaxed);
            drop(shelf);
            Counters::bump(&stats.returned);
        } else {
            drop(shelf);
            Counters::bump(&stats.discarded);
        }
    }

    fn discarded(pool: &CodecPool) -> &AtomicU64 {
        &pool.inner.decompressor_stats.discarded
    }
}

/// A checked-out state. Dereferences to the flate2 state.
///
/// On drop the state is reset and returned to its pool, or dropped if the shelf is full or
/// the thread is panicking (a state interrupted by a panic is never reused). The guard owns
/// its state, so it can return it at most once.
pub struct Pooled<T: PooledState> {
    state: Option<T>,
    pool: CodecPool,
    tag: u8,
}

impl<T: PooledState> Pooled<T> {
    /// Drops the state instead of returning it to the pool.
    pub fn discard(mut self) {
        if self.state.take().is_some() {
            Counters::bump(T::discarded(&self.pool));
        }
    }

    /// The pool this state returns to.
    pub fn pool(&self) -> &CodecPool {
        &self.pool
    }
}

impl<T: PooledState> Deref for Pooled<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.state.as_ref().expect("state is present until drop")
    }
}

impl<T: PooledState> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.state.as_mut().expect("state is present until drop")
    }
}

impl<T: PooledState> Drop for Pooled<T> {
    fn drop(&mut self) {
        let Some(state) = self.state.take() else {
            return;
        };
        if std::thread::panicking() {
            Counters::bump(T::discarded(&self.pool));
        } else {
            state.give_back(&self.pool, self.tag);
        }
    }
}

impl<T: PooledState> fmt::Debug for Pooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled").field("tag", &self.tag).finish()
    }
}
