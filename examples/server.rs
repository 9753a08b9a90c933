//! The tower-gzip demo server.
//!
//! ```text
//! cargo run --release --example server                          # our layers, on 127.0.0.1:3000
//! ADDR=127.0.0.1:0 cargo run --release --example server         # any free port
//! cargo run --release --example server -- --baseline tower-http # tower-http's layers, same routes
//! ```
//!
//! The first line on stdout is `listening on http://IP:PORT`; logs go to stderr
//! (`RUST_LOG`, default `info`). Open `/` in a browser for live stats.
//!
//! Layers, outermost first:
//!
//! 1. `log_requests`: logs each request and counts bytes on the wire (request bodies as
//!    received, response bodies after compression).
//! 2. Response compression, for every route: our `CompressionLayer` (level 6, global pool),
//!    or tower-http's at the same level with `--baseline tower-http`.
//! 3. Request decompression, on `POST /api/echo` only: it is the one route that reads a body.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use bytes::BytesMut;
use futures_util::StreamExt;
use http_body::{Frame, SizeHint};
use serde_json::{Value, json};
use tokio::sync::watch;
use tower_gzip::codec::{Encoder, Format};
use tower_gzip::compression::{CompressionLayer, CompressionStats};
use tower_gzip::{CodecPool, CompressionLevel, KindStats};
use tracing::{info, warn};

const INDEX_HTML: &str = include_str!("demo/index.html");
const MAX_ITEMS: u64 = 100_000;
const MAX_EVENTS: u64 = 10_000;
const MAX_BIG: u64 = 256 << 20;
const BIG_CHUNK: u64 = 64 << 10;
const MAX_ECHO: usize = 64 << 20;

/// Counts the server's heap allocations, so `/stats` (and `scripts/loadtest.sh`) can compare
/// allocation rates between our layers and tower-http's. Two relaxed atomic adds per
/// allocation, the same in both modes.
struct CountingAllocator {
    allocations: AtomicU64,
    bytes: AtomicU64,
}

// SAFETY: every call is forwarded unchanged to `System`; the counters have no effect on the
// memory handed out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.bytes
            .fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout (through `alloc` above).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as for `dealloc`; `new_size` is the caller's, checked by `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator {
    allocations: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    TowerGzip,
    TowerHttp,
}

#[derive(Clone)]
struct AppState {
    mode: Mode,
    /// Our layer's counters; `None` with `--baseline tower-http`, which has none.
    compression: Option<CompressionStats>,
    wire: Arc<WireStats>,
    png: Bytes,
    /// Turns `true` on Ctrl-C, so that long event streams end and shutdown can finish.
    shutdown: watch::Receiver<bool>,
}

/// Counted by `log_requests`, outside the compression layer: what really crossed the wire.
#[derive(Default)]
struct WireStats {
    responses: AtomicU64,
    encoded: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = parse_args();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let app = app(mode, shutdown_rx.clone());

    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;
    // The first stdout line, read by tests and scripts to find the port.
    println!("listening on http://{local}");
    std::io::stdout().flush()?;
    info!(%local, ?mode, "listening");

    let mut stop = shutdown_rx;
    let mut server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|&stop| stop).await;
            })
            .await
    });
    tokio::select! {
        result = &mut server => return Ok(result??),
        _ = tokio::signal::ctrl_c() => info!("Ctrl-C: shutting down"),
    }
    shutdown_tx.send_replace(true);
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(result) => result??,
        Err(_) => warn!("connections still open after 5 s; exiting anyway"),
    }
    Ok(())
}

fn parse_args() -> Mode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => Mode::TowerGzip,
        ["--baseline", "tower-http"] | ["--baseline=tower-http"] => Mode::TowerHttp,
        _ => {
            eprintln!("usage: server [--baseline tower-http]   (env: ADDR, RUST_LOG)");
            std::process::exit(2);
        }
    }
}

