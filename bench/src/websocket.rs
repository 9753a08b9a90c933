//! WebSocket connections for the WebSocket bench and `ws_allocs`: both ends of a connection
//! over an in-memory pipe, for tokio-tungstenite plain, ours (permessage-deflate by
//! `DeflateConfig`) and yawc, and the variants measured (`benches/websocket.rs` says what
//! each is).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tower_gzip::CodecPool;
use tower_gzip::websocket::{
    DeflateConfig, DeflateIo, KeptCompressors, Message, WindowBudget, accept_async, client_async,
};

/// The recorded corpus's JSON bodies, one message each.
pub fn corpus() -> Vec<String> {
    let recorded = tower_gzip_support::corpus::recorded().expect("the recorded corpus");
    recorded
        .into_iter()
        .map(|r| String::from_utf8(r.body).expect("the corpus is UTF-8"))
        .collect()
}

/// The client's end of the pipe, counting the bytes it writes: the wire, for every library.
#[derive(Debug)]
pub struct Counted {
    inner: DuplexStream,
    written: Arc<AtomicU64>,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let n = ready!(Pin::new(&mut self.inner).poll_write(cx, buf))?;
        self.written.fetch_add(n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// How a variant's two ends are made.
#[derive(Clone, Debug)]
pub enum Setup {
    /// Plain tokio-tungstenite, no extension.
    Plain,
    /// Ours, negotiated by this config on both ends.
    Ours(DeflateConfig),
    /// yawc with these options, the extension as agreed (the header value).
    Yawc(&'static str, yawc::Options),
}

/// One direction of a connection: what the client sends, the server reads. (Built once
/// per variant: its size does not matter.)
#[allow(clippy::large_enum_variant)]
pub enum Pair {
    /// Client and server, plain tokio-tungstenite.
    Plain(WebSocketStream<Counted>, WebSocketStream<DuplexStream>),
    /// Client and server, ours.
    Ours(
        WebSocketStream<DeflateIo<Counted>>,
        WebSocketStream<DeflateIo<DuplexStream>>,
    ),
    /// Client and server, yawc.
    Yawc(yawc::WebSocket<Counted>, yawc::WebSocket<DuplexStream>),
}

impl std::fmt::Debug for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Pair::Plain(..) => "Plain",
            Pair::Ours(..) => "Ours",
            Pair::Yawc(..) => "Yawc",
        };
        f.debug_struct(name).finish_non_exhaustive()
    }
}

impl Pair {
    /// Both ends over an in-memory pipe; the client's writes are counted in `written`.
    pub async fn new(setup: Setup, written: Arc<AtomicU64>) -> Pair {
        let (a, b) = tokio::io::duplex(1 << 20);
        let b = Counted { inner: b, written };
        match setup {
            Setup::Plain => {
                let (server, client) = tokio::join!(
                    tokio_tungstenite::accept_async(a),
                    tokio_tungstenite::client_async("ws://bench/", b)
                );
                Pair::Plain(client.unwrap().0, server.unwrap())
            }
            Setup::Ours(config) => {
                let (server, client) = tokio::join!(
                    accept_async(a, &config, None),
                    client_async("ws://bench/", b, &config, None)
                );
                Pair::Ours(client.unwrap().0, server.unwrap())
            }
            // yawc's ends over the pipe with the extension as agreed (its handshake is
            // HTTP's, measured by none of the variants).
            Setup::Yawc(agreed, options) => {
                let client = yawc::WebSocket::from_stream_with_extensions(
                    b,
                    yawc::Role::Client,
                    Some(agreed),
                    options.clone(),
                );
                let server = yawc::WebSocket::from_stream_with_extensions(
                    a,
                    yawc::Role::Server,
                    Some(agreed),
                    options,
                );
                Pair::Yawc(client.unwrap(), server.unwrap())
            }
        }
    }

    /// One message from the client, read whole by the server.
    pub async fn one(&mut self, message: &str) {
        match self {
            Pair::Plain(client, server) => {
                client.send(Message::text(message)).await.unwrap();
                server.next().await.unwrap().unwrap();
            }
            Pair::Ours(client, server) => {
                client.send(Message::text(message)).await.unwrap();
                server.next().await.unwrap().unwrap();
            }
            Pair::Yawc(client, server) => {
                let text = Bytes::copy_from_slice(message.as_bytes());
                client.send(yawc::Frame::text(text)).await.unwrap();
                server.next().await.unwrap();
            }
        }
    }
}

/// Every variant measured, by name (the bench's doc lists them).
pub fn variants() -> Vec<(String, Setup)> {
    let budget = WindowBudget::new(1 << 30);
    let mut list = vec![
        ("uncompressed".to_owned(), Setup::Plain),
        ("no_takeover".to_owned(), Setup::Ours(DeflateConfig::new())),
    ];
    for bits in [12u8, 13, 14, 15] {
        let config = DeflateConfig::new()
            .context_takeover(true)
            .max_window_bits(bits)
            .budget(budget.clone());
        let primed = config.clone().kept_compressors(KeptCompressors::new(0));
        list.push((format!("takeover_w{bits}"), Setup::Ours(config)));
        list.push((format!("takeover_w{bits}_primed"), Setup::Ours(primed)));
    }
    let fresh = DeflateConfig::new().pool(CodecPool::builder().max_idle(0).build());
    list.push(("fresh_state".to_owned(), Setup::Ours(fresh)));

    let yawc = yawc::Options::default()
        .with_compression_level(yawc::CompressionLevel::new(6))
        .with_compression_threshold(128)
        .with_utf8();
    let no_takeover = yawc
        .clone()
        .server_no_context_takeover()
        .client_no_context_takeover();
    let agreed = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";
    list.push((
        "yawc_no_takeover".to_owned(),
        Setup::Yawc(agreed, no_takeover.clone()),
    ));
    let pooled = no_takeover.with_deflate_pool(yawc::DeflatePool::new(2));
    list.push((
        "yawc_no_takeover_pooled".to_owned(),
        Setup::Yawc(agreed, pooled),
    ));
    list.push((
        "yawc_takeover_w15".to_owned(),
        Setup::Yawc("permessage-deflate", yawc),
    ));
    list
}
