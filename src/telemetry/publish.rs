//! What the application publishes: descriptions, the pool's gauges, levels.

use metrics::{Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge};

use crate::cache::VariantCache;
use crate::{CodecPool, ContentCoding};

// The metric names; `docs/telemetry.md` lists them for users.

/// Counter, label `coding`: responses the layer answered, by the coding sent (`identity`
/// for those sent as they were: see [`SKIPPED`] for why).
pub(crate) const RESPONSES: &str = "tower_gzip_responses_total";
/// Counter, label `reason` (a [`crate::compression::SkipReason`] name): responses sent unencoded, by why.
pub(crate) const SKIPPED: &str = "tower_gzip_skipped_total";
/// Counter, label `coding`: bytes fed to the encoders, counted when each body ends.
pub(crate) const BYTES_IN: &str = "tower_gzip_bytes_in_total";
/// Counter, label `coding`: encoded bytes they produced.
pub(crate) const BYTES_OUT: &str = "tower_gzip_bytes_out_total";
/// Histogram, label `coding`: seconds spent compressing one response (a body known in full
/// in one call; a stream summed over its slices, without the time waiting for its input).
pub(crate) const SECONDS: &str = "tower_gzip_compression_seconds";
/// Histogram, label `coding`: bytes out over bytes in, per response that had input.
pub(crate) const RATIO: &str = "tower_gzip_compression_ratio";
/// Counter, label `outcome` (`hit`, `unknown`, `refused`, `not_offered`): requests that named
/// a dictionary in `Available-Dictionary` (see
/// [`DictionaryStats`](crate::compression::DictionaryStats)).
pub(crate) const DICTIONARY: &str = "tower_gzip_dictionary_requests_total";
/// Gauge, label `kind` (a [`PoolStats::kinds`](crate::pool::PoolStats::kinds) name): pooled
/// states checked out now.
pub(crate) const POOL_IN_USE: &str = "tower_gzip_pool_in_use";
/// Gauge, label `kind`: states idle in the pool now, parked ones included.
pub(crate) const POOL_IDLE: &str = "tower_gzip_pool_idle";
/// Gauge, label `kind`: of the idle states, those parked by paused streams.
pub(crate) const POOL_PARKED: &str = "tower_gzip_pool_parked";
/// Counter, label `kind`: states the pool had to allocate (none was idle).
pub(crate) const POOL_CREATED: &str = "tower_gzip_pool_created_total";
/// Gauge, label `state` (`active`, `waiting`): br streams holding an encoder, and waiting
/// for their turn.
pub(crate) const BR_STREAMS: &str = "tower_gzip_br_streams";
/// Gauge, label `coding`: the compression level in force for the coding.
pub(crate) const LEVEL: &str = "tower_gzip_level";
/// Counter, label `event` (`hit`, `miss`, `refused`, `admitted`, `evicted`, `recompressed`,
/// `recompress_dropped`): what a [`VariantCache`](crate::cache::VariantCache) did (see
/// [`CacheStats`](crate::cache::CacheStats)).
pub(crate) const CACHE: &str = "tower_gzip_cache_total";
/// Gauge, label `held` (`entries`, `bytes`): what the cache holds now, bytes as its budget
/// counts them.
pub(crate) const CACHE_HELD: &str = "tower_gzip_cache_held";
/// Counter: bytes the background recompressions took off the cache's entries.
pub(crate) const CACHE_SAVED: &str = "tower_gzip_cache_recompress_saved_bytes_total";

