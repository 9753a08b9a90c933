//! Parking: a paused stream lends its state to the pool and takes it back at its next input,
//! unless another stream needed it meanwhile.
//!
//! Giving a paused stream's state back keeps idle streams cheap, but costs a stream that
//! pauses after every event a redraw, a reset and (gzip) 32 KiB of priming per event, many
//! times the cost of compressing a small SSE event (BENCHMARKS.md, "Idle and event
//! streams"). A parked state stays on the shelf unreset, counted
//! idle (a paused stream holds nothing), and goes back to its stream as it was; only a draw
//! that finds no clean state takes it, so a quiet pool costs a pause a flush and a crowded
//! one costs what releasing does.
// Parts of the pause protocol only zstd's or br's streams use.
#![cfg_attr(not(all(feature = "zstd", feature = "br")), allow(dead_code))]

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use super::{CodecPool, Pooled, PooledState};

/// A paused stream's claim on the state it parked.
pub(crate) struct Lease<T: PooledState> {
    ticket: u64,
    pool: CodecPool,
    kind: PhantomData<fn() -> T>,
}

impl<T: PooledState> Pooled<T> {
    /// Parks the state for its stream's next input. `Err` gives it back when every idle
    /// place holds a parked state, or when the pool is crowded: the caller then releases it.
    ///
    /// Crowded (more states of the kind checked out than the hold limit), a parked state is
    /// taken by another stream before its owner is back, and parking evicts a clean state
    /// (freed) while the draws that find none build new ones. That churn of whole states,
    /// not the states in use, grew the heap under hundreds of concurrent downloads; given
    /// back clean, one state serves stream after stream.
    pub(crate) fn park(mut self) -> Result<Lease<T>, Self> {
        if self.pool.crowded::<T>() {
            return Err(self);
        }
        let state = self.state.take().expect("state is present until drop");
        let shelf = self.pool.inner.shelf::<T>();
        match shelf.park(state, self.level, self.pool.inner.max_idle) {
            Ok(ticket) => Ok(Lease {
                ticket,
                pool: self.pool.clone(),
                kind: PhantomData,
            }),
            Err(state) => {
                self.state = Some(state);
                Err(self)
            }
        }
    }
}

impl<T: PooledState> Pooled<T> {
    /// Whether [`park`](Self::park) would find a place now (a hint).
    fn has_room_to_park(&self) -> bool {
        !self.pool.crowded::<T>()
            && self
                .pool
                .inner
                .shelf::<T>()
                .has_room_to_park(self.pool.inner.max_idle)
    }
}

impl<T: PooledState> Lease<T> {
    /// The parked state, as it was left, unless a draw has taken it.
    pub(crate) fn reclaim(self) -> Option<Pooled<T>> {
        let (state, level) = self.pool.inner.shelf::<T>().unpark(self.ticket, true)?;
        Some(Pooled {
            state: Some(state),
            pool: self.pool.clone(),
            level,
        })
    }
}

impl<T: PooledState> Drop for Lease<T> {
    /// A stream that ends (or is dropped) while paused leaves a clean state behind; after a
    /// `reclaim` the ticket is gone and this finds nothing.
    fn drop(&mut self) {
        let shelf = self.pool.inner.shelf::<T>();
        if let Some((mut state, level)) = shelf.unpark(self.ticket, false) {
            if state.reset() {
                shelf.restore(state, level, self.pool.inner.max_idle);
            }
        }
    }
}

impl<T: PooledState> std::fmt::Debug for Lease<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("ticket", &self.ticket)
            .finish()
    }
}

/// A stream's hold on its state, and whether its pauses are short enough to park for.
pub(crate) struct Hold<T: PooledState> {
    slot: Slot<T>,
    /// When the state was last parked.
    parked_at: Option<Instant>,
    /// The last pause was measured and shorter than the pool's park bound.
    short_pauses: bool,
    /// The pool's park bound, once a state was held.
    bound: Duration,
    /// The state is held over the pause that began at `parked_at` (see [`keep`](Self::keep)).
    kept: bool,
}

/// None yet (or given away), checked out, or parked.
enum Slot<T: PooledState> {
    None,
    Held(Pooled<T>),
    Parked(Lease<T>),
}

/// The longest pause worth parking for, unless the pool sets another
/// ([`CodecPoolBuilder::park_bound`](crate::pool::CodecPoolBuilder::park_bound)). Parking saves a
/// gzip event its priming and a zstd event its frame; a stream whose events come a second
/// or more apart saves a negligible share of a core by it, while the state it keeps cannot
/// be shared: parked, many slow SSE streams hold several zstd contexts where a few would
/// serve (BENCHMARKS.md, "Idle and event streams"). Such streams release at a pause.
pub(crate) const PARK_BOUND: Duration = Duration::from_secs(1);

