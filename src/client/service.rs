use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, HeaderValue};
use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::layer::Settings;
use crate::ContentCoding;
use crate::builders::builder_methods;
use crate::codec::Encoder;
use crate::compression::CompressionBody;
use crate::headers::body_size;
use crate::predicate::{DefaultPredicate, Predicate};

/// Compresses request bodies before sending them; for HTTP clients.
///
/// A request is sent as it is when any of these holds:
///
/// - it already has `Content-Encoding` (or `Content-Range`);
/// - its method carries no body by convention: `GET`, `HEAD`, `TRACE`, `CONNECT`;
/// - its body is empty;
/// - the predicate says no ([`DefaultPredicate`]: an already compressed `Content-Type`, or a
///   size known to be below the layer's
///   [`min_size`](super::RequestCompressionLayer::min_size)).
///
/// Otherwise the body is compressed as it streams with a pooled encoder (flushed whenever the
/// body waits for more data), `Content-Encoding` is set and `Content-Length` removed, so the
/// request goes out chunked (HTTP/1.1) or framed (HTTP/2). The server must accept the coding;
/// one that answers `415 Unsupported Media Type` lists what it takes in `Accept-Encoding`.
#[derive(Clone, Debug)]
pub struct RequestCompression<S, P = DefaultPredicate> {
    pub(super) inner: S,
    pub(super) settings: Arc<Settings>,
    pub(super) predicate: P,
}

impl<S, P> RequestCompression<S, P> {
    builder_methods!(inner_service);
}

impl<S, P, ReqBody, ResBody> Service<Request<ReqBody>> for RequestCompression<S, P>
where
    S: Service<Request<CompressionBody<ReqBody>>, Response = Response<ResBody>>,
    ReqBody: Body,
    P: Predicate,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let coding = self.choose(&req);
        let (mut parts, body) = req.into_parts();
        let body = match coding {
            Some(coding) => {
                parts
                    .headers
                    .insert(CONTENT_ENCODING, HeaderValue::from_static(coding.as_str()));
                parts.headers.remove(CONTENT_LENGTH);
                let settings = &self.settings;
                let encoder = Encoder::new(coding, settings.levels.of(coding), &settings.pool);
                CompressionBody::encode(body, encoder, &settings.pool)
            }
            None => CompressionBody::identity(body),
        };
        self.inner.call(Request::from_parts(parts, body))
    }
}

impl<S, P: Predicate> RequestCompression<S, P> {
    /// The coding to send `req` with, or `None` to send it as it is.
    fn choose<B: Body>(&self, req: &Request<B>) -> Option<ContentCoding> {
        let headers = req.headers();
        if headers.contains_key(CONTENT_ENCODING)
            || headers.contains_key(CONTENT_RANGE)
            || matches!(
                *req.method(),
                Method::GET | Method::HEAD | Method::TRACE | Method::CONNECT
            )
            || req.body().is_end_stream()
        {
            return None;
        }
        let size = body_size(headers, req.body());
        if size == Some(0) {
            return None;
        }
        if self.predicate.applies_min_size() && size.is_some_and(|n| n < self.settings.min_size) {
            return None;
        }
        if !self.predicate.should_compress_request(req) {
            return None;
        }
        self.settings.coding()
    }
}
