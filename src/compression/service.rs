use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::body::CompressionBody;
use super::future::ResponseFuture;
use super::layer::CompressionLayer;
use super::plan::{DictionaryRequest, RequestFacts};
use super::settings::CompressionSettings;
use crate::builders::builder_methods;
use crate::cache::RequestScope;
use crate::negotiate::{AcceptEncoding, choose};
use crate::predicate::{DefaultPredicate, Predicate};

/// The service built by [`CompressionLayer`]: compresses the responses of `S`.
///
/// It has the layer's builder methods, so `Compression::new(svc).quality(..)` works as in
/// tower-http.
///
/// ```
/// use tower_gzip::CompressionLevel;
/// use tower_gzip::compression::{Compression, predicate::SizeAbove};
///
/// # let svc = tower::service_fn(|_: http::Request<()>| async {
/// #     Ok::<_, std::convert::Infallible>(http::Response::new(String::new()))
/// # });
/// let svc = Compression::new(svc)
///     .compress_when(SizeAbove::new(1024))
///     .quality(CompressionLevel::Fastest);
/// # let _ = svc;
/// ```
#[derive(Clone, Debug)]
pub struct Compression<S, P = DefaultPredicate> {
    inner: S,
    settings: Arc<CompressionSettings>,
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
    pub(crate) fn from_parts(inner: S, settings: Arc<CompressionSettings>, predicate: P) -> Self {
        Compression {
            inner,
            settings,
            predicate,
        }
    }

    builder_methods!(inner_service);
    builder_methods!(encoding_switches super::settings::CompressionSettings, "offered");

    /// Replaces the predicate that decides which responses to compress (see
    /// [`CompressionLayer::compress_when`]).
    pub fn compress_when<C: Predicate>(self, predicate: C) -> Compression<S, C> {
        Compression {
            inner: self.inner,
            settings: self.settings,
            predicate,
        }
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
        let accept = AcceptEncoding::parse(req.headers());
        let choice = choose(&accept, self.settings.offered);
        let head = req.method() == Method::HEAD;
        // The chooser sees the path (a reference count, not a copy), and a cache keyed by
        // `ETag` files under the request's authority and path.
        let by_etag = self.settings.cache.as_ref().is_some_and(|c| c.by_etag());
        let scope = by_etag.then(|| RequestScope::of(&req)).flatten();
        let path = (self.settings.level_chooser.is_some())
            .then(|| req.uri().path_and_query().cloned())
            .flatten();
        let dictionary = self
            .settings
            .dictionaries
            .as_ref()
            .map(|_| DictionaryRequest::capture(req.headers(), req.uri(), accept));
        let request = RequestFacts {
            accept,
            choice,
            head,
            dictionary,
            path,
            scope: scope.map(Box::new),
        };
        ResponseFuture::new(
            self.inner.call(req),
            request,
            self.settings.clone(),
            self.predicate.clone(),
        )
    }
}
