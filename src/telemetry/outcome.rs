//! What the compression layer tells about a response, in words every teller shares: why it
//! went out unencoded, what became of the dictionary it named, and what its encoding did.
//! The counters, the events and the metric handles all read these; this module reads
//! nothing of the layer.

use std::time::Duration;

use crate::ContentCoding;

/// Why a response went out unencoded: the `reason` of its `tracing` event and of the
/// `tower_gzip_skipped_total` metric, and
/// [`CompressionStats::skipped_for`](crate::compression::CompressionStats::skipped_for)'s key. The rules are the [module docs'](crate::compression#what-gets-compressed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SkipReason {
    /// `already_encoded`: the response has a `Content-Encoding`.
    AlreadyEncoded,
    /// `partial`: a `Content-Range` or a 206.
    Partial,
    /// `no_body`: a 1xx, 204 or 304 response, or the answer to a HEAD request.
    NoBody,
    /// `no_transform`: `Cache-Control: no-transform`.
    NoTransform,
    /// `type`: the predicate refused a response whose `Content-Type` is compressed already
    /// (images but SVG, audio, video, archives, fonts: what
    /// [`DefaultPredicate`](crate::predicate::DefaultPredicate) refuses).
    ContentType,
    /// `predicate`: the predicate refused it for another reason.
    Predicate,
    /// `identity`: the client's `Accept-Encoding` chose no coding this layer offers (or
    /// preferred identity).
    Identity,
    /// `not_acceptable`: the client accepts neither a coding offered nor identity; a
    /// successful response became a 406, others went out as they were.
    NotAcceptable,
    /// `size`: the body is smaller than the layer's `min_size` (known, or found by reading
    /// it ahead).
    Size,
    /// `level`: the level chooser said to send it unencoded.
    Level,
    /// `error`: the encoders failed on the body known in full and identity was acceptable,
    /// or the body itself failed before anything was compressed.
    Error,
}

impl SkipReason {
    /// Every reason, in declaration order.
    pub const ALL: [SkipReason; 11] = [
        SkipReason::AlreadyEncoded,
        SkipReason::Partial,
        SkipReason::NoBody,
        SkipReason::NoTransform,
        SkipReason::ContentType,
        SkipReason::Predicate,
        SkipReason::Identity,
        SkipReason::NotAcceptable,
        SkipReason::Size,
        SkipReason::Level,
        SkipReason::Error,
    ];

    /// The name in events and metric labels (its `Display`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SkipReason::AlreadyEncoded => "already_encoded",
            SkipReason::Partial => "partial",
            SkipReason::NoBody => "no_body",
            SkipReason::NoTransform => "no_transform",
            SkipReason::ContentType => "type",
            SkipReason::Predicate => "predicate",
            SkipReason::Identity => "identity",
            SkipReason::NotAcceptable => "not_acceptable",
            SkipReason::Size => "size",
            SkipReason::Level => "level",
            SkipReason::Error => "error",
        }
    }
}

/// The name in events and metric labels: `already_encoded`, `partial`, `no_body`,
/// `no_transform`, `type`, `predicate`, `identity`, `not_acceptable`, `size`, `level`,
/// `error`.
impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What became of a request that named a dictionary: counted in
/// [`CompressionStats`](crate::compression::CompressionStats), and the `outcome` of its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DictionaryOutcome {
    Hit,
    Unknown,
    Refused,
    NotOffered,
}

impl DictionaryOutcome {
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) const ALL: [DictionaryOutcome; 4] = [
        DictionaryOutcome::Hit,
        DictionaryOutcome::Unknown,
        DictionaryOutcome::Refused,
        DictionaryOutcome::NotOffered,
    ];

    /// The name in events and metric labels, as [`DictionaryStats`](crate::compression::DictionaryStats)' fields.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DictionaryOutcome::Hit => "hit",
            DictionaryOutcome::Unknown => "unknown",
            DictionaryOutcome::Refused => "refused",
            DictionaryOutcome::NotOffered => "not_offered",
        }
    }
}

/// What one compressed response did, filled in as it is compressed and told at its end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResponseTally {
    pub(crate) coding: ContentCoding,
    pub(crate) level: u8,
    pub(crate) bytes_in: u64,
    pub(crate) bytes_out: u64,
    /// Time spent compressing, when measured.
    pub(crate) time: Option<Duration>,
}

impl ResponseTally {
    /// A tally for `coding` at `level`, measuring time if `timed`.
    pub(crate) fn new(coding: ContentCoding, level: u8, timed: bool) -> Self {
        ResponseTally {
            coding,
            level,
            bytes_in: 0,
            bytes_out: 0,
            time: timed.then_some(Duration::ZERO),
        }
    }
}
