//! The cache of compressed representations, end to end through the layer: filing and
//! serving (by content and by strong `ETag`), what background recompression buys on
//! recorded traffic, and that nothing it holds reaches a client it was not for.

use tower_gzip::cache::{CacheStats, VariantCache};

mod etag;
mod layer;
mod never_larger;
#[cfg(all(feature = "zstd", feature = "br"))]
mod recompressed;
mod shared;

/// The cache's stats once `done` holds (the worker runs on its own thread).
pub(crate) fn wait_for(cache: &VariantCache, done: impl Fn(&CacheStats) -> bool) -> CacheStats {
    tower_gzip_support::settle(|| cache.stats(), done)
}
