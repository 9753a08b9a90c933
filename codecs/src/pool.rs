//! A shared, bounded pool of codec states. It names no codec: each codec declares the
//! kinds of state it pools (their slots and names are listed in `codec::kinds`), and the
//! pool keeps a shelf per kind, made at the kind's first use.
//!
//! A deflate compressor is hundreds of kilobytes of state and a zstd context more (sizes in
//! BENCHMARKS.md, "The codec alone and the pool"); building one per response costs time,
//! memory churn and (with glibc, whose large allocations are mmapped) page faults. The pool keeps a bounded number of idle states per kind and hands
//! them out behind a guard that resets the state and puts it back when dropped.
//!
//! # Design
//!
//! Each kind of state sits on a shelf: one `Mutex` over a `Vec` per level and the states
//! parked by paused streams. A checkout or return holds the lock for a `Vec::pop`/`push`,
//! far less than resetting a compressor or the compression work of a response; the
//! `contention` group of `bench/benches/response/main.rs` measures two threads sharing one pool. The lock is never held across user code, and a poisoned lock is
//! recovered (`crate::sync::lock`: a `Vec` push or pop cannot be left half done).

use std::any::Any;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

mod lease;
mod level;
mod shelf;
pub(crate) mod turns;
pub(crate) mod yields;

pub use crate::kinds::{PoolKind, PoolStats};
pub(crate) use lease::Hold;
pub(crate) use level::Level;
use shelf::{Counters, Found, Shelf};
pub(crate) use turns::Turns;
pub use yields::YieldSlot;
use yields::YieldSlots;

/// A shared, bounded pool of codec states.
///
/// Cloning is cheap: clones share one pool. Layers use [`CodecPool::global`] unless given
/// another pool.
///
/// # Example
///
/// ```
/// use bytes::BytesMut;
/// use tower_gzip_codecs::ContentCoding;
/// use tower_gzip_codecs::Encoder;
/// use tower_gzip_codecs::pool::PoolKind;
/// use tower_gzip_codecs::{CodecPool, CompressionLevel};
///
/// let pool = CodecPool::builder().max_idle(4).build();
/// {
///     let mut encoder = Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, &pool).unwrap();
///     encoder.encode(b"hello", &mut BytesMut::new()).unwrap();
/// } // dropped: its deflate state is reset and returned to the pool
/// let stats = pool.stats();
/// assert_eq!(stats.kind(PoolKind::DeflateCompressors).created, 1);
/// assert_eq!(stats.kind(PoolKind::DeflateCompressors).idle, 1);
/// ```
#[derive(Clone)]
pub struct CodecPool {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    max_idle: usize,
    hold_limit: usize,
    pub(crate) park_bound: std::time::Duration,
    /// Turns for the streams of a coding whose states are too large to hold many of at once.
    turns: Turns,
    /// Slots for streams with a large body in hand that yield between slices.
    yields: YieldSlots,
    shelves: [OnceLock<Box<dyn AnyShelf>>; Kind::SLOTS],
}

/// A kind of pooled state: its slot in every pool (named in `codec::kinds`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kind {
    slot: usize,
}

impl Kind {
    /// How many kinds a pool has room for.
    pub(crate) const SLOTS: usize = 16;

    /// The kind in `slot` (below [`Kind::SLOTS`], one per kind).
    pub(crate) const fn new(slot: usize) -> Self {
        assert!(slot < Kind::SLOTS);
        Kind { slot }
    }
}

/// Kinds are the same when they share a slot: two would share one shelf.
impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.slot == other.slot
    }
}

