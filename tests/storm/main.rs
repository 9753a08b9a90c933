//! A disconnect storm against a real server, then a check of the codec pool's health.
//!
//! Thousands of clients each ask for a large gzip response (320 KiB of text, streamed),
//! read a few KiB and hang up. The server's socket buffers are small, so most responses
//! are still being compressed when the client goes: the compressor must come back to the
//! pool (or be dropped past its cap) every time. Then inner bodies that fail or panic
//! mid-stream. Afterwards nothing may be checked out, the idle shelf must respect its cap,
//! every checkout must be accounted for exactly once, and responses must still decode to
//! the identity bytes.
//!
//! `STORM_CLIENTS` (default 10,000) and `STORM_CONCURRENCY` (default 48) tune the storm.

use tower_gzip_support as common;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body as AxumBody;
use axum::routing::get;
use bytes::Bytes;
use common::server::{Loopback, Tuning, http1_client, send};
use common::{BoxError, decode};
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE};
use http::{Request, StatusCode};
use http_body::{Body, Frame};
use http_body_util::Empty;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use tower_gzip::compression::{CompressionLayer, CompressionStats};
use tower_gzip::{CodecPool, CompressionLevel, pool::KindStats};

const TIMEOUT: Duration = Duration::from_secs(20);
const CHUNK: usize = 16 * 1024;
/// 20 chunks of 16 KiB: 320 KiB per response.
const CHUNKS: usize = 20;
const MAX_IDLE: usize = 8;
/// Small socket buffers (the kernel doubles them): a response does not fit, so the
/// server is mid-stream when the client leaves.
const SOCKET_BUFFER: u32 = 8 * 1024;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Text of random words: compresses about 3:1, so 320 KiB is ~100 KiB on the wire.
fn chunks() -> Vec<Bytes> {
    const WORDS: &[&str] = &[
        "alpha", "bridge", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo",
        "juniper", "kestrel", "lantern", "meadow", "nimbus", "orchid", "prairie", "quartz", "the",
        "of", "and", "a", "to", "in", "stream", "window", "pool", "layer", "gzip",
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut text = Vec::with_capacity(CHUNK * CHUNKS + 16);
    while text.len() < CHUNK * CHUNKS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.extend_from_slice(WORDS[(x % WORDS.len() as u64) as usize].as_bytes());
        text.push(if x % 11 == 0 { b'\n' } else { b' ' });
    }
    text.truncate(CHUNK * CHUNKS);
    text.chunks(CHUNK).map(Bytes::copy_from_slice).collect()
}

/// How an inner body ends after its first `CHUNKS / 2` chunks.
#[derive(Clone, Copy)]
enum Ending {
    Complete,
    Error,
    Panic,
}

/// The chunks, one per poll, with a Pending (self-woken) every other poll so the encoder
/// flushes and streams; ends as `ending` says.
struct Streamed {
    chunks: Vec<Bytes>,
    next: usize,
    yielded: bool,
    ending: Ending,
}

impl Body for Streamed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.yielded
            && self.next == self.chunks.len() / 2
            && matches!(self.ending, Ending::Panic)
        {
            // Right after a chunk, before the Pending: the encoder holds its state (it
            // gives it back at each Pending), so the panic interrupts a state in use.
            panic!("inner body panicked mid-stream (expected by the test)");
        }
        if std::mem::take(&mut self.yielded) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if self.next == self.chunks.len() / 2 {
            match self.ending {
                Ending::Complete => {}
                Ending::Error => return Poll::Ready(Some(Err("inner body failed".into()))),
                Ending::Panic => panic!("inner body panicked mid-stream (expected by the test)"),
            }
        }
        let Some(chunk) = self.chunks.get(self.next).cloned() else {
            return Poll::Ready(None);
        };
        self.next += 1;
        self.yielded = true;
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }
}

/// Keeps the expected panics' messages out of the test output; any other panic still
/// reports as usual.
fn quiet_expected_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let expected = info
            .payload()
            .downcast_ref::<&str>()
            .is_some_and(|m| m.contains("expected by the test"));
        if !expected {
            default(info);
        }
    }));
}

