//! Hostile zstd and br bodies, end to end over HTTP, in both directions:
//!
//! - requests through `RequestDecompressionLayer` on a real axum server (private pool): the
//!   status axum's `Bytes` extractor answers (`/echo`), and the typed error behind it with
//!   the number of decoded bytes the handler saw (`/inspect`);
//! - responses through the client `DecompressionLayer` around a hyper-util client: the same
//!   payloads served raw by the same server (`/raw`, `/bomb/...`), and the typed error the
//!   client's body ends with.
//!
//! Truncation at every offset, corrupt checksums, window bombs, 1 GiB bombs generated as
//! they are read (with what was pulled, decoded and the peak RSS measured), skippable-frame
//! floods, endless runs of empty frames, trailing garbage, and RFC 8878 frame concatenation.
//! After each group the server must still answer good zstd, br and gzip uploads, and no
//! codec state may be left checked out of either pool.
//!
//! Every reference stream is written by libzstd (zstd-safe) or the `brotli` crate directly,
//! or by hand where the point is a frame no encoder writes.
#![cfg(any(feature = "zstd", feature = "br"))]

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use bytes::Bytes;
use common::{eventually, gzip, text};
use http::header::CONTENT_ENCODING;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body::{Body, Frame};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::{Layer, Service, ServiceExt};
use tower_gzip::codec::DecodeError;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::decompression::{Decompression, DecompressionLayer, RequestDecompressionLayer};
use tower_gzip::{BoxError, CodecPool};

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

    /// POSTs a chunked body generated by `chunks` to `/inspect` over raw TCP and returns what
    /// the handler saw. The server may answer before reading it all and close the
    /// connection, which a hyper client reports as a broken pipe rather than the response,
    /// so the body is written by a task whose write errors are ignored, aborted once the
    /// response head is in.
    async fn raw_post(&self, coding: &str, chunks: Chunks) -> Inspected {
        let stream = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let (mut read, mut write) = stream.into_split();
        let head = format!(
            "POST /inspect HTTP/1.1\r\nhost: {}\r\ncontent-encoding: {coding}\r\n\
             transfer-encoding: chunked\r\nconnection: close\r\n\r\n",
            self.addr
        );
        let writer = tokio::spawn(async move {
            write.write_all(head.as_bytes()).await?;
            for chunk in chunks.filter(|c| !c.is_empty()) {
                let mut frame = format!("{:x}\r\n", chunk.len()).into_bytes();
                frame.extend(chunk);
                frame.extend_from_slice(b"\r\n");
                write.write_all(&frame).await?;
            }
            write.write_all(b"0\r\n\r\n").await?;
            // Dropping the write half would half-close the connection, which the server
            // takes as the client going away: hold it until the response is read.
            std::future::pending::<()>().await;
            Ok::<_, std::io::Error>(write)
        });
        let mut response = Vec::new();
        let mut buf = [0u8; 4096];
        while !response.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tokio::time::timeout(TIMEOUT, read.read(&mut buf))
                .await
                .expect("response in time")
                .expect("read the response");
            assert!(n > 0, "connection closed without a response");
            response.extend_from_slice(&buf[..n]);
        }
        writer.abort();
        let text = String::from_utf8_lossy(&response).into_owned();
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
            status: StatusCode::from_bytes(&response[9..12]).unwrap(),
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

/// One zstd frame of `data`, by libzstd directly, with the content size and, if asked, the
/// content checksum.
#[cfg(feature = "zstd")]
fn zstd_frame(data: &[u8], checksum: bool) -> Vec<u8> {
    use zstd_safe::{CCtx, CParameter};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(checksum))
        .unwrap();
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    cctx.compress2(&mut out, data).unwrap();
    out
}

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

