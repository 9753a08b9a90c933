//! The harness: requests, canned responses, running a layer once and collecting the result.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame};
use http_body_util::{Full, StreamBody};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::CodecPool;
use tower_gzip::compression::{CompressionBody, CompressionLayer};
use tower_gzip::predicate::Predicate;

use crate::common::BoxError;
pub use crate::common::{Collected, collect};

/// The most input one `poll_frame` may compress (spec: 64 KiB).
pub const SLICE: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

#[derive(Clone)]
pub struct Always;

impl Predicate for Always {
    fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
        true
    }
}

/// A layer that offers only gzip and deflate, for tests about their negotiation: zstd and
/// br, offered by default with their features, would win ties and `*`.
pub fn flate_only() -> CompressionLayer {
    let layer = CompressionLayer::new();
    #[cfg(feature = "zstd")]
    let layer = layer.no_zstd();
    #[cfg(feature = "br")]
    let layer = layer.no_br();
    layer
}

/// A coding token this crate never offers nor decodes, whatever its features.
pub const UNKNOWN_CODING: &str = "compress";

pub fn get(accept: Option<&str>) -> Request<()> {
    let mut builder = Request::builder().uri("/");
    if let Some(accept) = accept {
        builder = builder.header(ACCEPT_ENCODING, accept);
    }
    builder.body(()).unwrap()
}

pub fn full(data: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::new(Full::new(data.into()))
}

pub fn typed(content_type: &str, data: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut res = full(data);
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
    res
}

/// Runs `req` through `layer` around a handler that answers `res`.
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
    let svc = layer.layer(service_fn(move |_req: Request<()>| {
        let res = res.take().expect("handler called once");
        async move { Ok::<_, Infallible>(res) }
    }));
    svc.oneshot(req).await.unwrap()
}

pub async fn round<P, B>(
    layer: &CompressionLayer<P>,
    accept: Option<&str>,
    res: Response<B>,
) -> Collected
where
    P: Predicate,
    B: Body + Send + 'static,
    B::Error: Into<BoxError>,
{
    collect(respond(layer, get(accept), res).await).await
}

pub fn trailers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(*k, HeaderValue::from_static(v));
    }
    map
}

pub fn stream_of(
    chunks: Vec<Bytes>,
) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, BoxError>>> {
    StreamBody::new(futures_util::stream::iter(
        chunks.into_iter().map(|c| Ok(Frame::data(c))),
    ))
}

pub fn private_pool() -> CodecPool {
    CodecPool::builder().max_idle(4).build()
}