fn route(chunks: Arc<Vec<Bytes>>, ending: Ending) -> axum::routing::MethodRouter {
    get(move || {
        let body = Streamed {
            chunks: chunks.to_vec(),
            next: 0,
            yielded: false,
            ending,
        };
        async move { ([(CONTENT_TYPE, "text/plain")], AxumBody::new(body)) }
    })
}

struct Server {
    loopback: Loopback,
    pool: CodecPool,
    stats: CompressionStats,
}

async fn start(chunks: Arc<Vec<Bytes>>) -> Server {
    let pool = CodecPool::builder().max_idle(MAX_IDLE).build();
    let layer = CompressionLayer::new()
        .pool(pool.clone())
        .quality(CompressionLevel::Fastest);
    let stats = layer.stats();
    let app = Router::new()
        .route("/big", route(chunks.clone(), Ending::Complete))
        .route("/error", route(chunks.clone(), Ending::Error))
        .route("/panic", route(chunks, Ending::Panic))
        .layer(layer);
    let tuning = Tuning {
        socket_buffer: Some(SOCKET_BUFFER),
        // hyper queues up to ~400 KiB of body per connection by default, the whole
        // compressed response; a small write buffer keeps the backpressure on the encoder,
        // so clients really leave mid-stream.
        max_buf_size: Some(SOCKET_BUFFER as usize),
    };
    Server {
        loopback: Loopback::serve_with(app, tuning).await,
        pool,
        stats,
    }
}

