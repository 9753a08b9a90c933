//! One response through a layer: a handler that answers a given response, requests and
//! responses to send through it, and what comes out, collected.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame};
use http_body_util::{Full, StreamBody};
use tower::{Layer, Service, ServiceExt};

use crate::{BoxError, Collected, collect};

/// A handler that answers its one request with the response it holds.
#[derive(Debug)]
pub struct Answer<B>(Option<Response<B>>);

impl<B> Answer<B> {
    /// A handler answering `res`.
    pub fn new(res: Response<B>) -> Self {
        Answer(Some(res))
    }
}

impl<B, R> Service<Request<R>> for Answer<B> {
    type Response = Response<B>;
    type Error = Infallible;
    type Future = Ready<Result<Response<B>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _req: Request<R>) -> Self::Future {
        ready(Ok(self.0.take().expect("handler called once")))
    }
}

/// `GET /`, with this `Accept-Encoding` if any.
pub fn get(accept: Option<&str>) -> Request<()> {
    let mut builder = Request::builder().uri("/");
    if let Some(accept) = accept {
        builder = builder.header(ACCEPT_ENCODING, accept);
    }
    builder.body(()).unwrap()
}

/// A response of `data`, its size known.
pub fn full(data: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::new(Full::new(data.into()))
}

/// [`full`] with this `Content-Type`.
pub fn typed(content_type: &str, data: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut res = full(data);
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
    res
}

/// Runs `req` through `layer` around a handler that answers `res`.
pub async fn respond<L, B, Out>(layer: &L, req: Request<()>, res: Response<B>) -> Response<Out>
where
    L: Layer<Answer<B>>,
    L::Service: Service<Request<()>, Response = Response<Out>>,
    <L::Service as Service<Request<()>>>::Error: std::fmt::Debug,
{
    layer.layer(Answer::new(res)).oneshot(req).await.unwrap()
}

/// [`respond`] to a `GET` with this `Accept-Encoding`, collected.
pub async fn round<L, B, Out>(layer: &L, accept: Option<&str>, res: Response<B>) -> Collected
where
    L: Layer<Answer<B>>,
    L::Service: Service<Request<()>, Response = Response<Out>>,
    <L::Service as Service<Request<()>>>::Error: std::fmt::Debug,
    Out: Body,
    Out::Error: std::fmt::Debug,
{
    collect(respond(layer, get(accept), res).await).await
}

/// A trailer map of these pairs.
pub fn trailers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(*k, HeaderValue::from_static(v));
    }
    map
}

/// A streamed body of these chunks, its size unknown.
pub fn stream_of(
    chunks: Vec<Bytes>,
) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, BoxError>>> {
    StreamBody::new(futures_util::stream::iter(
        chunks.into_iter().map(|c| Ok(Frame::data(c))),
    ))
}