/// A shelf whatever its state type: what the pool needs to report on it.
trait AnyShelf: Any + Send + Sync {
    fn snapshot(&self) -> KindStats;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Send + 'static> AnyShelf for Shelf<T> {
    fn snapshot(&self) -> KindStats {
        self.stats.snapshot()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Inner {
    /// The shelf of `T`'s kind, made at its first use.
    pub(super) fn shelf<T: PooledState>(&self) -> &Shelf<T> {
        self.shelves[T::KIND.slot]
            .get_or_init(|| Box::new(Shelf::<T>::default()))
            .as_any()
            .downcast_ref()
            .expect("one state type per kind")
    }
}

/// Counters for one kind of pooled state.
///
/// Every checkout is either `created` or `reused`; every guard ends either `returned` or
/// `discarded`. So `created + reused - returned - discarded` states are checked out now
/// (see [`KindStats::in_use`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KindStats {
    /// States allocated because none was idle.
    pub created: u64,
    /// Checkouts served by an idle state.
    pub reused: u64,
    /// States reset and put back on the shelf.
    pub returned: u64,
    /// States dropped instead of returned: the shelf was full, the guard was dropped while
    /// panicking, or the state saw an error it cannot be reset from.
    pub discarded: u64,
    /// Of `returned`: states parked, unreset, by a stream whose producer paused (SSE), so
    /// that the stream can go on with them at its next event; a draw that finds no clean
    /// state takes the oldest parked one instead (and resets it).
    pub parked: u64,
    /// Of `reused`: parked states taken back by the stream that parked them. A paused
    /// stream that resumes and finds its state gone draws another (`reused - reclaimed`
    /// or `created`), primed with its history where the coding allows (`primed_bytes`).
    pub reclaimed: u64,
    /// Input history replayed into states drawn by resuming gzip and deflate streams
    /// (a deflate dictionary of up to 32 KiB each time): the cost of a pause whose state
    /// was given away.
    pub primed_bytes: u64,
    /// States idle on the shelf now, parked ones included.
    pub idle: usize,
    /// Of `idle`: states parked by paused streams now, waiting for them to resume.
    pub idle_parked: usize,
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
    hold_limit: usize,
    park_bound: std::time::Duration,
    br_stream_limit: usize,
    yield_limit: usize,
}

impl CodecPoolBuilder {
    /// The most idle states kept per kind (compressors of all levels together, and
    /// decompressors), states parked by paused streams included. A state returned past the
    /// cap is dropped. Zero disables pooling (and parking: a paused stream then gives its
    /// state back, and resumes with a fresh one).
    ///
    /// Default: four per CPU, at least 8 and at most 256. A tokio runtime has one worker per
    /// CPU and each worker typically has a few responses mid-stream, so four per CPU covers
    /// the steady state without refilling.
    ///
    /// A draw takes a state its own thread gave back first (its tables are in that core's
    /// cache), so a pool with room keeps about one idle state per thread that uses it.
    ///
    /// Up to this many paused streams (SSE) keep their gzip, deflate or zstd state across
    /// pauses, parked on the shelf, while the pool is not crowded (see
    /// [`hold_limit`](Self::hold_limit)); past that, a stream that draws takes the oldest parked
    /// state, and its owner draws another at its next event (see docs/design.md, "Pauses").
    pub fn max_idle(mut self, max_idle: usize) -> Self {
        self.max_idle = max_idle;
        self
    }

    /// How many states of one kind streaming responses may keep between their slices of
    /// work before they start giving them back. Default: two per CPU, at least 4 and at
    /// most 64; a runtime compresses on at most one stream per worker at any instant, so
    /// this keeps every worker's current stream and one more on its state, and the memory
    /// of many concurrent streams near that of a few.
    ///
    /// A streaming body compresses at most 64 KiB per poll and then yields, so hundreds of
    /// large responses progress together instead of one at a time. While more than
    /// `hold_limit` states of a kind are checked out (the pool is crowded), a gzip or
    /// deflate stream ends each slice with a sync flush and gives its state back clean; the
    /// next slice draws one and primes it with the last 16 KiB of input. A crowded pool
    /// parks nothing: with more streams than idle places a parked state would go to another
    /// stream before its owner is back, and the evictions and rebuilds that parking causes
    /// there fragment the heap. Below the limit streams keep their state: no flush, no
    /// priming, the full speed of one uninterrupted stream. Zero gives states back at every
    /// slice end. Whatever the limit, a stream whose producer has nothing ready parks its
    /// state or gives it back (see [`max_idle`](Self::max_idle) and
    /// [`park_bound`](Self::park_bound)).
    ///
    /// zstd streams follow the same limit: past it, a stream ends its frame at each slice
    /// end and gives its context back; the next slice starts a new frame (RFC 8878 section
    /// 3.1), at a few percent of ratio while crowded. br
    /// streams do not: they flush at each slice end and keep their encoder between slices
    /// (at a pause they keep it or give it back, see [`park_bound`](Self::park_bound)); how
    /// many hold one at once is [`br_stream_limit`](Self::br_stream_limit).
    pub fn hold_limit(mut self, hold_limit: usize) -> Self {
        self.hold_limit = hold_limit;
        self
    }