/// Connects with a small receive buffer, asks for `path` gzip-encoded, reads at least
/// `want` bytes (or to the end), and returns what was read.
async fn raw_get(addr: SocketAddr, path: &str, want: usize) -> Vec<u8> {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(SOCKET_BUFFER).unwrap();
    let mut stream: TcpStream = socket.connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\naccept-encoding: gzip\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::with_capacity(want.min(1 << 20) + 4096);
    let mut buf = [0u8; 4096];
    while got.len() < want {
        let n = tokio::time::timeout(TIMEOUT, stream.read(&mut buf))
            .await
            .expect("response bytes in time")
            .unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    got
    // Dropped here: the connection closes with the response mid-flight.
}

/// Waits (bounded) until the server has noticed every disconnect.
async fn settle(server: &Server) -> KindStats {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let stats = server
            .pool
            .stats()
            .kind(tower_gzip::pool::PoolKind::DeflateCompressors);
        let open = server.loopback.open_connections();
        if (stats.in_use() == 0 && open == 0) || Instant::now() > deadline {
            return stats;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn assert_healthy(stats: KindStats, what: &str) {
    assert_eq!(
        stats.in_use(),
        0,
        "{what}: codecs still checked out: {stats:?}"
    );
    assert!(
        stats.idle <= MAX_IDLE,
        "{what}: idle over the cap: {stats:?}"
    );
    assert_eq!(
        stats.created + stats.reused,
        stats.returned + stats.discarded,
        "{what}: every checkout ends exactly once: {stats:?}"
    );
}

/// `n` complete gzip responses through hyper's client decode to the identity bytes.
async fn responses_still_correct(server: &Server, identity: &[u8], n: usize) {
    let client = http1_client();
    for i in 0..n {
        let accept = if i % 2 == 0 { "gzip" } else { "deflate" };
        let req = Request::get(server.loopback.url("/big"))
            .header(ACCEPT_ENCODING, accept)
            .body(Empty::<Bytes>::new())
            .unwrap();
        let res = send(&client, req).await;
        assert_eq!(res.status, StatusCode::OK);
        assert_eq!(res.headers[CONTENT_ENCODING], accept);
        let body = res.body;
        assert!(
            decode(Some(accept), &body) == identity,
            "response {i} ({accept}) decoded to other bytes"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_storm_leaves_the_pool_healthy() {
    let clients = env_usize("STORM_CLIENTS", 10_000);
    let concurrency = env_usize("STORM_CONCURRENCY", 48);
    let chunks = Arc::new(chunks());
    let identity: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
    let server = start(chunks).await;

    let started = Instant::now();
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    let received = Arc::new(AtomicU64::new(0));
    for _ in 0..clients {
        let permit = permits.clone().acquire_owned().await.unwrap();
        let received = received.clone();
        let addr = server.loopback.addr;
        tasks.spawn(async move {
            let got = raw_get(addr, "/big", 4096).await;
            assert!(
                got.starts_with(b"HTTP/1.1 200"),
                "{:?}",
                &got[..got.len().min(64)]
            );
            received.fetch_add(got.len() as u64, Ordering::Relaxed);
            drop(permit);
        });
        // Reap finished clients as we go, so a failure surfaces early.
        while let Some(done) = tasks.try_join_next() {
            done.unwrap();
        }
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    let storm = started.elapsed();
    let stats = settle(&server).await;
    let settled = started.elapsed();
    let compression = server.stats.total();
    eprintln!(
        "disconnect storm: {clients} clients, {concurrency} at a time, {storm:.2?} for the \
         storm, {settled:.2?} until every disconnect was noticed; {} response bytes read; \
         compressed responses {}, compressor pool {stats:?}, bytes in/out {}/{}",
        received.load(Ordering::Relaxed),
        compression.compressed,
        compression.bytes_in,
        compression.bytes_out,
    );
    assert_eq!(compression.compressed, clients as u64);
    // At least one checkout per response; more when a stream that goes Pending gives its
    // state back and draws one again when data comes. Each ends exactly once
    // (assert_healthy).
    assert!(stats.created + stats.reused >= clients as u64, "{stats:?}");
    assert_healthy(stats, "after the storm");
    // Responses are streamed and the clients left early: most encoders were cut off.
    assert!(
        compression.bytes_in < clients as u64 * identity.len() as u64,
        "every response was compressed in full: the storm did not disconnect mid-stream"
    );

    responses_still_correct(&server, &identity, 100).await;
    let stats = settle(&server).await;
    assert_healthy(stats, "after 100 complete responses");
    eprintln!("after 100 complete responses: {stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_and_panicking_bodies_leave_the_pool_usable() {
    let chunks = Arc::new(chunks());
    let identity: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
    let server = start(chunks).await;
    let rounds = 20;
    quiet_expected_panics();

    // An inner body error: the encoder is dropped normally, so its state is reset and
    // returned (or dropped past the cap), and the connection is aborted.
    for _ in 0..rounds {
        let got = raw_get(server.loopback.addr, "/error", usize::MAX).await;
        assert!(got.starts_with(b"HTTP/1.1 200"));
        assert!(
            !got.ends_with(b"\r\n0\r\n\r\n"),
            "a failed body must not end like a complete chunked response"
        );
    }
    let stats = settle(&server).await;
    assert_healthy(stats, "after failing bodies");
    let discarded_before = stats.discarded;

    // A panic in the inner body's poll_frame unwinds the connection task: the guard is
    // dropped while panicking, so the interrupted state is discarded, never reused.
    for _ in 0..rounds {
        let got = raw_get(server.loopback.addr, "/panic", usize::MAX).await;
        assert!(got.starts_with(b"HTTP/1.1 200"));
        assert!(!got.ends_with(b"\r\n0\r\n\r\n"));
    }
    let stats = settle(&server).await;
    assert_healthy(stats, "after panicking bodies");
    assert_eq!(
        stats.discarded - discarded_before,
        rounds,
        "every state interrupted by a panic is discarded: {stats:?}"
    );
    eprintln!("after {rounds} failing and {rounds} panicking bodies: {stats:?}");

    // No poisoned lock, no corrupt state handed out: full responses still decode.
    responses_still_correct(&server, &identity, 20).await;
    let stats = settle(&server).await;
    assert_healthy(stats, "after the good responses");
}
