use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::telemetry::{DictionaryOutcome, SkipReason};
use crate::{CODINGS, ContentCoding};

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
    /// By [`SkipReason`].
    skipped: [AtomicU64; SkipReason::ALL.len()],
    /// By [`ContentCoding::index`].
    by_coding: [CodingCounters; CODINGS],
    dictionary: DictionaryCounters,
    /// The metric handles, registered at the first response.
    #[cfg(feature = "metrics")]
    handles: std::sync::OnceLock<crate::telemetry::Handles>,
}

#[derive(Debug, Default)]
struct CodingCounters {
    compressed: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

/// How requests that named a dictionary (`Available-Dictionary`) fared.
#[derive(Debug, Default)]
struct DictionaryCounters {
    hits: AtomicU64,
    unknown: AtomicU64,
    refused: AtomicU64,
    not_offered: AtomicU64,
}

/// What became of the requests that named a dictionary in `Available-Dictionary`, from
/// [`CompressionStats::dictionaries`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DictionaryStats {
    /// Answered `dcz` or `dcb` with the dictionary named.
    pub hits: u64,
    /// The dictionary named is not in the store (or the value was malformed): the usual
    /// coding was used.
    pub unknown: u64,
    /// The dictionary is known, but the readability gate of RFC 9842 refused it for this
    /// request (a cross-origin no-cors fetch, or CORS without a matching
    /// `Access-Control-Allow-Origin`), or its `match` does not cover the request's path
    /// (section 2.2).
    pub refused: u64,
    /// The dictionary is known and readable, but `Accept-Encoding` offered no dictionary
    /// coding this layer makes, or the response was not compressed at all.
    pub not_offered: u64,
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

/// The counters of one coding, from [`CompressionStats::coding`], or of all of them, from
/// [`CompressionStats::total`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CodingStats {
    /// Responses sent with this coding.
    pub compressed: u64,
    /// Bytes of response bodies fed to its encoders, counted when each body ends.
    pub bytes_in: u64,
    /// Encoded bytes they produced, headers and trailers included.
    pub bytes_out: u64,
}

impl CompressionStats {
    /// New counters, all zero.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The counters summed over every coding. Responses sent as they were are counted by
    /// reason, in [`skipped_for`](Self::skipped_for).
    pub fn total(&self) -> CodingStats {
        let mut total = CodingStats::default();
        for coding in &self.inner.by_coding {
            let c = coding.snapshot();
            total.compressed += c.compressed;
            total.bytes_in += c.bytes_in;
            total.bytes_out += c.bytes_out;
        }
        total
    }

    /// A snapshot of one coding's counters (`dcz` and `dcb` apart from zstd and br).
    pub fn coding(&self, coding: ContentCoding) -> CodingStats {
        self.inner.by_coding[coding.index()].snapshot()
    }

    /// Responses sent unencoded for `reason`.
    pub fn skipped_for(&self, reason: SkipReason) -> u64 {
        self.inner.skipped[reason as usize].load(Ordering::Relaxed)
    }

    /// What became of the requests that named a dictionary.
    pub fn dictionaries(&self) -> DictionaryStats {
        let d = &self.inner.dictionary;
        DictionaryStats {
            hits: d.hits.load(Ordering::Relaxed),
            unknown: d.unknown.load(Ordering::Relaxed),
            refused: d.refused.load(Ordering::Relaxed),
            not_offered: d.not_offered.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn record_skipped(&self, reason: SkipReason) {
        self.inner.skipped[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The metric handles, registered with the recorder installed at the first call.
    #[cfg(feature = "metrics")]
    pub(crate) fn handles(&self) -> &crate::telemetry::Handles {
        self.inner
            .handles
            .get_or_init(crate::telemetry::Handles::register)
    }

    pub(crate) fn record_dictionary(&self, outcome: DictionaryOutcome) {
        let d = &self.inner.dictionary;
        let counter = match outcome {
            DictionaryOutcome::Hit => &d.hits,
            DictionaryOutcome::Unknown => &d.unknown,
            DictionaryOutcome::Refused => &d.refused,
            DictionaryOutcome::NotOffered => &d.not_offered,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_compressed(&self, coding: ContentCoding) {
        let c = &self.inner.by_coding[coding.index()];
        c.compressed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_bytes(&self, coding: ContentCoding, bytes_in: u64, bytes_out: u64) {
        let c = &self.inner.by_coding[coding.index()];
        c.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        c.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters and metric handles are indexed by `reason as usize` and `outcome as usize`.
    #[test]
    fn reasons_and_outcomes_index_their_own_slot_with_their_own_name() {
        for (i, reason) in SkipReason::ALL.into_iter().enumerate() {
            assert_eq!(reason as usize, i);
            let same = SkipReason::ALL
                .iter()
                .filter(|r| r.as_str() == reason.as_str());
            assert_eq!(same.count(), 1, "{reason:?}");
        }
        for (i, outcome) in DictionaryOutcome::ALL.into_iter().enumerate() {
            assert_eq!(outcome as usize, i);
        }
        let stats = CompressionStats::new();
        stats.record_skipped(SkipReason::Level);
        stats.record_skipped(SkipReason::Level);
        stats.record_skipped(SkipReason::Size);
        assert_eq!(stats.skipped_for(SkipReason::Level), 2);
        assert_eq!(stats.skipped_for(SkipReason::Size), 1);
        assert_eq!(stats.total(), CodingStats::default());
    }
}
