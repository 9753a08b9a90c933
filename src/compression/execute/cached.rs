//! A body known in full, looked up in the layer's cache before it is compressed.

use bytes::Bytes;
use http::HeaderMap;

use crate::buf::Chunks;
use crate::cache::{Lookup, Recorder, Variant};
use crate::compression::body::MAX_INPUT_PER_POLL;
use crate::compression::plan::Target;
use crate::compression::report;
use crate::compression::settings::CompressionSettings;
use crate::telemetry::ResponseTally;

/// What to do with a complete body.
pub(super) enum Served {
    /// The cache had it: the bytes to send.
    Hit {
        data: Bytes,
        trailers: Option<HeaderMap>,
    },
    /// Larger than one poll's slice: stream it (the cache's worker files it when it was
    /// seen before).
    Big { chunks: Chunks },
    /// Compress it in one shot, and file the result when `fill` says so.
    Compress {
        input: Bytes,
        trailers: Option<HeaderMap>,
        fill: Option<Recorder>,
    },
}

/// What the cache says of a streamed response.
pub(super) enum Validated {
    /// The entry under its validator: the bytes to send, without reading the body.
    Hit(Bytes),
    /// To stream, recorded to be filed once complete when the recorder says so (a miss
    /// under a validator the cache keys by).
    Stream(Option<Recorder>),
}

/// Looks a streamed response up by its validator, when the plan gave it one.
pub(super) fn by_validator(settings: &CompressionSettings, target: &Target) -> Validated {
    let (Some(validator), Some(cache)) = (&target.validator, settings.cache_for(target.coding))
    else {
        return Validated::Stream(None);
    };
    let dictionary = target.dictionary.as_ref();
    match cache.lookup_validated(validator, variant(target), dictionary) {
        Some(Lookup::Hit(data)) => {
            hit(settings, target, (0, data.len()), "etag");
            Validated::Hit(data)
        }
        Some(Lookup::Miss(fill)) => Validated::Stream(Some(cache.record(fill))),
        Some(Lookup::Unseen) | None => Validated::Stream(None),
    }
}

/// What a target's bytes depend on besides the body.
fn variant(target: &Target) -> Variant {
    Variant {
        coding: target.coding,
        level: target.level.native(target.coding),
        dictionary: target.dictionary.as_ref().map(|d| d.hash()),
    }
}

/// Looks the body up when the layer has a cache that wants it.
pub(super) fn serve(
    settings: &CompressionSettings,
    target: &Target,
    chunks: Chunks,
    trailers: Option<HeaderMap>,
) -> Served {
    let big = chunks.len() > MAX_INPUT_PER_POLL;
    let cache = settings.cache_for(target.coding);
    let cache = cache.filter(|cache| cache.wants(chunks.len() as u64));
    // Read ahead to its end, a large body with trailers has nothing left to stream them
    // from: it is compressed in one go, uncached (rare: trailers on a sized response).
    let Some(cache) = cache.filter(|_| trailers.is_none()) else {
        return uncached(chunks, trailers);
    };
    // The one-shot codecs and the hash want one slice: several ready frames are joined.
    let input = chunks.concat();
    let dictionary = target.dictionary.as_ref();
    match cache.lookup(&input, variant(target), dictionary) {
        Lookup::Hit(data) => {
            hit(settings, target, (input.len(), data.len()), "body");
            Served::Hit { data, trailers }
        }
        Lookup::Miss(fill) if big => {
            cache.fill_later(fill, input.clone(), dictionary.cloned());
            Served::Big {
                chunks: Chunks::from(input),
            }
        }
        Lookup::Unseen if big => Served::Big {
            chunks: Chunks::from(input),
        },
        Lookup::Miss(fill) => Served::Compress {
            input,
            trailers,
            fill: Some(cache.record(fill)),
        },
        Lookup::Unseen => Served::Compress {
            input,
            trailers,
            fill: None,
        },
    }
}

/// A complete body that skips the content lookup: compressed in one go, or streamed when
/// large and without trailers.
fn uncached(chunks: Chunks, trailers: Option<HeaderMap>) -> Served {
    match chunks.len() > MAX_INPUT_PER_POLL && trailers.is_none() {
        true => Served::Big { chunks },
        false => Served::Compress {
            input: chunks.concat(),
            trailers,
            fill: None,
        },
    }
}

/// Tells a response served from the cache (found by `key`: its body or its validator).
fn hit(
    settings: &CompressionSettings,
    target: &Target,
    (bytes_in, bytes_out): (usize, usize),
    key: &'static str,
) {
    let level = target.level.native(target.coding);
    let mut tally = ResponseTally::new(target.coding, level, false);
    (tally.bytes_in, tally.bytes_out) = (bytes_in as u64, bytes_out as u64);
    report::cached(&settings.stats, &tally, key);
}
