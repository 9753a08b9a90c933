//! Admission: a body is cached the second time it is seen. A fixed table of fingerprints
//! remembers what was seen; a body whose fingerprint is new costs a few sampled bytes and
//! one atomic swap, never a full hash nor a copy. A second table counts the fingerprints of
//! the entries filed, so a flood that overwrites the first never hides an entry.

use std::collections::hash_map::RandomState;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::key::fingerprint;

/// What the doorkeeper knows of a body.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sight {
    pub(crate) print: u64,
    /// Maybe seen lately: a miss is filed.
    pub(crate) seen: bool,
    /// Maybe filed: worth a full hash even if not seen lately.
    pub(crate) filed: bool,
}

/// Fingerprints of recently seen bodies, one per slot (a newer one overwrites an older).
#[derive(Debug)]
pub(crate) struct Doorkeeper {
    random: RandomState,
    slots: Box<[AtomicU64]>,
    /// Entries filed per slot (fingerprints that share a slot share a count).
    filed: Box<[AtomicU32]>,
}

impl Doorkeeper {
    /// A table of `slots` fingerprints (rounded up to a power of two).
    pub(crate) fn new(slots: usize) -> Doorkeeper {
        let slots = slots.next_power_of_two();
        Doorkeeper {
            random: RandomState::new(),
            slots: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            filed: (0..slots).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// `body`'s fingerprint and what the tables say of it (fingerprints can collide, so
    /// "maybe"); remembers it.
    pub(crate) fn check(&self, body: &[u8]) -> Sight {
        // 0 marks an empty slot.
        let print = fingerprint(&self.random, body).max(1);
        let slot = self.slot(print);
        let seen = self.slots[slot].swap(print, Ordering::Relaxed) == print;
        let filed = self.filed[slot].load(Ordering::Relaxed) > 0;
        Sight { print, seen, filed }
    }

    /// An entry with this fingerprint was filed.
    pub(crate) fn filed(&self, print: u64) {
        self.filed[self.slot(print)].fetch_add(1, Ordering::Relaxed);
    }

    /// An entry with this fingerprint left the cache.
    pub(crate) fn evicted(&self, print: u64) {
        self.filed[self.slot(print)].fetch_sub(1, Ordering::Relaxed);
    }

    fn slot(&self, print: u64) -> usize {
        print as usize & (self.slots.len() - 1)
    }
}
