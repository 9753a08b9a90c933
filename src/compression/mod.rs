//! Response compression: [`CompressionLayer`].
//!
//! ```
//! use axum::{Router, routing::get};
//! use tower_gzip::CompressionLevel;
//! use tower_gzip::compression::CompressionLayer;
//! use tower_gzip::predicate::{DefaultPredicate, NotForContentType, Predicate};
//!
//! let layer = CompressionLayer::new()
//!     .quality(CompressionLevel::Fastest)
//!     .compress_when(DefaultPredicate::new().and(NotForContentType::new("application/x-ndjson")));
//! let stats = layer.stats(); // counters to export as metrics
//! let app: Router = Router::new()
//!     .route("/", get(|| async { "hello, world! ".repeat(100) }))
//!     .layer(layer);
//! # let _ = (app, stats);
//! ```
//!
//! # What gets compressed
//!
//! The coding comes from `Accept-Encoding` (RFC 9110 section 12.5.3): q-values parsed
//! strictly, `x-gzip` accepted as gzip, `*` honoured, ties going to gzip. A client that
//! accepts neither an offered coding nor identity gets `406 Not Acceptable`.
//!
//! Hard rules, applied whatever the predicate says: a response that already has
//! `Content-Encoding`, a 1xx, 204 or 206 response, one with `Content-Range`, or one marked
//! `Cache-Control: no-transform` is sent as it is. HEAD and 304 responses are never encoded
//! but get `Vary: accept-encoding` when a GET would have been. Then the
//! [predicate](crate::predicate) decides (by default: not images but SVG, not audio or video,
//! not gRPC but gRPC-web, not already-compressed types), and bodies under
//! [`min_size`](CompressionLayer::min_size) bytes ([`DEFAULT_MIN_SIZE`]) stay as they are.
//!
//! When it compresses, the layer sets `Content-Encoding`, adds `Vary: accept-encoding` (also
//! when identity was chosen for a compressible response), removes `Accept-Ranges` and
//! `Content-Length`, and makes a strong `ETag` weak. Trailers pass through.
//!
//! # How bodies are compressed
//!
//! - **Known in full** (a `Full<Bytes>`, axum's `Json`, any body whose frames are all ready,
//!   up to 64 KiB): compressed in one shot while the response is built, by a pooled libdeflate
//!   compressor (the default `libdeflate` feature) or zlib-rs, and sent with an exact
//!   `Content-Length`.
//! - **Streamed**: each inner frame is compressed as it arrives. When the inner body has
//!   nothing more ready (it returns `Pending`), the encoder does a sync flush, so everything
//!   sent so far is decodable by the client: server-sent events are compressed and arrive
//!   event by event. One poll compresses at most 64 KiB of input, so a huge frame cannot hold
//!   an executor thread for long.
//!
//! Codec states come from a [`CodecPool`](crate::CodecPool) (the global one unless
//! [`pool`](CompressionLayer::pool) says otherwise) and go back to it, reset, as soon as the
//! body ends, fails or is dropped.

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
