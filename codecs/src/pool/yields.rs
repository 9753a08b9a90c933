//! Yield slots: a bound on how many streams with a large body in hand yield between slices.
//!
//! A stream yields after each slice so that every stream sends its first bytes early. A
//! stream whose producer handed over a large body at once (a handler's 1 MB `Vec`) pins
//! all of it until its last slice, so with every such stream yielding, hundreds of bodies
//! are alive at once. Past the bound a stream compresses its body through and frees it.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::CodecPool;

/// The slots of one pool.
pub(crate) struct YieldSlots {
    limit: usize,
    held: AtomicUsize,
}

/// One slot, given back when dropped.
pub struct YieldSlot(CodecPool);

impl YieldSlots {
    pub(crate) fn new(limit: usize) -> Self {
        YieldSlots {
            limit,
            held: AtomicUsize::new(0),
        }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Slots held now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    fn try_take(&self) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held < self.limit).then_some(held + 1)
            })
            .is_ok()
    }
}

impl YieldSlot {
    /// A slot of `pool`'s, if one is free.
    pub fn take(pool: &CodecPool) -> Option<YieldSlot> {
        pool.yield_slots()
            .try_take()
            .then(|| YieldSlot(pool.clone()))
    }
}

impl Drop for YieldSlot {
    fn drop(&mut self) {
        self.0.yield_slots().held.fetch_sub(1, Ordering::AcqRel);
    }
}

impl std::fmt::Debug for YieldSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("YieldSlot")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_bounded_and_given_back_on_drop() {
        let pool = CodecPool::builder().yield_limit(2).build();
        let a = YieldSlot::take(&pool).expect("a free slot");
        let b = YieldSlot::take(&pool).expect("a free slot");
        assert!(YieldSlot::take(&pool).is_none(), "past the limit");
        assert_eq!(pool.yield_slots().held(), 2);
        drop(a);
        let c = YieldSlot::take(&pool).expect("the slot given back");
        drop((b, c));
        assert_eq!(pool.yield_slots().held(), 0);
        let none = CodecPool::builder().yield_limit(0).build();
        assert!(
            YieldSlot::take(&none).is_none(),
            "a limit of 0 has no slots"
        );
    }
}