impl<T: PooledState> Hold<T> {
    /// Treats the stream's pauses as short before one is measured: its first pause parks
    /// too (a body of known size, paused on its producer's reads). A pause measured long
    /// still ends that.
    pub(crate) fn expect_short_pauses(&mut self) {
        self.short_pauses = true;
    }

    /// Whether the state is checked out to this stream now.
    pub(crate) fn is_held(&self) -> bool {
        matches!(self.slot, Slot::Held(_))
    }

    pub(crate) fn held(&mut self) -> Option<&mut Pooled<T>> {
        match &mut self.slot {
            Slot::Held(state) => Some(state),
            _ => None,
        }
    }

    /// Holds `state`, drawn by the caller.
    pub(crate) fn hold(&mut self, state: Pooled<T>) {
        self.bound = state.pool.inner.park_bound;
        self.slot = Slot::Held(state);
    }

    /// Lets go of the state: back to the pool (reset) if held, clean to the shelf if parked.
    pub(crate) fn release(&mut self) {
        self.slot = Slot::None;
    }

    /// Lets go of the state without resetting it (a held one is freed: a failed call may
    /// have left it unfit to reuse).
    pub(crate) fn discard(&mut self) {
        if let Slot::Held(state) = std::mem::replace(&mut self.slot, Slot::None) {
            state.discard();
        }
    }

    /// Takes the parked state back if it is still there: then held, else (given away, or
    /// never drawn) not, for the caller to draw. Measures the pause that ends here.
    pub(crate) fn resume(&mut self) -> &mut Self {
        // Still held: no pause ended here (a stream whose park was refused finishing up
        // before it lets go), and timing one would call it short; unless it was kept over
        // the pause on purpose.
        let held = self.is_held();
        if !held || std::mem::take(&mut self.kept) {
            if let Some(at) = self.parked_at.take() {
                self.short_pauses = at.elapsed() < self.bound;
            }
        }
        if held {
            return self;
        }
        if let Slot::Parked(_) = self.slot {
            let Slot::Parked(lease) = std::mem::replace(&mut self.slot, Slot::None) else {
                unreachable!()
            };
            if let Some(state) = lease.reclaim() {
                self.slot = Slot::Held(state);
            }
        }
        self
    }

    /// Whether [`park`](Self::park) would park (a state is held, the last pause was short
    /// and the pool has a place for it), so the caller can skip work that only parking
    /// needs. A hint: the place may be gone by the time `park` is called.
    pub(crate) fn would_park(&self) -> bool {
        matches!(&self.slot, Slot::Held(state) if self.short_pauses && state.has_room_to_park())
    }

    /// Whether the stream's last pause was short enough to park for (its first pause is
    /// not: its length is not known).
    pub(crate) fn pauses_are_short(&self) -> bool {
        self.short_pauses
    }

    /// Keeps a held state over a pause, timing the pause (br's short pauses: its priming
    /// costs more than a park saves).
    pub(crate) fn keep(&mut self) {
        if self.is_held() {
            self.parked_at = Some(Instant::now());
            self.kept = true;
        }
    }

    /// Lets go of the state at a pause that does not park, timing the pause all the same.
    pub(crate) fn release_paused(&mut self) {
        self.parked_at = Some(Instant::now());
        self.slot = Slot::None;
    }

    /// Parks a held state for a stream whose last pause was short; `Err` with the state
    /// otherwise, or when the pool has no room for it (the hold is then empty), for the
    /// caller to release. A stream's first pause releases: its length is not known yet,
    /// and a thousand streams opened at once would otherwise each park a state.
    pub(crate) fn park(&mut self) -> Result<(), Pooled<T>> {
        self.parked_at = Some(Instant::now());
        if let Slot::Held(_) = self.slot {
            let Slot::Held(state) = std::mem::replace(&mut self.slot, Slot::None) else {
                unreachable!()
            };
            if !self.short_pauses {
                return Err(state);
            }
            self.slot = Slot::Parked(state.park()?);
        }
        Ok(())
    }
}

impl<T: PooledState> std::fmt::Debug for Hold<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.slot {
            Slot::None => "None",
            Slot::Held(_) => "Held",
            Slot::Parked(_) => "Parked",
        })
    }
}

impl<T: PooledState> Default for Hold<T> {
    fn default() -> Self {
        Hold {
            slot: Slot::None,
            parked_at: None,
            short_pauses: false,
            bound: PARK_BOUND,
            kept: false,
        }
    }
}
