//! Shared code of the fuzz targets. The properties live in `props.rs`, which
//! `tests/properties.rs` in the main crate also includes, so the fuzzer and the bounded
//! proptest runs check exactly the same things.

pub mod dictionary;
pub mod grpc;
pub mod props;
