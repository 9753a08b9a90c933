//! What the compression layer tells about each response: its `tracing` events, captured by
//! a subscriber, carry the decision (the coding and its bytes, or why none); with the
//! `metrics` feature, what it publishes renders as Prometheus text that a strict parser
//! accepts, and whose counters follow the responses.

mod capture;
mod events;
#[cfg(feature = "metrics")]
mod metrics;
#[cfg(feature = "websocket")]
mod websocket;
use tower_gzip_support::prometheus;
mod prometheus_parser;
pub use tower_gzip_support::service::{get, respond};

use bytes::Bytes;
use http::Response;
use http_body::Body;
use http_body_util::BodyExt;

/// `len` bytes of JSON lines: compressible.
pub fn text(len: usize) -> Bytes {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(format!("{{\"id\":{i},\"name\":\"item-{}\"}}\n", i % 97).as_bytes());
        i += 1;
    }
    out.truncate(len);
    out.into()
}

/// The whole body.
pub async fn body<B: Body<Error: std::fmt::Debug>>(res: Response<B>) -> Bytes {
    res.into_body().collect().await.unwrap().to_bytes()
}
