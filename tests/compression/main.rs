//! Behaviour of `CompressionLayer` at the service level: tower `oneshot` against handlers
//! that return full, streamed, stuttering, channel-fed and failing bodies. Every compressed
//! body is decoded with flate2, independently of this crate's decoder.

#[path = "../common/mod.rs"]
mod common;
mod support;

mod headers;
mod negotiation;
mod pool;
mod quality;
mod rules;
mod streaming;
