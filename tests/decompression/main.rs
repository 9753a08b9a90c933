//! RequestDecompressionLayer: codings, 415s, corrupt input, bombs and limits, through tower
//! and through a real axum server on loopback; and tower-http's own zstd and br response
//! decompression tests, ported (`codings`).

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();
use tower_gzip_support as common;

mod harness;
mod server;

mod bombs;
#[cfg(any(feature = "zstd", feature = "br"))]
mod codings;
mod corrupt;
mod limits;
mod roundtrip;