    /// How many streaming br responses may hold a brotli encoder at once (default: 8 per CPU,
    /// at least 16 and at most 256; never below 1). Further br streams
    /// wait, first come first served, for one of them to end or go idle before they draw
    /// an encoder, so many concurrent br downloads hold a bounded amount of memory (each
    /// holder keeps its window and tables, megabytes for a large body: BENCHMARKS.md, "Many
    /// streams at once", has the memory a stream holds and what the default bounds). Bodies
    /// known in full are compressed in one shot and do not wait.
    pub fn br_stream_limit(mut self, limit: usize) -> Self {
        self.br_stream_limit = limit.max(1);
        self
    }

    /// How many streaming responses with more than a slice (64 KiB) of input in hand may
    /// yield between slices at once (default: four per CPU, at least 8 and at most 256).
    ///
    /// A stream yields to the runtime after each slice, so that many streams progress
    /// together and all send their first bytes early. A body handed over at once (a
    /// handler's 1 MB `Vec`) is held until its last slice, so with every such stream
    /// yielding, every handler's body is alive at once. Past the limit a stream compresses
    /// the body in hand through, without
    /// yielding (its consumer still applies backpressure), and frees it. Streams whose
    /// producer hands over a slice or less at a time always yield. Zero: no such stream
    /// yields. The default's effect on memory and first bytes against tower-http is in
    /// BENCHMARKS.md, "Many streams at once".
    pub fn yield_limit(mut self, limit: usize) -> Self {
        self.yield_limit = limit;
        self
    }

    /// The longest pause a stream keeps its state over (default 1 s): parked on the shelf
    /// for it to take back (a br stream keeps its encoder instead of parking it).
    /// After a longer pause (and at a stream's first, whose length is not known) the state
    /// goes back to the pool, and the stream's next event draws one primed with its
    /// history. Zero gives the state back at every pause.
    ///
    /// Keeping saves an event the draw and the priming; giving back lets many SSE streams
    /// with an event every few seconds hold no codec state between events (see
    /// docs/design.md, "Pauses", and BENCHMARKS.md, "Idle and event streams").
    pub fn park_bound(mut self, bound: std::time::Duration) -> Self {
        self.park_bound = bound;
        self
    }

    /// Builds the pool.
    pub fn build(self) -> CodecPool {
        CodecPool {
            inner: Arc::new(Inner {
                max_idle: self.max_idle,
                hold_limit: self.hold_limit,
                park_bound: self.park_bound,
                turns: Turns::new(self.br_stream_limit),
                yields: YieldSlots::new(self.yield_limit),
                shelves: Default::default(),
            }),
        }
    }
}

/// `per` per CPU, at least `min` and at most `max`.
fn per_cpu(per: usize, min: usize, max: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus * per).clamp(min, max)
}

impl Default for CodecPoolBuilder {
    fn default() -> Self {
        CodecPoolBuilder {
            max_idle: CodecPool::default_max_idle(),
            hold_limit: CodecPool::default_hold_limit(),
            park_bound: crate::pool::lease::PARK_BOUND,
            br_stream_limit: CodecPool::default_br_stream_limit(),
            yield_limit: CodecPool::default_yield_limit(),
        }
    }
}

impl CodecPool {
    /// A new pool with the defaults (see [`CodecPoolBuilder`]).
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

    /// The default cap on idle states per kind (see [`CodecPoolBuilder::max_idle`]).
    pub(crate) fn default_max_idle() -> usize {
        per_cpu(4, 8, 256)
    }

    /// The default [hold limit](CodecPoolBuilder::hold_limit).
    pub(crate) fn default_hold_limit() -> usize {
        per_cpu(2, 4, 64)
    }

    /// The default [br stream limit](CodecPoolBuilder::br_stream_limit).
    pub(crate) fn default_br_stream_limit() -> usize {
        per_cpu(8, 16, 256)
    }

    /// The default [yield limit](CodecPoolBuilder::yield_limit).
    pub(crate) fn default_yield_limit() -> usize {
        per_cpu(4, 8, 256)
    }

    /// The slots streams with a large body in hand take to yield between slices.
    /// Streams that hold a yield slot now (see
    /// [`CodecPoolBuilder::yield_limit`]).
    pub fn yielding(&self) -> usize {
        self.yield_slots().held()
    }

