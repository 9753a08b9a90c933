//! Response compression: [`CompressionLayer`].
//!
//! Hard rules, applied whatever the predicate says: a response that already has
//! `Content-Encoding`, a 1xx, 204 or 206 response, one with `Content-Range`, or one marked
//! `Cache-Control: no-transform` is sent as it is. HEAD and 304 responses are never encoded
//! but get `Vary: accept-encoding` when a GET would have been.

mod body;
mod future;
mod layer;
mod service;
mod stats;

pub use body::CompressionBody;
pub use future::ResponseFuture;
pub use layer::{CompressionLayer, DEFAULT_MIN_SIZE};
pub use service::Compression;
pub use stats::{CompressionStats, CompressionStatsSnapshot};
