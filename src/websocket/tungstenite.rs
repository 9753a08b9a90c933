//! Entry points for tokio-tungstenite servers and clients: the handshake runs over a
//! [`DeflateIo`], which negotiates and then compresses.

use http::HeaderValue;
use http::header::SEC_WEBSOCKET_EXTENSIONS;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Error;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Response as ClientResponse;
use tokio_tungstenite::tungstenite::handshake::server::{
    Callback, ErrorResponse, Request, Response,
};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::config::DeflateConfig;
use super::io::DeflateIo;
use super::negotiate;

/// Accepts a connection as tokio-tungstenite's `accept_async_with_config` does, answering
/// permessage-deflate offers by `deflate`.
// tungstenite's `Callback` returns its `ErrorResponse` (an `http::Response`) unboxed.
#[allow(clippy::result_large_err)]
pub async fn accept_async<S>(
    stream: S,
    deflate: &DeflateConfig,
    config: Option<WebSocketConfig>,
) -> Result<WebSocketStream<DeflateIo<S>>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    accept_hdr_async(
        stream,
        deflate,
        |_: &Request, response: Response| Ok(response),
        config,
    )
    .await
}

/// [`accept_async`] with tungstenite's header callback (subprotocols, authentication),
/// which runs before the extension answer is added.
#[allow(clippy::result_large_err)]
pub async fn accept_hdr_async<S, C>(
    stream: S,
    deflate: &DeflateConfig,
    callback: C,
    config: Option<WebSocketConfig>,
) -> Result<WebSocketStream<DeflateIo<S>>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
    C: Callback + Unpin,
{
    let mut agreement = None;
    let answer = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let mut response = callback.on_request(request, response)?;
        agreement = negotiate::answer(request.headers(), deflate);
        if let Some(value) = agreement
            .as_ref()
            .and_then(|a| HeaderValue::from_str(a.header()).ok())
        {
            response
                .headers_mut()
                .insert(SEC_WEBSOCKET_EXTENSIONS, value);
        }
        Ok(response)
    };
    // Bytes pass through until armed: the client sends no frame before our 101.
    let io = DeflateIo::passthrough_server(stream);
    let mut ws = tokio_tungstenite::accept_hdr_async_with_config(io, answer, config).await?;
    if let Some(agreement) = agreement {
        ws.get_mut().arm(agreement, deflate);
    }
    Ok(ws)
}

/// The `Sec-WebSocket-Extensions` offer a client sends for `deflate`.
pub fn offer(deflate: &DeflateConfig) -> HeaderValue {
    HeaderValue::from_str(&negotiate::offer(deflate)).expect("the offer is a token list")
}

/// Runs the client handshake over `stream` as tokio-tungstenite's
/// `client_async_with_config` does, offering permessage-deflate by `deflate`. An answer
/// that breaks RFC 7692 section 7.1 fails the handshake.
pub async fn client_async<R, S>(
    request: R,
    stream: S,
    deflate: &DeflateConfig,
    config: Option<WebSocketConfig>,
) -> Result<(WebSocketStream<DeflateIo<S>>, ClientResponse), Error>
where
    R: IntoClientRequest + Unpin,
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut request = request.into_client_request()?;
    request
        .headers_mut()
        .insert(SEC_WEBSOCKET_EXTENSIONS, offer(deflate));
    let io = DeflateIo::client(stream, deflate);
    tokio_tungstenite::client_async_with_config(request, io, config).await
}

/// Connects to a `ws://` URL over TCP and runs [`client_async`] (no TLS: put a TLS stream
/// under [`client_async`] for `wss://`).
pub async fn connect_async<R>(
    request: R,
    deflate: &DeflateConfig,
    config: Option<WebSocketConfig>,
) -> Result<
    (
        WebSocketStream<DeflateIo<tokio::net::TcpStream>>,
        ClientResponse,
    ),
    Error,
>
where
    R: IntoClientRequest + Unpin,
{
    let request = request.into_client_request()?;
    let uri = request.uri();
    let host = uri.host().ok_or(Error::Url(
        tokio_tungstenite::tungstenite::error::UrlError::NoHostName,
    ))?;
    let port = uri.port_u16().unwrap_or(80);
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
    client_async(request, stream, deflate, config).await
}
