//! WebSocket permessage-deflate: CPU and bytes per message on recorded API JSON
//! (`../shared/corpus/reddit-api.jsonl`, the bodies), one message from a client to a server over an
//! in-memory pipe (the client's deflate, the server's inflate and UTF-8 check):
//!
//! - `uncompressed`: plain tokio-tungstenite, no extension.
//! - `no_takeover`: the default (a pooled state drawn per message, reset and returned).
//! - `takeover_wN`: context takeover with windows of 2^N bytes (N = 12..15: 4-32 KiB), the
//!   default way: a busy connection keeps its compressor (`KeptCompressors`), the server
//!   primes a pooled inflater with the parked window per message.
//! - `takeover_wN_primed`: the same with no kept compressors: both sides prime a pooled
//!   state from the parked window per message, the cost of holding windows only.
//! - `fresh_state`: no takeover with a pool that keeps nothing (`max_idle(0)`): a new
//!   deflate and inflate state per message, the baseline the pool saves.
//! - `yawc_*`: yawc, the other Rust WebSocket library with permessage-deflate, level 6,
//!   the same 128-byte threshold and UTF-8 checked as tungstenite does: `yawc_no_takeover`
//!   (a state per connection, reset per message), `yawc_no_takeover_pooled` (its
//!   `DeflatePool`), `yawc_takeover_w15` (its default, context takeover).
//!
//! Bytes the client wrote per message (frame headers and masks included) are printed once
//! per variant (stderr). `cargo bench -p tower-gzip-bench --bench websocket`

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tower_gzip::CodecPool;
use tower_gzip::websocket::{
    DeflateConfig, DeflateIo, KeptCompressors, Message, WindowBudget, accept_async, client_async,
};

/// The recorded corpus's JSON bodies, one message each.
fn corpus() -> Vec<String> {
    let recorded = tower_gzip_support::corpus::recorded().expect("the recorded corpus");
    recorded
        .into_iter()
        .map(|r| String::from_utf8(r.body).expect("the corpus is UTF-8"))
        .collect()
}

/// The client's end of the pipe, counting the bytes it writes: the wire, for every library.
struct Counted {
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
#[derive(Clone)]
enum Setup {
    Plain,
    Ours(DeflateConfig),
    Yawc(&'static str, yawc::Options),
}

/// One direction of a connection: what the client sends, the server reads. (Built once
/// per variant: its size does not matter.)
#[allow(clippy::large_enum_variant)]
enum Pair {
    Plain(WebSocketStream<Counted>, WebSocketStream<DuplexStream>),
    Ours(
        WebSocketStream<DeflateIo<Counted>>,
        WebSocketStream<DeflateIo<DuplexStream>>,
    ),
    Yawc(yawc::WebSocket<Counted>, yawc::WebSocket<DuplexStream>),
}

impl Pair {
    async fn new(setup: Setup, written: Arc<AtomicU64>) -> Pair {
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

    async fn one(&mut self, message: &str) {
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

fn variants() -> Vec<(String, Setup)> {
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

fn per_message(c: &mut Criterion) {
    let messages = corpus();
    let plain: usize = messages.iter().map(String::len).sum();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("websocket");
    group.throughput(Throughput::Elements(1));
    for (name, setup) in variants() {
        let written = Arc::new(AtomicU64::new(0));
        let mut pair = rt.block_on(Pair::new(setup, written.clone()));
        // Bytes: the whole corpus once, as the connection's first messages.
        let before = written.load(Ordering::Relaxed);
        rt.block_on(async {
            for m in &messages {
                pair.one(m).await;
            }
        });
        let wire = written.load(Ordering::Relaxed) - before;
        eprintln!(
            "websocket/{name}: {} messages, {:.0} B plain, {:.0} B on the wire per message ({:.3} of plain)",
            messages.len(),
            plain as f64 / messages.len() as f64,
            wire as f64 / messages.len() as f64,
            wire as f64 / plain as f64
        );
        let mut i = 0;
        group.bench_function(&name, |b| {
            b.iter(|| {
                rt.block_on(pair.one(&messages[i % messages.len()]));
                i += 1;
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = per_message
}
criterion_main!(benches);
