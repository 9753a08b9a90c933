use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::coding::{CODINGS, ContentCoding};

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
    /// By [`ContentCoding::index`].
    by_coding: [CodingCounters; CODINGS],
    dictionary: DictionaryCounters,
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
    /// `Access-Control-Allow-Origin`).
    pub refused: u64,
    /// The dictionary is known and readable, but `Accept-Encoding` offered no dictionary
    /// coding this layer makes, or the response was not compressed at all.
    pub not_offered: u64,
}

/// What a dictionary lookup gave, for [`CompressionStats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DictionaryOutcome {
    Hit,
    Unknown,
    Refused,
    NotOffered,
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
#[non_exhaustive]
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
#[non_exhaustive]
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

    /// A snapshot of one coding's counters (`dcz` and `dcb` apart from zstd and br).
    pub fn coding(&self, coding: ContentCoding) -> CodingStats {
        self.inner.by_coding[coding.index()].snapshot()
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

    pub(crate) fn record_skipped(&self) {
        self.inner.skipped.fetch_add(1, Ordering::Relaxed);
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
