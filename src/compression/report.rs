//! The one place a response's outcome is told: the layer's counters, a `tracing` event at
//! `DEBUG` (see [`crate::telemetry`]), and with the `metrics` feature the metric handles.

use std::time::Instant;

use tracing::{Level, debug, enabled};

use super::governor::Timed;
use super::stats::CompressionStats;
use crate::telemetry::{DictionaryOutcome, ResponseTally, SkipReason, TARGET};
use crate::{BoxError, ContentCoding};

/// Runs `work` (compression), timing it for `tally` if it measures time and for the
/// governor's account if there is one: the clock is read once around it for both, and not
/// at all when neither wants it.
pub(crate) fn account<R>(
    tally: &mut ResponseTally,
    governed: Option<&mut Timed>,
    work: impl FnOnce() -> R,
) -> R {
    if tally.time.is_none() && governed.is_none() {
        return work();
    }
    let started = Instant::now();
    let result = work();
    let busy = started.elapsed();
    if let Some(time) = &mut tally.time {
        *time += busy;
    }
    if let Some(timed) = governed {
        timed.add(busy);
    }
    result
}

/// Whether compression time is worth measuring for the response being decided: with the
/// `metrics` feature always (its histogram reads it), otherwise only while a subscriber
/// wants this crate's `DEBUG` events. Asked once per response, not per frame.
pub(crate) fn timed() -> bool {
    cfg!(feature = "metrics") || enabled!(target: TARGET, Level::DEBUG)
}

/// A response goes out unencoded, for `reason`.
pub(crate) fn skipped(stats: &CompressionStats, reason: SkipReason) {
    stats.record_skipped(reason);
    #[cfg(feature = "metrics")]
    stats.handles().skipped(reason);
    debug!(target: TARGET, reason = reason.as_str(), "not compressed");
}

/// A response goes out encoded with `coding` (its headers are set now; its bytes are told
/// by [`finished`]).
pub(crate) fn compressed(stats: &CompressionStats, coding: ContentCoding) {
    stats.record_compressed(coding);
    #[cfg(feature = "metrics")]
    stats.handles().compressed(coding);
}

/// A compressed body is done: in one shot, or a stream that ended (`complete`) or failed or
/// was dropped first.
pub(crate) fn finished(
    stats: &CompressionStats,
    tally: &ResponseTally,
    streamed: bool,
    complete: bool,
) {
    count(stats, tally);
    debug!(
        target: TARGET,
        coding = tally.coding.as_str(),
        level = tally.level,
        bytes_in = tally.bytes_in,
        bytes_out = tally.bytes_out,
        elapsed_us = tally.time.map(|t| t.as_micros() as u64),
        streamed,
        complete,
        "compressed"
    );
}

/// A response served from the cache, found by its body's hash (`key = "body"`, with the
/// identity size) or by its validator (`key = "etag"`, the body unread: no input counted).
pub(crate) fn cached(stats: &CompressionStats, tally: &ResponseTally, key: &'static str) {
    if tally.bytes_in > 0 {
        count(stats, tally);
    }
    let (coding, level) = (tally.coding.as_str(), tally.level);
    let (bytes_in, bytes_out) = (tally.bytes_in, tally.bytes_out);
    debug!(target: TARGET, coding, level, bytes_in, bytes_out, key, "served from cache");
}

/// Counts a response's bytes, in the stats and (with the feature) the metrics.
fn count(stats: &CompressionStats, tally: &ResponseTally) {
    stats.record_bytes(tally.coding, tally.bytes_in, tally.bytes_out);
    #[cfg(feature = "metrics")]
    stats.handles().finished(tally);
}

/// What became of a request that named a dictionary.
pub(crate) fn dictionary(stats: &CompressionStats, outcome: DictionaryOutcome) {
    stats.record_dictionary(outcome);
    #[cfg(feature = "metrics")]
    stats.handles().dictionary(outcome);
    debug!(target: TARGET, outcome = outcome.as_str(), "dictionary");
}

/// The encoder for `coding` failed on a body known in full; it goes out as `fallback` (a
/// coding, `identity`, or `none`: the body ends in the error).
pub(crate) fn encoder_failed(coding: ContentCoding, error: &BoxError, fallback: &'static str) {
    debug!(
        target: TARGET,
        coding = coding.as_str(),
        error = %error,
        fallback,
        "encoder failed"
    );
}