/// The router, with the layers of `mode` (see the module docs for their order).
fn app(mode: Mode, shutdown: watch::Receiver<bool>) -> Router {
    let ours = CompressionLayer::new().quality(CompressionLevel::Default);
    let state = AppState {
        mode,
        compression: (mode == Mode::TowerGzip).then(|| ours.stats()),
        wire: Arc::default(),
        png: png(),
        shutdown,
    };

    let echo: MethodRouter<AppState> = match mode {
        // Request bodies are decompressed (with the default size and ratio limits) only
        // where a handler reads them.
        Mode::TowerGzip => post(echo)
            .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(MAX_ECHO))
            .layer(tower_gzip::decompression::RequestDecompressionLayer::new()),
        Mode::TowerHttp => post(echo)
            .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(MAX_ECHO))
            .layer(tower_http::decompression::RequestDecompressionLayer::new()),
    };

    let router = Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route("/api/items", get(items))
        .route("/events", get(events))
        .route("/big.txt", get(big_txt))
        .route("/image.png", get(image_png))
        .route("/stats", get(stats))
        .route("/api/echo", echo)
        .with_state(state.clone());

    let router = match mode {
        Mode::TowerGzip => router.layer(ours),
        Mode::TowerHttp => router.layer(
            tower_http::compression::CompressionLayer::new()
                .quality(tower_http::CompressionLevel::Default),
        ),
    };
    router.layer(middleware::from_fn_with_state(state.wire, log_requests))
}

// ---------------------------------------------------------------------------------------
// Handlers

type Params = Query<HashMap<String, String>>;

/// The integer query parameter `key`, or `default`; 400 if malformed or outside `range`.
fn param(
    q: &HashMap<String, String>,
    key: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, (StatusCode, String)> {
    let bad = |why: &str| {
        let (lo, hi) = (range.start(), range.end());
        (
            StatusCode::BAD_REQUEST,
            format!("{key}: {why} (allowed: {lo}..={hi})\n"),
        )
    };
    let value = match q.get(key) {
        None => default,
        Some(v) => v.parse().map_err(|_| bad("not an integer"))?,
    };
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(bad("out of range"))
    }
}

/// A small, stable hash, so that every value below derives from the index alone.
fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "alpha", "bridge", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo",
    "juniper", "kestrel", "lantern", "meadow", "nimbus", "orchid", "prairie", "quartz", "raven",
    "saffron", "timber", "umber", "velvet", "willow", "xenon", "yarrow", "zephyr", "the", "of",
    "and", "a", "to", "in", "is", "it", "with", "for", "on", "over", "under", "compressed",
    "stream", "window", "block", "frame", "pool", "layer", "tower", "gzip",
];
#[rustfmt::skip]
const TAGS: &[&str] = &[
    "new", "sale", "eco", "bulk", "gift", "outdoor", "kitchen", "garden", "tools", "toys",
];

fn item(i: u64) -> Value {
    let h = mix(i);
    let words: Vec<&str> = (0..6)
        .map(|k| WORDS[(mix(i * 8 + k) % WORDS.len() as u64) as usize])
        .collect();
    json!({
        "id": i,
        "name": format!("item-{i:06}"),
        "sku": format!("SKU-{:08X}", h as u32),
        "price": (h % 100_000) as f64 / 100.0,
        "in_stock": h % 7 != 0,
        "tags": [TAGS[(h >> 20) as usize % TAGS.len()], TAGS[(h >> 40) as usize % TAGS.len()]],
        "description": format!("A {} {} made for {} {}, {} {}.",
            words[0], words[1], words[2], words[3], words[4], words[5]),
    })
}

