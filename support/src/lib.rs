//! What tower-gzip's tests, benches and measuring programs share: independent encoders and
//! decoders (flate2, libzstd, the `brotli` crate), deterministic data and the API-JSON
//! corpus, test bodies, a collected response, the loopback server harness, the demo as a
//! child process, the outside programs interop tests run, a Prometheus text parser, the
//! counting allocator, the workloads the benches and measuring programs drive, and the raw
//! HTTP/1.1 client side and `/proc` readings of the load generator.
//!
//! It does not depend on tower-gzip (a dev-dependency of it), so what it offers is either
//! independent of the crate or generic over a `tower` layer. Its cargo features mirror
//! tower-gzip's, which turn them on.

pub mod alloc;
#[cfg(feature = "http")]
pub mod bench;
#[cfg(feature = "http")]
pub mod bodies;
#[cfg(feature = "http")]
pub mod bomb;
#[cfg(feature = "http")]
pub mod collected;
pub mod corpus;
pub mod data;
pub mod decode;
#[cfg(feature = "http")]
pub mod demo;
pub mod encode;
pub mod example;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "http")]
pub mod http1;
pub mod procfs;
pub mod prometheus;
pub mod samples;
#[cfg(feature = "http")]
pub mod server;
#[cfg(feature = "http")]
pub mod service;
pub mod tools;
pub mod wait;

#[cfg(feature = "http")]
pub use bodies::{BodySender, ChannelBody, Probe, ReadyFrames, StutterBody, Tap, channel_body};
#[cfg(feature = "http")]
pub use collected::{Collected, collect};
pub use data::{noise, text};
#[cfg(feature = "br")]
pub use decode::unbrotli;
#[cfg(feature = "zstd")]
pub use decode::unzstd;
pub use decode::{decode, gunzip, inflate};
#[cfg(feature = "br")]
pub use encode::br_stream;
#[cfg(feature = "zstd")]
pub use encode::zstd_frame;
pub use encode::{
    FCOMMENT, FEXTRA, FHCRC, FNAME, GzipHeader, gzip, gzip_member, raw_deflate, zlib,
};
pub use samples::json_samples;
#[cfg(feature = "http")]
pub use wait::eventually;
pub use wait::{block_on, settle};

/// The error type of the test bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The repository's root (tower-gzip's manifest directory).
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The `Accept-Encoding` a decompression layer sends, and lists in a 415: every coding
/// compiled in and not `disabled`, in the order zstd, br, gzip, deflate.
pub fn accepted_codings(disabled: &[&str]) -> String {
    let compiled = [
        ("zstd", cfg!(feature = "zstd")),
        ("br", cfg!(feature = "br")),
        ("gzip", true),
        ("deflate", true),
    ];
    let tokens: Vec<&str> = compiled
        .iter()
        .filter(|(token, on)| *on && !disabled.contains(token))
        .map(|(token, _)| *token)
        .collect();
    tokens.join(", ")
}
