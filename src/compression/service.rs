use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Response};
use http_body::Body;
use tower_service::Service;

use super::body::CompressionBody;
use super::choose_level::LevelChooser;
use super::dictionary::DictionaryRequest;
use super::future::ResponseFuture;
use super::governor::Governor;
use super::layer::CompressionLayer;
use super::stats::CompressionStats;
use crate::builders::builder_methods;
use crate::codec::ContentCoding;
use crate::codec::Levels;
use crate::dictionary::DictionaryStore;
use crate::negotiate::{AcceptEncoding, Choice, Negotiated, Offered, choose};
use crate::pool::CodecPool;
use crate::predicate::{DefaultPredicate, Predicate};

/// What a [`CompressionLayer`] or [`Compression`] is configured with, shared by its clones.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) offered: Offered,
    pub(crate) levels: Levels,
    pub(crate) min_size: u64,
    pub(crate) jitter: u16,
    pub(crate) pool: CodecPool,
    pub(crate) stats: CompressionStats,
    /// Dictionaries for `dcz`/`dcb` responses, when turned on.
    pub(crate) dictionaries: Option<DictionaryStore>,
    pub(crate) dictionary_codings: Vec<ContentCoding>,
    /// Chooses the level per response, when set.
    pub(crate) level_chooser: Option<LevelChooser>,
    /// Steps levels down under load, when set.
    pub(crate) governor: Option<Governor>,
}

/// When br was chosen: the coding the client would get without br, if it accepts one. br
/// cannot give its state back between events or slices; gzip, deflate and zstd can, so
/// event streams (and streams of unknown size while br streams are all busy) take that one.
fn releasable_alternative(
    accept: &AcceptEncoding,
    choice: &Choice,
    offered: Offered,
) -> Option<ContentCoding> {
    let Negotiated::Encode(chosen) = choice.negotiated else {
        return None;
    };
    if !crate::codec::takes_turns(chosen) {
        return None;
    }
    let mut others = offered;
    others.set(chosen, false);
    match choose(accept, others).negotiated {
        Negotiated::Encode(other) => Some(other),
        _ => None,
    }
}

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

    builder_methods!(inner_service);
    builder_methods!(compression);

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
        let releasable = releasable_alternative(&accept, &choice, self.settings.offered);
        let head = req.method() == Method::HEAD;
        let path = self.settings.level_chooser.as_ref().and_then(|_| {
            // The chooser sees the path: keep it (a reference count, not a copy).
            req.uri().path_and_query().cloned()
        });
        let dictionary = self
            .settings
            .dictionaries
            .as_ref()
            .map(|_| DictionaryRequest::capture(req.headers(), accept));
        ResponseFuture::new(
            self.inner.call(req),
            super::future::Request {
                choice,
                head,
                dictionary,
                releasable,
                path,
            },
            self.settings.clone(),
            self.predicate.clone(),
        )
    }
}
