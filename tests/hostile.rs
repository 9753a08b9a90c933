//! Hostile input, end to end: one real axum server on 127.0.0.1 with
//! `RequestDecompressionLayer` and `CompressionLayer` (default settings, a private pool),
//! fed malformed, oversized and adversarial requests by a hyper-util client. After every
//! case the same server must still answer a good gzip upload and a compressed GET.
//!
//! `tests/decompression/` checks the decoder's error kinds one request at a time; here the
//! point is the status each attack gets over HTTP and that the server survives all of them.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use bytes::Bytes;
use common::{decode, eventually, gzip, raw_deflate, text, zlib};
use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, Method, Request, StatusCode};
use http_body::Body;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower_gzip::codec::Format;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::decompression::RequestDecompressionLayer;
use tower_gzip::{BoxError, CodecPool};

const TIMEOUT: Duration = Duration::from_secs(30);

type TestClient = Client<HttpConnector, BoxBody<Bytes, BoxError>>;

/// The GET route's body: compressible text.
fn page() -> Vec<u8> {
    text(20_000)
}

struct Server {
    addr: SocketAddr,
    pool: CodecPool,
    client: TestClient,
}

async fn start() -> Server {
    let pool = CodecPool::builder().max_idle(8).build();
    let app = Router::new()
        .route("/echo", post(|body: Bytes| async move { body }))
        .route(
            "/page",
            get(|| async { ([(CONTENT_TYPE, "text/plain")], page()) }),
        )
        // The decoded size is what counts: our limits, not axum's 2 MB, must answer.
        .layer(DefaultBodyLimit::disable())
        .layer(RequestDecompressionLayer::new().pool(pool.clone()))
        .layer(CompressionLayer::new().pool(pool.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server {
        addr,
        pool,
        client: Client::builder(TokioExecutor::new()).build_http(),
    }
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Server {
    async fn send<B>(&self, method: Method, path: &str, headers: &[(&str, &[u8])], body: B) -> Reply
    where
        B: Body<Data = Bytes> + Send + Sync + 'static,
        B::Error: Into<BoxError>,
    {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.addr));
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req.body(body.map_err(Into::into).boxed()).unwrap();
        let res = tokio::time::timeout(TIMEOUT, self.client.request(req))
            .await
            .expect("response in time")
            .expect("a response");
        let (parts, body) = res.into_parts();
        let body = tokio::time::timeout(TIMEOUT, body.collect())
            .await
            .expect("body in time")
            .expect("a complete body")
            .to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// POSTs `wire` to the echo route with `Content-Encoding: coding`.
    async fn upload(&self, coding: &str, wire: impl Into<Bytes>) -> Reply {
        self.send(
            Method::POST,
            "/echo",
            &[("content-encoding", coding.as_bytes())],
            Full::new(wire.into()),
        )
        .await
    }

    /// GETs the page with this `Accept-Encoding`; checks the body decodes to the page.
    async fn get_page(&self, accept: &[u8]) -> Reply {
        let reply = self
            .send(
                Method::GET,
                "/page",
                &[("accept-encoding", accept)],
                Full::new(Bytes::new()),
            )
            .await;
        if reply.status == StatusCode::OK {
            let coding = reply
                .headers
                .get(CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap());
            assert!(decode(coding, &reply.body) == page(), "page decoded wrong");
        }
        reply
    }

    /// The server still works: a gzip upload echoes, a gzip GET decodes.
    async fn still_good(&self, case: &str) {
        let plain = text(30_000);
        let reply = self.upload("gzip", gzip(&plain)).await;
        assert_eq!(reply.status, StatusCode::OK, "after {case}: upload");
        assert!(reply.body == plain, "after {case}: echo differs");
        let reply = self.get_page(b"gzip").await;
        assert_eq!(reply.status, StatusCode::OK, "after {case}: GET");
        assert_eq!(reply.headers[CONTENT_ENCODING], "gzip", "after {case}");
    }

    async fn expect(&self, case: &str, coding: &str, wire: impl Into<Bytes>, status: StatusCode) {
        let reply = self.upload(coding, wire).await;
        assert_eq!(
            reply.status,
            status,
            "{case}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        self.still_good(case).await;
    }

    /// POSTs a chunked body generated by `chunks` over raw TCP and returns the status.
    ///
    /// The server answers an attack before reading it all and closes the connection; a
    /// hyper client then fails on the broken pipe instead of returning the response, so the
    /// body is written by a separate task whose write errors are ignored, while the response
    /// head is read here.
    async fn raw_post<I>(&self, coding: &str, chunks: I) -> StatusCode
    where
        I: Iterator<Item = Vec<u8>> + Send + 'static,
    {
        let stream = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let (mut read, mut write) = stream.into_split();
        let head = format!(
            "POST /echo HTTP/1.1\r\nhost: {}\r\ncontent-encoding: {coding}\r\n\
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
            write.write_all(b"0\r\n\r\n").await
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
        let status = std::str::from_utf8(&response[9..12]).unwrap();
        StatusCode::from_bytes(status.as_bytes()).unwrap()
    }

    /// Nothing is left checked out of the pool, and the idle shelves respect the cap.
    async fn pool_is_healthy(&self) {
        let pool = self.pool.clone();
        assert!(
            eventually(|| { pool.stats().in_use() == 0 }).await,
            "codecs still checked out: {:?}",
            self.pool.stats()
        );
        let s = self.pool.stats();
        assert!(
            s.compressors.idle <= 8 && s.decompressors.idle <= 8,
            "{s:?}"
        );
    }
}

/// A gzip member built by hand: `flags` with the optional fields given, then `data`.
fn member(
    flags: u8,
    extra: Option<&[u8]>,
    name: Option<&[u8]>,
    header_crc: bool,
    data: &[u8],
) -> Vec<u8> {
    let mut m = vec![0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 255];
    if let Some(extra) = extra {
        m.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        m.extend_from_slice(extra);
    }
    if let Some(name) = name {
        m.extend_from_slice(name);
        m.push(0);
    }
    if header_crc {
        let crc = crc32fast::hash(&m) as u16;
        m.extend_from_slice(&crc.to_le_bytes());
    }
    m.extend(raw_deflate(data));
    m.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    m.extend_from_slice(&(data.len() as u32).to_le_bytes());
    m
}

const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FHCRC: u8 = 0x02;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_at_every_offset_is_400() {
    let server = start().await;
    let plain = b"a small member, truncated at every byte offset in turn";
    for (coding, wire) in [("gzip", gzip(plain)), ("deflate", zlib(plain))] {
        // Cut to zero bytes, the body is empty: a valid (empty) upload.
        let reply = server.upload(coding, Bytes::new()).await;
        assert_eq!((reply.status, reply.body.len()), (StatusCode::OK, 0));
        for cut in 1..wire.len() {
            let reply = server.upload(coding, wire[..cut].to_vec()).await;
            assert_eq!(
                reply.status,
                StatusCode::BAD_REQUEST,
                "{coding} cut at {cut} of {}",
                wire.len()
            );
        }
        server.still_good(coding).await;
        let reply = server.upload(coding, wire).await;
        assert_eq!(
            (reply.status, &reply.body[..]),
            (StatusCode::OK, &plain[..])
        );
    }
    // One check after every single cut, on a gzip member.
    let wire = gzip(plain);
    for cut in (1..wire.len()).step_by(7) {
        server
            .expect(
                &format!("cut {cut}"),
                "gzip",
                wire[..cut].to_vec(),
                StatusCode::BAD_REQUEST,
            )
            .await;
    }
    server.pool_is_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksums_trailing_data_and_reserved_flags_are_400() {
    let server = start().await;
    let plain = text(5_000);
    let good = gzip(&plain);

    let mut crc = good.clone();
    let at = crc.len() - 8;
    crc[at] ^= 0x55;
    server
        .expect("CRC mismatch", "gzip", crc, StatusCode::BAD_REQUEST)
        .await;

    let mut isize = good.clone();
    let at = isize.len() - 4;
    isize[at] ^= 0x01;
    server
        .expect("ISIZE mismatch", "gzip", isize, StatusCode::BAD_REQUEST)
        .await;

    let mut adler = zlib(&plain);
    let at = adler.len() - 2;
    adler[at] ^= 0x10;
    server
        .expect(
            "Adler-32 mismatch",
            "deflate",
            adler,
            StatusCode::BAD_REQUEST,
        )
        .await;

    for garbage in [
        &b"x"[..],
        b"\x1f",
        b"\x1f\x8b",
        b"\0\0\0\0",
        b"garbage after the member",
    ] {
        let mut wire = good.clone();
        wire.extend_from_slice(garbage);
        server
            .expect("trailing garbage", "gzip", wire, StatusCode::BAD_REQUEST)
            .await;
        let mut wire = zlib(&plain);
        wire.extend_from_slice(garbage);
        server
            .expect(
                "trailing garbage (zlib)",
                "deflate",
                wire,
                StatusCode::BAD_REQUEST,
            )
            .await;
    }

    for flag in [0x20u8, 0x40, 0x80] {
        let wire = member(flag, None, None, false, &plain);
        server
            .expect("reserved flag", "gzip", wire, StatusCode::BAD_REQUEST)
            .await;
    }
    // The same hand-built member without reserved flags is fine.
    let reply = server
        .upload("gzip", member(0, None, None, false, &plain))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body == plain);

    // A header CRC16: right is fine, wrong is 400.
    let reply = server
        .upload(
            "gzip",
            member(FHCRC | FNAME, None, Some(b"f.txt"), true, &plain),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body == plain);
    let mut wire = member(FHCRC | FNAME, None, Some(b"f.txt"), true, &plain);
    wire[10] ^= 1; // a byte of the name, covered by the header CRC
    server
        .expect("header CRC16", "gzip", wire, StatusCode::BAD_REQUEST)
        .await;

    // A second member with a bad magic after a good one is trailing data, a bad method is
    // a corrupt header: both 400.
    let mut wire = good.clone();
    wire.extend_from_slice(&[0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 255]);
    server
        .expect("bad method", "gzip", wire, StatusCode::BAD_REQUEST)
        .await;
    // A zlib preset dictionary is refused.
    server
        .expect(
            "FDICT",
            "deflate",
            vec![0x78, 0xbb, 0, 0, 0, 1, 3, 0],
            StatusCode::BAD_REQUEST,
        )
        .await;
    server.pool_is_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_header_fields_are_bounded() {
    let server = start().await;
    let plain = text(2_000);

    // FEXTRA at its maximum length (65,535) is valid.
    let extra = vec![0xa5u8; 65_535];
    let reply = server
        .upload("gzip", member(FEXTRA, Some(&extra), None, false, &plain))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body == plain);
    server.still_good("FEXTRA 65,535").await;

    // FEXTRA, FNAME and FHCRC together, each field at a large size.
    let name = vec![b'n'; 60_000];
    let reply = server
        .upload(
            "gzip",
            member(
                FEXTRA | FNAME | FHCRC,
                Some(&extra),
                Some(&name),
                true,
                &plain,
            ),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body == plain);

    // FNAME up to 64 KiB (NUL included) is accepted; one byte more is refused.
    let name = vec![b'n'; 64 * 1024 - 1];
    let reply = server
        .upload("gzip", member(FNAME, None, Some(&name), false, &plain))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let name = vec![b'n'; 64 * 1024];
    server
        .expect(
            "FNAME 64 KiB + NUL",
            "gzip",
            member(FNAME, None, Some(&name), false, &plain),
            StatusCode::BAD_REQUEST,
        )
        .await;
    // And the same for a comment.
    let mut wire = vec![0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 255];
    wire.extend(std::iter::repeat_n(b'c', 100_000));
    wire.push(0);
    server
        .expect("FCOMMENT 100,000", "gzip", wire, StatusCode::BAD_REQUEST)
        .await;

    // A name that never ends, streamed: refused once past the bound, long before its end.
    let endless = Endless::new(
        vec![0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 255],
        b'n',
        8 << 20,
    );
    let pulled = endless.pulled.clone();
    let status = server.raw_post("gzip", endless).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    eprintln!(
        "endless FNAME: 400 after the client generated {} of 8 MiB",
        pulled.load(Ordering::SeqCst)
    );
    server.still_good("endless FNAME").await;
    server.pool_is_healthy().await;
}

/// `head`, then `fill` bytes up to `total`, in 64 KiB chunks, generated on demand.
struct Endless {
    head: Option<Vec<u8>>,
    fill: u8,
    left: u64,
    pulled: Arc<AtomicU64>,
}

impl Endless {
    fn new(head: Vec<u8>, fill: u8, total: u64) -> Self {
        Endless {
            head: Some(head),
            fill,
            left: total,
            pulled: Arc::default(),
        }
    }
}

impl Iterator for Endless {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let chunk = match self.head.take() {
            Some(head) => head,
            None if self.left == 0 => return None,
            None => {
                let n = self.left.min(64 * 1024);
                self.left -= n;
                vec![self.fill; n as usize]
            }
        };
        self.pulled.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        Some(chunk)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_empty_members() {
    // Go CVE-2022-30631: a reader that recursed per member overflowed its stack.
    let server = start().await;
    let empty = gzip(b"");
    let mut wire = empty.repeat(100_000);
    let reply = server.upload("gzip", wire.clone()).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body.is_empty());
    server.still_good("100,000 empty members").await;

    // The same, then a member with content: it is all decoded.
    let plain = text(10_000);
    wire.extend(gzip(&plain));
    let reply = server.upload("gzip", wire).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body == plain);

    // Empty members interleaved with content.
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for i in 0..2_000 {
        wire.extend_from_slice(&empty);
        if i % 100 == 0 {
            let part = format!("part {i}\n");
            wire.extend(gzip(part.as_bytes()));
            expected.extend_from_slice(part.as_bytes());
        }
    }
    let reply = server.upload("x-gzip", wire).await;
    assert_eq!(
        (reply.status, &reply.body[..]),
        (StatusCode::OK, &expected[..])
    );
    server.still_good("interleaved members").await;
    server.pool_is_healthy().await;
}

/// A compressed stream of `mib` MiB of zeros, compressed as it is sent.
enum BombEncoder {
    Gzip(GzEncoder<Vec<u8>>),
    Zlib(ZlibEncoder<Vec<u8>>),
    Raw(DeflateEncoder<Vec<u8>>),
}

struct Bomb {
    encoder: Option<BombEncoder>,
    left: usize,
    pulled: Arc<AtomicU64>,
}

impl Bomb {
    fn new(coding: &str, mib: usize) -> Self {
        let level = Compression::best();
        let encoder = match coding {
            "gzip" => BombEncoder::Gzip(GzEncoder::new(Vec::new(), level)),
            "zlib" => BombEncoder::Zlib(ZlibEncoder::new(Vec::new(), level)),
            _ => BombEncoder::Raw(DeflateEncoder::new(Vec::new(), level)),
        };
        Bomb {
            encoder: Some(encoder),
            left: mib,
            pulled: Arc::default(),
        }
    }
}

impl Iterator for Bomb {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        static ZEROS: [u8; 1 << 20] = [0; 1 << 20];
        loop {
            let encoder = self.encoder.as_mut()?;
            let chunk = if self.left > 0 {
                macro_rules! write {
                    ($e:expr) => {{
                        $e.write_all(&ZEROS).unwrap();
                        std::mem::take($e.get_mut())
                    }};
                }
                let chunk = match encoder {
                    BombEncoder::Gzip(e) => write!(e),
                    BombEncoder::Zlib(e) => write!(e),
                    BombEncoder::Raw(e) => write!(e),
                };
                self.left -= 1;
                chunk
            } else {
                match self.encoder.take().expect("checked") {
                    BombEncoder::Gzip(e) => e.finish().unwrap(),
                    BombEncoder::Zlib(e) => e.finish().unwrap(),
                    BombEncoder::Raw(e) => e.finish().unwrap(),
                }
            };
            if !chunk.is_empty() {
                self.pulled.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                return Some(chunk);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bombs_are_413() {
    let server = start().await;
    // (generator, Content-Encoding): zlib and raw deflate both go as `deflate`.
    for (kind, coding) in [("gzip", "gzip"), ("zlib", "deflate"), ("raw", "deflate")] {
        // 1 GiB of zeros, generated as the server reads; the ratio limit stops it early.
        let bomb = Bomb::new(kind, 1024);
        let pulled = bomb.pulled.clone();
        let status = server.raw_post(coding, bomb).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{kind} bomb");
        let sent = pulled.load(Ordering::SeqCst);
        eprintln!("{kind} bomb (1 GiB of zeros): 413 after {sent} compressed bytes generated");
        assert!(
            sent < 16 << 20,
            "{kind}: the whole bomb was read ({sent} bytes)"
        );
        server.still_good(kind).await;

        // A bomb under the ratio limit's radar (a body that compresses only 100:1) still
        // stops at the 20 MiB size limit.
        let plain = noisy_zeros(24 << 20);
        let wire = match kind {
            "gzip" => gzip(&plain),
            "zlib" => zlib(&plain),
            _ => raw_deflate(&plain),
        };
        server
            .expect(
                &format!("{kind} 24 MiB"),
                coding,
                wire,
                StatusCode::PAYLOAD_TOO_LARGE,
            )
            .await;
    }
    // Stacked: gzip of a gzip bomb.
    let inner = gzip(&vec![0u8; 64 << 20]);
    server
        .expect(
            "gzip, gzip bomb",
            "gzip, gzip",
            gzip(&inner),
            StatusCode::PAYLOAD_TOO_LARGE,
        )
        .await;
    server.pool_is_healthy().await;
}

/// Zeros with a random byte every 64 bytes or so: compresses about 60:1, under the ratio
/// limit of 200.
fn noisy_zeros(len: usize) -> Vec<u8> {
    let noise = common::noise(len / 64 + 1, 7);
    let mut out = vec![0u8; len];
    for (i, b) in noise.iter().enumerate() {
        if let Some(slot) = out.get_mut(i * 64 + usize::from(*b % 64)) {
            *slot = *b;
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coding_chains() {
    let server = start().await;
    let plain = text(10_000);

    for (coding, wire) in [
        ("gzip, gzip", gzip(&gzip(&plain))),
        ("gzip,gzip", gzip(&gzip(&plain))),
        ("deflate, gzip", gzip(&zlib(&plain))),
        ("gzip, deflate, gzip", gzip(&zlib(&gzip(&plain)))),
        ("identity, gzip, identity", gzip(&plain)),
    ] {
        let reply = server.upload(coding, wire).await;
        assert_eq!(reply.status, StatusCode::OK, "{coding}");
        assert!(reply.body == plain, "{coding}");
    }
    server.still_good("valid chains").await;

    // Four codings, a thousand, and an unknown one: 415 before the body is read.
    let four = gzip(&gzip(&gzip(&gzip(&plain))));
    server
        .expect(
            "4 codings",
            "gzip, gzip, gzip, gzip",
            four,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        )
        .await;
    let thousand = vec!["gzip"; 1000].join(", ");
    server
        .expect(
            "1000 codings",
            &thousand,
            gzip(&plain),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        )
        .await;
    let mut huge = "gzip,".repeat(13_000);
    huge.push_str("gzip");
    server
        .expect(
            "64 KiB of codings",
            &huge,
            gzip(&plain),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        )
        .await;
    // Registered codings no build decodes (br and zstd, here before, are decoded with their
    // cargo features), and a parameter, which Content-Encoding does not take.
    for coding in [
        "exi",
        "gzip, pack200-gzip",
        "aes128gcm, gzip",
        "compress",
        "gzip;q=1",
    ] {
        server
            .expect(
                coding,
                coding,
                gzip(&plain),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
            )
            .await;
    }
    // Content-Encoding bytes that are not visible ASCII.
    let reply = server
        .send(
            Method::POST,
            "/echo",
            &[("content-encoding", b"gzip\x80")],
            Full::new(Bytes::from(gzip(&plain))),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let every_coding: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
    assert_eq!(
        reply.headers[ACCEPT_ENCODING],
        every_coding.join(", ").as_str()
    );
    server.still_good("Content-Encoding with obs-text").await;

    // A chain whose layers are each fine but the inner one is corrupt: 400.
    let mut inner = gzip(&plain);
    let at = inner.len() - 6;
    inner[at] ^= 0xff;
    server
        .expect(
            "corrupt inner coding",
            "gzip, gzip",
            gzip(&inner),
            StatusCode::BAD_REQUEST,
        )
        .await;
    server.pool_is_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_accept_encoding_headers() {
    let server = start().await;
    let kib64 = 64 * 1024;

    // (value, expected Content-Encoding, or None for identity, or 406)
    let filler = |entry: &str, len: usize| entry.repeat(len / entry.len());
    let cases: Vec<(String, Option<&str>)> = vec![
        // 64 KiB of codings we do not offer, then gzip at a low weight: gzip.
        (
            filler("x-unknown;q=0.5, ", kib64) + "gzip;q=0.001",
            Some("gzip"),
        ),
        // Thousands of entries of a coding we do not offer, deflate last (`exi`: br, used
        // here before, is offered with its cargo feature).
        (filler("exi, ", kib64) + "deflate", Some("deflate")),
        // Thousands of gzip entries, refused every time; deflate once at 0.001.
        (
            filler("gzip;q=0, ", kib64) + "deflate;q=0.001",
            Some("deflate"),
        ),
        // Thousands of duplicates: the most permissive weight wins.
        (
            filler("gzip;q=0.1, deflate;q=0.2, ", kib64) + "gzip;q=0.3",
            Some("gzip"),
        ),
        // One 64 KiB token: not a coding we know, so identity.
        ("g".repeat(kib64), None),
        // An unterminated quoted parameter swallows the rest of the value.
        (
            format!("gzip;ext=\"{}, deflate", "a,".repeat(kib64 / 2)),
            Some("gzip"),
        ),
        // 64 KiB of invalid weights: every entry dropped, identity.
        (filler("gzip;q=2, deflate;q=-1, ", kib64), None),
        // Thousands of empty elements.
        (",".repeat(kib64) + "gzip", Some("gzip")),
        // 64 KiB of whitespace and separators.
        (" ; ,\t".repeat(kib64 / 5), None),
    ];
    for (value, expected) in &cases {
        let reply = server.get_page(value.as_bytes()).await;
        assert_eq!(reply.status, StatusCode::OK, "{}...", &value[..40]);
        assert_eq!(
            reply
                .headers
                .get(CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap()),
            *expected,
            "{}...",
            &value[..40]
        );
        server.still_good("huge Accept-Encoding").await;
    }

    // Identity refused at the end of 64 KiB of unknown codings: 406.
    let value = filler("exi;q=1, ", kib64) + "*;q=0";
    let reply = server.get_page(value.as_bytes()).await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);
    server.still_good("406").await;

    // Several header lines of 16 KiB each (of a coding we do not offer: zstd, used here
    // before, is offered with its cargo feature).
    let line = filler("exi;q=0.9, ", 16 * 1024);
    let mut headers: Vec<(&str, &[u8])> = vec![("accept-encoding", line.as_bytes()); 6];
    headers.push(("accept-encoding", b"deflate;q=0.4, gzip;q=0.5"));
    let reply = server
        .send(Method::GET, "/page", &headers, Full::new(Bytes::new()))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.headers[CONTENT_ENCODING], "gzip");
    assert!(decode(Some("gzip"), &reply.body) == page());
    server.still_good("many Accept-Encoding lines").await;
    server.pool_is_healthy().await;
}
