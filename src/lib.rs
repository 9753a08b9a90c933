//! Pooled, streaming compression middleware for tower, axum and hyper: gzip, deflate, and
//! (with their default cargo features) zstd and br.
//!
//! Every codec state comes from a shared, bounded [`CodecPool`] and goes back to it, reset,
//! when the body ends, fails or is dropped: a response costs the compression work and
//! little else.
//!
//! - [`compression::CompressionLayer`]: compresses responses (server).
//! - [`decompression::RequestDecompressionLayer`]: decompresses request bodies, with limits
//!   against decompression bombs (server).
//! - [`decompression::DecompressionLayer`]: decompresses responses (client).
//! - [`client::RequestCompressionLayer`]: compresses request bodies (client).
//! - [`codec`]: the streaming [`Encoder`](codec::Encoder) and [`Decoder`](codec::Decoder)
//!   under them, for every coding, usable on their own.
//! - [`telemetry`]: a `tracing` event per response (the coding chosen or why none, bytes,
//!   time) and, with the `metrics` feature, metrics through the `metrics` facade.
//!
//! # Quick start (axum)
//!
//! ```
//! use axum::{Router, routing::get};
//! use tower_gzip::compression::CompressionLayer;
//!
//! let app: Router = Router::new()
//!     .route("/", get(|| async { "hello, world! ".repeat(100) }))
//!     .layer(CompressionLayer::new());
//! ```
//!
//! # The pool
//!
//! ```
//! use tower_gzip::{CodecPool, PoolKind, compression::CompressionLayer};
//!
//! let pool = CodecPool::builder().max_idle(16).build();
//! let layer = CompressionLayer::new().pool(pool.clone());
//! // ... serve ...
//! let stats = pool.stats();
//! assert_eq!(stats.kind(PoolKind::DeflateCompressors).in_use(), 0);
//! ```
#![deny(missing_docs, unsafe_code, unreachable_pub)]
// docs.rs (nightly, `--cfg docsrs`) shows which items need which cargo feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod buf;
mod builders;
pub mod cache;
pub mod client;
pub mod codec;
mod coding;
pub mod compression;
pub mod decompression;
#[cfg(dictionary)]
pub mod dictionary;
#[cfg(not(dictionary))]
mod dictionary;
mod ended;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod guide;
// The one module allowed `unsafe` code.
#[allow(unsafe_code)]
mod ffi;
// Not API: what the fuzz targets reach below the public surface (cargo fuzz builds with
// `--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
// Not API: `benches/brotli_c.rs` measures the C brotli wrapper against the pure-Rust crates.
#[cfg(feature = "dcb")]
#[doc(hidden)]
pub use ffi::brotli_c as __bench_brotli_c;
mod headers;
#[cfg(dictionary)]
mod hex;
mod negotiate;
mod pool;
mod predicate;
mod sync;
pub mod telemetry;

pub use codec::kinds::{PoolKind, PoolStats};
pub use codec::level::CompressionLevel;
pub use coding::ContentCoding;
pub use pool::{CodecPool, CodecPoolBuilder, KindStats};

/// The boxed error type of this crate's bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
