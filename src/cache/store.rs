//! The entries, bounded by bytes: S3-FIFO per shard. A new entry enters a small queue; one
//! hit there moves it to the main queue when the small queue overflows, and entries in the
//! main queue get a second chance per hit, so a stream of one-off entries churns the small
//! queue and leaves the hot ones alone.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use bytes::Bytes;

use super::key::Key;
use super::pins::Address;
use crate::sync::lock;

/// What an entry costs beyond its bytes: its map slot and key, its place in a queue, the
/// shared header of its `Bytes` and the allocator's rounding. An upper bound, so the
/// budget holds.
pub(crate) const ENTRY_OVERHEAD: u64 = 256;

/// The share of a shard's budget the small queue may hold before it gives entries up.
const SMALL_SHARE: u64 = 10;

/// Hits an entry can bank for second chances in the main queue.
const MAX_FREQ: u8 = 3;

/// Where an entry is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// As the layer compressed it, at the level it was configured with.
    AsServed,
    /// Handed to the background worker for a denser level.
    Queued,
    /// Recompressed at its coding's densest level (kept only if smaller).
    Densest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    Small,
    Main,
}

#[derive(Debug)]
struct Slot {
    bytes: Bytes,
    /// The body's fingerprint, told back to the doorkeeper at eviction.
    print: u64,
    stage: Stage,
    freq: u8,
    queue: Queue,
    /// Where the body of the last hit was (see [`Found::again`]).
    last_address: Option<Address>,
    /// When a validator entry stops serving (content entries never do: their key is the
    /// body itself).
    expires: Option<Instant>,
}

impl Slot {
    fn weight(&self) -> u64 {
        self.bytes.len() as u64 + ENTRY_OVERHEAD
    }

    fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|expires| expires <= now)
    }
}

#[derive(Debug, Default)]
struct Shard {
    map: HashMap<Key, Slot>,
    small: VecDeque<Key>,
    main: VecDeque<Key>,
    small_bytes: u64,
    main_bytes: u64,
}

/// What a lookup found.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) bytes: Bytes,
    /// Whether the caller should queue the entry for recompression (it was `AsServed`;
    /// it is `Queued` now).
    pub(crate) recompress: bool,
    /// The last hit's body was at the same address: the application serves one `Bytes`
    /// again, worth pinning.
    pub(crate) again: bool,
}

/// Sharded entries under one byte budget.
#[derive(Debug)]
pub(crate) struct Store {
    shards: Box<[Mutex<Shard>]>,
    shard_budget: u64,
}

impl Store {
    pub(crate) fn new(budget: u64, shards: usize) -> Store {
        Store {
            shards: (0..shards).map(|_| Mutex::default()).collect(),
            shard_budget: budget / shards as u64,
        }
    }

    /// The largest entry (bytes plus overhead) a shard can hold next to others.
    pub(crate) fn shard_budget(&self) -> u64 {
        self.shard_budget
    }

    fn shard(&self, key: &Key) -> &Mutex<Shard> {
        &self.shards[key.shard(self.shards.len())]
    }

    /// The entry under `key`, counting the hit from a body at `address` (if the body is
    /// in hand); queues it for recompression once, when `recompress` says the cache does
    /// that.
    pub(crate) fn get(
        &self,
        key: &Key,
        recompress: bool,
        address: Option<Address>,
    ) -> Option<Found> {
        let mut shard = lock(self.shard(key));
        let slot = shard.map.get_mut(key)?;
        if slot.expired(Instant::now()) {
            return None;
        }
        slot.freq = (slot.freq + 1).min(MAX_FREQ);
        let queue = recompress && slot.stage == Stage::AsServed;
        if queue {
            slot.stage = Stage::Queued;
        }
        let again = address.is_some() && slot.last_address == address;
        slot.last_address = address;
        Some(Found {
            bytes: slot.bytes.clone(),
            recompress: queue,
            again,
        })
    }

