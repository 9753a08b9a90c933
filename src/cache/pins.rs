//! Bodies the application serves as the same `Bytes` again (a static asset, a response it
//! keeps), found by their address instead of their hash.
//!
//! A pin is a clone of the body's `Bytes` beside the body's digest. While the pin holds
//! it, the memory at that address can be neither freed nor written: a `Bytes` is immutable,
//! and no `BytesMut` can reclaim memory another handle shares. So a body at the same address
//! and of the same length has the same bytes, and needs no hash. (A `Bytes` over memory
//! changed behind Rust's back, such as a memory-mapped file rewritten in place, breaks that
//! promise for every reader, not only this one.)
//!
//! Pins cost the memory they keep alive, so they are bounded by bytes, and a body is pinned
//! only when its entry is hit twice in a row from the same address.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;

use crate::sync::lock;

/// What a pin costs beyond the body it keeps: its map slot (address, `Bytes` handle and
/// digest), its queue place and the allocator's rounding. An upper bound.
pub(crate) const PIN_OVERHEAD: u64 = 160;

/// Shards of the pins: concurrent lookups rarely meet on one lock.
const SHARDS: usize = 8;

/// A body's address and length.
pub(crate) type Address = (usize, usize);

/// The address of `body`.
pub(crate) fn address(body: &Bytes) -> Address {
    (body.as_ptr() as usize, body.len())
}

#[derive(Debug, Default)]
struct Shard {
    pins: HashMap<Address, (Bytes, [u8; 32])>,
    /// Oldest first: the first to go when the shard is over its budget.
    order: VecDeque<Address>,
    bytes: u64,
}

/// Pinned bodies by address, within a byte budget.
#[derive(Debug)]
pub(crate) struct Pins {
    shards: Box<[Mutex<Shard>]>,
    shard_budget: u64,
}

impl Pins {
    pub(crate) fn new(budget: u64) -> Pins {
        Pins {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            shard_budget: budget / SHARDS as u64,
        }
    }

    fn shard(&self, address: Address) -> &Mutex<Shard> {
        // Allocations are aligned: the low bits say little.
        let mixed = (address.0 >> 4) ^ address.1;
        &self.shards[mixed % self.shards.len()]
    }

    /// The digest of the body pinned at `body`'s address, if any.
    pub(crate) fn find(&self, body: &Bytes) -> Option<[u8; 32]> {
        let address = address(body);
        let shard = lock(self.shard(address));
        shard.pins.get(&address).map(|(_, digest)| *digest)
    }

    /// Pins `body` under its `digest`, giving up the oldest pins past the budget.
    pub(crate) fn pin(&self, body: &Bytes, digest: [u8; 32]) {
        let weight = body.len() as u64 + PIN_OVERHEAD;
        if weight > self.shard_budget {
            return;
        }
        let address = address(body);
        let mut shard = lock(self.shard(address));
        if shard.pins.insert(address, (body.clone(), digest)).is_some() {
            return;
        }
        shard.order.push_back(address);
        shard.bytes += weight;
        while shard.bytes > self.shard_budget {
            let Some(oldest) = shard.order.pop_front() else {
                break;
            };
            if let Some((gone, _)) = shard.pins.remove(&oldest) {
                shard.bytes -= gone.len() as u64 + PIN_OVERHEAD;
            }
        }
    }

    /// The bytes the pins keep alive (with their overhead).
    pub(crate) fn held(&self) -> u64 {
        self.shards.iter().map(|shard| lock(shard).bytes).sum()
    }
}
