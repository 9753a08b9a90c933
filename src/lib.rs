//! Pooled, streaming gzip and deflate compression middleware for tower, axum and hyper.
#![deny(missing_docs)]

pub mod client;
pub mod codec;
pub mod compression;
pub mod decompression;
mod negotiate;
mod pool;
pub mod predicate;

pub use codec::CompressionLevel;
pub use pool::{CodecPool, CodecPoolBuilder, KindStats, PoolStats, Pooled, PooledState};

/// The boxed error type of this crate's bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
