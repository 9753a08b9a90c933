//! The cache of compressed representations, end to end through the layer: filing and
//! serving (by content and by strong `ETag`), what background recompression buys on
//! recorded traffic, and that nothing it holds reaches a client it was not for.

use std::time::{Duration, Instant};

use tower_gzip::cache::{CacheStats, VariantCache};

mod etag;
mod layer;
mod never_larger;
#[cfg(all(feature = "zstd", feature = "br"))]
mod recompressed;
mod shared;

/// The cache's stats once `done` holds (the background worker files and recompresses on
/// its own thread), or after 30 seconds.
pub(crate) fn wait_for(cache: &VariantCache, done: impl Fn(&CacheStats) -> bool) -> CacheStats {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stats = cache.stats();
        if done(&stats) || Instant::now() > deadline {
            return stats;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
