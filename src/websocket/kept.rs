//! Dedicated compressors: with context takeover, a connection that sends often keeps its
//! compressor between messages instead of priming a pooled one from its parked window
//! (priming a deflate state hashes the whole window, a cost per message that grows with
//! it). Places are few and shared by a config's connections: [`KeptCompressors`] holds at
//! most its cap, each charged to the window budget at its state's size, and hands a place
//! held by a connection idle for [`IDLE`] to the next that asks. The parked window is kept
//! up to date all along, so a compressor can be taken from its connection at any time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use tower_gzip_codecs::raw::RawDeflate;

use super::config::{Reservation, WindowBudget};
use super::stats;

/// How long a place's connection must have sent nothing before another may take it.
pub(crate) const IDLE: Duration = Duration::from_secs(1);

/// The places for dedicated compressors shared by a config's connections. Cloning shares
/// the places.
#[derive(Clone, Debug)]
pub struct KeptCompressors {
    inner: Arc<Places>,
}

#[derive(Debug)]
struct Places {
    cap: usize,
    taken: Mutex<Vec<Weak<Place>>>,
}

/// One connection's place.
#[derive(Debug)]
pub(crate) struct Place {
    slot: Mutex<Slot>,
    /// When the connection last sent, on [`now_ms`]'s clock.
    last_used: AtomicU64,
}

/// What a place holds.
#[derive(Debug)]
enum Slot {
    /// The compressor, between messages, with its charge to the budget.
    Kept(Kept),
    /// Out with its connection for a message.
    InUse,
    /// Taken away for another connection: this one must ask again.
    Lost,
}

/// A compressor and its charge to the budget.
#[derive(Debug)]
pub(crate) struct Kept {
    pub(crate) deflate: RawDeflate,
    pub(crate) charge: Reservation,
}