/// `GET /api/items?n=N`: a deterministic JSON array of N records (~180 bytes each).
async fn items(Query(q): Params) -> Result<Response, (StatusCode, String)> {
    let n = param(&q, "n", 10, 0..=MAX_ITEMS)?;
    let body = serde_json::to_vec(&(0..n).map(item).collect::<Vec<_>>()).expect("plain JSON");
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// `GET /events?n=N&interval_ms=M`: N server-sent events, one frame each, M ms apart.
async fn events(
    State(state): State<AppState>,
    Query(q): Params,
) -> Result<Response, (StatusCode, String)> {
    let n = param(&q, "n", 5, 0..=MAX_EVENTS)?;
    let interval = param(&q, "interval_ms", 100, 1..=60_000)?;
    let mut ticker = tokio::time::interval(Duration::from_millis(interval));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stream = futures_util::stream::unfold(
        (0, ticker, state.shutdown),
        move |(i, mut ticker, mut stop)| async move {
            if i >= n {
                return None;
            }
            tokio::select! {
                _ = ticker.tick() => {}
                _ = stop.wait_for(|&stop| stop) => return None,
            }
            let event = Bytes::from(format!("data: {{\"tick\":{i}}}\n\n"));
            Some((Ok::<_, Infallible>(event), (i + 1, ticker, stop)))
        },
    );
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    // Fused: tower-http's compression polls a body again after its end.
    Ok((headers, Body::from_stream(stream.fuse())).into_response())
}

/// Lines of words, generated as they are needed.
struct Text {
    seed: u64,
    line: u64,
    column: usize,
    carry: Vec<u8>,
}

impl Text {
    fn new() -> Self {
        Text {
            seed: 1,
            line: 0,
            column: 0,
            carry: Vec::new(),
        }
    }

    /// The next `len` bytes of text.
    fn chunk(&mut self, len: usize) -> Bytes {
        let mut buf = BytesMut::with_capacity(len + 64);
        buf.extend_from_slice(&self.carry);
        while buf.len() < len {
            if self.column == 0 {
                self.line += 1;
                buf.extend_from_slice(format!("{:>7}  ", self.line).as_bytes());
            }
            self.seed = mix(self.seed);
            let word = WORDS[(self.seed % WORDS.len() as u64) as usize];
            buf.extend_from_slice(word.as_bytes());
            self.column += word.len() + 1;
            let end = if self.column > 70 { b'\n' } else { b' ' };
            buf.extend_from_slice(&[end]);
            if end == b'\n' {
                self.column = 0;
            }
        }
        self.carry = buf.split_off(len).to_vec();
        buf.freeze()
    }
}

/// `GET /big.txt?size=BYTES`: exactly BYTES bytes of text, streamed in 64 KiB chunks.
async fn big_txt(Query(q): Params) -> Result<Response, (StatusCode, String)> {
    let size = param(&q, "size", 4 << 20, 0..=MAX_BIG)?;
    let stream = futures_util::stream::unfold((size, Text::new()), |(left, mut text)| async move {
        let len = left.min(BIG_CHUNK);
        (len > 0).then(|| {
            (
                Ok::<_, Infallible>(text.chunk(len as usize)),
                (left - len, text),
            )
        })
    });
    let content_type = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    // Fused: tower-http's compression polls a body again after its end.
    Ok((content_type, Body::from_stream(stream.fuse())).into_response())
}

/// `GET /image.png`: never compressed (the default predicate skips `image/*`).
async fn image_png(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "image/png")], state.png)
}

/// A 64×64 RGB gradient PNG, its IDAT zlib stream written by our own [`Encoder`] (with a
/// private pool, so the global pool's stats show only HTTP traffic).
fn png() -> Bytes {
    const SIDE: u8 = 64;
    let mut raw = Vec::new();
    for y in 0..SIDE {
        raw.push(0); // filter: none
        for x in 0..SIDE {
            raw.extend_from_slice(&[x * 4, y * 4, (x ^ y) * 4]);
        }
    }
    let mut idat = BytesMut::new();
    let mut encoder = Encoder::new(Format::Deflate, CompressionLevel::Best, &CodecPool::new());
    encoder.encode(&raw, &mut idat).expect("in-memory encode");
    encoder.finish(&mut idat).expect("in-memory encode");

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8; 4], data: &[u8]| {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(data);
        let crc = crc32fast::hash(&png[start..]);
        png.extend_from_slice(&crc.to_be_bytes());
    };
    let side = u32::from(SIDE).to_be_bytes();
    // Width, height, bit depth 8, colour type 2 (RGB), compression, filter, no interlace.
    chunk(b"IHDR", &[&side[..], &side[..], &[8, 2, 0, 0, 0]].concat());
    chunk(b"IDAT", &idat);
    chunk(b"IEND", &[]);
    Bytes::from(png)
}

