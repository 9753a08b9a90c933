use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::codec::{FORMATS, Format};

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
    skipped: AtomicU64,
    by_coding: [CodingCounters; FORMATS],
}

#[derive(Debug, Default)]
struct CodingCounters {
    compressed: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

impl CodingCounters {
    fn snapshot(&self) -> CodingStats {
        CodingStats {
            compressed: self.compressed.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of [`CompressionStats`]: totals over every coding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompressionStatsSnapshot {
    /// Responses sent with a content coding.
    pub compressed: u64,
    /// Responses sent as they were (not acceptable to the client, excluded by the predicate
    /// or a hard rule, too small, or answered 406).
    pub skipped: u64,
    /// Bytes of response bodies fed to the encoders, counted when each body ends.
    pub bytes_in: u64,
    /// Encoded bytes produced from them, headers and trailers included.
    pub bytes_out: u64,
}

/// The counters of one coding, from [`CompressionStats::coding`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodingStats {
    /// Responses sent with this coding.
    pub compressed: u64,
    /// Bytes fed to this coding's encoders.
    pub bytes_in: u64,
    /// Bytes they produced.
    pub bytes_out: u64,
}

impl CompressionStats {
    /// New counters, all zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// A snapshot of the totals.
    pub fn snapshot(&self) -> CompressionStatsSnapshot {
        let mut total = CompressionStatsSnapshot {
            skipped: self.inner.skipped.load(Ordering::Relaxed),
            ..Default::default()
        };
        for coding in &self.inner.by_coding {
            let c = coding.snapshot();
            total.compressed += c.compressed;
            total.bytes_in += c.bytes_in;
            total.bytes_out += c.bytes_out;
        }
        total
    }

    /// A snapshot of one coding's counters.
    pub fn coding(&self, format: Format) -> CodingStats {
        self.inner.by_coding[format.index()].snapshot()
    }

    pub(crate) fn record_skipped(&self) {
        self.inner.skipped.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_compressed(&self, format: Format) {
        let c = &self.inner.by_coding[format.index()];
        c.compressed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_bytes(&self, format: Format, bytes_in: u64, bytes_out: u64) {
        let c = &self.inner.by_coding[format.index()];
        c.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        c.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
    }
}
