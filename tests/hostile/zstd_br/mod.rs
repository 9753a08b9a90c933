//! Hostile zstd and br bodies, end to end over HTTP, in both directions:
//!
//! - requests through `RequestDecompressionLayer` on a real axum server (private pool): the
//!   status axum's `Bytes` extractor answers (`/echo`), and the typed error behind it with
//!   the number of decoded bytes the handler saw (`/inspect`);
//! - responses through the client `DecompressionLayer` around a hyper-util client: the same
//!   payloads served raw by the same server (`/raw`, `/bomb/...`), and the typed error the
//!   client's body ends with.
//!
//! This module holds the server, the two clients, the reference streams no encoder writes
//! and the bomb generators; the cases are split by concern:
//! - `framing`: truncation at every offset, corrupt checksums and bytes, trailing garbage,
//!   RFC 8878 frame concatenation;
//! - `exhaustion`: skippable-frame floods, endless runs of empty frames, window bombs, and
//!   1 GiB bombs generated as they are read (with what was pulled, decoded and the peak
//!   RSS measured).
//!
//! After each group the server must still answer good zstd, br and gzip uploads, and no
//! codec state may be left checked out of either pool.
//!
//! Every reference stream is written by libzstd (zstd-safe) or the `brotli` crate directly
//! (`common::zstd_frame`, `common::br_stream`), or by hand where the point is a frame no
//! encoder writes.

mod exhaustion;
mod framing;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use bytes::Bytes;
use http::header::CONTENT_ENCODING;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body::{Body, Frame};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tower::{Layer, Service, ServiceExt};
use tower_gzip::codec::DecodeError;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::decompression::{Decompression, DecompressionLayer, RequestDecompressionLayer};
use tower_gzip::{BoxError, CodecPool};

#[cfg(feature = "br")]
use crate::common::br_stream;
use crate::common::{eventually, gzip, text};
#[cfg(feature = "zstd")]
use crate::common::{unzstd, zstd_frame};
use crate::raw_chunked_post;

const TIMEOUT: Duration = Duration::from_secs(30);
const MIB: u64 = 1 << 20;

type HttpClient = Client<HttpConnector, BoxBody<Bytes, BoxError>>;

// ---------------------------------------------------------------------------------------
// The server and the two clients
// ---------------------------------------------------------------------------------------

/// A lazily generated body: chunks produced as the reader pulls them, counted.
type Chunks = Box<dyn Iterator<Item = Vec<u8>> + Send>;

#[derive(Clone)]
struct AppState {
    /// What `/bomb/{name}` serves next, and how many bytes of it were generated.
    bombs: Arc<Mutex<Option<Chunks>>>,
    pulled: Arc<AtomicU64>,
}

struct Server {
    addr: SocketAddr,
    /// The server's pool (request decoders, response encoders).
    pool: CodecPool,
    /// The client's pool (response decoders).
    client_pool: CodecPool,
    http: HttpClient,
    /// The hyper-util client under the client `DecompressionLayer`.
    client: Decompression<HttpClient>,
    state: AppState,
}

/// The outcome of one request, as `/inspect` reports it.
#[derive(Debug, PartialEq, Eq)]
struct Inspected {
    status: StatusCode,
    /// `Debug` of the `DecodeErrorKind`, `limit`, or `none`.
    kind: String,
    /// Decoded bytes the handler received before the end or the error.
    decoded: u64,
    /// CRC-32 of those bytes.
    crc: u32,
}

/// The status axum's extractors answer for a body error, and what the error was: walks the
/// source chain for this crate's typed errors.
fn classify(err: &(dyn std::error::Error + 'static)) -> (StatusCode, String) {
    let mut current = Some(err);
    while let Some(err) = current {
        if err.is::<LengthLimitError>() {
            return (StatusCode::PAYLOAD_TOO_LARGE, "limit".into());
        }
        if let Some(err) = err.downcast_ref::<DecodeError>() {
            return (StatusCode::BAD_REQUEST, format!("{:?}", err.kind()));
        }
        current = err.source();
    }
    (StatusCode::INTERNAL_SERVER_ERROR, err.to_string())
}

/// Reads a request body to the end, counting what it yields; answers like axum's `Bytes`
/// extractor (413 for a limit, 400 for a decode error) with what it saw in headers.
async fn inspect(body: axum::body::Body) -> impl IntoResponse {
    let mut body = body;
    let mut decoded = 0u64;
    let mut crc = crc32fast::Hasher::new();
    let (status, kind) = loop {
        match body.frame().await {
            None => break (StatusCode::OK, "none".to_string()),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    decoded += data.len() as u64;
                    crc.update(&data);
                }
            }
            Some(Err(err)) => break classify(&err),
        }
    };
    (
        status,
        [
            ("x-kind", kind),
            ("x-decoded", decoded.to_string()),
            ("x-crc", crc.finalize().to_string()),
        ],
    )
}