/// `GET /stats`: pool, compression and wire counters as JSON.
async fn stats(State(state): State<AppState>) -> Json<Value> {
    let kind = |k: KindStats| {
        json!({
            "created": k.created, "reused": k.reused, "returned": k.returned,
            "discarded": k.discarded, "idle": k.idle, "in_use": k.in_use(),
        })
    };
    let wire = &state.wire;
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let (pool, compression) = match &state.compression {
        Some(ours) => {
            let pool = CodecPool::global();
            let p = pool.stats();
            let c = ours.snapshot();
            (
                json!({
                    "compressors": kind(p.compressors), "decompressors": kind(p.decompressors),
                    "block_compressors": kind(p.block_compressors),
                    "max_idle": pool.max_idle(),
                }),
                json!({
                    "compressed": c.compressed, "skipped": c.skipped,
                    "bytes_in": c.bytes_in, "bytes_out": c.bytes_out,
                }),
            )
        }
        // tower-http has no pool and no counters: zeros for the pool, and the wire counters
        // (responses with and without Content-Encoding) for compression.
        None => (
            json!({
                "compressors": kind(KindStats::default()),
                "block_compressors": kind(KindStats::default()),
                "decompressors": kind(KindStats::default()), "max_idle": null,
            }),
            json!({
                "compressed": load(&wire.encoded),
                "skipped": load(&wire.responses) - load(&wire.encoded),
                "bytes_in": null, "bytes_out": null,
            }),
        ),
    };
    Json(json!({
        "allocator": {
            "allocations": ALLOCATOR.allocations.load(Ordering::Relaxed),
            "bytes": ALLOCATOR.bytes.load(Ordering::Relaxed),
        },
        "mode": match state.mode { Mode::TowerGzip => "tower-gzip", Mode::TowerHttp => "tower-http" },
        "pool": pool,
        "compression": compression,
        "wire": {
            "responses": load(&wire.responses), "encoded": load(&wire.encoded),
            "bytes_in": load(&wire.bytes_in), "bytes_out": load(&wire.bytes_out),
        },
    }))
}

/// `POST /api/echo`: the (decompressed) request body, with the request's Content-Type. axum's `Bytes` extractor answers for us when the
/// body cannot be read: 413 when a decompression limit (or `DefaultBodyLimit`) is hit, 400
/// for a corrupt or truncated body.
async fn echo(headers: HeaderMap, body: Bytes) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .cloned()
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

// ---------------------------------------------------------------------------------------
// Request logging and wire byte counts

/// Outside the compression layer: counts request bytes as received and response bytes as
/// sent, and logs one line per request when its response body ends (or is dropped).
async fn log_requests(State(wire): State<Arc<WireStats>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    let bytes_in = Arc::new(AtomicU64::new(0));
    let counter = bytes_in.clone();
    let req = req.map(|body| {
        Body::new(CountIn {
            inner: body,
            counter,
        })
    });

    let response = next.run(req).await;
    let encoding = response
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("identity")
        .to_owned();
    let status = response.status().as_u16();
    let on_end = Box::new(move |bytes_out: u64, complete: bool| {
        let bytes_in = bytes_in.load(Ordering::Relaxed);
        wire.responses.fetch_add(1, Ordering::Relaxed);
        wire.encoded
            .fetch_add(u64::from(encoding != "identity"), Ordering::Relaxed);
        wire.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        wire.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
        let ms = (started.elapsed().as_secs_f64() * 1e4).round() / 10.0;
        info!(%method, path, status, encoding, bytes_in, bytes_out, complete, ms, "request");
    });
    response.map(|body| {
        Body::new(CountOut {
            inner: body,
            sent: 0,
            complete: false,
            on_end: Some(on_end),
        })
    })
}

/// A request body that adds the length of each data frame to `counter`.
struct CountIn {
    inner: Body,
    counter: Arc<AtomicU64>,
}

impl http_body::Body for CountIn {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &frame {
            let len = frame.data_ref().map_or(0, |d| d.len() as u64);
            self.counter.fetch_add(len, Ordering::Relaxed);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

type OnEnd = Box<dyn FnOnce(u64, bool) + Send>;

/// A response body that counts the bytes it yields and calls `on_end` once, when dropped.
struct CountOut {
    inner: Body,
    sent: u64,
    complete: bool,
    on_end: Option<OnEnd>,
}

impl http_body::Body for CountOut {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        match &frame {
            Poll::Ready(Some(Ok(frame))) => {
                self.sent += frame.data_ref().map_or(0, |d| d.len() as u64);
            }
            Poll::Ready(None) => self.complete = true,
            _ => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CountOut {
    fn drop(&mut self) {
        // hyper may stop polling once `is_end_stream` is true, so that counts as complete.
        let complete = self.complete || http_body::Body::is_end_stream(&self.inner);
        if let Some(on_end) = self.on_end.take() {
            on_end(self.sent, complete);
        }
    }
}
