use std::task::{Context, Poll};

use http::header::{ACCEPT_ENCODING, Entry, RANGE};
use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::{DecompressionLayer, ResponseFuture};
use crate::builders::builder_methods;
use crate::decompression::coding::Settings;

/// Decodes response bodies by their `Content-Encoding`; for HTTP clients.
///
/// Requests without `Accept-Encoding` get one listing the enabled codings
/// (`gzip, deflate` by default); requests that have one, or that ask for a `Range` (a range
/// of a compressed representation cannot be decoded alone), are left as they are.
///
/// Responses whose `Content-Encoding` lists only enabled codings (case-insensitive, `x-gzip`
/// is gzip, up to [`MAX_CODINGS`](crate::decompression::MAX_CODINGS) stacked) are decoded:
/// `Content-Encoding` and `Content-Length` are removed and the body becomes a decoding
/// [`DecompressionBody`](crate::decompression::DecompressionBody), held to the configured
/// [`DecompressionLimits`](crate::decompression::DecompressionLimits). Every other response is
/// passed through untouched, headers included: unknown codings, overlong chains, responses to
/// `HEAD`, and `1xx`, `204 No Content`, `206 Partial Content` and `304 Not Modified`.
#[derive(Clone, Debug)]
pub struct Decompression<S> {
    pub(super) inner: S,
    pub(super) settings: Settings,
}

impl<S> Decompression<S> {
    /// Wraps `inner` with the defaults (see [`DecompressionLayer`]).
    pub fn new(inner: S) -> Self {
        Decompression {
            inner,
            settings: Settings::default(),
        }
    }

    /// A layer with the defaults.
    pub fn layer() -> DecompressionLayer {
        DecompressionLayer::new()
    }

    builder_methods!(decompression);

    builder_methods!(inner_service);
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Decompression<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Body,
{
    type Response = Response<crate::decompression::DecompressionBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let ranged = req.headers().contains_key(RANGE);
        if !ranged {
            if let Entry::Vacant(entry) = req.headers_mut().entry(ACCEPT_ENCODING) {
                if let Some(value) = self.settings.accept.header_value() {
                    entry.insert(value);
                }
            }
        }
        // A response to HEAD has no body to decode.
        let settings = (req.method() != Method::HEAD).then(|| self.settings.clone());
        ResponseFuture::new(self.inner.call(req), settings)
    }
}
