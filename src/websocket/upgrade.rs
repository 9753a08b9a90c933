//! The server entry points over hyper's upgrade: the axum extractor
//! [`WebSocketUpgrade`] and, for plain hyper, [`upgrade`]. Both do what axum's own
//! extractor does (HTTP/1.1 upgrade, HTTP/2 extended CONNECT with `http2`, subprotocols,
//! `on_failed_upgrade`, tungstenite's config, typed rejections) and answer
//! `Sec-WebSocket-Extensions` themselves.

use std::future::Future;

use axum_core::extract::FromRequestParts;
use axum_core::response::{IntoResponse, Response};
use http::request::Parts;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use super::config::DeflateConfig;
use super::gzip::GzipMessages;
use super::handshake::{self, Checked, WebSocketRejection};
use super::io::DeflateIo;
use super::negotiate;
use super::socket::WebSocket;

/// What to do when the HTTP upgrade itself fails (after the 101 went out).
pub trait OnFailedUpgrade: Send + 'static {
    /// Called with hyper's error.
    fn call(self, error: hyper::Error);
}

impl<F: FnOnce(hyper::Error) + Send + 'static> OnFailedUpgrade for F {
    fn call(self, error: hyper::Error) {
        self(error)
    }
}

/// The default: a `tracing` event, as axum's default does.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct DefaultOnFailedUpgrade;

impl OnFailedUpgrade for DefaultOnFailedUpgrade {
    fn call(self, error: hyper::Error) {
        tracing::debug!(target: super::stats::TARGET, %error, "WebSocket upgrade failed");
    }
}

/// The axum extractor: axum's `WebSocketUpgrade` with permessage-deflate (RFC 7692) and
/// the OpenIM `compression=gzip` ask. Swap it in for axum's; the handler's socket is a
/// [`WebSocket`] of tungstenite [`Message`](tokio_tungstenite::tungstenite::Message)s.
///
/// ```no_run
/// use axum::{Router, routing::any, response::Response};
/// use tower_gzip::websocket::{WebSocket, WebSocketUpgrade};
///
/// async fn echo(ws: WebSocketUpgrade) -> Response {
///     ws.on_upgrade(|mut socket: WebSocket| async move {
///         while let Some(Ok(message)) = socket.recv().await {
///             if socket.send(message).await.is_err() {
///                 break;
///             }
///         }
///     })
/// }
/// let app: Router = Router::new().route("/ws", any(echo));
/// ```
#[must_use]
pub struct WebSocketUpgrade<F = DefaultOnFailedUpgrade> {
    checked: Checked,
    on_upgrade: OnUpgrade,
    config: WebSocketConfig,
    deflate: DeflateConfig,
    gzip: GzipMessages,
    protocol: Option<http::HeaderValue>,
    on_failed_upgrade: F,
}

impl<F> std::fmt::Debug for WebSocketUpgrade<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("config", &self.config)
            .field("deflate", &self.deflate)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for WebSocketUpgrade<DefaultOnFailedUpgrade> {
    type Rejection = WebSocketRejection;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Self::from_parts(parts)
    }
}

impl IntoResponse for WebSocketRejection {
    fn into_response(self) -> Response {
        let mut response = self.to_string().into_response();
        *response.status_mut() = self.status();
        response
    }
}

impl WebSocketUpgrade<DefaultOnFailedUpgrade> {
    /// Checks the request and takes its upgrade handle (what the extractor does).
    pub fn from_parts(parts: &mut Parts) -> Result<Self, WebSocketRejection> {
        let checked = handshake::check((&*parts).into())?;
        let on_upgrade = parts
            .extensions
            .remove::<OnUpgrade>()
            .ok_or(WebSocketRejection::ConnectionNotUpgradable)?;
        Ok(WebSocketUpgrade {
            checked,
            on_upgrade,
            config: WebSocketConfig::default(),
            deflate: DeflateConfig::default(),
            gzip: GzipMessages::default(),
            protocol: None,
            on_failed_upgrade: DefaultOnFailedUpgrade,
        })
    }
}

impl<F: OnFailedUpgrade> WebSocketUpgrade<F> {
    /// tungstenite's config (buffer sizes, `max_message_size`, `max_frame_size`,
    /// `accept_unmasked_frames`).
    pub fn config(mut self, config: WebSocketConfig) -> Self {
        self.config = config;
        self
    }

    /// tungstenite's `max_message_size`; also the inflate limit unless
    /// [`deflate`](Self::deflate) set one lower.
    pub fn max_message_size(mut self, max: usize) -> Self {
        self.config = self.config.max_message_size(Some(max));
        self.deflate.message_limit = self.deflate.message_limit.min(max);
        self.gzip = self.gzip.limit(max);
        self
    }

    /// tungstenite's `max_frame_size`.
    pub fn max_frame_size(mut self, max: usize) -> Self {
        self.config = self.config.max_frame_size(Some(max));
        self
    }