/// Answers with the request body as it is, labelled with the coding the request names in
/// `x-serve-coding`: a server sending whatever the test wants, for the client side.
async fn raw(headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    let coding = headers["x-serve-coding"].to_str().unwrap().to_owned();
    ([(CONTENT_ENCODING, coding)], body)
}

/// Serves the generator set with [`Server::arm`], lazily, as the client reads.
async fn bomb(State(state): State<AppState>, Path(coding): Path<String>) -> impl IntoResponse {
    let chunks = state.bombs.lock().unwrap().take().expect("a bomb is armed");
    let pulled = state.pulled.clone();
    let frames = chunks.map(move |chunk| {
        pulled.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        Ok::<_, BoxError>(Frame::data(Bytes::from(chunk)))
    });
    (
        [(CONTENT_ENCODING, coding)],
        axum::body::Body::new(StreamBody::new(futures_util::stream::iter(frames))),
    )
}

async fn start() -> Server {
    let pool = CodecPool::builder().max_idle(8).build();
    let client_pool = CodecPool::builder().max_idle(8).build();
    let state = AppState {
        bombs: Arc::default(),
        pulled: Arc::default(),
    };
    let decoding = Router::new()
        .route("/echo", post(|body: Bytes| async move { body }))
        .route("/inspect", post(inspect))
        .layer(DefaultBodyLimit::disable())
        .layer(RequestDecompressionLayer::new().pool(pool.clone()))
        .layer(CompressionLayer::new().pool(pool.clone()));
    // Routes added after the layers are not under them: they send what they are given.
    let app = decoding
        .route("/raw", post(raw))
        .route("/bomb/{coding}", get(bomb))
        .layer(DefaultBodyLimit::disable())
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let http: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    let client = DecompressionLayer::new()
        .pool(client_pool.clone())
        .layer(http.clone());
    Server {
        addr,
        pool,
        client_pool,
        http,
        client,
        state,
    }
}

fn boxed<B>(body: B) -> BoxBody<Bytes, BoxError>
where
    B: Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    body.map_err(Into::into).boxed()
}

