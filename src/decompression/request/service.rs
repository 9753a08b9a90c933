use std::task::{Context, Poll};

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::{Request, Response};
use http_body::Body;
use tower_service::Service;

use super::future::Rejection;
use super::{RequestDecompressionFuture, RequestDecompressionLayer};
use crate::builders::builder_methods;
use crate::decompression::DecompressionBody;
use crate::decompression::coding::{Codings, Settings, parse};
use crate::decompression::limits::TripReport;

/// Decodes request bodies by their `Content-Encoding` before calling the inner service.
///
/// - `gzip`, `x-gzip` and `deflate` (case-insensitive) are decoded, including stacked codings
///   such as `gzip, gzip` (decoded last-applied first), up to
///   three. `Content-Encoding` and
///   `Content-Length` are removed and the inner service receives a
///   [`DecompressionBody`] that yields the decoded bytes.
/// - No `Content-Encoding`, or only `identity`: the request passes unchanged (its body still
///   wrapped in a pass-through [`DecompressionBody`]).
/// - An unknown or disabled coding: `415 Unsupported Media Type` with `Accept-Encoding`
///   listing the enabled codings (RFC 9110 section 15.5.16), and the inner service is not
///   called, unless [`pass_through_unaccepted`](Self::pass_through_unaccepted) is set.
/// - More than `MAX_CODINGS` codings: always 415, with a body saying so.
///
/// Corrupt, truncated or oversized bodies are reported through the body's error, see
/// [`DecompressionBody`].
#[derive(Clone, Debug)]
pub struct RequestDecompression<S> {
    pub(super) inner: S,
    pub(super) settings: Settings,
    pub(super) pass_through_unaccepted: bool,
}

impl<S> RequestDecompression<S> {
    /// Wraps `inner` with the defaults (see [`RequestDecompressionLayer`]).
    pub fn new(inner: S) -> Self {
        RequestDecompression {
            inner,
            settings: Settings::default(),
            pass_through_unaccepted: false,
        }
    }

    /// A layer with the defaults.
    pub fn layer() -> RequestDecompressionLayer {
        RequestDecompressionLayer::new()
    }

    /// Forwards requests whose coding is unknown or disabled unchanged instead of answering
    /// 415. Off by default.
    pub fn pass_through_unaccepted(mut self, enable: bool) -> Self {
        self.pass_through_unaccepted = enable;
        self
    }

    builder_methods!(decompression_switches);

    builder_methods!(inner_service);
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for RequestDecompression<S>
where
    S: Service<Request<DecompressionBody<ReqBody>>, Response = Response<ResBody>>,
    ReqBody: Body,
    ResBody: Body,
{
    type Response = Response<super::RequestDecompressionResponseBody<ResBody>>;
    type Error = S::Error;
    type Future = RequestDecompressionFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let (mut parts, body) = req.into_parts();
        let accept = self.settings.accept;
        let mut report = None;
        let body = match parse(&parts.headers, accept) {
            Codings::Identity => DecompressionBody::identity(body),
            Codings::Decode(chain) => {
                parts.headers.remove(CONTENT_ENCODING);
                parts.headers.remove(CONTENT_LENGTH);
                let limits = self.settings.limits;
                let body =
                    DecompressionBody::decode(body, chain, limits, &self.settings.pool, None);
                body.reporting_to(report.insert(TripReport::default()))
            }
            Codings::Unsupported if self.pass_through_unaccepted => {
                DecompressionBody::identity(body)
            }
            Codings::Unsupported => {
                return RequestDecompressionFuture::rejected(Rejection::Unsupported, accept);
            }
            Codings::TooMany => {
                return RequestDecompressionFuture::rejected(Rejection::TooMany, accept);
            }
        };
        let future = self.inner.call(Request::from_parts(parts, body));
        RequestDecompressionFuture::inner(future, report)
    }
}
