//! RequestDecompressionLayer: codings, 415s, corrupt input, bombs and limits, through tower
//! and through a real axum server on loopback.

#[path = "../common/alloc.rs"]
mod alloc;
#[path = "../common/mod.rs"]
mod common;

mod harness;
mod server;

mod bombs;
mod corrupt;
mod limits;
mod roundtrip;