/// Describes every metric of [`telemetry`](super) to the installed recorder (help text and
/// unit). The layer does it when it registers its handles; call it to describe them before
/// that, or for [`publish_pool`] alone.
pub(crate) fn describe() {
    describe_counter!(
        RESPONSES,
        Unit::Count,
        "Responses by the content coding sent"
    );
    describe_counter!(SKIPPED, Unit::Count, "Responses sent unencoded, by reason");
    describe_counter!(BYTES_IN, Unit::Bytes, "Bytes fed to the encoders");
    describe_counter!(BYTES_OUT, Unit::Bytes, "Encoded bytes produced");
    describe_histogram!(SECONDS, Unit::Seconds, "Time compressing one response");
    describe_histogram!(RATIO, "Encoded size over input size, per response");
    describe_counter!(
        DICTIONARY,
        Unit::Count,
        "Requests naming a dictionary, by outcome"
    );
    describe_gauge!(POOL_IN_USE, "Pooled codec states checked out now");
    describe_gauge!(
        POOL_IDLE,
        "Pooled codec states idle now, parked ones included"
    );
    describe_gauge!(POOL_PARKED, "Idle codec states parked by paused streams");
    describe_counter!(
        POOL_CREATED,
        Unit::Count,
        "Codec states allocated by the pool"
    );
    describe_gauge!(
        BR_STREAMS,
        "br streams holding an encoder, or waiting for a turn"
    );
    describe_gauge!(LEVEL, "Compression level in force, by coding");
    describe_counter!(CACHE, Unit::Count, "What the cache did, by event");
    describe_gauge!(CACHE_HELD, "Entries and bytes the cache holds now");
    describe_counter!(
        CACHE_SAVED,
        Unit::Bytes,
        "Bytes the cache's background recompressions saved"
    );
}

/// Publishes a snapshot of `cache` ([`VariantCache::stats`]): the `tower_gzip_cache_total`
/// counters by event, the `tower_gzip_cache_held` gauges and
/// `tower_gzip_cache_recompress_saved_bytes_total`. Call it where the metrics are read, as
/// [`publish_pool`].
pub fn publish_cache(cache: &VariantCache) {
    let stats = cache.stats();
    let events = [
        ("hit", stats.hits),
        ("miss", stats.misses),
        ("refused", stats.refused),
        ("admitted", stats.admitted),
        ("evicted", stats.evicted),
        ("recompressed", stats.recompressed),
        ("recompress_dropped", stats.recompress_dropped),
    ];
    for (event, count) in events {
        counter!(CACHE, "event" => event).absolute(count);
    }
    gauge!(CACHE_HELD, "held" => "entries").set(stats.entries as f64);
    gauge!(CACHE_HELD, "held" => "bytes").set(stats.bytes as f64);
    counter!(CACHE_SAVED).absolute(stats.recompress_saved);
}

/// Publishes a snapshot of `pool` ([`CodecPool::stats`]): per kind of state, the
/// `tower_gzip_pool_in_use`, `tower_gzip_pool_idle` and
/// `tower_gzip_pool_parked` gauges and the
/// `tower_gzip_pool_created_total` counter; and the
/// `tower_gzip_br_streams` gauges.
///
/// Call it where the metrics are read (a `/metrics` handler, before rendering) or from a
/// periodic task: it takes a snapshot of a few atomics, so its cost is that of the
/// recorder's updates (~40 series).
pub fn publish_pool(pool: &CodecPool) {
    let stats = pool.stats();
    for (kind, k) in stats.kinds() {
        let kind = kind.name();
        gauge!(POOL_IN_USE, "kind" => kind).set(k.in_use() as f64);
        gauge!(POOL_IDLE, "kind" => kind).set(k.idle as f64);
        gauge!(POOL_PARKED, "kind" => kind).set(k.idle_parked as f64);
        counter!(POOL_CREATED, "kind" => kind).absolute(k.created);
    }
    let (active, waiting) = stats.br_streams();
    gauge!(BR_STREAMS, "state" => "active").set(active as f64);
    gauge!(BR_STREAMS, "state" => "waiting").set(waiting as f64);
}

/// Sets the `tower_gzip_level` gauge of `coding` to `level`: for whatever sets the level
/// at run time (a load governor) to call when it changes it.
pub(crate) fn publish_level(coding: ContentCoding, level: i32) {
    gauge!(LEVEL, "coding" => coding.as_str()).set(level);
}
