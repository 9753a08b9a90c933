//! The harness: the compression suite's layers and pool; requests, canned responses and
//! running a layer once come from the support crate.

use http::Response;
use http_body::Body;
use tower_gzip::CodecPool;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::compression::predicate::Predicate;

pub use tower_gzip_support::collect;
pub use tower_gzip_support::service::{full, get, respond, round, stream_of, trailers, typed};

/// The most input one `poll_frame` may compress (spec: 64 KiB).
pub const SLICE: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

#[derive(Clone)]
pub struct Always;

impl Predicate for Always {
    fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
        true
    }
}

/// A layer that offers only gzip and deflate, for tests about their negotiation: zstd and
/// br, offered by default with their features, would win ties and `*`.
pub fn flate_only() -> CompressionLayer {
    let layer = CompressionLayer::new();
    #[cfg(feature = "zstd")]
    let layer = layer.no_zstd();
    #[cfg(feature = "br")]
    let layer = layer.no_br();
    layer
}

/// A coding token this crate never offers nor decodes, whatever its features.
pub const UNKNOWN_CODING: &str = "compress";

pub fn private_pool() -> CodecPool {
    CodecPool::builder().max_idle(4).build()
}
