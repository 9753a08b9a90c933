//! What the compression layer tells about each response: its `tracing` events, captured by
//! a subscriber, carry the decision (the coding and its bytes, or why none); with the
//! `metrics` feature, what it publishes renders as Prometheus text that a strict parser
//! accepts, and whose counters follow the responses.

mod capture;
mod events;
#[cfg(feature = "metrics")]
mod metrics;
#[path = "../common/prometheus.rs"]
mod prometheus;
mod prometheus_parser;

use std::convert::Infallible;

use bytes::Bytes;
use http::header::ACCEPT_ENCODING;
use http::{Request, Response};
use http_body::Body;
use http_body_util::BodyExt;
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::BoxError;
use tower_gzip::compression::{CompressionBody, CompressionLayer};
use tower_gzip::predicate::Predicate;

/// A GET of `/`, with this `Accept-Encoding` if any.
pub fn get(accept: Option<&str>) -> Request<()> {
    let mut builder = Request::builder().uri("/");
    if let Some(accept) = accept {
        builder = builder.header(ACCEPT_ENCODING, accept);
    }
    builder.body(()).unwrap()
}

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

/// `req` through `layer` around a handler that answers `res`.
pub async fn respond<P, B>(
    layer: &CompressionLayer<P>,
    req: Request<()>,
    res: Response<B>,
) -> Response<CompressionBody<B>>
where
    P: Predicate,
    B: Body + Send + 'static,
    B::Error: Into<BoxError>,
{
    let mut res = Some(res);
    let svc = layer.layer(service_fn(move |_: Request<()>| {
        let res = res.take().expect("one request");
        async move { Ok::<_, Infallible>(res) }
    }));
    svc.oneshot(req).await.unwrap()
}

/// The whole body.
pub async fn body<B: Body<Error: std::fmt::Debug>>(res: Response<B>) -> Bytes {
    res.into_body().collect().await.unwrap().to_bytes()
}
