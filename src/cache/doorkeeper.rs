//! Admission: a body is cached the second time it is seen. A fixed table of fingerprints
//! remembers what was seen; a body whose fingerprint is new costs a few sampled bytes and
//! a few atomic operations, never a full hash nor a copy. A second table counts the
//! fingerprints of the entries filed, so a flood that overwrites the first never hides an
//! entry.

use std::collections::hash_map::RandomState;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::key::fingerprint;

/// Fingerprints a bucket holds: bodies whose fingerprints share a bucket do not push each
/// other out (with one per bucket, two hot bodies alternating there would never be seen
/// twice).
const WAYS: usize = 4;

/// What the doorkeeper knows of a body.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sight {
    pub(crate) print: u64,
    /// Maybe seen lately: a miss is filed.
    pub(crate) seen: bool,
    /// Maybe filed: worth a full hash even if not seen lately.
    pub(crate) filed: bool,
}

/// Fingerprints of recently seen bodies, in buckets of [`WAYS`] (a newer one replaces the
/// bucket's oldest).
#[derive(Debug)]
pub(crate) struct Doorkeeper {
    random: RandomState,
    slots: Box<[AtomicU64]>,
    /// Per bucket, where the next new fingerprint goes.
    hands: Box<[AtomicU32]>,
    /// Entries filed per bucket (fingerprints that share a bucket share a count).
    filed: Box<[AtomicU32]>,
}

impl Doorkeeper {
    /// A table of about `slots` fingerprints.
    pub(crate) fn new(slots: usize) -> Doorkeeper {
        let buckets = (slots / WAYS).next_power_of_two();
        Doorkeeper {
            random: RandomState::new(),
            slots: (0..buckets * WAYS).map(|_| AtomicU64::new(0)).collect(),
            hands: (0..buckets).map(|_| AtomicU32::new(0)).collect(),
            filed: (0..buckets).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// `body`'s fingerprint and what the tables say of it (fingerprints can collide, so
    /// "maybe"); remembers it.
    pub(crate) fn check(&self, body: &[u8]) -> Sight {
        // 0 marks an empty slot.
        let print = fingerprint(&self.random, body).max(1);
        let bucket = self.bucket(print);
        let ways = &self.slots[bucket * WAYS..][..WAYS];
        let seen = ways
            .iter()
            .any(|slot| slot.load(Ordering::Relaxed) == print);
        if !seen {
            let hand = self.hands[bucket].fetch_add(1, Ordering::Relaxed) as usize;
            ways[hand % WAYS].store(print, Ordering::Relaxed);
        }
        let filed = self.filed[bucket].load(Ordering::Relaxed) > 0;
        Sight { print, seen, filed }
    }

    /// An entry with this fingerprint was filed.
    pub(crate) fn filed(&self, print: u64) {
        self.filed[self.bucket(print)].fetch_add(1, Ordering::Relaxed);
    }

    /// An entry with this fingerprint left the cache.
    pub(crate) fn evicted(&self, print: u64) {
        self.filed[self.bucket(print)].fetch_sub(1, Ordering::Relaxed);
    }

    fn bucket(&self, print: u64) -> usize {
        print as usize & (self.hands.len() - 1)
    }
}
