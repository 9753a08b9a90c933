//! One kind's idle states, by level, and the states paused streams have parked.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::KindStats;
use super::Level;
use crate::sync::lock;

/// Idle states of one kind, kept apart by level (decompressors all sit at level 0) so a
/// state never serves another level, and their counters.
pub(crate) struct Shelf<T> {
    pub(super) idle: Mutex<LevelVecs<T>>,
    pub(super) stats: Counters,
}

pub(super) struct LevelVecs<T> {
    by_level: [Vec<Idle<T>>; Level::COUNT],
    /// States parked by paused streams, oldest first: still holding their stream's session,
    /// taken back by it at its next input unless a draw finds no clean state first.
    parked: VecDeque<Parked<T>>,
    /// Clean and parked states together, the number `max_idle` caps.
    count: usize,
    next_ticket: u64,
}

/// A clean state and the thread that gave it back, which finds it in its own core's cache.
struct Idle<T> {
    thread: u32,
    state: T,
}

struct Parked<T> {
    ticket: u64,
    level: Level,
    state: T,
}

impl<T> Default for Shelf<T> {
    fn default() -> Self {
        Shelf {
            idle: Mutex::new(LevelVecs {
                by_level: std::array::from_fn(|_| Vec::new()),
                parked: VecDeque::new(),
                count: 0,
                next_ticket: 0,
            }),
            stats: Counters::default(),
        }
    }
}

/// What a draw found on the shelf.
pub(super) enum Found<T> {
    Clean(T),
    /// A parked state taken from the stream that parked it: it needs a reset.
    Taken(T),
    Nothing,
}

impl<T> Shelf<T> {
    /// An idle state at `level`: a clean one, this thread's if it has one
    /// ([`take_nearest`]), else, when parked states fill the shelf, the oldest one parked at
    /// that level; counts the checkout either way.
    ///
    /// With room on the shelf a parked state is left to its stream: a new state is cheaper
    /// than the redraw and priming it would cost that stream, and it
    /// can be parked in turn. Once the shelf is full, a new one could not be, and memory
    /// would churn.
    pub(super) fn take(&self, level: Level, max_idle: usize) -> Found<T> {
        self.stats.out.fetch_add(1, Ordering::Relaxed);
        let found = {
            let mut idle = lock(&self.idle);
            let full = idle.count >= max_idle;
            let found = if let Some(state) = take_nearest(&mut idle.by_level[level.index()], full) {
                Found::Clean(state)
            } else if let Some(i) = idle
                .parked
                .iter()
                .position(|p| p.level == level)
                .filter(|_| idle.count >= max_idle)
            {
                Found::Taken(idle.parked.remove(i).expect("found above").state)
            } else {
                Found::Nothing
            };
            if !matches!(found, Found::Nothing) {
                idle.count -= 1;
                self.stats.set_idle(&idle);
            }
            found
        };
        Counters::bump(match found {
            Found::Nothing => &self.stats.created,
            _ => &self.stats.reused,
        });
        found
    }

    /// Shelves a clean state, or drops it past `max_idle`.
    pub(super) fn put(&self, state: T, level: Level, max_idle: usize) {
        let mut idle = lock(&self.idle);
        if idle.count < max_idle {
            idle.by_level[level.index()].push(Idle::here(state));
            idle.count += 1;
            self.stats.set_idle(&idle);
            drop(idle);
            Counters::bump(&self.stats.returned);
        } else {
            drop(idle);
            Counters::bump(&self.stats.discarded);
        }
    }

    /// Whether [`park`](Self::park) would find a place now: a free one, or a clean idle
    /// state to make room. A hint: another stream may take the place first.
    pub(super) fn has_room_to_park(&self, max_idle: usize) -> bool {
        let idle = lock(&self.idle);
        idle.count < max_idle || idle.by_level.iter().any(|states| !states.is_empty())
    }

    /// Parks a paused stream's state, unreset, and returns its ticket; a clean idle state
    /// makes room for it if need be (a parked state has a stream coming back for it). `Err`
    /// gives the state back when every place is parked.
    pub(super) fn park(&self, state: T, level: Level, max_idle: usize) -> Result<u64, T> {
        let mut idle = lock(&self.idle);
        let mut evicted = None;
        if idle.count >= max_idle {
            evicted = idle.by_level.iter_mut().find_map(Vec::pop).map(|i| i.state);
            match evicted {
                Some(_) => idle.count -= 1,
                None => return Err(state),
            }
        }
        let ticket = idle.next_ticket;
        idle.next_ticket += 1;
        idle.parked.push_back(Parked {
            ticket,
            level,
            state,
        });
        idle.count += 1;
        self.stats.set_idle(&idle);
        drop(idle);
        // Dropped outside the lock: freeing a state takes microseconds.
        drop(evicted);
        Counters::bump(&self.stats.returned);
        Counters::bump(&self.stats.parked);
        self.stats.checked_in();
        Ok(ticket)
    }

