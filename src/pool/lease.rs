//! Parking: a paused stream lends its state to the pool and takes it back at its next input,
//! unless another stream needed it meanwhile.
//!
//! Giving a paused stream's state back made idle streams cheap, but a stream that pauses
//! after every event then paid a redraw, a reset and (gzip) 32 KiB of priming per event:
//! ~100 us on an SSE event of 25 bytes. A parked state stays on the shelf unreset, counted
//! idle (a paused stream holds nothing), and goes back to its stream as it was; only a draw
//! that finds no clean state takes it, so a quiet pool costs a pause a flush and a crowded
//! one costs what releasing did.

use std::marker::PhantomData;

use super::{CodecPool, Pooled, PooledState};

/// A paused stream's claim on the state it parked.
pub(crate) struct Lease<T: PooledState> {
    ticket: u64,
    pool: CodecPool,
    kind: PhantomData<fn() -> T>,
}

impl<T: PooledState> Pooled<T> {
    /// Parks the state for its stream's next input. `Err` gives it back when every idle
    /// place holds a parked state: the caller then releases it as before.
    pub(crate) fn park(mut self) -> Result<Lease<T>, Self> {
        let state = self.state.take().expect("state is present until drop");
        let shelf = T::shelf(&self.pool.inner);
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

impl<T: PooledState> Lease<T> {
    /// The parked state, as it was left, unless a draw has taken it.
    pub(crate) fn reclaim(self) -> Option<Pooled<T>> {
        let (state, level) = T::shelf(&self.pool.inner).unpark(self.ticket, true)?;
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
        let shelf = T::shelf(&self.pool.inner);
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

/// A stream's hold on its state: none yet (or given away), checked out, or parked.
pub(crate) enum Hold<T: PooledState> {
    None,
    Held(Pooled<T>),
    Parked(Lease<T>),
}

impl<T: PooledState> Hold<T> {
    /// Whether the state is checked out to this stream now.
    pub(crate) fn is_held(&self) -> bool {
        matches!(self, Hold::Held(_))
    }

    pub(crate) fn held(&mut self) -> Option<&mut Pooled<T>> {
        match self {
            Hold::Held(state) => Some(state),
            _ => None,
        }
    }

    /// Takes the parked state back if it is still there: `Held` when it was (or already
    /// was held), `None` when it was given away (or never drawn), for the caller to draw.
    pub(crate) fn resume(&mut self) -> &mut Self {
        if let Hold::Parked(_) = self {
            let Hold::Parked(lease) = std::mem::replace(self, Hold::None) else {
                unreachable!()
            };
            if let Some(state) = lease.reclaim() {
                *self = Hold::Held(state);
            }
        }
        self
    }

    /// Parks a held state; `Err` with the state when the pool has no room for it (the hold
    /// is then `None`).
    pub(crate) fn park(&mut self) -> Result<(), Pooled<T>> {
        if let Hold::Held(_) = self {
            let Hold::Held(state) = std::mem::replace(self, Hold::None) else {
                unreachable!()
            };
            *self = Hold::Parked(state.park()?);
        }
        Ok(())
    }
}

impl<T: PooledState> std::fmt::Debug for Hold<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Hold::None => "None",
            Hold::Held(_) => "Held",
            Hold::Parked(_) => "Parked",
        })
    }
}

impl<T: PooledState> Default for Hold<T> {
    fn default() -> Self {
        Hold::None
    }
}
