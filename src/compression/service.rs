use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::body::CompressionBody;
use super::future::ResponseFuture;
use super::layer::CompressionLayer;
use super::stats::CompressionStats;
use crate::codec::CompressionLevel;
use crate::negotiate::{Choice, Offered, choose};
use crate::pool::CodecPool;
use crate::predicate::{DefaultPredicate, Predicate};

/// What a [`CompressionLayer`] was configured with, shared by its services.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) gzip: bool,
    pub(crate) deflate: bool,
    pub(crate) level: CompressionLevel,
    pub(crate) min_size: u64,
    pub(crate) jitter: u16,
    pub(crate) pool: CodecPool,
    pub(crate) stats: CompressionStats,
}

/// The service built by [`CompressionLayer`]: compresses the responses of `S`.
#[derive(Clone, Debug)]
pub struct Compression<S, P = DefaultPredicate> {
    inner: S,
    settings: Arc<Settings>,
    predicate: P,
}

impl<S> Compression<S> {
    /// Wraps `inner` with the defaults of [`CompressionLayer::new`].
    pub fn new(inner: S) -> Self {
        tower_layer::Layer::layer(&CompressionLayer::new(), inner)
    }

    /// A [`CompressionLayer`] with the defaults, for configuring.
    pub fn layer() -> CompressionLayer {
        CompressionLayer::new()
    }
}

impl<S, P> Compression<S, P> {
    pub(crate) fn from_parts(inner: S, settings: Arc<Settings>, predicate: P) -> Self {
        Compression {
            inner,
            settings,
            predicate,
        }
    }

    /// The wrapped service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The wrapped service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<ReqBody, ResBody, S, P> Service<Request<ReqBody>> for Compression<S, P>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Body,
    ResBody::Error: Into<crate::BoxError>,
    P: Predicate,
{
    type Response = Response<CompressionBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, P>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let offered = Offered {
            gzip: self.settings.gzip,
            deflate: self.settings.deflate,
        };
        // A client that refuses identity gets the coding it accepts even for a body below
        // `min_size`: identity would be unacceptable to it (RFC 9110 section 12.5.3).
        let Choice {
            negotiated,
            identity_refused,
        } = choose(req.headers(), offered);
        let head = req.method() == Method::HEAD;
        ResponseFuture::new(
            self.inner.call(req),
            negotiated,
            identity_refused,
            head,
            self.settings.clone(),
            self.predicate.clone(),
        )
    }
}
