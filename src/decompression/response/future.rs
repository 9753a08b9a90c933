use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::{Response, StatusCode, Uri};
use pin_project_lite::pin_project;

use crate::client::dictionaries::ClientDictionaryStore;
use crate::decompression::DecompressionBody;
use crate::decompression::coding::{Codings, Settings, decodable, parse};
use crate::dictionary::Dictionary;

pin_project! {
    /// The response future of [`Decompression`](super::Decompression).
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        // `None`: the response has no body to decode (a HEAD request).
        settings: Option<Settings>,
        // With a dictionary store: what the request offered, and where it went.
        exchange: Option<Box<Exchange>>,
    }
}

/// One request's part in dictionary transport (RFC 9842).
#[derive(Debug)]
pub(super) struct Exchange {
    pub(super) store: ClientDictionaryStore,
    /// The dictionary named in `Available-Dictionary`, if any.
    pub(super) offered: Option<Dictionary>,
    /// The URI of a `GET` without `Range`: its response may become a dictionary.
    pub(super) learn_from: Option<Uri>,
}

impl<F> ResponseFuture<F> {
    pub(super) fn new(
        inner: F,
        settings: Option<Settings>,
        exchange: Option<Box<Exchange>>,
    ) -> Self {
        ResponseFuture {
            inner,
            settings,
            exchange,
        }
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("settings", &self.settings)
            .field("exchange", &self.exchange)
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
        let exchange = this.exchange.take();
        let Some(settings) = settings else {
            return Poll::Ready(Ok(Response::from_parts(
                parts,
                DecompressionBody::identity(body),
            )));
        };
        let offered = exchange.as_ref().and_then(|e| e.offered.as_ref());
        let (body, readable) = match parse(
            &parts.headers,
            decodable(settings.accept, exchange.is_some()),
        ) {
            Codings::Decode(chain) => {
                parts.headers.remove(CONTENT_ENCODING);
                parts.headers.remove(CONTENT_LENGTH);
                let body = DecompressionBody::decode(
                    body,
                    chain,
                    settings.limits,
                    &settings.pool,
                    offered,
                );
                (body, true)
            }
            Codings::Identity => (DecompressionBody::identity(body), true),
            Codings::Unsupported | Codings::TooMany => (DecompressionBody::identity(body), false),
        };
        // A dictionary is the decoded body of a 2xx to a GET: one left encoded cannot be.
        let candidate = exchange
            .filter(|_| readable && parts.status.is_success())
            .and_then(|e| {
                let candidate = e.store.candidate(e.learn_from.as_ref()?, &parts.headers)?;
                Some((e.store, candidate))
            });
        let body = match candidate {
            Some((store, candidate)) => body.learning(store, candidate),
            None => body,
        };
        Poll::Ready(Ok(Response::from_parts(parts, body)))
    }
}