impl KeptCompressors {
    /// At most `cap` connections keep a compressor at once (0: none do).
    pub fn new(cap: usize) -> Self {
        KeptCompressors {
            inner: Arc::new(Places {
                cap,
                taken: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The process-wide places (64) that configs use unless given others.
    pub fn global() -> &'static KeptCompressors {
        static GLOBAL: OnceLock<KeptCompressors> = OnceLock::new();
        GLOBAL.get_or_init(|| KeptCompressors::new(64))
    }

    /// Connections keeping a compressor now.
    pub fn held(&self) -> usize {
        let taken = self
            .inner
            .taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        taken.iter().filter(|p| p.strong_count() > 0).count()
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.inner.cap
    }

    /// A place for `deflate` (a `window_bits` compressor), if one is free or held by a
    /// connection idle for [`IDLE`], and the budget has room; `None` drops `deflate` back
    /// to its pool.
    pub(crate) fn admit(
        &self,
        deflate: RawDeflate,
        window_bits: u8,
        budget: &WindowBudget,
    ) -> Option<Arc<Place>> {
        let now = now_ms();
        let mut taken = self
            .inner
            .taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        taken.retain(|p| p.strong_count() > 0);
        if taken.len() >= self.inner.cap {
            let idle = IDLE.as_millis() as u64;
            let (i, oldest) = taken
                .iter()
                .enumerate()
                .filter_map(|(i, p)| p.upgrade().map(|p| (i, p)))
                .min_by_key(|(_, p)| p.last_used.load(Ordering::Relaxed))?;
            if now.saturating_sub(oldest.last_used.load(Ordering::Relaxed)) < idle {
                return None;
            }
            oldest.take_away();
            taken.swap_remove(i);
        }
        let charge = budget.reserve(compressor_bytes(window_bits))?;
        let place = Arc::new(Place {
            slot: Mutex::new(Slot::Kept(Kept { deflate, charge })),
            last_used: AtomicU64::new(now),
        });
        taken.push(Arc::downgrade(&place));
        stats::note_kept(1);
        Some(place)
    }
}

impl Place {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept compressor, for the next message; `None` if it was taken away.
    pub(crate) fn take(&self) -> Option<Kept> {
        self.last_used.store(now_ms(), Ordering::Relaxed);
        let mut slot = self.slot();
        match std::mem::replace(&mut *slot, Slot::InUse) {
            Slot::Kept(kept) => Some(kept),
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Puts the compressor back after a message; `false` (and `kept` dropped, back to its
    /// pool) when the place was taken away meanwhile.
    pub(crate) fn put(&self, kept: Kept) -> bool {
        let mut slot = self.slot();
        if matches!(*slot, Slot::Lost) {
            return false;
        }
        *slot = Slot::Kept(kept);
        true
    }

    fn take_away(&self) {
        let mut slot = self.slot();
        if !matches!(*slot, Slot::Lost) {
            stats::note_kept(-1);
        }
        *slot = Slot::Lost;
    }

    /// Whether the place was taken away.
    #[cfg(test)]
    fn is_lost(&self) -> bool {
        matches!(*self.slot(), Slot::Lost)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let slot = self.slot.get_mut().unwrap_or_else(PoisonError::into_inner);
        if !matches!(slot, Slot::Lost) {
            stats::note_kept(-1);
        }
    }
}

/// A connection's side: its place, if it has one, and where to ask for one.
#[derive(Debug)]
pub(crate) struct Keeper {
    places: KeptCompressors,
    budget: WindowBudget,
    window_bits: u8,
    place: Option<Arc<Place>>,
}

impl Keeper {
    pub(crate) fn new(places: KeptCompressors, budget: WindowBudget, window_bits: u8) -> Self {
        Keeper {
            places,
            budget,
            window_bits,
            place: None,
        }
    }

    /// The kept compressor for the next message, if the connection has one.
    pub(crate) fn take(&mut self) -> Option<Kept> {
        self.place.as_ref()?.take()
    }

    /// After a message: `deflate` back to the connection's place, or a place asked for.
    /// `charge` is what [`take`](Self::take) gave with it, `None` for a drawn compressor.
    pub(crate) fn keep(&mut self, deflate: RawDeflate, charge: Option<Reservation>) {
        if let (Some(place), Some(charge)) = (&self.place, charge) {
            if !place.put(Kept { deflate, charge }) {
                // Taken away meanwhile: the next message asks again.
                self.place = None;
            }
            return;
        }
        // A lost place no longer counts among the taken: let it go before asking.
        self.place = None;
        self.place = self.places.admit(deflate, self.window_bits, &self.budget);
    }

    /// Takes the place away as another connection would once this one is idle.
    #[cfg(test)]
    pub(crate) fn lose_place(&self) {
        if let Some(place) = &self.place {
            place.take_away();
        }
    }

    /// The compressor went back to the pool mid-message (its history no longer matches
    /// the peer's): the place goes too.
    pub(crate) fn drop_place(&mut self) {
        self.place = None;
    }
}

/// What a kept compressor is charged: zlib's deflate state for a `2^bits` window (window
/// and chain, four bytes a window byte) and its hash table and pending buffer at zlib's
/// default memory level (128 KiB).
pub(crate) fn compressor_bytes(bits: u8) -> usize {
    (4 << bits) + (128 << 10)
}

/// A clock for idleness in milliseconds, cheap to read and compare. It starts an hour in,
/// so that 0 reads as long idle.
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64 + 3_600_000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CodecPool;

    fn deflate(pool: &CodecPool) -> RawDeflate {
        RawDeflate::draw(pool, 6, 15, &[]).unwrap()
    }

    #[test]
    fn places_are_capped_and_charged_to_the_budget() {
        let pool = CodecPool::new();
        let budget = WindowBudget::new(1 << 30);
        let places = KeptCompressors::new(2);
        let a = places.admit(deflate(&pool), 15, &budget).unwrap();
        let b = places.admit(deflate(&pool), 15, &budget).unwrap();
        // Both busy: a third connection gets no place.
        assert!(places.admit(deflate(&pool), 15, &budget).is_none());
        assert_eq!(places.held(), 2);
        assert_eq!(budget.held(), 2 * compressor_bytes(15));
        drop(a);
        assert_eq!(budget.held(), compressor_bytes(15));
        assert!(places.admit(deflate(&pool), 15, &budget).is_some());
        drop(b);
    }

    #[test]
    fn no_place_when_the_budget_is_spent() {
        let pool = CodecPool::new();
        let budget = WindowBudget::new(compressor_bytes(15) - 1);
        let places = KeptCompressors::new(8);
        assert!(places.admit(deflate(&pool), 15, &budget).is_none());
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn an_idle_place_goes_to_the_next_connection_and_its_owner_learns_it() {
        let pool = CodecPool::new();
        let budget = WindowBudget::new(1 << 30);
        let places = KeptCompressors::new(1);
        let idle = places.admit(deflate(&pool), 15, &budget).unwrap();
        idle.last_used.store(0, Ordering::Relaxed);
        let busy = places.admit(deflate(&pool), 15, &budget).unwrap();
        assert!(idle.is_lost());
        assert!(
            idle.take().is_none(),
            "its compressor went back to the pool"
        );
        // Its charge went with it: one compressor's worth is held.
        assert_eq!(budget.held(), compressor_bytes(15));
        let kept = busy.take().unwrap();
        assert!(busy.put(kept));
        assert!(!idle.put(Kept {
            deflate: deflate(&pool),
            charge: budget.force(1),
        }));
        assert_eq!(budget.held(), compressor_bytes(15));
    }
}