/// Decodes zstd frames with libzstd directly, windows limited to 2^23.
#[cfg(feature = "zstd")]
fn unzstd(wire: &[u8]) -> Vec<u8> {
    use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(23)).unwrap();
    let mut input = InBuffer::around(wire);
    let mut plain = Vec::new();
    loop {
        plain.reserve(1 << 20);
        let before = (input.pos(), plain.len());
        let mut output = OutBuffer::around_pos(&mut plain, before.1);
        let hint = dctx
            .decompress_stream(&mut output, &mut input)
            .unwrap_or_else(|code| panic!("libzstd: {}", zstd_safe::get_error_name(code)));
        if hint == 0 && input.pos() == wire.len() {
            return plain;
        }
        assert!((input.pos(), plain.len()) != before, "libzstd stalled");
    }
}

/// One br stream of `data` by the `brotli` crate.
#[cfg(feature = "br")]
fn br_stream(data: &[u8], quality: u32, lgwin: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 4096, quality, lgwin);
        std::io::Write::write_all(&mut writer, data).unwrap();
    }
    out
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

/// Zeros with a random byte every 64 bytes or so: about 20:1 in zstd and br, under the
/// ratio limit.
fn noisy_zeros(len: usize) -> Vec<u8> {
    let noise = common::noise(len / 64 + 1, 11);
    let mut out = vec![0u8; len];
    for (i, b) in noise.iter().enumerate() {
        if let Some(slot) = out.get_mut(i * 64 + usize::from(*b % 64)) {
            *slot = *b;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_truncated_at_every_offset_is_400() {
    let server = start().await;
    let plain =
        b"a small zstd body, truncated at every byte offset in turn, twice: a small zstd body";
    for wire in [zstd_frame(plain, true), zstd_streamed_frame(plain)] {
        // Cut to nothing, the body is empty: a valid (empty) upload.
        server
            .upload("zstd", &[], StatusCode::OK, Some("none"))
            .await;
        server.client_expect("zstd", &[], Ok(b"")).await;
        for cut in 1..wire.len() {
            let seen = server
                .upload(
                    "zstd",
                    &wire[..cut],
                    StatusCode::BAD_REQUEST,
                    Some("Truncated"),
                )
                .await;
            // Nothing past what the prefix holds reaches the handler.
            assert!(seen.decoded <= plain.len() as u64);
            server
                .client_expect("zstd", &wire[..cut], Err("Truncated"))
                .await;
        }
        server
            .upload("zstd", &wire, StatusCode::OK, Some("none"))
            .await;
        server.client_expect("zstd", &wire, Ok(plain)).await;
    }
    server.still_good("zstd truncation").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_truncated_at_every_offset_is_400() {
    let server = start().await;
    let plain = b"a small br body, truncated at every byte offset in turn, twice: a small br body";
    for wire in [
        br_stream(plain, 5, 22),
        br_stream(plain, 0, 16),
        br_stream(plain, 11, 24),
    ] {
        server.upload("br", &[], StatusCode::OK, Some("none")).await;
        server.client_expect("br", &[], Ok(b"")).await;
        for cut in 1..wire.len() {
            let seen = server
                .upload(
                    "br",
                    &wire[..cut],
                    StatusCode::BAD_REQUEST,
                    Some("Truncated"),
                )
                .await;
            assert!(seen.decoded <= plain.len() as u64);
            server
                .client_expect("br", &wire[..cut], Err("Truncated"))
                .await;
        }
        server
            .upload("br", &wire, StatusCode::OK, Some("none"))
            .await;
        server.client_expect("br", &wire, Ok(plain)).await;
    }
    server.still_good("br truncation").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// Checksums, corrupt data, trailing garbage
// ---------------------------------------------------------------------------------------

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_content_checksum_mismatch_is_400() {
    let server = start().await;
    let plain = text(5_000);
    for good in [zstd_frame(&plain, true), zstd_streamed_frame(&plain)] {
        // Frame_Header_Descriptor bit 2: Content_Checksum_flag, set by libzstd as asked.
        assert_eq!(good[4] & 0x04, 0x04, "the checksum flag is set");
        server
            .upload("zstd", &good, StatusCode::OK, Some("none"))
            .await;
        // The last four bytes are the XXH64-based content checksum: any bit of them.
        for at in good.len() - 4..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut wire = good.clone();
                wire[at] ^= bit;
                server
                    .upload("zstd", &wire, StatusCode::BAD_REQUEST, Some("Checksum"))
                    .await;
                server.client_expect("zstd", &wire, Err("Checksum")).await;
            }
        }
        // A checksum that matches other content: the frame's data changed, the checksum
        // did not. A byte of the last block's literals (raw, past the block header) is
        // caught by the checksum if the block still decodes, or as corrupt data.
        let mut wire = good.clone();
        let at = wire.len() - 4 - 2;
        wire[at] ^= 0x20;
        let seen = server
            .upload("zstd", &wire, StatusCode::BAD_REQUEST, None)
            .await;
        assert!(
            seen.kind == "Checksum" || seen.kind == "CorruptData",
            "{seen:?}"
        );
    }
    // Without the flag, the same frame has no checksum to check, and decodes.
    let unchecked = zstd_frame(&plain, false);
    assert_eq!(unchecked[4] & 0x04, 0);
    server
        .upload("zstd", &unchecked, StatusCode::OK, Some("none"))
        .await;
    // The checksum flag on a frame that then lacks the checksum (cut off): truncated.
    let good = zstd_frame(&plain, true);
    server
        .upload(
            "zstd",
            &good[..good.len() - 4],
            StatusCode::BAD_REQUEST,
            Some("Truncated"),
        )
        .await;
    server.still_good("zstd checksums").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_trailing_garbage_is_400() {
    let server = start().await;
    let plain = text(3_000);
    let good = zstd_frame(&plain, true);
    // (what follows the frame, the kind): bytes that cannot start a frame are trailing data;
    // the start of a frame (magic or skippable magic) cut short is a truncated frame.
    let cases: &[(&[u8], &str)] = &[
        (b"x", "TrailingData"),
        (b"junk after the frame", "TrailingData"),
        (b"\0\0\0\0", "TrailingData"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "TrailingData"),
        (b"\x28\xb5\x2f\xfd", "Truncated"),
        (b"\x28\xb5\x2f\xfd\x00", "Truncated"),
        (b"\x50\x2a\x4d\x18\x10\x00\x00\x00abc", "Truncated"),
    ];
    for (garbage, kind) in cases {
        let mut wire = good.clone();
        wire.extend_from_slice(garbage);
        server
            .upload("zstd", &wire, StatusCode::BAD_REQUEST, Some(kind))
            .await;
        server.client_expect("zstd", &wire, Err(kind)).await;
        // Garbage that arrives in its own chunk, after the frame: the same answer.
        let mut body = vec![Bytes::from(good.clone()), Bytes::from_static(garbage)];
        body.retain(|b| !b.is_empty());
        let frames: Vec<_> = body
            .into_iter()
            .map(|b| Ok::<_, BoxError>(Frame::data(b)))
            .collect();
        let seen = server
            .inspect(
                "zstd",
                boxed(StreamBody::new(futures_util::stream::iter(frames))),
            )
            .await;
        assert_eq!(
            (seen.status, seen.kind.as_str()),
            (StatusCode::BAD_REQUEST, *kind)
        );
        // What came before the garbage was delivered in full.
        assert_eq!(seen.decoded, plain.len() as u64);
    }
    server.still_good("zstd trailing garbage").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_trailing_garbage_is_400() {
    let server = start().await;
    let plain = text(3_000);
    let good = br_stream(&plain, 5, 22);
    // RFC 7932: one stream, nothing after its last meta-block; a second stream is junk too.
    let second = br_stream(b"another stream", 5, 22);
    let cases: &[&[u8]] = &[b"x", b"\0", b"\x3b", &second, b"junk after the stream"];
    for garbage in cases {
        let mut wire = good.clone();
        wire.extend_from_slice(garbage);
        server
            .upload("br", &wire, StatusCode::BAD_REQUEST, Some("TrailingData"))
            .await;
        server.client_expect("br", &wire, Err("TrailingData")).await;
    }
    server.still_good("br trailing garbage").await;
    server.pools_are_healthy().await;
}

/// br has no checksum: a changed byte is caught when the stream stops making sense, or not
/// at all. Whatever the byte, the answer is 200 or 400, never a crash or a hang, and the
/// pool gets every state back.
#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_corrupt_bytes_are_400_or_decode() {
    let server = start().await;
    let plain = text(2_000);
    let good = br_stream(&plain, 5, 22);
    let mut refused = 0;
    for at in 0..good.len() {
        let mut wire = good.clone();
        wire[at] ^= 0x55;
        let seen = server
            .inspect("br", boxed(Full::new(Bytes::from(wire))))
            .await;
        match seen.status {
            StatusCode::OK => {}
            StatusCode::BAD_REQUEST => {
                refused += 1;
                assert!(
                    ["CorruptData", "Truncated", "TrailingData"].contains(&seen.kind.as_str()),
                    "{seen:?}"
                );
            }
            other => panic!("byte {at}: {other} {seen:?}"),
        }
    }
    eprintln!("br, one byte changed: {refused} of {} refused", good.len());
    assert!(refused > 0);
    server.still_good("br corrupt bytes").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// RFC 8878 framing: concatenation, skippable frames, empty frames
// ---------------------------------------------------------------------------------------

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_concatenated_frames_decode() {
    let server = start().await;
    // Frames of every shape libzstd writes, with skippable frames of every magic nibble
    // and empty frames between them.
    let parts: [&[u8]; 4] = [b"first frame, ", b"second frame, ", b"", b"last frame"];
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        wire.extend(skippable(i as u8 * 5, format!("skip {i}").as_bytes()));
        wire.extend(match i % 3 {
            0 => zstd_frame(part, true),
            1 => zstd_frame(part, false),
            _ => zstd_streamed_frame(part),
        });
        expected.extend_from_slice(part);
    }
    wire.extend(skippable(15, b""));
    assert_eq!(unzstd(&wire), expected, "libzstd reads it the same");
    let seen = server
        .upload("zstd", &wire, StatusCode::OK, Some("none"))
        .await;
    assert_eq!(seen.crc, crc32fast::hash(&expected));
    server.client_expect("zstd", &wire, Ok(&expected)).await;
    // Split anywhere: in chunks of 1, 2, 3, 5 and 7 bytes.
    for chunk in [1, 2, 3, 5, 7] {
        let seen = server.inspect("zstd", chunked(&wire, chunk)).await;
        assert_eq!(
            (seen.status, seen.decoded, seen.crc),
            (
                StatusCode::OK,
                expected.len() as u64,
                crc32fast::hash(&expected)
            ),
            "chunks of {chunk}"
        );
    }
    // Many frames of real content: 500 frames of 1 KiB.
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for i in 0..500 {
        let part = text(1_000 + i);
        wire.extend(zstd_frame(&part, i % 2 == 0));
        expected.extend(part);
    }
    let seen = server
        .upload("zstd", &wire, StatusCode::OK, Some("none"))
        .await;
    assert_eq!(seen.crc, crc32fast::hash(&expected));
    server.client_expect("zstd", &wire, Ok(&expected)).await;
    server.still_good("zstd concatenation").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_skippable_frame_floods() {
    let server = start().await;
    let content = text(4_000);
    let frame = zstd_frame(&content, true);

    // 1,000,000 empty skippable frames (8 MB), then a frame: generated as it is sent.
    let floods = 1_000_000u64;
    let flood = move || -> Chunks {
        let chunk = skippable(0, b"").repeat(8192);
        let n = floods / 8192;
        let tail = skippable(7, b"").repeat((floods % 8192) as usize);
        Box::new(std::iter::repeat_n(chunk, n as usize).chain([tail]))
    };
    reset_peak_rss();
    let rss_before = proc_status_kib("VmRSS");
    let frame_copy = frame.clone();
    let seen = server
        .raw_post("zstd", Box::new(flood().chain([frame_copy])))
        .await;
    let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
    assert_eq!(
        (seen.status, seen.decoded, seen.crc),
        (
            StatusCode::OK,
            content.len() as u64,
            crc32fast::hash(&content)
        ),
        "{seen:?}"
    );
    eprintln!("{floods} skippable frames then a frame: 200, peak RSS +{peak} KiB");
    // The client side: the same flood served as a response.
    let pulled = server.arm(Box::new(flood().chain([frame.clone()])));
    let req = Request::get(server.url("/bomb/zstd"))
        .body(boxed(Full::new(Bytes::new())))
        .unwrap();
    let (result, _) = server.read_client_response(req).await;
    assert!(result.expect("the flood decodes") == content);
    assert_eq!(
        pulled.load(Ordering::SeqCst),
        floods * 8 + frame.len() as u64
    );

    // Skippable frames with large payloads: 16 MiB of junk in frames of up to 4 MiB.
    let junk = common::noise(4 << 20, 5);
    let big: Chunks = Box::new(
        (0..4)
            .map(move |_| skippable(3, &junk))
            .chain([frame.clone()]),
    );
    let seen = server.raw_post("zstd", big).await;
    assert_eq!(
        (seen.status, seen.decoded),
        (StatusCode::OK, content.len() as u64),
        "{seen:?}"
    );

    // A skippable frame that claims 4 GiB - 1 and ends after 1 MiB: truncated.
    let mut head = (0x184D_2A5Fu32).to_le_bytes().to_vec();
    head.extend_from_slice(&u32::MAX.to_le_bytes());
    let cut: Chunks = Box::new([head, vec![0xa5; 1 << 20]].into_iter());
    let seen = server.raw_post("zstd", cut).await;
    assert_eq!(
        (seen.status, seen.kind.as_str()),
        (StatusCode::BAD_REQUEST, "Truncated")
    );
    server.still_good("skippable floods").await;
    server.pools_are_healthy().await;
}

/// An endless stream of empty frames produces no output, so no limit stops it: the decoder
/// must keep up without growing, and answer once the body ends. 500,000 empty frames (libzstd's
/// own empty frame, 9 bytes) then content.
#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_endless_empty_frames() {
    let server = start().await;
    let empty = zstd_frame(b"", false);
    assert_eq!(unzstd(&empty.repeat(3)), b"");
    let content = text(2_000);
    let frames = 500_000usize;
    let per_chunk = 4096;
    let stream = |empty: Vec<u8>, content: Vec<u8>| -> Chunks {
        let chunk = empty.repeat(per_chunk);
        Box::new(
            std::iter::repeat_n(chunk, frames / per_chunk)
                .chain([empty.repeat(frames % per_chunk), zstd_frame(&content, true)]),
        )
    };
    reset_peak_rss();
    let rss_before = proc_status_kib("VmRSS");
    let seen = server
        .raw_post("zstd", stream(empty.clone(), content.clone()))
        .await;
    let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
    assert_eq!(
        (seen.status, seen.decoded, seen.crc),
        (
            StatusCode::OK,
            content.len() as u64,
            crc32fast::hash(&content)
        ),
        "{seen:?}"
    );
    eprintln!(
        "{frames} empty zstd frames ({} bytes) then content: 200, peak RSS +{peak} KiB",
        frames * empty.len()
    );
    // Only empty frames: an empty body.
    let seen = server
        .raw_post(
            "zstd",
            Box::new(std::iter::repeat_n(empty.repeat(per_chunk), 32)),
        )
        .await;
    assert_eq!((seen.status, seen.decoded), (StatusCode::OK, 0));
    // The client side.
    server.arm(stream(empty, content.clone()));
    let req = Request::get(server.url("/bomb/zstd"))
        .body(boxed(Full::new(Bytes::new())))
        .unwrap();
    let (result, _) = server.read_client_response(req).await;
    assert!(result.expect("empty frames then content decode") == content);
    server.still_good("empty frames").await;
    server.pools_are_healthy().await;
}

/// Empty frames without end decode to nothing, so no decoded-size or ratio limit sees them:
/// the compressed body is bounded too (`DecompressionLimits::max_wire_size`, the 20 MiB size
/// limit plus room for framing), and the body stops with a 413 / `LengthLimitError`.
#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_endless_empty_frames_are_413() {
    let server = start().await;
    let max_wire = tower_gzip::decompression::DecompressionLimits::new()
        .max_wire_size()
        .unwrap();
    let endless = |pulled: Arc<AtomicU64>| -> Chunks {
        let chunk = zstd_frame(b"", false).repeat(4096);
        Box::new(std::iter::repeat(chunk).inspect(move |c| {
            pulled.fetch_add(c.len() as u64, Ordering::SeqCst);
        }))
    };
    let pulled = Arc::new(AtomicU64::new(0));
    let seen = server.raw_post("zstd", endless(pulled.clone())).await;
    assert_eq!(
        (seen.status, seen.kind.as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "limit")
    );
    let sent = pulled.load(Ordering::SeqCst);
    eprintln!("endless empty zstd frames: 413 after {sent} bytes generated (bound {max_wire})");
    // What the server read, plus what the socket buffers took before the answer.
    assert!(
        sent > max_wire && sent < max_wire + (16 << 20),
        "{sent} bytes"
    );

    // The client side: a response of endless empty frames.
    server.arm(endless(Arc::default()));
    let req = Request::get(server.url("/bomb/zstd"))
        .body(boxed(Full::new(Bytes::new())))
        .unwrap();
    let (result, _) = server.read_client_response(req).await;
    let err = result.expect_err("endless empty frames must not end well");
    assert!(
        err.downcast_ref::<http_body_util::LengthLimitError>()
            .is_some(),
        "{err}"
    );
    server.still_good("endless empty frames").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// Window bombs
// ---------------------------------------------------------------------------------------

/// The pool's zstd decoder counters once nothing is checked out.
#[cfg(feature = "zstd")]
async fn settled_zstd_decoders(pool: &CodecPool) -> tower_gzip::KindStats {
    let p = pool.clone();
    assert!(eventually(|| p.stats().zstd_decompressors.in_use() == 0).await);
    pool.stats().zstd_decompressors
}

/// Frames that ask for a window over 8 MiB are refused with 400 before the window is
/// allocated. The pool shows it: a context that allocated a window of 8 MiB or more has
/// grown past what the pool keeps (4 MiB) and is dropped on return, while one that refused
/// the frame goes back to the shelf. The control case (a 2^23 window, allowed) shows the
/// measurement sees an allocation when there is one.
#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_window_bombs_are_400_before_allocating() {
    let server = start().await;

    // The control: 2^23 is allowed, decodes, and its 8 MiB window is allocated.
    let allowed = zstd_window_frame(23);
    assert_eq!(unzstd(&allowed), b"x");
    let before = settled_zstd_decoders(&server.pool).await;
    let seen = server
        .inspect("zstd", boxed(Full::new(Bytes::from(allowed))))
        .await;
    assert_eq!((seen.status, seen.decoded), (StatusCode::OK, 1));
    let after = settled_zstd_decoders(&server.pool).await;
    assert_eq!(
        after.discarded - before.discarded,
        1,
        "an 8 MiB window was allocated and its context not kept: {after:?}"
    );

    // A single-segment frame whose content size (1 GiB) is its window.
    let mut single_segment = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    single_segment.extend_from_slice(&(1u64 << 30).to_le_bytes());
    single_segment.extend_from_slice(&[0x09, 0x00, 0x00, b'x']);
    let mut bombs: Vec<(String, Vec<u8>)> = [24u8, 27, 31]
        .iter()
        .map(|&log| (format!("window 2^{log}"), zstd_window_frame(log)))
        .collect();
    bombs.push(("single segment, 1 GiB".into(), single_segment));
    for (case, wire) in &bombs {
        // libzstd reads the header as asking for that window: with no window limit (its
        // own maximum, 2^31) the window frames decode; the single-segment one declares
        // 1 GiB of content (it would then fail for want of it).
        assert_eq!(
            zstd_safe::get_frame_content_size(wire).ok(),
            Some(case.starts_with("single").then_some(1 << 30)),
            "{case}"
        );
        if !case.starts_with("single") {
            let mut dctx = zstd_safe::DCtx::create();
            dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(31))
                .unwrap();
            let mut plain = Vec::with_capacity(16);
            dctx.decompress(&mut plain, wire)
                .unwrap_or_else(|code| panic!("{case}: {}", zstd_safe::get_error_name(code)));
            assert_eq!(plain, b"x", "{case}");
        }
        let before = settled_zstd_decoders(&server.pool).await;
        let seen = server
            .inspect("zstd", boxed(Full::new(Bytes::from(wire.clone()))))
            .await;
        assert_eq!(
            (seen.status, seen.kind.as_str(), seen.decoded),
            (StatusCode::BAD_REQUEST, "WindowTooLarge", 0),
            "{case}"
        );
        let after = settled_zstd_decoders(&server.pool).await;
        assert_eq!(
            (after.discarded, after.returned - before.returned),
            (before.discarded, 1),
            "{case}: the context went back to the shelf, so it never grew: {after:?}"
        );
        server
            .upload(
                "zstd",
                wire,
                StatusCode::BAD_REQUEST,
                Some("WindowTooLarge"),
            )
            .await;
        server
            .client_expect("zstd", wire, Err("WindowTooLarge"))
            .await;
    }

    // Refused from the header alone: the header of a 2^31 frame, then 64 MiB the server
    // never needs to read.
    let pulled = Arc::new(AtomicU64::new(0));
    let counter = pulled.clone();
    let mut first = Some(zstd_window_frame(31)[..6].to_vec());
    let endless: Chunks = Box::new(
        std::iter::from_fn(move || Some(first.take().unwrap_or_else(|| vec![0u8; 64 * 1024])))
            .take(1 + 1024)
            .inspect(move |c| {
                counter.fetch_add(c.len() as u64, Ordering::SeqCst);
            }),
    );
    let seen = server.raw_post("zstd", endless).await;
    assert_eq!(
        (seen.status, seen.kind.as_str()),
        (StatusCode::BAD_REQUEST, "WindowTooLarge")
    );
    let pulled = pulled.load(Ordering::SeqCst);
    eprintln!("2^31 window header then 64 MiB: 400 after the client generated {pulled} bytes");
    assert!(pulled < 64 * MIB, "the server read the whole body first");
    server.still_good("window bombs").await;
    server.pools_are_healthy().await;
}

/// br's window is at most 16 MiB (RFC 7932: WBITS 10..=24) and streams with the
/// large-window extension (up to 2^30) are not RFC 7932: refused, both ways.
#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_large_window_streams_are_400() {
    let server = start().await;
    let plain = text(10_000);
    let params = brotli::enc::BrotliEncoderParams {
        quality: 5,
        lgwin: 30,
        large_window: true,
        ..Default::default()
    };
    let mut wire = Vec::new();
    brotli::BrotliCompress(&mut &plain[..], &mut wire, &params).unwrap();
    server
        .upload("br", &wire, StatusCode::BAD_REQUEST, Some("CorruptData"))
        .await;
    server.client_expect("br", &wire, Err("CorruptData")).await;
    // The largest RFC 7932 window decodes.
    let wire = br_stream(&plain, 5, 24);
    server
        .upload("br", &wire, StatusCode::OK, Some("none"))
        .await;
    server.client_expect("br", &wire, Ok(&plain)).await;
    server.still_good("br large window").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// Bombs
// ---------------------------------------------------------------------------------------

/// Makes a bomb of that many bytes of zeros.
type MakeBomb = fn(u64) -> Chunks;

fn counted(chunks: Chunks) -> (Chunks, Arc<AtomicU64>) {
    let pulled = Arc::new(AtomicU64::new(0));
    let counter = pulled.clone();
    let chunks = chunks.inspect(move |c| {
        counter.fetch_add(c.len() as u64, Ordering::SeqCst);
    });
    (Box::new(chunks), pulled)
}

/// 1 GiB of zeros in zstd and in br, generated as it is read, in a request and in a
/// response: 413 (the client's `LengthLimitError`) once the ratio limit (200:1 past 1 MiB,
/// burst 3) sees it, with at most ~1.3 MiB decoded and the peak RSS of the whole process
/// measured. Then bodies that stay under the ratio (about 20:1 here) stop at the 20 MiB
/// size limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gib_bombs_are_413_with_bounded_memory() {
    const GIB: u64 = 1 << 30;
    let server = start().await;
    let bombs: &[(&str, MakeBomb)] = &[
        #[cfg(feature = "zstd")]
        ("zstd", zstd_zeros),
        #[cfg(feature = "br")]
        ("br", br_zeros),
    ];
    for &(coding, make) in bombs {
        // The generators are right: small ones decode with the reference decoders.
        let small: Vec<u8> = make(3 * MIB + 5).flatten().collect();
        let plain = match coding {
            #[cfg(feature = "zstd")]
            "zstd" => unzstd(&small),
            _ => common::decode(Some(coding), &small),
        };
        assert!(plain.len() as u64 == 3 * MIB + 5 && plain.iter().all(|&b| b == 0));

        // A request.
        let measured = reset_peak_rss();
        let rss_before = proc_status_kib("VmRSS");
        let (chunks, pulled) = counted(make(GIB));
        let seen = server.raw_post(coding, chunks).await;
        let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
        assert_eq!(
            (seen.status, seen.kind.as_str()),
            (StatusCode::PAYLOAD_TOO_LARGE, "limit"),
            "{coding}"
        );
        assert!(seen.decoded <= 2 * MIB, "{coding}: {seen:?}");
        let pulled = pulled.load(Ordering::SeqCst);
        eprintln!(
            "{coding} 1 GiB bomb (request): 413 after {} decoded bytes; client generated \
             {pulled} compressed bytes; peak RSS +{peak} KiB{}",
            seen.decoded,
            if measured { "" } else { " (peak not reset)" }
        );
        if measured {
            assert!(peak < 256 * 1024, "{coding}: peak RSS grew by {peak} KiB");
        }
        server.pools_are_healthy().await;
        server.still_good(coding).await;

        // A response, read by the client layer.
        reset_peak_rss();
        let rss_before = proc_status_kib("VmRSS");
        let pulled = server.arm(make(GIB));
        let req = Request::get(server.url(&format!("/bomb/{coding}")))
            .body(boxed(Full::new(Bytes::new())))
            .unwrap();
        let (result, decoded) = server.read_client_response(req).await;
        let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
        let err = result.expect_err("the bomb is stopped");
        assert!(err.is::<LengthLimitError>(), "{coding}: {err}");
        assert!(decoded <= 2 * MIB, "{coding}: {decoded} bytes decoded");
        eprintln!(
            "{coding} 1 GiB bomb (response): LengthLimitError after {decoded} decoded bytes; \
             server generated {} compressed bytes; peak RSS +{peak} KiB",
            pulled.load(Ordering::SeqCst)
        );
        if measured {
            assert!(peak < 256 * 1024, "{coding}: peak RSS grew by {peak} KiB");
        }
        server.pools_are_healthy().await;

        // Under the ratio's radar: 21 MiB that compresses about 20:1 stops at 20 MiB.
        let plain = noisy_zeros(21 << 20);
        let wire = match coding {
            #[cfg(feature = "zstd")]
            "zstd" => zstd_frame(&plain, true),
            #[cfg(feature = "br")]
            "br" => br_stream(&plain, 1, 22),
            _ => unreachable!(),
        };
        assert!(wire.len() * 200 > plain.len(), "{coding}: ratio under 200");
        let seen = server
            .upload(coding, &wire, StatusCode::PAYLOAD_TOO_LARGE, Some("limit"))
            .await;
        assert!(seen.decoded <= 20 * MIB, "{seen:?}");
        let (result, decoded) = server.fetch(coding, &wire).await;
        assert!(result.expect_err("stopped").is::<LengthLimitError>());
        assert!(decoded <= 20 * MIB);
        eprintln!(
            "{coding} 21 MiB at ~{}:1: 413 after {} decoded bytes (client: {decoded})",
            plain.len() / wire.len(),
            seen.decoded
        );
        server.still_good(coding).await;
    }
    server.pools_are_healthy().await;
}