/// A body of `wire` cut into frames of `chunk` bytes (so chunked on the wire).
#[cfg(feature = "zstd")]
fn chunked(wire: &[u8], chunk: usize) -> BoxBody<Bytes, BoxError> {
    let frames: Vec<_> = wire
        .chunks(chunk.max(1))
        .map(|c| Ok::<_, BoxError>(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    boxed(StreamBody::new(futures_util::stream::iter(frames)))
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers[name].to_str().unwrap().to_owned()
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn post(
        &self,
        path: &str,
        coding: &str,
        body: BoxBody<Bytes, BoxError>,
    ) -> (StatusCode, HeaderMap, Bytes) {
        let req = Request::builder()
            .method(Method::POST)
            .uri(self.url(path))
            .header(CONTENT_ENCODING, coding)
            .body(body)
            .unwrap();
        let res = tokio::time::timeout(TIMEOUT, self.http.request(req))
            .await
            .expect("response in time")
            .expect("a response");
        let (parts, body) = res.into_parts();
        let body = tokio::time::timeout(TIMEOUT, body.collect())
            .await
            .expect("body in time")
            .expect("a complete body")
            .to_bytes();
        (parts.status, parts.headers, body)
    }

    /// Uploads `wire` as `coding` to `/echo` (axum's `Bytes` extractor) and to `/inspect`;
    /// both must answer `status`, `/inspect` with error `kind` (`None`: not checked).
    /// Returns what `/inspect` saw.
    async fn upload(
        &self,
        coding: &str,
        wire: &[u8],
        status: StatusCode,
        kind: Option<&str>,
    ) -> Inspected {
        let body = boxed(Full::new(Bytes::copy_from_slice(wire)));
        let (echo_status, _, echoed) = self.post("/echo", coding, body).await;
        assert_eq!(
            echo_status,
            status,
            "/echo: {}",
            String::from_utf8_lossy(&echoed)
        );
        let seen = self
            .inspect(coding, boxed(Full::new(Bytes::copy_from_slice(wire))))
            .await;
        assert_eq!(seen.status, status, "/inspect: {seen:?}");
        if let Some(kind) = kind {
            assert_eq!(seen.kind, kind, "/inspect: {seen:?}");
        }
        if status == StatusCode::OK {
            assert_eq!(seen.decoded, echoed.len() as u64);
            assert_eq!(seen.crc, crc32fast::hash(&echoed));
        }
        seen
    }

    async fn inspect(&self, coding: &str, body: BoxBody<Bytes, BoxError>) -> Inspected {
        let (status, headers, _) = self.post("/inspect", coding, body).await;
        Inspected {
            status,
            kind: header(&headers, "x-kind"),
            decoded: header(&headers, "x-decoded").parse().unwrap(),
            crc: header(&headers, "x-crc").parse().unwrap(),
        }
    }

    /// Has the server send `wire` labelled `coding`, through the client `DecompressionLayer`:
    /// the decoded bytes, or the client body's error, with the bytes decoded before it.
    async fn fetch(&self, coding: &str, wire: &[u8]) -> (Result<Vec<u8>, BoxError>, u64) {
        let req = Request::builder()
            .method(Method::POST)
            .uri(self.url("/raw"))
            .header("x-serve-coding", coding)
            .body(boxed(Full::new(Bytes::copy_from_slice(wire))))
            .unwrap();
        self.read_client_response(req).await
    }

    async fn read_client_response(
        &self,
        req: Request<BoxBody<Bytes, BoxError>>,
    ) -> (Result<Vec<u8>, BoxError>, u64) {
        let mut client = self.client.clone();
        let res = tokio::time::timeout(TIMEOUT, async { client.ready().await?.call(req).await })
            .await
            .expect("response in time")
            .expect("a response");
        assert!(res.headers().get(CONTENT_ENCODING).is_none(), "decoded");
        let mut body = res.into_body();
        let mut out = Vec::new();
        let result = tokio::time::timeout(TIMEOUT, async {
            while let Some(frame) = body.frame().await {
                if let Ok(data) = frame?.into_data() {
                    out.extend_from_slice(&data);
                }
            }
            Ok::<_, BoxError>(())
        })
        .await
        .expect("body in time");
        let decoded = out.len() as u64;
        (result.map(|()| out), decoded)
    }

    /// The client side of [`upload`](Self::upload): `wire` served as `coding` must decode to
    /// `expected` (`Ok`) or fail with this crate's error of that kind (`Err`).
    async fn client_expect(&self, coding: &str, wire: &[u8], expected: Result<&[u8], &str>) {
        let (result, _) = self.fetch(coding, wire).await;
        match (result, expected) {
            (Ok(plain), Ok(expected)) => assert!(plain == expected, "client: decoded other bytes"),
            (Err(err), Err(kind)) => {
                let (_, got) = classify(&*err);
                assert_eq!(got, kind, "client: {err}");
            }
            (Ok(plain), Err(kind)) => {
                panic!("client: decoded {} bytes, expected {kind}", plain.len())
            }
            (Err(err), Ok(_)) => panic!("client: {err}"),
        }
    }

    /// Sets the generator the next `GET /bomb/{coding}` serves.
    fn arm(&self, chunks: Chunks) -> Arc<AtomicU64> {
        self.state.pulled.store(0, Ordering::SeqCst);
        *self.state.bombs.lock().unwrap() = Some(chunks);
        self.state.pulled.clone()
    }

    /// POSTs a chunked body generated by `chunks` to `/inspect` over raw TCP (see
    /// [`raw_chunked_post`]) and returns what the handler saw.
    async fn raw_post(&self, coding: &str, chunks: Chunks) -> Inspected {
        let text = raw_chunked_post(self.addr, "/inspect", coding, chunks).await;
        let field = |name: &str| {
            text.lines()
                .find_map(|line| {
                    let (key, value) = line.split_once(':')?;
                    key.eq_ignore_ascii_case(name)
                        .then(|| value.trim().to_owned())
                })
                .unwrap_or_else(|| panic!("no {name} in {text:?}"))
        };
        Inspected {
            status: StatusCode::from_bytes(&text.as_bytes()[9..12]).unwrap(),
            kind: field("x-kind"),
            decoded: field("x-decoded").parse().unwrap(),
            crc: field("x-crc").parse().unwrap(),
        }
    }

    /// The server still works: uploads in every coding echo, and the client still decodes.
    async fn still_good(&self, case: &str) {
        let plain = text(30_000);
        let mut uploads = vec![("gzip", gzip(&plain))];
        #[cfg(feature = "zstd")]
        uploads.push(("zstd", zstd_frame(&plain, true)));
        #[cfg(feature = "br")]
        uploads.push(("br", br_stream(&plain, 5, 22)));
        for (coding, wire) in uploads {
            let (status, _, echoed) = self
                .post("/echo", coding, boxed(Full::new(Bytes::from(wire.clone()))))
                .await;
            assert_eq!(status, StatusCode::OK, "after {case}: {coding} upload");
            assert!(echoed == plain, "after {case}: {coding} echo differs");
            let (result, _) = self.fetch(coding, &wire).await;
            assert!(
                result.expect("client decodes") == plain,
                "after {case}: {coding} client"
            );
        }
    }

    /// Nothing is left checked out of either pool.
    async fn pools_are_healthy(&self) {
        for pool in [&self.pool, &self.client_pool] {
            let pool = pool.clone();
            assert!(
                eventually(|| pool.stats().in_use() == 0).await,
                "codec states still checked out: {:?}",
                pool.stats()
            );
        }
    }
}

/// Peak RSS (VmHWM) is reset, so the next reading covers what follows: false where the
/// kernel does not allow it.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A field of /proc/self/status in KiB (`VmRSS`, `VmHWM`).
fn proc_status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

// ---------------------------------------------------------------------------------------
// Reference streams
// ---------------------------------------------------------------------------------------

/// One zstd frame of `data` streamed by libzstd without a pledged size: no content size in
/// the header, so the window descriptor is there.
#[cfg(feature = "zstd")]
fn zstd_streamed_frame(data: &[u8]) -> Vec<u8> {
    use zstd_safe::{CCtx, CParameter, InBuffer, OutBuffer};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(1)).unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(true)).unwrap();
    let mut out: Vec<u8> = Vec::with_capacity(zstd_safe::compress_bound(data.len()) + 64);
    let mut input = InBuffer::around(data);
    let mut output = OutBuffer::around(&mut out);
    cctx.compress_stream2(
        &mut output,
        &mut input,
        zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue,
    )
    .unwrap();
    while cctx
        .compress_stream2(
            &mut output,
            &mut input,
            zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
        )
        .unwrap()
        != 0
    {}
    out
}

