//! Response compression: [`CompressionLayer`].
//!
//! ```
//! use axum::{Router, routing::get};
//! use tower_gzip::CompressionLevel;
//! use tower_gzip::compression::CompressionLayer;
//! use tower_gzip::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
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
//! strictly, `x-gzip` accepted as gzip, `*` honoured, ties going to zstd, then br, gzip and
//! deflate as in tower-http ([`prefer`](CompressionLayer::prefer) changes the order). A
//! client that accepts neither an offered coding nor identity gets `406 Not Acceptable`.
//!
//! The rules, hard ones first (one list, in the order they apply):
//!
//! 1. A response that already has `Content-Encoding` or `Content-Range`, a 1xx, 204 or 206
//!    response, or one marked `Cache-Control: no-transform` is sent as it is, whatever the
//!    predicate says.
//! 2. The [`predicate`] may refuse it (by default: not images but SVG, not
//!    audio or video, not gRPC but gRPC-web, not already-compressed types).
//! 3. Otherwise `Vary: accept-encoding` is added. HEAD and 304 responses are never encoded.
//! 4. Under [`DefaultPredicate`], bodies known to be under
//!    [`min_size`](CompressionLayer::min_size) bytes (256 by default) stay as they are,
//!    and so do bodies of unknown size that turn out complete and smaller when read ahead; a
//!    custom predicate decides alone, whatever the size, as in tower-http.
//! 5. With [`dictionaries`](CompressionLayer::dictionaries), a request that names a stored
//!    dictionary, offers `dcz` or `dcb` and passes RFC 9842's readability gate gets its
//!    response compressed against that dictionary (see [`crate::dictionary`]).
//!
//! When it compresses, the layer sets `Content-Encoding`, adds `Vary: accept-encoding` (also
//! when identity was chosen for a compressible response), removes `Accept-Ranges` and
//! `Content-Length`, and makes a strong `ETag` weak. Trailers pass through.
//!
//! # How bodies are compressed
//!
//! - **Known in full** (a `Full<Bytes>`, axum's `Json`, any body whose frames are all ready,
//!   up to 64 KiB): compressed in one shot while the response is built (gzip and deflate by a
//!   pooled libdeflate compressor with the default `libdeflate` feature, zstd by a pooled
//!   context with the size pledged, br in one call), and sent with an exact `Content-Length`.
//!   This happens before the headers are fixed, so an encoder that fails on the body costs
//!   nothing: the response goes out with the next coding the client accepts (the plain
//!   coding negotiated, for `dcz`/`dcb`), else as identity; only a client that refuses
//!   identity and accepts nothing else gets a body that ends in the error.
//! - **Streamed**: each inner frame is compressed as it arrives. When the inner body has
//!   nothing more ready (it returns `Pending`), everything sent so far is made decodable with
//!   a sync flush, and the codec state waits in the pool until data comes (see
//!   [`Encoder::idle`](crate::codec::Encoder::idle)). After a short pause (under the pool's
//!   [park bound](crate::pool::CodecPoolBuilder::park_bound), 1 s by default) gzip, deflate and
//!   zstd streams take back the state they parked, as they left it; after their first pause,
//!   a long one, or when another stream took the parked state, gzip and deflate draw a state
//!   primed with the last 32 KiB, and zstd ends the frame and starts another. br keeps its
//!   encoder over short pauses, and after its first pause or a long one gives it back and
//!   resumes with one primed with the last 32 KiB and its last distances (at quality 0-1 it
//!   keeps its small encoder). Server-sent events are compressed and arrive event by event,
//!   and a stream whose events come further apart than the park bound holds no codec state
//!   between them (br at quality 0-1 excepted). One poll compresses at most 64 KiB of input,
//!   so a huge frame cannot hold an executor thread for long and many large responses
//!   progress together. While more gzip/deflate (or zstd) streams hold a state than the
//!   pool's [hold limit](crate::pool::CodecPoolBuilder::hold_limit) (2 per CPU by default), a
//!   stream also parks its state at the end of each slice, so hundreds of slow readers cost a
//!   32 KiB history each (zstd: nothing; once its context is taken, its next slice starts a
//!   new frame), not a state each. br streams flush at every slice end and take turns: at
//!   most [`br_stream_limit`](crate::pool::CodecPoolBuilder::br_stream_limit) hold an encoder at
//!   once; event streams, and streamed bodies (of unknown size, or known and over 64 KiB)
//!   while the turns are all taken, get another coding the client accepts instead of br.
//!   The headers of a streamed body go out before its end is compressed: an encoder failure
//!   there ends the body with an error (the connection is closed mid-body, so no client
//!   takes the truncated body for whole).
//!
//! Codec states come from a [`CodecPool`](crate::CodecPool) (the global one unless
//! [`pool`](CompressionLayer::pool) says otherwise) and go back to it, reset, as soon as the
//! body ends, fails or is dropped.
//!
//! # What it tells
//!
//! Each response is counted in [`CompressionStats`] (by coding, and skips by
//! [`SkipReason`]), makes one `tracing` event at `DEBUG` (the coding and its bytes and
//! time, or why none), and with the `metrics` feature updates metrics through the `metrics`
//! facade: see [`telemetry`](crate::telemetry).

// From the request to what is told: the settings, the plan for a response (`plan`), its
// execution (`execute`, `body`), and the report (`report`, `stats`; the words in
// `telemetry`). The layer, its service and their future tie these together.
mod body;
mod builder;
mod execute;
mod future;
mod governor;
mod layer;
mod plan;
mod report;
mod service;
mod settings;
mod stats;

pub use crate::CompressionLevel;
pub use crate::predicate::{DefaultPredicate, Predicate};
pub use crate::telemetry::outcome::SkipReason;
pub use body::CompressionBody;
pub use future::ResponseFuture;
pub use governor::{Governor, GovernorStats};
pub use layer::CompressionLayer;
pub use service::Compression;
pub use settings::ToCompress;
pub use stats::{CodingStats, CompressionStats, DictionaryStats};

/// When to compress a response: a [`Predicate`] reads a response's head and size hint. The
/// names mirror `tower_http::compression::predicate`, so predicates port over unchanged.
pub mod predicate {
    pub use crate::predicate::*;
}
