use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, HeaderValue};
use http::request::Parts;
use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::RequestCompressionLayer;
use super::layer::{Settings, request_compression_builders};
use crate::codec::Encoder;
use crate::compression::CompressionBody;
use crate::predicate::{DefaultPredicate, Predicate};

/// Compresses request bodies before sending them; for HTTP clients.
///
/// A request is sent as it is when any of these holds:
///
/// - it already has `Content-Encoding` (or `Content-Range`);
/// - its method carries no body by convention: `GET`, `HEAD`, `TRACE`, `CONNECT`;
/// - its body is empty, or its size is known (exact size hint, else `Content-Length`) and
///   below [`min_size`](Self::min_size);
/// - its `Content-Type` is already compressed (unless
///   [`skip_compressed_types(false)`](Self::skip_compressed_types));
/// - the [`compress_when`](Self::compress_when) predicate says no.
///
/// Otherwise the body is compressed as it streams with a pooled encoder (flushed whenever the
/// body waits for more data), `Content-Encoding` is set and `Content-Length` removed, so the
/// request goes out chunked (HTTP/1.1) or framed (HTTP/2). The server must accept the coding;
/// one that answers `415 Unsupported Media Type` lists what it takes in `Accept-Encoding`.
#[derive(Clone, Debug)]
pub struct RequestCompression<S> {
    pub(super) inner: S,
    pub(super) settings: Arc<Settings>,
}

impl<S> RequestCompression<S> {
    /// Wraps `inner` with the defaults (see [`RequestCompressionLayer`]).
    pub fn new(inner: S) -> Self {
        RequestCompression {
            inner,
            settings: Arc::default(),
        }
    }

    /// A layer with the defaults.
    pub fn layer() -> RequestCompressionLayer {
        RequestCompressionLayer::new()
    }

    request_compression_builders!();

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for RequestCompression<S>
where
    S: Service<Request<CompressionBody<ReqBody>>, Response = Response<ResBody>>,
    ReqBody: Body,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let (mut parts, body) = req.into_parts();
        let settings = &self.settings;
        let body = if should_compress(settings, &parts, &body) {
            parts.headers.insert(
                CONTENT_ENCODING,
                HeaderValue::from_static(settings.format.as_str()),
            );
            parts.headers.remove(CONTENT_LENGTH);
            let encoder = Encoder::new(settings.format, settings.level, &settings.pool);
            CompressionBody::encode(body, encoder)
        } else {
            CompressionBody::identity(body)
        };
        self.inner.call(Request::from_parts(parts, body))
    }
}

fn should_compress<B: Body>(settings: &Settings, parts: &Parts, body: &B) -> bool {
    let headers = &parts.headers;
    if headers.contains_key(CONTENT_ENCODING) || headers.contains_key(CONTENT_RANGE) {
        return false;
    }
    if matches!(
        parts.method,
        Method::GET | Method::HEAD | Method::TRACE | Method::CONNECT
    ) {
        return false;
    }
    if body.is_end_stream() {
        return false;
    }
    let known_size = body.size_hint().exact().or_else(|| {
        headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok())
    });
    if known_size.is_some_and(|size| size == 0 || size < settings.min_size) {
        return false;
    }
    if settings.skip_compressed_types {
        if let Some(content_type) = headers.get(CONTENT_TYPE) {
            // The response predicate's media-type rules, asked about a head with only
            // this request's Content-Type.
            let mut head = Response::new(http_body_util::Empty::<bytes::Bytes>::new());
            head.headers_mut()
                .insert(CONTENT_TYPE, content_type.clone());
            if !DefaultPredicate::new().should_compress(&head) {
                return false;
            }
        }
    }
    settings.predicate.as_ref().is_none_or(|p| p(parts))
}