    /// The state parked under `ticket`, if no draw has taken it since; `checkout` counts
    /// it as checked out again (a stream resuming) rather than only off the shelf.
    pub(super) fn unpark(&self, ticket: u64, checkout: bool) -> Option<(T, Level)> {
        let parked = {
            let mut idle = lock(&self.idle);
            let i = idle.parked.iter().position(|p| p.ticket == ticket)?;
            let parked = idle.parked.remove(i).expect("found above");
            idle.count -= 1;
            self.stats.set_idle(&idle);
            parked
        };
        if checkout {
            self.stats.out.fetch_add(1, Ordering::Relaxed);
            Counters::bump(&self.stats.reused);
            Counters::bump(&self.stats.reclaimed);
        }
        Some((parked.state, parked.level))
    }

    /// Puts a clean state back that [`unpark`](Self::unpark) took without a checkout (its
    /// stream ended while paused): not a new return.
    pub(super) fn restore(&self, state: T, level: Level, max_idle: usize) {
        let mut idle = lock(&self.idle);
        if idle.count < max_idle {
            idle.by_level[level.index()].push(Idle::here(state));
            idle.count += 1;
            self.stats.set_idle(&idle);
        }
    }
}

impl<T> Idle<T> {
    fn here(state: T) -> Self {
        Idle {
            thread: this_thread(),
            state,
        }
    }
}

/// The state this thread gave back last, else the one any thread gave back last, except
/// that a thread leaves another's lone state alone while the shelf has room (`None`: it
/// makes its own).
///
/// A state's tables (a deflate state clears 128 KiB of them per message) sit in the cache
/// of the core that used them last; another core fetching each line across can cost as
/// much as compressing a short message. A lone idle state is the one its thread most
/// likely wants next (two tasks of one call, on two threads, each compressing a message in
/// turn would trade it back and forth); several are spare, and taking one costs nothing.
fn take_nearest<T>(states: &mut Vec<Idle<T>>, full: bool) -> Option<T> {
    let here = this_thread();
    let at = match states.iter().rposition(|idle| idle.thread == here) {
        Some(at) => at,
        None if states.len() == 1 && !full => return None,
        None => states.len().checked_sub(1)?,
    };
    Some(states.remove(at).state)
}

/// A small number naming the calling thread, for [`Idle`].
fn this_thread() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    thread_local! {
        static THIS: u32 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    // A state can come back while the thread's locals are being torn down (a task dropped
    // at thread exit); it is then nobody's.
    THIS.try_with(|n| *n).unwrap_or(u32::MAX)
}

#[derive(Default)]
pub(super) struct Counters {
    created: AtomicU64,
    reused: AtomicU64,
    returned: AtomicU64,
    discarded: AtomicU64,
    parked: AtomicU64,
    reclaimed: AtomicU64,
    pub(super) primed: AtomicU64,
    idle: AtomicUsize,
    idle_parked: AtomicUsize,
    /// Checked out now: one counter, so the hot path's crowding check is one load.
    pub(super) out: AtomicUsize,
}

impl Counters {
    pub(super) fn snapshot(&self) -> KindStats {
        KindStats {
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            returned: self.returned.load(Ordering::Relaxed),
            discarded: self.discarded.load(Ordering::Relaxed),
            parked: self.parked.load(Ordering::Relaxed),
            reclaimed: self.reclaimed.load(Ordering::Relaxed),
            primed_bytes: self.primed.load(Ordering::Relaxed),
            idle: self.idle.load(Ordering::Relaxed),
            idle_parked: self.idle_parked.load(Ordering::Relaxed),
        }
    }

    /// Publishes the shelf's idle counts, under its lock.
    fn set_idle<T>(&self, idle: &LevelVecs<T>) {
        self.idle.store(idle.count, Ordering::Relaxed);
        self.idle_parked.store(idle.parked.len(), Ordering::Relaxed);
    }

    pub(super) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn discarded(&self) -> &AtomicU64 {
        &self.discarded
    }

    /// A guard gave its state back (returned or discarded).
    pub(super) fn checked_in(&self) {
        self.out.fetch_sub(1, Ordering::Relaxed);
    }
}