    /// Files `bytes` under `key` (until `expires`, if given) unless a live entry is there
    /// already (a concurrent fill of the same body wrote the same bytes); false if it was.
    /// An expired entry is replaced in place. Calls `evicted` with the fingerprint of each
    /// entry evicted to make room.
    pub(crate) fn insert(
        &self,
        key: Key,
        (print, expires): (u64, Option<Instant>),
        bytes: Bytes,
        stage: Stage,
        evicted: impl FnMut(u64),
    ) -> bool {
        let mut shard = lock(self.shard(&key));
        let slot = Slot {
            bytes,
            print,
            stage,
            freq: 0,
            queue: Queue::Small,
            last_address: None,
            expires,
        };
        match shard.map.get(&key) {
            Some(old) if old.expired(Instant::now()) => shard.replace(key, slot),
            Some(_) => return false,
            None => {
                shard.small_bytes += slot.weight();
                shard.map.insert(key, slot);
                shard.small.push_back(key);
            }
        }
        shard.evict(self.shard_budget, evicted);
        true
    }

    /// Replaces the bytes of a queued entry with its recompressed ones when they are
    /// smaller; returns the bytes saved (0 when the entry is gone or grew).
    pub(crate) fn recompressed(&self, key: &Key, bytes: Bytes) -> u64 {
        let mut shard = lock(self.shard(key));
        let Some(slot) = shard.map.get_mut(key) else {
            return 0;
        };
        slot.stage = Stage::Densest;
        let old = slot.bytes.len() as u64;
        let new = bytes.len() as u64;
        if new >= old {
            return 0;
        }
        slot.bytes = bytes;
        match slot.queue {
            Queue::Small => shard.small_bytes -= old - new,
            Queue::Main => shard.main_bytes -= old - new,
        }
        old - new
    }

    /// The bytes of the entry under `key`, without counting a hit.
    pub(crate) fn peek(&self, key: &Key) -> Option<Bytes> {
        lock(self.shard(key))
            .map
            .get(key)
            .map(|slot| slot.bytes.clone())
    }

    /// Puts a queued entry back to `AsServed` (its job was dropped), so a later hit queues
    /// it again.
    pub(crate) fn unqueue(&self, key: &Key) {
        if let Some(slot) = lock(self.shard(key)).map.get_mut(key) {
            if slot.stage == Stage::Queued {
                slot.stage = Stage::AsServed;
            }
        }
    }

    /// Entries and the bytes they are charged (sizes plus overhead).
    pub(crate) fn held(&self) -> (u64, u64) {
        self.shards.iter().fold((0, 0), |(entries, bytes), shard| {
            let shard = lock(shard);
            (
                entries + shard.map.len() as u64,
                bytes + shard.small_bytes + shard.main_bytes,
            )
        })
    }
}

impl Shard {
    /// Puts `slot` in the place of the entry under `key`, in the same queue.
    fn replace(&mut self, key: Key, mut slot: Slot) {
        let old = self
            .map
            .get_mut(&key)
            .expect("replaced keys are in the map");
        slot.queue = old.queue;
        let (gone, added) = (old.weight(), slot.weight());
        *old = slot;
        let bytes = match old.queue {
            Queue::Small => &mut self.small_bytes,
            Queue::Main => &mut self.main_bytes,
        };
        *bytes = *bytes - gone + added;
    }

    /// Evicts until the shard is within `budget`, telling `evicted` each entry's
    /// fingerprint.
    fn evict(&mut self, budget: u64, mut evicted: impl FnMut(u64)) {
        while self.small_bytes + self.main_bytes > budget {
            let from_small = self.small_bytes * SMALL_SHARE > budget || self.main.is_empty();
            let gone = if from_small {
                self.evict_small()
            } else {
                self.evict_main()
            };
            if let Some(print) = gone {
                evicted(print);
            }
        }
    }

    /// The small queue's oldest entry: to the main queue if it was hit, out otherwise.
    fn evict_small(&mut self) -> Option<u64> {
        let key = self.small.pop_front()?;
        let slot = self.map.get_mut(&key).expect("queued keys are in the map");
        let weight = slot.weight();
        self.small_bytes -= weight;
        if slot.freq > 0 {
            slot.freq = 0;
            slot.queue = Queue::Main;
            self.main_bytes += weight;
            self.main.push_back(key);
            return None;
        }
        self.map.remove(&key).map(|slot| slot.print)
    }

    /// The main queue's oldest entry: a second chance for each hit it banked, out at none.
    fn evict_main(&mut self) -> Option<u64> {
        let key = self.main.pop_front()?;
        let slot = self.map.get_mut(&key).expect("queued keys are in the map");
        if slot.freq > 0 {
            slot.freq -= 1;
            self.main.push_back(key);
            return None;
        }
        self.main_bytes -= slot.weight();
        self.map.remove(&key).map(|slot| slot.print)
    }
}
