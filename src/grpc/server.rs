//! [`GrpcCompressionLayer`]: the server side. Request messages are decompressed before the
//! service reads them; response messages are compressed in the best coding the client
//! accepts.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::body::{Failure, GrpcBody, Transform, Verdict};
use super::encoding::GRPC_STATUS;
use super::encoding::{GRPC_ACCEPT_ENCODING, GRPC_ENCODING, MessageEncoding, choose};
use super::is_grpc;
use super::settings::{Settings, settings_methods};
use super::status::{Code, GrpcStatus};
use crate::ContentCoding;

/// Compresses and decompresses the messages of gRPC calls a server answers: a [`Layer`] for
/// tonic's `Server::builder().layer(..)` or any tower service speaking gRPC over HTTP/2.
///
/// Request messages flagged compressed are decoded in the request's `grpc-encoding` (gzip,
/// deflate or zstd) under the limits, and the service sees them uncompressed, without
/// `grpc-encoding` or `grpc-accept-encoding`. Response messages are compressed in the first
/// coding of [`prefer`](Self::prefer) that the client's `grpc-accept-encoding` lists.
///
/// Defaults: zstd, gzip, deflate in that order, each at its default level; messages under
/// 256 bytes uncompressed; received messages at most 4 MiB and 200 times their compressed
/// size past 1 MiB; state from [`CodecPool::global`](crate::CodecPool::global).
///
/// # Example
///
/// ```
/// use tower_gzip::grpc::GrpcCompressionLayer;
/// use tower_gzip::{CompressionLevel, ContentCoding};
///
/// let layer = GrpcCompressionLayer::new()
///     .prefer(&[ContentCoding::Gzip, ContentCoding::Deflate])
///     .level(ContentCoding::Gzip, CompressionLevel::Precise(4))
///     .min_size(512)
///     .max_message_size(16 * 1024 * 1024);
/// // tonic: Server::builder().layer(layer).add_service(..)
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct GrpcCompressionLayer {
    settings: Arc<Settings>,
}

impl Default for GrpcCompressionLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl GrpcCompressionLayer {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        let order = [
            ContentCoding::Zstd,
            ContentCoding::Gzip,
            ContentCoding::Deflate,
        ];
        GrpcCompressionLayer {
            settings: Arc::new(Settings::new(&order)),
        }
    }

    /// The codings responses may be compressed in, most preferred first; an empty list
    /// sends every response uncompressed. Codings that are not gRPC encodings (br, the
    /// dictionary codings) and codings not compiled in are left out.
    pub fn prefer(mut self, codings: &[ContentCoding]) -> Self {
        self.settings_mut().send = super::settings::grpc_codings(codings);
        self
    }

    settings_methods!();
}

impl<S> Layer<S> for GrpcCompressionLayer {
    type Service = GrpcCompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcCompression {
            inner,
            settings: self.settings.clone(),
        }
    }
}

/// The service of [`GrpcCompressionLayer`].
#[derive(Clone, Debug)]
pub struct GrpcCompression<S> {
    inner: S,
    settings: Arc<Settings>,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for GrpcCompression<S>
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
        let settings = &self.settings;
        if !is_grpc(request.headers()) {
            let request = request.map(|body| pass(body, settings));
            let call = Call::Pass(settings.clone());
            return ResponseFuture::waiting(self.inner.call(request), call);
        }
        let (mut parts, body) = request.into_parts();
        let encoding = MessageEncoding::of(&parts.headers, &settings.decode);
        if encoding == MessageEncoding::Unknown {
            let response = unimplemented(&parts.headers, settings);
            return ResponseFuture::refused(response, settings.clone());
        }
        let send = choose(&parts.headers, &settings.send);
        parts.headers.remove(GRPC_ENCODING);
        parts.headers.remove(GRPC_ACCEPT_ENCODING);
        let verdict = Arc::new(Verdict::default());
        let transform = Transform::Decompress(encoding);
        let failure = Failure::Error;
        let body = GrpcBody::new(
            body,
            transform,
            failure,
            settings.clone(),
            Some(verdict.clone()),
        );
        let request = Request::from_parts(parts, body);
        let call = Call::Grpc {
            send,
            verdict,
            settings: settings.clone(),
        };
        ResponseFuture::waiting(self.inner.call(request), call)
    }
}