    /// tungstenite's `accept_unmasked_frames`. Once permessage-deflate is agreed the
    /// adapter below tungstenite parses every frame and keeps RFC 6455's rule itself: an
    /// unmasked frame from the client is a 1002.
    pub fn accept_unmasked_frames(mut self, accept: bool) -> Self {
        self.config = self.config.accept_unmasked_frames(accept);
        self
    }

    /// How permessage-deflate is answered and run (default: [`DeflateConfig::default`],
    /// no context takeover).
    pub fn deflate(mut self, deflate: DeflateConfig) -> Self {
        self.deflate = deflate;
        self
    }

    /// The codec for clients that ask `compression=gzip`.
    pub fn gzip(mut self, gzip: GzipMessages) -> Self {
        self.gzip = gzip;
        self
    }

    /// The subprotocols the server speaks; the first the client offers is chosen.
    pub fn protocols<I: IntoIterator<Item = T>, T: Into<String>>(mut self, protocols: I) -> Self {
        let supported: Vec<String> = protocols.into_iter().map(Into::into).collect();
        self.protocol = handshake::select_protocol(self.checked.protocols.as_ref(), &supported);
        self
    }

    /// The subprotocol chosen by [`protocols`](Self::protocols).
    pub fn selected_protocol(&self) -> Option<&http::HeaderValue> {
        self.protocol.as_ref()
    }

    /// What runs when the upgrade fails.
    pub fn on_failed_upgrade<G: OnFailedUpgrade>(
        self,
        on_failed_upgrade: G,
    ) -> WebSocketUpgrade<G> {
        WebSocketUpgrade {
            checked: self.checked,
            on_upgrade: self.on_upgrade,
            config: self.config,
            deflate: self.deflate,
            gzip: self.gzip,
            protocol: self.protocol,
            on_failed_upgrade,
        }
    }

    /// Answers the handshake and runs `callback` with the socket once upgraded (in a
    /// task of its own).
    pub fn on_upgrade<C, Fut>(self, callback: C) -> Response
    where
        C: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let agreement = negotiate::answer(&self.checked.extensions, &self.deflate);
        let response = handshake::answer(
            self.checked.key.as_ref(),
            self.protocol.as_ref(),
            agreement.as_ref().map(|a| a.header()),
        );
        let WebSocketUpgrade {
            on_upgrade,
            config,
            deflate,
            protocol,
            on_failed_upgrade,
            ..
        } = self;
        let gzip = self.checked.gzip.then_some(self.gzip);
        tokio::spawn(async move {
            let upgraded = match on_upgrade.await {
                Ok(upgraded) => upgraded,
                Err(error) => return on_failed_upgrade.call(error),
            };
            let io = DeflateIo::server(TokioIo::new(upgraded), agreement, &deflate);
            let stream = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
            callback(WebSocket::new(stream, protocol, gzip)).await;
        });
        response
    }
}

/// Plain hyper: checks `request`, answers it, and gives the response to send and a future
/// of the socket (it resolves once hyper has sent the response and switched).
///
/// ```no_run
/// # async fn handler(mut request: http::Request<hyper::body::Incoming>) -> http::Response<http_body_util::Empty<bytes::Bytes>> {
/// use tower_gzip::websocket::{DeflateConfig, upgrade};
///
/// let Ok((response, socket)) = upgrade(&mut request, DeflateConfig::default(), None) else {
///     return http::Response::builder().status(400).body(Default::default()).unwrap();
/// };
/// tokio::spawn(async move {
///     if let Ok(mut socket) = socket.await {
///         while let Some(Ok(message)) = socket.recv().await {
///             let _ = socket.send(message).await;
///         }
///     }
/// });
/// response
/// # }
/// ```
pub fn upgrade<B, Body: Default>(
    request: &mut http::Request<B>,
    deflate: DeflateConfig,
    config: Option<WebSocketConfig>,
) -> Result<
    (
        http::Response<Body>,
        impl Future<Output = Result<WebSocket, hyper::Error>> + Send + use<B, Body>,
    ),
    WebSocketRejection,
> {
    let checked = handshake::check((&*request).into())?;
    let on_upgrade = request
        .extensions_mut()
        .remove::<OnUpgrade>()
        .ok_or(WebSocketRejection::ConnectionNotUpgradable)?;
    let agreement = negotiate::answer(&checked.extensions, &deflate);
    let response = handshake::answer(
        checked.key.as_ref(),
        None,
        agreement.as_ref().map(|a| a.header()),
    );
    let gzip = checked.gzip.then(GzipMessages::default);
    let socket = async move {
        let upgraded = on_upgrade.await?;
        let io = DeflateIo::server(TokioIo::new(upgraded), agreement, &deflate);
        let stream = WebSocketStream::from_raw_socket(io, Role::Server, config).await;
        Ok(WebSocket::new(stream, None, gzip))
    };
    Ok((response, socket))
}
