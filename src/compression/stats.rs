use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters shared by every service a [`CompressionLayer`](super::CompressionLayer) builds.
///
/// Cheap to clone (clones share the counters). Each response updates them once, when its
/// encoding is decided and when its body ends, so the cost is a few relaxed atomic adds per
/// response, not per frame.
#[derive(Clone, Debug, Default)]
pub struct CompressionStats {
    inner: Arc<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    compressed: AtomicU64,
    skipped: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

/// A snapshot of [`CompressionStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompressionStatsSnapshot {
    /// Responses sent gzip- or deflate-encoded.
    pub compressed: u64,
    /// Responses sent as they were (not acceptable to the client, excluded by the predicate
    /// or a hard rule, too small, or answered 406).
    pub skipped: u64,
    /// Bytes of response bodies fed to the encoder, counted when each body ends.
    pub bytes_in: u64,
    /// Encoded bytes produced from them, headers and trailers included.
    pub bytes_out: u64,
}

impl CompressionStats {
    /// New counters, all zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// A snapshot of the counters.
    pub fn snapshot(&self) -> CompressionStatsSnapshot {
        let c = &self.inner;
        CompressionStatsSnapshot {
            compressed: c.compressed.load(Ordering::Relaxed),
            skipped: c.skipped.load(Ordering::Relaxed),
            bytes_in: c.bytes_in.load(Ordering::Relaxed),
            bytes_out: c.bytes_out.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn record_skipped(&self) {
        self.inner.skipped.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_compressed(&self) {
        self.inner.compressed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_bytes(&self, bytes_in: u64, bytes_out: u64) {
        self.inner.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        self.inner.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
    }
}
