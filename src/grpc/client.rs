//! [`GrpcClientCompressionLayer`]: the client side, the server layer's mirror. Request
//! messages are compressed in one chosen coding; response messages are decompressed before
//! the client reads them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use http::{HeaderValue, Request, Response};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::body::{Failure, GrpcBody, Transform};
use super::encoding::{GRPC_ACCEPT_ENCODING, GRPC_ENCODING, MessageEncoding};
use super::is_grpc;
use super::settings::{Settings, grpc_codings, settings_methods};
use crate::ContentCoding;

/// Compresses the request messages of gRPC calls and decompresses their response messages:
/// a [`Layer`] wrapping client services (a tonic `Channel`, any HTTP/2 client) in
/// [`GrpcClientCompression`].
///
/// Requests carry `grpc-encoding` (when compressing) and `grpc-accept-encoding` (what this
/// layer decodes); the client above sees uncompressed messages and no `grpc-encoding`. A
/// response that cannot be decoded ends with `grpc-status` 8 (over a limit), 12 (a coding
/// not accepted) or 13 (corrupt, truncated, or flagged compressed without an encoding) in
/// its trailers.
///
/// tonic's `Channel` takes its own body type only: put
/// `.map_request(|r: http::Request<_>| r.map(tonic::body::Body::new))` between this layer
/// and the channel (`tests/grpc/main.rs` does), and give the result to a tonic client.
///
/// Defaults: requests in gzip (which every gRPC server with compression decodes) at its
/// default level, messages under 256 bytes uncompressed; responses in zstd, gzip or deflate,
/// at most 4 MiB a message and 200 times its compressed size past 1 MiB.
///
/// # Example
///
/// ```
/// use tower::ServiceBuilder;
/// use tower_gzip::grpc::GrpcClientCompressionLayer;
/// use tower_gzip::{CompressionLevel, ContentCoding};
///
/// # fn wrap<S>(channel: S) {
/// let channel = ServiceBuilder::new()
///     .layer(
///         GrpcClientCompressionLayer::new()
///             .send(Some(ContentCoding::Zstd))
///             .level(ContentCoding::Zstd, CompressionLevel::Precise(1)),
///     )
///     .service(channel);
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct GrpcClientCompressionLayer {
    settings: Arc<Settings>,
}

impl Default for GrpcClientCompressionLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl GrpcClientCompressionLayer {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        GrpcClientCompressionLayer {
            settings: Arc::new(Settings::new(&[ContentCoding::Gzip])),
        }
    }

    /// The coding request messages are sent in; `None` sends them uncompressed. A coding
    /// that is not a gRPC encoding, or not compiled in, counts as `None`.
    pub fn send(mut self, coding: Option<ContentCoding>) -> Self {
        let codings = coding.map(|c| grpc_codings(&[c])).unwrap_or_default();
        self.settings_mut().send = codings;
        self
    }

    settings_methods!();
}

impl<S> Layer<S> for GrpcClientCompressionLayer {
    type Service = GrpcClientCompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcClientCompression {
            inner,
            settings: self.settings.clone(),
        }
    }
}

/// The service of [`GrpcClientCompressionLayer`].
#[derive(Clone, Debug)]
pub struct GrpcClientCompression<S> {
    inner: S,
    settings: Arc<Settings>,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for GrpcClientCompression<S>
where
    S: Service<Request<GrpcBody<ReqBody>>, Response = Response<ResBody>>,
{
    type Response = Response<GrpcBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let settings = self.settings.clone();
        let grpc = is_grpc(request.headers());
        let (mut parts, body) = request.into_parts();
        let headers = &mut parts.headers;
        let transform = match settings.send.first() {
            // The client above compressed its messages itself.
            _ if !grpc || headers.contains_key(GRPC_ENCODING) => Transform::Pass,
            Some(&coding) => {
                headers.insert(GRPC_ENCODING, HeaderValue::from_static(coding.as_str()));
                Transform::Compress(coding)
            }
            None => Transform::Pass,
        };
        if grpc {
            headers.insert(GRPC_ACCEPT_ENCODING, settings.accept.clone());
        }
        let body = GrpcBody::new(body, transform, Failure::Trailers, settings.clone(), None);
        let future = self.inner.call(Request::from_parts(parts, body));
        ResponseFuture {
            future,
            settings: Some(settings),
            grpc,
        }
    }
}

pin_project! {
    /// The response future of [`GrpcClientCompression`].
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        future: F,
        // Taken when the response comes.
        settings: Option<Arc<Settings>>,
        // Whether the request was a gRPC call.
        grpc: bool,
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<GrpcBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.future.poll(cx))?;
        let Some(settings) = this.settings.take() else {
            return Poll::Pending;
        };
        if !*this.grpc || !is_grpc(response.headers()) {
            let pass =
                |body| GrpcBody::new(body, Transform::Pass, Failure::Trailers, settings, None);
            return Poll::Ready(Ok(response.map(pass)));
        }
        let (mut parts, body) = response.into_parts();
        let encoding = MessageEncoding::of(&parts.headers, &settings.decode);
        parts.headers.remove(GRPC_ENCODING);
        let transform = Transform::Decompress(encoding);
        let body = GrpcBody::new(body, transform, Failure::Trailers, settings, None);
        Poll::Ready(Ok(Response::from_parts(parts, body)))
    }
}
