//! Behaviour of `CompressionLayer`: at the service level, tower `oneshot` against handlers
//! that return full, streamed, stuttering, channel-fed and failing bodies; under real
//! servers on loopback (`server`); and tower-http's own zstd and br tests, ported
//! (`codings`). Every compressed body is decoded independently of this crate's decoder
//! (flate2, libzstd, the `brotli` crate).

use tower_gzip_support as common;
mod support;

#[cfg(any(feature = "zstd", feature = "br"))]
mod codings;
mod dictionary;
mod drop_in;
mod headers;
mod length_hiding;
mod many_streams;
mod negotiation;
mod pool;
mod quality;
mod rules;
mod server;
mod streaming;