    pub(crate) fn yield_slots(&self) -> &YieldSlots {
        &self.inner.yields
    }

    /// Whether every br stream turn is taken ([`CodecPoolBuilder::br_stream_limit`]): a new
    /// br stream would wait for one.
    pub fn br_streams_full(&self) -> bool {
        let turns = self.turns();
        turns.held() >= turns.limit()
    }

    /// The turns streams take before they draw a large state (br's).
    pub(crate) fn turns(&self) -> &Turns {
        &self.inner.turns
    }

    /// The cap on idle states per kind.
    #[cfg(test)]
    pub(crate) fn max_idle(&self) -> usize {
        self.inner.max_idle
    }

    /// Whether more states of kind `T` are checked out than the hold limit allows streams
    /// to keep between slices.
    pub(crate) fn crowded<T: PooledState>(&self) -> bool {
        self.inner.shelf::<T>().stats.out.load(Ordering::Relaxed) > self.inner.hold_limit
    }

    /// Counts `bytes` of history replayed into a state of kind `T` (see
    /// [`KindStats::primed_bytes`]).
    pub(crate) fn note_primed<T: PooledState>(&self, bytes: usize) {
        let primed = &self.inner.shelf::<T>().stats.primed;
        primed.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// The counters of `kind` (zero for a kind not used yet).
    pub(crate) fn kind_stats(&self, kind: Kind) -> KindStats {
        self.inner.shelves[kind.slot]
            .get()
            .map_or_else(KindStats::default, |shelf| shelf.snapshot())
    }

    /// Streams holding a turn now, and streams waiting for one.
    pub(crate) fn turn_counts(&self) -> (usize, usize) {
        (self.inner.turns.held(), self.inner.turns.waiting())
    }

    /// Checks out a state of kind `T` at `level`, reusing an idle one when there is one, else
    /// building one with `make`.
    pub(crate) fn take<T: PooledState>(&self, level: Level, make: impl FnOnce() -> T) -> Pooled<T> {
        let state = match self.inner.shelf::<T>().take(level, self.inner.max_idle) {
            Found::Clean(state) => state,
            // Reset outside the lock, as on a return; one that cannot be is replaced.
            Found::Taken(mut state) => {
                if state.reset() {
                    state
                } else {
                    make()
                }
            }
            Found::Nothing => make(),
        };
        Pooled {
            state: Some(state),
            pool: self.clone(),
            level,
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
            .field("hold_limit", &self.inner.hold_limit)
            .field("yield_limit", &self.inner.yields.limit())
            .field("park_bound", &self.inner.park_bound)
            .finish_non_exhaustive()
    }
}

/// A state that can live in the pool. Each codec implements it for its own state type.
pub(crate) trait PooledState: Send + Sized + 'static {
    /// Its kind: one state type per kind.
    const KIND: Kind;

    /// Makes the state as good as new for the next user. `false` means it cannot be, and it
    /// is dropped instead of shelved. Runs outside the shelf's lock.
    fn reset(&mut self) -> bool;
}

/// A checked-out state. Dereferences to the state.
///
/// On drop the state is reset and returned to its pool, or dropped if the shelf is full, the
/// reset fails, or the thread is panicking (a state interrupted by a panic is never reused).
/// The guard owns its state, so it can return it at most once.
pub(crate) struct Pooled<T: PooledState> {
    state: Option<T>,
    pool: CodecPool,
    level: Level,
}

impl<T: PooledState> Pooled<T> {
    /// Drops the state instead of returning it to the pool.
    #[cfg_attr(not(feature = "zstd"), allow(dead_code))]
    pub(crate) fn discard(mut self) {
        if self.state.take().is_some() {
            let stats = &self.pool.inner.shelf::<T>().stats;
            Counters::bump(stats.discarded());
            stats.checked_in();
        }
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
        let Some(mut state) = self.state.take() else {
            return;
        };
        let shelf = self.pool.inner.shelf::<T>();
        // Reset outside the lock: it is the expensive part.
        if std::thread::panicking() || !state.reset() {
            Counters::bump(shelf.stats.discarded());
        } else {
            shelf.put(state, self.level, self.pool.inner.max_idle);
        }
        shelf.stats.checked_in();
    }
}

impl<T: PooledState> fmt::Debug for Pooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled")
            .field("level", &self.level)
            .finish()
    }
}

#[cfg(test)]
mod tests;