/// A body passed untouched.
fn pass<B>(body: B, settings: &Arc<Settings>) -> GrpcBody<B> {
    GrpcBody::new(
        body,
        Transform::Pass,
        Failure::Trailers,
        settings.clone(),
        None,
    )
}

/// The trailers-only answer to a request in a `grpc-encoding` not decoded here.
fn unimplemented(headers: &HeaderMap, settings: &Settings) -> Response<()> {
    let token = headers
        .get(GRPC_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?");
    let message = format!("grpc-encoding `{token}` is not supported; see grpc-accept-encoding");
    let mut response = Response::new(());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.insert(GRPC_ACCEPT_ENCODING, settings.accept.clone());
    GrpcStatus::new(Code::Unimplemented, message).write(headers);
    response
}

/// What the response of a call needs from its request.
#[derive(Debug)]
enum Call {
    /// Not a gRPC call: the response passes.
    Pass(Arc<Settings>),
    /// A gRPC call: its responses' coding, if any, and the request body's verdict.
    Grpc {
        send: Option<ContentCoding>,
        verdict: Arc<Verdict>,
        settings: Arc<Settings>,
    },
}

impl Call {
    /// The response, its messages compressed, the verdict in its status.
    fn respond<B>(self, response: Response<B>) -> Response<GrpcBody<B>> {
        let (send, verdict, settings) = match self {
            Call::Pass(settings) => return response.map(|body| pass(body, &settings)),
            Call::Grpc {
                send,
                verdict,
                settings,
            } => (send, verdict, settings),
        };
        let (mut parts, body) = response.into_parts();
        let headers = &mut parts.headers;
        let trailers_only = headers.contains_key(GRPC_STATUS);
        if let (true, Some(status)) = (trailers_only, verdict.get()) {
            status.write(headers);
        }
        headers
            .entry(GRPC_ACCEPT_ENCODING)
            .or_insert_with(|| settings.accept.clone());
        let transform = match send {
            // The service compressed its messages itself, or the call is over.
            _ if headers.contains_key(GRPC_ENCODING) || trailers_only => Transform::Pass,
            Some(coding) => {
                headers.insert(GRPC_ENCODING, HeaderValue::from_static(coding.as_str()));
                Transform::Compress(coding)
            }
            None => Transform::Pass,
        };
        // A trailers-only response carries the verdict in its headers already.
        let verdict = (!trailers_only).then_some(verdict);
        let body = GrpcBody::new(body, transform, Failure::Trailers, settings, verdict);
        Response::from_parts(parts, body)
    }
}

pin_project! {
    /// The response future of [`GrpcCompression`].
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        phase: CallPhase<F>,
    }
}

pin_project! {
    #[project = CallPhaseProj]
    #[derive(Debug)]
    enum CallPhase<F> {
        /// The service is answering.
        Waiting { #[pin] future: F, call: Option<Call> },
        /// Refused before the service was called: a trailers-only response.
        Refused { response: Option<(Response<()>, Arc<Settings>)> },
    }
}

impl<F> ResponseFuture<F> {
    fn waiting(future: F, call: Call) -> Self {
        let call = Some(call);
        ResponseFuture {
            phase: CallPhase::Waiting { future, call },
        }
    }

    fn refused(response: Response<()>, settings: Arc<Settings>) -> Self {
        let response = Some((response, settings));
        ResponseFuture {
            phase: CallPhase::Refused { response },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<GrpcBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().phase.project() {
            CallPhaseProj::Waiting { future, call } => {
                let response = ready!(future.poll(cx))?;
                match call.take() {
                    Some(call) => Poll::Ready(Ok(call.respond(response))),
                    None => Poll::Pending,
                }
            }
            CallPhaseProj::Refused { response } => match response.take() {
                Some((response, settings)) => {
                    Poll::Ready(Ok(response.map(|()| GrpcBody::empty(settings))))
                }
                None => Poll::Pending,
            },
        }
    }
}