/// A skippable frame (RFC 8878 section 3.1.2) carrying `payload`.
#[cfg(feature = "zstd")]
fn skippable(nibble: u8, payload: &[u8]) -> Vec<u8> {
    let mut frame = (0x184D_2A50u32 | u32::from(nibble & 0xf))
        .to_le_bytes()
        .to_vec();
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// A zstd frame header with a window descriptor of 2^`window_log` (no content size, no
/// checksum), then one raw last block of `b"x"`: valid RFC 8878, but for windows over
/// 2^23 not for HTTP (RFC 9659).
#[cfg(feature = "zstd")]
fn zstd_window_frame(window_log: u8) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, (window_log - 10) << 3];
    // Block header: last block, raw, size 1.
    frame.extend_from_slice(&[0x09, 0x00, 0x00, b'x']);
    frame
}

// ---------------------------------------------------------------------------------------
// Bomb generators
// ---------------------------------------------------------------------------------------

/// `total` bytes of zeros as one zstd frame of RLE blocks (RFC 8878 section 3.1.1.2.2), made
/// by hand: 4 wire bytes per 128 KiB, so 1 GiB is 32 KiB on the wire. libzstd writes zeros
/// the same way. Chunks of 256 blocks (32 MiB decoded each).
#[cfg(feature = "zstd")]
fn zstd_zeros(total: u64) -> Chunks {
    const BLOCK: u64 = 128 * 1024;
    let blocks = total.div_ceil(BLOCK);
    // Window 2^17 (one block), no content size, no checksum.
    let header = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3];
    let mut next = 0u64;
    let body = std::iter::from_fn(move || {
        if next == blocks {
            return None;
        }
        let end = (next + 256).min(blocks);
        let mut chunk = Vec::with_capacity(4 * 256);
        for i in next..end {
            let last = u32::from(i + 1 == blocks);
            let size = (total - i * BLOCK).min(BLOCK) as u32;
            let head = size << 3 | 1 << 1 | last;
            chunk.extend_from_slice(&head.to_le_bytes()[..3]);
            chunk.push(0);
        }
        next = end;
        Some(chunk)
    });
    Box::new(std::iter::once(header).chain(body))
}

/// `total` bytes of zeros as one br stream, encoded by the `brotli` crate 1 MiB at a time as
/// the reader pulls, flushed after each.
#[cfg(feature = "br")]
fn br_zeros(total: u64) -> Chunks {
    static ZEROS: [u8; 1 << 20] = [0; 1 << 20];
    let mut writer = Some(brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22));
    let mut left = total;
    Box::new(std::iter::from_fn(move || {
        loop {
            let w = writer.as_mut()?;
            if left > 0 {
                let n = left.min(MIB) as usize;
                std::io::Write::write_all(w, &ZEROS[..n]).unwrap();
                // Flushed every MiB, so each pull costs one MiB of work and yields bytes.
                std::io::Write::flush(w).unwrap();
                left -= n as u64;
                let chunk = std::mem::take(w.get_mut());
                if !chunk.is_empty() {
                    return Some(chunk);
                }
            } else {
                let last = writer.take().unwrap().into_inner();
                return (!last.is_empty()).then_some(last);
            }
        }
    }))
}
