//! Pooled, streaming compression middleware for tower, axum, hyper and tonic: zstd, br, gzip
//! and deflate in all four HTTP directions, dictionary compression (RFC 9842 `dcz`, `dcb`),
//! a cache of compressed representations, and gRPC message compression.
//!
//! Every codec state comes from a shared, bounded [`CodecPool`] and goes back to it, reset,
//! when the body ends, fails or is dropped: a response costs the compression work and
//! little else.
//!
//! # What is where
//!
//! | module | for | cargo feature |
//! |---|---|---|
//! | [`compression`] | `CompressionLayer`: compresses responses by `Accept-Encoding` (server); levels, the load governor, predicates | always |
//! | [`decompression`] | `RequestDecompressionLayer` (server: request bodies, with limits against bombs) and `DecompressionLayer` (client: responses) | always |
//! | [`client`] | `RequestCompressionLayer`: compresses request bodies (client); the client's dictionary store | always; the store with `dictionary-client` |
//! | [`cache`] | `VariantCache`: compressed representations served again, by content or by strong `ETag`, as a shared cache (RFC 9111) | always |
//! | `dictionary` | RFC 9842: the store, serving and announcing dictionaries, building them before deploying, learning them from traffic | `dcz` or `dcb` (defaults) |
//! | `grpc` | `GrpcCompressionLayer`, `GrpcClientCompressionLayer`: gRPC messages for tonic | `grpc` (default) |
//! | `websocket` | WebSocket message compression: the axum extractor, `DeflateIo` under tokio-tungstenite, per-message gzip | `websocket` |
//! | [`telemetry`] | a `tracing` event per response; metrics through the `metrics` facade | events always; metrics with `metrics` (default) |
//! | [`codec`] | the streaming `Encoder`, `Decoder` and `OneShot` under the layers, usable alone | always |
//! | [`pool`] | [`CodecPool`], its builder and its statistics by kind of state | always |
//! | [`guide`] | design notes, benchmarks, the telemetry reference | always |
//!
//! The codecs, their pool and all of the FFI are the `tower-gzip-codecs` crate, which this
//! one re-exports ([`codec`], [`pool`], [`ContentCoding`], [`CompressionLevel`]); this crate
//! has no `unsafe` code. The deploy pipeline's dictionary command line is
//! `tower-gzip-dictionary` (`cargo install --path cli` from the repository).
//!
//! # Cargo features
//!
//! | feature | default | builds C | crates | what |
//! |---|---|---|--:|---|
//! | `libdeflate` | yes | yes | +2 | gzip and deflate bodies known in full (up to 64 KiB) in one shot, levels 2-9 |
//! | `zstd` | yes | yes (libzstd) | +2 | zstd, web-safe windows (RFC 9659) |
//! | `br` | yes | no | +4 | brotli through the pure-Rust `brotli` crate |
//! | `dcz`, `dcb` | yes | `dcb`: Google's brotli | +17, +20 | dictionary compression (RFC 9842), the `dictionary` module |
//! | `learn` | yes | no | +0 | dictionaries learned from live traffic (`dictionary::learn`; with `dcz`) |
//! | `metrics` | yes | no | +3 | counters, gauges, histograms through the `metrics` facade |
//! | `grpc` | yes | no | +0 | the `grpc` module: message compression for tonic servers and channels |
//! | `dictionary-client` | no | no | +39 (with `dcz`) | the client's dictionary store and its URL patterns (`url`, ICU) |
//! | `object-store` | no | no | +57 (with `dcz`) | learned dictionaries shared through `object_store` backends |
//! | `http2` | no | no | +8 | WebSocket over HTTP/2 (RFC 8441 extended CONNECT), as axum's `http2` |
//! | `websocket` | yes | no | +37 | the `websocket` module: RFC 7692 permessage-deflate and OpenIM-style gzip for axum, hyper and tokio-tungstenite |
//!
//! "crates" is what a feature adds to the 23 of `default-features = false` (the codec crate
//! among them); the defaults make 77, 50 of them without `websocket` (`cargo tree -p
//! tower-gzip -e normal --prefix none | sed 's/ (\*)//' | sort -u | wc -l`). The C
//! codecs need a C compiler (`build-essential`); without them gzip and deflate are pure
//! Rust.
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
//! use tower_gzip::{CodecPool, compression::CompressionLayer, pool::PoolKind};
//!
//! let pool = CodecPool::builder().max_idle(16).build();
//! let layer = CompressionLayer::new().pool(pool.clone());
//! // ... serve ...
//! let stats = pool.stats();
//! assert_eq!(stats.kind(PoolKind::DeflateCompressors).in_use(), 0);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]
// docs.rs (nightly, `--cfg docsrs`) shows which items need which cargo feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod buf;
mod builders;
pub mod cache;
pub mod client;
pub mod codec;
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
// Not API: what the fuzz targets reach below the public surface (cargo fuzz builds with
// `--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod headers;
#[cfg(dictionary)]
mod hex;
mod negotiate;
pub mod pool;
mod predicate;
mod sync;
pub mod telemetry;
// RFC 7692 permessage-deflate and per-message gzip for WebSocket.
#[cfg(feature = "websocket")]
pub mod websocket;

// The codec floor's names, where the crate's own code and its users find them.
use tower_gzip_codecs::{CODINGS, CodingSet};
pub use tower_gzip_codecs::{CodecPool, CompressionLevel, ContentCoding};

/// The boxed error type of this crate's bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
