use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::{Response, StatusCode};
use pin_project_lite::pin_project;

use crate::decompression::DecompressionBody;
use crate::decompression::coding::{Codings, Settings, parse};

pin_project! {
    /// The response future of [`Decompression`](super::Decompression).
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        // `None`: the response has no body to decode (a HEAD request).
        settings: Option<Settings>,
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn new(inner: F, settings: Option<Settings>) -> Self {
        ResponseFuture { inner, settings }
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Statuses whose responses carry no body, or a part of one that cannot be decoded alone.
fn decodable_status(status: StatusCode) -> bool {
    !(status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::PARTIAL_CONTENT
        || status == StatusCode::NOT_MODIFIED)
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<DecompressionBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.inner.poll(cx))?;
        let (mut parts, body) = response.into_parts();
        let settings = this
            .settings
            .take()
            .filter(|_| decodable_status(parts.status));
        let body = match settings {
            Some(settings) => match parse(&parts.headers, settings.accept) {
                Codings::Decode(chain) => {
                    parts.headers.remove(CONTENT_ENCODING);
                    parts.headers.remove(CONTENT_LENGTH);
                    DecompressionBody::decode(body, chain, settings.limits, &settings.pool)
                }
                _ => DecompressionBody::identity(body),
            },
            None => DecompressionBody::identity(body),
        };
        Poll::Ready(Ok(Response::from_parts(parts, body)))
    }
}
