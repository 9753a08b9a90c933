//! What a connection may use: [`DeflateConfig`] (level, threshold, windows, limits, the
//! pool) and the global [`WindowBudget`] that bounds the bytes connections with context
//! takeover keep between messages.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::kept::KeptCompressors;
use crate::CodecPool;

/// A cap on the bytes that connections with context takeover keep between messages (their
/// parked windows: the last `2^w` bytes per direction). A connection reserves its windows at
/// the handshake; once the budget is spent, new connections are answered without takeover.
/// Cloning shares the budget.
#[derive(Clone, Debug)]
pub struct WindowBudget {
    inner: Arc<BudgetInner>,
}

#[derive(Debug)]
struct BudgetInner {
    cap: usize,
    held: AtomicUsize,
}

impl WindowBudget {
    /// A budget of `cap` bytes.
    pub fn new(cap: usize) -> Self {
        WindowBudget {
            inner: Arc::new(BudgetInner {
                cap,
                held: AtomicUsize::new(0),
            }),
        }
    }

    /// The process-wide budget (64 MiB: a thousand connections with 32 KiB windows both
    /// ways) that configs use unless given another.
    pub fn global() -> &'static WindowBudget {
        static GLOBAL: std::sync::OnceLock<WindowBudget> = std::sync::OnceLock::new();
        GLOBAL.get_or_init(|| WindowBudget::new(64 << 20))
    }

    /// Bytes reserved now.
    pub fn held(&self) -> usize {
        self.inner.held.load(Ordering::Relaxed)
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.inner.cap
    }

    /// Reserves `bytes`, or `None` when that would pass the cap.
    pub(crate) fn reserve(&self, bytes: usize) -> Option<Reservation> {
        let held = &self.inner.held;
        let mut now = held.load(Ordering::Relaxed);
        loop {
            let next = now.checked_add(bytes).filter(|&n| n <= self.inner.cap)?;
            match held.compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    return Some(Reservation {
                        budget: self.clone(),
                        bytes,
                    });
                }
                Err(seen) => now = seen,
            }
        }
    }

    /// Reserves `bytes` whatever the cap: a peer that takes over its context forces the
    /// receiver to keep the window (a client cannot refuse the server's takeover).
    pub(crate) fn force(&self, bytes: usize) -> Reservation {
        self.inner.held.fetch_add(bytes, Ordering::AcqRel);
        Reservation {
            budget: self.clone(),
            bytes,
        }
    }
}

/// Bytes of a [`WindowBudget`] held by one connection, given back on drop.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: WindowBudget,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget
            .inner
            .held
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// How connections compress: the defaults are the memory-safe ones (no context takeover,
/// so an idle connection holds no codec memory; a state is drawn from the pool per message).
///
/// Context takeover ([`context_takeover`](Self::context_takeover)) is opt-in: it keeps one
/// compression history across messages, so text an attacker chooses and secrets of the
/// same connection share one LZ77 window, and the compressed sizes can leak the secrets
/// (CRIME-class attacks, RFC 7692 section 9). Turn it on only when what one connection
/// sends does not mix the two.
#[derive(Clone, Debug)]
pub struct DeflateConfig {
    pub(crate) level: u8,
    pub(crate) threshold: usize,
    pub(crate) context_takeover: bool,
    pub(crate) max_window_bits: u8,
    pub(crate) message_limit: usize,
    pub(crate) pool: CodecPool,
    pub(crate) budget: WindowBudget,
    pub(crate) kept: KeptCompressors,
}

impl Default for DeflateConfig {
    fn default() -> Self {
        DeflateConfig {
            level: 6,
            threshold: 128,
            context_takeover: false,
            max_window_bits: 15,
            // tungstenite's default `max_message_size`.
            message_limit: 64 << 20,
            pool: CodecPool::global().clone(),
            budget: WindowBudget::global().clone(),
            kept: KeptCompressors::global().clone(),
        }
    }
}

impl DeflateConfig {
    /// The defaults: level 6, messages under 128 bytes sent as they are, no context
    /// takeover, windows up to 15 bits, inflated messages up to 64 MiB, the global pool
    /// and budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// The deflate level, 1 (fastest) to 9 (smallest).
    pub fn level(mut self, level: u8) -> Self {
        self.level = level.clamp(1, 9);
        self
    }

    /// Messages shorter than this are sent uncompressed (RFC 7692 section 6: a sender may
    /// leave any message uncompressed), and so are messages deflate does not shrink.
    /// Default 128 bytes. Zero compresses every data message, even one deflate makes
    /// larger: for peers that expect every message of a compressed session compressed.
    pub fn threshold(mut self, bytes: usize) -> Self {
        self.threshold = bytes;
        self
    }

    /// Allows context takeover when the peer allows it and the budget has room (see the
    /// type's doc for why it is off by default).
    pub fn context_takeover(mut self, on: bool) -> Self {
        self.context_takeover = on;
        self
    }

    /// The largest window, 9 to 15 bits, for what this side sends, and what it asks of
    /// the peer when the peer lets it (`client_max_window_bits` in a client's offer; a
    /// client offers `server_max_window_bits`). Smaller windows shrink parked windows and
    /// the peer's memory, at some ratio.
    pub fn max_window_bits(mut self, bits: u8) -> Self {
        self.max_window_bits = bits.clamp(9, 15);
        self
    }

    /// The most bytes one inflated message may reach; a message past it is stopped there
    /// and the connection closed with 1009 (message too big). Default 64 MiB, tungstenite's
    /// `max_message_size`.
    pub fn message_limit(mut self, bytes: usize) -> Self {
        self.message_limit = bytes;
        self
    }

    /// The pool the codec states come from (default: the global pool).
    pub fn pool(mut self, pool: CodecPool) -> Self {
        self.pool = pool;
        self
    }

    /// The budget of parked windows and kept compressors (default: [`WindowBudget::global`]).
    pub fn budget(mut self, budget: WindowBudget) -> Self {
        self.budget = budget;
        self
    }

    /// With context takeover, the places where the connections that send most keep their
    /// compressor between messages instead of priming a pooled one from the parked window
    /// each time (default: [`KeptCompressors::global`], 64 places). Each kept compressor is
    /// charged to the [`budget`](Self::budget) at its state's size; a place held by a
    /// connection idle for a second goes to the next that asks. `KeptCompressors::new(0)`
    /// keeps none: every connection holds only its windows between messages.
    pub fn kept_compressors(mut self, places: KeptCompressors) -> Self {
        self.kept = places;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_past_its_cap_and_frees_on_drop() {
        let budget = WindowBudget::new(100);
        let a = budget.reserve(60).unwrap();
        assert!(budget.reserve(60).is_none());
        let forced = budget.force(60);
        assert_eq!(budget.held(), 120);
        drop(forced);
        drop(a);
        assert_eq!(budget.held(), 0);
        assert!(budget.reserve(100).is_some());
    }
}
