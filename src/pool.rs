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

#[cfg(feature = "libdeflate")]
use crate::codec::BlockCompressor;
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
    compressors: Shelf<Compress>,
    decompressors: Shelf<Decompress>,
    #[cfg(feature = "libdeflate")]
    block_compressors: Shelf<BlockCompressor>,
}

/// Idle states of one kind, kept apart by level (decompressors all sit at level 0) so a
/// state never serves another level, and their counters.
struct Shelf<T> {
    idle: Mutex<LevelVecs<T>>,
    stats: Counters,
}

struct LevelVecs<T> {
    by_level: [Vec<T>; LEVELS],
    count: usize,
}

impl<T> Default for Shelf<T> {
    fn default() -> Self {
        Shelf {
            idle: Mutex::new(LevelVecs {
                by_level: Default::default(),
                count: 0,
            }),
            stats: Counters::default(),
        }
    }
}

impl<T> Shelf<T> {
    /// An idle state at `level`, or a new one from `make`.
    fn take(&self, level: u32, make: impl FnOnce() -> T) -> T {
        let idle = {
            let mut idle = lock(&self.idle);
            let state = idle.by_level[level as usize].pop();
            if state.is_some() {
                idle.count -= 1;
                self.stats.idle.store(idle.count, Ordering::Relaxed);
            }
            state
        };
        match idle {
            Some(state) => {
                Counters::bump(&self.stats.reused);
                state
            }
            None => {
                Counters::bump(&self.stats.created);
                make()
            }
        }
    }

    /// Shelves a clean state, or drops it past `max_idle`.
    fn put(&self, state: T, level: u8, max_idle: usize) {
        let mut idle = lock(&self.idle);
        if idle.count < max_idle {
            idle.by_level[level as usize].push(state);
            idle.count += 1;
            self.stats.idle.store(idle.count, Ordering::Relaxed);
            drop(idle);
            Counters::bump(&self.stats.returned);
        } else {
            drop(idle);
            Counters::bump(&self.stats.discarded);
        }
    }
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
    /// Counters for libdeflate whole-buffer compressors, used for bodies known in full
    /// (all zero without the `libdeflate` feature).
    pub block_compressors: KindStats,
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
                compressors: Shelf::default(),
                decompressors: Shelf::default(),
                #[cfg(feature = "libdeflate")]
                block_compressors: Shelf::default(),
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
            compressors: self.inner.compressors.stats.snapshot(),
            decompressors: self.inner.decompressors.stats.snapshot(),
            #[cfg(feature = "libdeflate")]
            block_compressors: self.inner.block_compressors.stats.snapshot(),
            #[cfg(not(feature = "libdeflate"))]
            block_compressors: KindStats::default(),
        }
    }

    /// Checks out a raw deflate compressor at `level`, reusing an idle one when there is one.
    pub fn compressor(&self, level: CompressionLevel) -> Pooled<Compress> {
        let level = level.as_u32();
        let state = self
            .inner
            .compressors
            .take(level, || Compress::new(Compression::new(level), false));
        self.guard(state, level)
    }

    /// Checks out a raw deflate decompressor, reusing an idle one when there is one.
    pub fn decompressor(&self) -> Pooled<Decompress> {
        let state = self.inner.decompressors.take(0, || Decompress::new(false));
        self.guard(state, 0)
    }

    /// Checks out a libdeflate whole-buffer compressor at `level` (~670 KB of state at level
    /// 6), reusing an idle one when there is one.
    #[cfg(feature = "libdeflate")]
    pub(crate) fn block_compressor(&self, level: CompressionLevel) -> Pooled<BlockCompressor> {
        let level = level.as_u32();
        let state = self
            .inner
            .block_compressors
            .take(level, || BlockCompressor::new(level));
        self.guard(state, level)
    }

    fn guard<T: PooledState>(&self, state: T, level: u32) -> Pooled<T> {
        Pooled {
            state: Some(state),
            pool: self.clone(),
            tag: level as u8,
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

/// A state that can live in the pool: flate2's [`Compress`] or [`Decompress`], or (with the
/// `libdeflate` feature) a libdeflate compressor.
pub trait PooledState: sealed::Sealed + Send + 'static {}

impl PooledState for Compress {}
impl PooledState for Decompress {}
#[cfg(feature = "libdeflate")]
impl PooledState for BlockCompressor {}

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
        // Reset outside the lock: it is the expensive part (~1 µs).
        self.reset();
        pool.inner.compressors.put(self, level, pool.inner.max_idle);
    }

    fn discarded(pool: &CodecPool) -> &AtomicU64 {
        &pool.inner.compressors.stats.discarded
    }
}

impl sealed::Sealed for Decompress {
    fn give_back(mut self, pool: &CodecPool, level: u8) {
        // A raw inflater resets in nanoseconds; a gzip-mode one would rebuild its state.
        self.reset(false);
        pool.inner
            .decompressors
            .put(self, level, pool.inner.max_idle);
    }

    fn discarded(pool: &CodecPool) -> &AtomicU64 {
        &pool.inner.decompressors.stats.discarded
    }
}

#[cfg(feature = "libdeflate")]
impl sealed::Sealed for BlockCompressor {
    fn give_back(self, pool: &CodecPool, level: u8) {
        // libdeflate keeps no state between calls, and the scratch buffer is overwritten by
        // each use: nothing to reset.
        pool.inner
            .block_compressors
            .put(self, level, pool.inner.max_idle);
    }

    fn discarded(pool: &CodecPool) -> &AtomicU64 {
        &pool.inner.block_compressors.stats.discarded
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
