//! [`WebSocket`]: what a handler gets, used as axum's is (`recv`, `send`, `Stream`, `Sink`),
//! with tungstenite's [`Message`]. permessage-deflate is below it; OpenIM-style gzip
//! (when the client asked) is done here, on binary messages.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::{Sink, SinkExt, Stream, StreamExt};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error, Message};

use super::gzip::GzipMessages;
use super::io::DeflateIo;
use super::negotiate::Direction;

/// The stream under a [`WebSocket`] of the axum and hyper entry points.
pub type UpgradedStream = WebSocketStream<DeflateIo<TokioIo<hyper::upgrade::Upgraded>>>;

/// A WebSocket connection with per-message compression, from
/// [`WebSocketUpgrade`](super::WebSocketUpgrade) or [`upgrade`](super::upgrade).
#[derive(Debug)]
pub struct WebSocket {
    inner: UpgradedStream,
    protocol: Option<http::HeaderValue>,
    gzip: Option<GzipMessages>,
}

impl WebSocket {
    pub(crate) fn new(
        inner: UpgradedStream,
        protocol: Option<http::HeaderValue>,
        gzip: Option<GzipMessages>,
    ) -> Self {
        WebSocket {
            inner,
            protocol,
            gzip,
        }
    }

    /// The next message, `None` once the connection has closed.
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        self.next().await
    }

    /// Sends a message (flushed).
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        SinkExt::send(self, message).await
    }

    /// The subprotocol chosen, if any.
    pub fn protocol(&self) -> Option<&http::HeaderValue> {
        self.protocol.as_ref()
    }

    /// What permessage-deflate agreed: `(outbound, inbound)`, or `None` without it.
    pub fn deflate(&self) -> Option<(Direction, Direction)> {
        self.inner.get_ref().agreed()
    }

    /// Whether binary messages are whole gzip members (the client dialed with
    /// `compression=gzip`).
    pub fn gzip(&self) -> bool {
        self.gzip.is_some()
    }

    /// The tungstenite stream, for what this type does not wrap (its config, `close`).
    pub fn into_inner(self) -> UpgradedStream {
        self.inner
    }

    fn close_frame(code: CloseCode, reason: &'static str) -> Message {
        Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        }))
    }
}

impl Stream for WebSocket {
    type Item = Result<Message, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let Some(message) = ready!(this.inner.poll_next_unpin(cx)) else {
            return Poll::Ready(None);
        };
        let Some(gzip) = &this.gzip else {
            return Poll::Ready(Some(message));
        };
        let decoded = match message {
            Ok(Message::Binary(member)) => match gzip.decode(&member) {
                Ok(plain) => Ok(Message::Binary(plain)),
                Err(e) => {
                    // Tell the peer why (1009 or 1007), as permessage-deflate would.
                    let code = match e.kind() {
                        crate::codec::DecodeErrorKind::TooLarge => CloseCode::Size,
                        _ => CloseCode::Invalid,
                    };
                    let _ = this
                        .inner
                        .start_send_unpin(Self::close_frame(code, "bad gzip message"));
                    let _ = this.inner.poll_flush_unpin(cx);
                    Err(Error::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        e,
                    )))
                }
            },
            other => other,
        };
        Poll::Ready(Some(decoded))
    }
}

impl Sink<Message> for WebSocket {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().inner.poll_ready_unpin(cx)
    }

    fn start_send(self: Pin<&mut Self>, message: Message) -> Result<(), Error> {
        let this = self.get_mut();
        let message = match (&this.gzip, message) {
            (Some(gzip), Message::Binary(plain)) => {
                let member = gzip
                    .encode(&plain)
                    .map_err(|e| Error::Io(std::io::Error::other(e)))?;
                Message::Binary(member)
            }
            (_, other) => other,
        };
        this.inner.start_send_unpin(message)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().inner.poll_flush_unpin(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().inner.poll_close_unpin(cx)
    }
}
