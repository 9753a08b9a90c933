//! RequestDecompressionLayer: codings, 415s, corrupt input, bombs and limits, through tower
//! and through a real axum server on loopback.

mod support {
    /// A global allocator that keeps per-thread live and peak byte counts.
    pub mod alloc {
        use std::alloc::{GlobalAlloc, Layout, System};
        use std::cell::Cell;

        pub struct Tracking;

        thread_local! {
            static LIVE: Cell<usize> = const { Cell::new(0) };
            static PEAK: Cell<usize> = const { Cell::new(0) };
        }

        fn grow(n: usize) {
            let _ = LIVE.try_with(|live| {
                let now = live.get().wrapping_add(n);
                live.set(now);
                let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
            });
        }

        fn shrink(n: usize) {
            let _ = LIVE.try_with(|live| live.set(live.get().wrapping_sub(n)));
        }

        unsafe impl GlobalAlloc for Tracking {
            unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
                let p = unsafe { System.alloc(layout) };
                if !p.is_null() {
                    grow(layout.size());
                }
                p
            }

            unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
                let p = unsafe { System.alloc_zeroed(layout) };
                if !p.is_null() {
                    grow(layout.size());
                }
                p
            }

            unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
                unsafe { System.dealloc(ptr, layout) };
                shrink(layout.size());
            }

            unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
                let p = unsafe { System.realloc(ptr, layout, new) };
                if !p.is_null() {
                    shrink(layout.size());
                    grow(new);
                }
                p
            }
        }

        /// Starts a measurement on this thread: returns the live bytes now.
        pub fn mark() -> usize {
            let live = LIVE.with(Cell::get);
            PEAK.with(|peak| peak.set(live));
            live
        }

        /// The most bytes live on this thread since `mark`, above the mark.
        pub fn peak_since(mark: usize) -> usize {
            PEAK.with(Cell::get).saturating_sub(mark)
        }
    }

    /// Lazily generated compressed streams of zeros, produced chunk by chunk as the body is
    /// polled, by flate2's own encoders (not this crate's).
    pub mod bomb {
        use std::io::Write;
        use std::pin::Pin;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::task::{Context, Poll};

        use bytes::Bytes;
        use flate2::Compression;
        use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
        use http_body::{Body, Frame};

        pub const MIB: usize = 1024 * 1024;
        static ZEROS: [u8; MIB] = [0; MIB];

        #[derive(Clone, Copy, Debug)]
        pub enum BombKind {
            /// One gzip member.
            Gzip,
            /// One zlib stream.
            Zlib,
            /// Raw deflate, sent as `deflate`.
            RawDeflate,
            /// A gzip member of 1 MiB of zeros, repeated.
            GzipMembers,
        }

        impl BombKind {
            pub fn coding(self) -> &'static str {
                match self {
                    BombKind::Gzip | BombKind::GzipMembers => "gzip",
                    BombKind::Zlib | BombKind::RawDeflate => "deflate",
                }
            }
        }

        enum Enc {
            Gzip(GzEncoder<Vec<u8>>),
            Zlib(ZlibEncoder<Vec<u8>>),
            Raw(DeflateEncoder<Vec<u8>>),
            Members(Bytes),
        }

        pub struct Bomb {
            enc: Enc,
            /// MiB of zeros still to encode.
            left: usize,
            done: bool,
            pulled: Arc<AtomicU64>,
        }

        impl Bomb {
            /// A stream of `mib` MiB of zeros.
            pub fn new(kind: BombKind, mib: usize) -> Self {
                let level = Compression::default();
                let enc = match kind {
                    BombKind::Gzip => Enc::Gzip(GzEncoder::new(Vec::new(), level)),
                    BombKind::Zlib => Enc::Zlib(ZlibEncoder::new(Vec::new(), level)),
                    BombKind::RawDeflate => Enc::Raw(DeflateEncoder::new(Vec::new(), level)),
                    BombKind::GzipMembers => {
                        let mut e = GzEncoder::new(Vec::new(), level);
                        e.write_all(&ZEROS).unwrap();
                        Enc::Members(Bytes::from(e.finish().unwrap()))
                    }
                };
                Bomb {
                    enc,
                    left: mib,
                    done: false,
                    pulled: Arc::default(),
                }
            }

            /// Compressed bytes handed out so far.
            pub fn pulled(&self) -> Arc<AtomicU64> {
                self.pulled.clone()
            }

            fn next_chunk(&mut self) -> Vec<u8> {
                macro_rules! step {
                    ($e:expr) => {{
                        if self.left > 0 {
                            $e.write_all(&ZEROS).unwrap();
                            self.left -= 1;
                        } else {
                            $e.try_finish().unwrap();
                            self.done = true;
                        }
                        std::mem::take($e.get_mut())
                    }};
                }
                match &mut self.enc {
                    Enc::Gzip(e) => step!(e),
                    Enc::Zlib(e) => step!(e),
                    Enc::Raw(e) => step!(e),
                    Enc::Members(member) => {
                        self.left -= 1;
                        self.done = self.left == 0;
                        member.to_vec()
                    }
                }
            }
        }

        impl Body for Bomb {
            type Data = Bytes;
            type Error = std::convert::Infallible;

            fn poll_frame(
                mut self: Pin<&mut Self>,
                _cx: &mut Context<'_>,
            ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
                while !self.done {
                    let chunk = self.next_chunk();
                    if !chunk.is_empty() {
                        self.pulled.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk)))));
                    }
                }
                Poll::Ready(None)
            }
        }
    }
}

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request as AxumRequest};
use axum::routing::post;
use bytes::{Bytes, BytesMut};
use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use support::bomb::{Bomb, BombKind, MIB};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::codec::{DecodeError, DecodeErrorKind};
use tower_gzip::decompression::{
    DecompressionBody, DecompressionLimits, MAX_CODINGS, RatioLimit, RequestDecompressionLayer,
};
use tower_gzip::{BoxError, CodecPool};

#[global_allocator]
static ALLOC: support::alloc::Tracking = support::alloc::Tracking;

const FRAME_LIMIT: usize = 64 * 1024;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn text(len: usize) -> Vec<u8> {
    let words = [
        "alpha ",
        "beta ",
        "gamma ",
        "delta ",
        "epsilon\n",
        "{\"k\":42} ",
    ];
    let mut out = Vec::with_capacity(len + 16);
    let mut i = 0u64;
    while out.len() < len {
        i = i
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.extend_from_slice(words[(i >> 60) as usize % words.len()].as_bytes());
    }
    out.truncate(len);
    out
}

/// What the inner service saw.
#[derive(Debug)]
struct Seen {
    headers: HeaderMap,
    body: Result<Bytes, BoxError>,
    trailers: Option<HeaderMap>,
    exact_hint: Option<u64>,
    frames: usize,
    max_frame: usize,
}

struct Outcome {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    seen: Option<Seen>,
}

async fn read_all<B>(body: DecompressionBody<B>) -> Seen
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let exact_hint = body.size_hint().exact();
    let mut body = std::pin::pin!(body);
    let (mut data, mut frames, mut max_frame, mut trailers) = (BytesMut::new(), 0, 0, None);
    let mut result = Ok(());
    while let Some(frame) = body.as_mut().frame().await {
        match frame {
            Ok(frame) => match frame.into_data() {
                Ok(chunk) => {
                    frames += 1;
                    max_frame = max_frame.max(chunk.len());
                    data.extend_from_slice(&chunk);
                }
                Err(frame) => trailers = frame.into_trailers().ok(),
            },
            Err(err) => {
                result = Err(err);
                break;
            }
        }
    }
    Seen {
        headers: HeaderMap::new(),
        body: result.map(|()| data.freeze()),
        trailers,
        exact_hint,
        frames,
        max_frame,
    }
}

/// Sends `req` through `layer` to a service that reads the whole body.
async fn run<B>(layer: RequestDecompressionLayer, req: Request<B>) -> Outcome
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let seen = Arc::new(Mutex::new(None));
    let slot = seen.clone();
    let svc = layer.layer(service_fn(move |req: Request<DecompressionBody<B>>| {
        let slot = slot.clone();
        async move {
            let (parts, body) = req.into_parts();
            let mut seen = read_all(body).await;
            seen.headers = parts.headers;
            *slot.lock().unwrap() = Some(seen);
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"inner"))))
        }
    }));
    let response = svc.oneshot(req).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    let seen = seen.lock().unwrap().take();
    Outcome {
        status: parts.status,
        headers: parts.headers,
        body,
        seen,
    }
}

fn encoded(coding: &str, wire: Vec<u8>) -> Request<Full<Bytes>> {
    Request::post("/")
        .header(CONTENT_ENCODING, coding)
        .header(CONTENT_LENGTH, wire.len())
        .body(Full::new(Bytes::from(wire)))
        .unwrap()
}

async fn decoded_ok(coding: &str, wire: Vec<u8>, plain: &[u8]) -> Seen {
    let out = run(RequestDecompressionLayer::new(), encoded(coding, wire)).await;
    assert_eq!(out.status, StatusCode::OK);
    assert_eq!(out.body, "inner");
    let seen = out.seen.expect("inner service called");
    assert_eq!(seen.body.as_deref().unwrap(), plain, "coding {coding}");
    assert!(seen.headers.get(CONTENT_ENCODING).is_none());
    assert!(seen.headers.get(CONTENT_LENGTH).is_none());
    assert!(seen.max_frame <= FRAME_LIMIT);
    seen
}

fn decode_error(seen: &Seen) -> DecodeErrorKind {
    let err = seen.body.as_ref().expect_err("body should fail");
    err.downcast_ref::<DecodeError>()
        .unwrap_or_else(|| panic!("not a DecodeError: {err}"))
        .kind()
}

fn is_limit(seen: &Seen) -> bool {
    let err = seen.body.as_ref().expect_err("body should fail");
    err.downcast_ref::<LengthLimitError>().is_some()
}

#[tokio::test]
async fn gzip_x_gzip_and_case() {
    let plain = text(300_000);
    for coding in ["gzip", "x-gzip", "GZIP", " X-Gzip "] {
        let seen = decoded_ok(coding, gzip(&plain), &plain).await;
        assert_eq!(seen.exact_hint, None, "decoded size is unknown");
        assert!(seen.frames >= 300_000 / FRAME_LIMIT);
    }
}

#[tokio::test]
async fn deflate_zlib_and_raw() {
    let plain = text(100_000);
    decoded_ok("deflate", zlib(&plain), &plain).await;
    decoded_ok("Deflate", raw_deflate(&plain), &plain).await;
}

#[tokio::test]
async fn multi_member_gzip() {
    let (a, b) = (text(5000), b"second member".to_vec());
    let mut wire = gzip(&a);
    wire.extend(gzip(&b));
    wire.extend(gzip(b""));
    decoded_ok("gzip", wire, &[a, b].concat()).await;
}

#[tokio::test]
async fn identity_passes_with_headers_and_size_hint() {
    for coding in [None, Some("identity"), Some("Identity, ")] {
        let mut req = Request::post("/").header(CONTENT_LENGTH, "5");
        if let Some(coding) = coding {
            req = req.header(CONTENT_ENCODING, coding);
        }
        let out = run(
            RequestDecompressionLayer::new(),
            req.body(Full::new(Bytes::from_static(b"plain"))).unwrap(),
        )
        .await;
        let seen = out.seen.unwrap();
        assert_eq!(seen.body.unwrap(), "plain");
        assert_eq!(seen.exact_hint, Some(5));
        assert_eq!(seen.headers[CONTENT_LENGTH], "5");
        assert_eq!(
            seen.headers.get(CONTENT_ENCODING).is_some(),
            coding.is_some()
        );
    }
}

#[tokio::test]
async fn unsupported_coding_is_415_without_calling_inner() {
    for (layer, coding, accept) in [
        (RequestDecompressionLayer::new(), "br", "gzip, deflate"),
        (
            RequestDecompressionLayer::new(),
            "gzip, zstd",
            "gzip, deflate",
        ),
        (
            RequestDecompressionLayer::new().deflate(false),
            "deflate",
            "gzip",
        ),
        (
            RequestDecompressionLayer::new().gzip(false),
            "x-gzip",
            "deflate",
        ),
    ] {
        let called = Arc::new(AtomicBool::new(false));
        let flag = called.clone();
        let svc = layer.layer(service_fn(move |_req: Request<DecompressionBody<_>>| {
            flag.store(true, Ordering::SeqCst);
            async { Ok::<_, Infallible>(Response::new(Full::new(Bytes::new()))) }
        }));
        let req = Request::post("/")
            .header(CONTENT_ENCODING, coding)
            .body(Full::new(Bytes::from_static(b"whatever")))
            .unwrap();
        let response = svc.oneshot(req).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(response.headers()[ACCEPT_ENCODING], accept);
        assert_eq!(
            response.headers()[CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert_eq!(response.body().size_hint().exact(), Some(29));
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "Unsupported Content-Encoding\n");
        assert!(!called.load(Ordering::SeqCst), "inner called for {coding}");
    }
}

#[tokio::test]
async fn pass_through_unaccepted_forwards_unchanged() {
    let layer = RequestDecompressionLayer::new().pass_through_unaccepted(true);
    let out = run(layer, encoded("br", b"\x0b\x02\x80raw".to_vec())).await;
    assert_eq!(out.status, StatusCode::OK);
    let seen = out.seen.unwrap();
    assert_eq!(seen.headers[CONTENT_ENCODING], "br");
    assert_eq!(seen.headers[CONTENT_LENGTH], "6");
    assert_eq!(seen.body.unwrap(), &b"\x0b\x02\x80raw"[..]);
    assert_eq!(seen.exact_hint, Some(6));
}

#[tokio::test]
async fn stacked_codings_decode_in_reverse_order() {
    let plain = text(70_000);
    decoded_ok("gzip, gzip", gzip(&gzip(&plain)), &plain).await;
    // gzip applied first, then deflate: the wire is deflate of gzip.
    decoded_ok("gzip, deflate", zlib(&gzip(&plain)), &plain).await;
    decoded_ok("deflate,x-gzip,gzip", gzip(&gzip(&zlib(&plain))), &plain).await;
    // Two field lines form one list.
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "deflate")
        .header(CONTENT_ENCODING, "gzip")
        .body(Full::new(Bytes::from(gzip(&zlib(&plain)))))
        .unwrap();
    let seen = run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .unwrap();
    assert_eq!(seen.body.unwrap(), plain);
}

#[tokio::test]
async fn overlong_chain_is_refused_even_with_pass_through() {
    let chain = ["gzip"; MAX_CODINGS + 1].join(", ");
    let mut wire = b"x".to_vec();
    for _ in 0..=MAX_CODINGS {
        wire = gzip(&wire);
    }
    for layer in [
        RequestDecompressionLayer::new(),
        RequestDecompressionLayer::new().pass_through_unaccepted(true),
    ] {
        let out = run(layer, encoded(&chain, wire.clone())).await;
        assert_eq!(out.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(out.seen.is_none());
        assert_eq!(out.headers[ACCEPT_ENCODING], "gzip, deflate");
        assert!(
            std::str::from_utf8(&out.body)
                .unwrap()
                .contains("at most 3")
        );
    }
}

#[tokio::test]
async fn trailers_are_forwarded_after_streamed_data() {
    let plain = text(200_000);
    let wire = gzip(&plain);
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let mut frames: Vec<Result<Frame<Bytes>, Infallible>> = wire
        .chunks(777)
        .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    frames.push(Ok(Frame::trailers(trailers)));
    let body = StreamBody::new(futures_util::stream::iter(frames));
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "gzip")
        .body(body)
        .unwrap();
    let seen = run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .unwrap();
    assert_eq!(seen.body.unwrap(), plain);
    assert_eq!(seen.trailers.unwrap()["grpc-status"], "0");
}

#[tokio::test]
async fn empty_encoded_body_with_trailers() {
    let mut trailers = HeaderMap::new();
    trailers.insert("x-checksum", HeaderValue::from_static("none"));
    let frames: Vec<Result<Frame<Bytes>, Infallible>> = vec![Ok(Frame::trailers(trailers))];
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "gzip")
        .body(StreamBody::new(futures_util::stream::iter(frames)))
        .unwrap();
    let seen = run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .unwrap();
    assert_eq!(seen.body.unwrap(), "");
    assert_eq!(seen.trailers.unwrap()["x-checksum"], "none");
}

#[tokio::test]
async fn inner_body_errors_pass_through() {
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = vec![
        Ok(Frame::data(Bytes::from(gzip(b"abc")[..12].to_vec()))),
        Err(std::io::Error::other("connection reset")),
    ];
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "gzip")
        .body(StreamBody::new(futures_util::stream::iter(frames)))
        .unwrap();
    let seen = run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .unwrap();
    let err = seen.body.unwrap_err();
    assert!(err.downcast_ref::<std::io::Error>().is_some(), "{err}");
}

// ---------------------------------------------------------------------------------------
// A real server: axum behind RequestDecompressionLayer, with a probe that records what the
// decoded body emitted.

#[derive(Default)]
struct Probe {
    total: AtomicU64,
    max_frame: AtomicUsize,
}

/// Counts the decoded bytes that reach the handler.
struct Counting {
    inner: axum::body::Body,
    probe: Arc<Probe>,
}

impl Body for Counting {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let poll = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let std::task::Poll::Ready(Some(Ok(frame))) = &poll {
            if let Some(data) = frame.data_ref() {
                self.probe
                    .total
                    .fetch_add(data.len() as u64, Ordering::SeqCst);
                self.probe.max_frame.fetch_max(data.len(), Ordering::SeqCst);
            }
        }
        poll
    }
}

async fn serve(layer: RequestDecompressionLayer) -> (SocketAddr, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let tap = probe.clone();
    let app = Router::new()
        .route("/echo", post(|body: Bytes| async move { body }))
        .route(
            "/text",
            post(|body: String| async move { body.len().to_string() }),
        )
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::map_request(move |req: AxumRequest| {
            let probe = tap.clone();
            async move { req.map(|inner| axum::body::Body::new(Counting { inner, probe })) }
        }))
        .layer(layer);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, probe)
}

type TestClient = Client<HttpConnector, BoxBody<Bytes, BoxError>>;

fn client() -> TestClient {
    Client::builder(TokioExecutor::new()).build_http()
}

async fn post_to<B>(
    client: &TestClient,
    addr: SocketAddr,
    path: &str,
    coding: Option<&str>,
    body: B,
) -> (StatusCode, Bytes)
where
    B: Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    let mut req = Request::post(format!("http://{addr}{path}"));
    if let Some(coding) = coding {
        req = req.header(CONTENT_ENCODING, coding);
    }
    let req = req.body(body.map_err(Into::into).boxed()).unwrap();
    let response = client.request(req).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, body)
}

/// The corrupt body gets 400 from axum, and the server then serves a valid request.
async fn corrupt_case(coding: &str, wire: Vec<u8>, kind: DecodeErrorKind) {
    let out = run(
        RequestDecompressionLayer::new(),
        encoded(coding, wire.clone()),
    )
    .await;
    assert_eq!(decode_error(&out.seen.unwrap()), kind);

    let (addr, _) = serve(RequestDecompressionLayer::new()).await;
    let client = client();
    let (status, body) = post_to(&client, addr, "/echo", Some(coding), Full::from(wire)).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let plain = text(50_000);
    let (status, body) = post_to(
        &client,
        addr,
        "/echo",
        Some("gzip"),
        Full::from(gzip(&plain)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, plain);
}

#[tokio::test]
async fn corrupt_bad_header() {
    let mut wire = gzip(&text(1000));
    wire[0] = 0x1e;
    corrupt_case("gzip", wire, DecodeErrorKind::CorruptHeader).await;
}

#[tokio::test]
async fn corrupt_deflate_data() {
    // A gzip header, then a final block of the reserved type 3.
    let wire = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255, 0x07, 0, 0, 0, 0];
    corrupt_case("gzip", wire, DecodeErrorKind::CorruptData).await;
}

#[tokio::test]
async fn corrupt_crc() {
    let mut wire = gzip(&text(1000));
    let at = wire.len() - 8;
    wire[at] ^= 0xff;
    corrupt_case("gzip", wire, DecodeErrorKind::Checksum).await;
}

#[tokio::test]
async fn corrupt_isize() {
    let mut wire = gzip(&text(1000));
    let at = wire.len() - 1;
    wire[at] ^= 0x01;
    corrupt_case("gzip", wire, DecodeErrorKind::Checksum).await;
}

#[tokio::test]
async fn corrupt_adler32() {
    let mut wire = zlib(&text(1000));
    let at = wire.len() - 1;
    wire[at] ^= 0x01;
    corrupt_case("deflate", wire, DecodeErrorKind::Checksum).await;
}

#[tokio::test]
async fn corrupt_truncated() {
    let mut wire = gzip(&text(10_000));
    wire.truncate(wire.len() / 2);
    corrupt_case("gzip", wire, DecodeErrorKind::Truncated).await;
}

#[tokio::test]
async fn corrupt_trailing_garbage() {
    let mut wire = gzip(&text(1000));
    wire.extend_from_slice(b"garbage");
    corrupt_case("gzip", wire, DecodeErrorKind::TrailingData).await;
    let mut wire = zlib(&text(1000));
    wire.extend_from_slice(b"extra");
    corrupt_case("deflate", wire, DecodeErrorKind::TrailingData).await;
}

// ---------------------------------------------------------------------------------------
// Bombs and limits.

/// Streams a 1 GiB bomb to a real server whose only defence is `max_decompressed_size`.
async fn bomb_over_http(kind: BombKind) {
    let limit = 20 * MIB;
    let layer = RequestDecompressionLayer::new()
        .max_decompressed_size(Some(limit))
        .ratio_limit(None);
    let (addr, probe) = serve(layer).await;
    let bomb = Bomb::new(kind, 1024);
    let pulled = bomb.pulled();
    let (status, _) = post_to(&client(), addr, "/echo", Some(kind.coding()), bomb).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let total = probe.total.load(Ordering::SeqCst) as usize;
    let max_frame = probe.max_frame.load(Ordering::SeqCst);
    eprintln!(
        "{kind:?} bomb over HTTP: limit {limit}, decoded bytes handed out {total}, largest \
         frame {max_frame}, compressed bytes generated {}",
        pulled.load(Ordering::SeqCst)
    );
    assert!(total <= limit, "{total} > {limit}");
    assert!(total + FRAME_LIMIT >= limit, "stopped early at {total}");
    assert!(max_frame <= FRAME_LIMIT);
}

#[tokio::test]
async fn gzip_bomb_is_413_over_http() {
    bomb_over_http(BombKind::Gzip).await;
}

#[tokio::test]
async fn zlib_bomb_is_413_over_http() {
    bomb_over_http(BombKind::Zlib).await;
}

#[tokio::test]
async fn raw_deflate_bomb_is_413_over_http() {
    bomb_over_http(BombKind::RawDeflate).await;
}

#[tokio::test]
async fn multi_member_bomb_is_413_over_http() {
    bomb_over_http(BombKind::GzipMembers).await;
}

/// The decoded body never holds more than the limit plus one frame, and inflation stops at
/// the limit: measured at the body, with the allocator's peak on this thread.
#[tokio::test]
async fn single_member_bomb_stops_at_the_limit() {
    let limit = 20 * MIB;
    let pool = CodecPool::new();
    let layer = RequestDecompressionLayer::new()
        .max_decompressed_size(Some(limit))
        .ratio_limit(None)
        .pool(pool.clone());
    let bomb = Bomb::new(BombKind::Gzip, 1024);
    let pulled = bomb.pulled();
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "gzip")
        .body(bomb)
        .unwrap();
    let result = Arc::new(Mutex::new(None));
    let slot = result.clone();
    let svc = layer.layer(service_fn(move |req: Request<DecompressionBody<Bomb>>| {
        let slot = slot.clone();
        async move {
            let mut body = req.into_body();
            let (mut total, mut max_frame) = (0usize, 0usize);
            let err = loop {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        let data = frame.into_data().unwrap();
                        total += data.len();
                        max_frame = max_frame.max(data.len());
                    }
                    Some(Err(err)) => break err,
                    None => panic!("a 1 GiB bomb ended under a 20 MiB limit"),
                }
            };
            *slot.lock().unwrap() = Some((err, total, max_frame));
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
        }
    }));
    // Measured from before the decoder is drawn from the (fresh) pool; the bomb generator's
    // chunks are allocated on this thread too, so this is an upper bound.
    let mark = support::alloc::mark();
    svc.oneshot(req).await.unwrap();
    let peak = support::alloc::peak_since(mark);
    let (err, total, max_frame) = result.lock().unwrap().take().unwrap();
    let pulled = pulled.load(Ordering::SeqCst);
    eprintln!(
        "gzip bomb at the body: limit {limit}, decoded {total}, largest frame {max_frame}, \
         compressed read {pulled}, peak extra heap on the reading thread {peak}"
    );
    assert!(err.downcast_ref::<LengthLimitError>().is_some(), "{err}");
    // Inflation stopped at the limit: nothing past it was handed out, and at most the
    // partial frame that crossed it was withheld.
    assert!(total <= limit && total + FRAME_LIMIT > limit, "{total}");
    // A 1 GiB single-member bomb is ~1 MB compressed; 20 MiB of it is ~20 KB.
    assert!(pulled < 64 * 1024, "read {pulled} compressed bytes");
    assert!(max_frame <= FRAME_LIMIT);
    assert!(peak < 4 * MIB, "peak {peak}");
    assert_eq!(
        pool.stats().decompressors.in_use(),
        0,
        "decoder back in the pool"
    );
}

#[tokio::test]
async fn default_limits_stop_a_bomb_by_ratio() {
    let bomb = Bomb::new(BombKind::Gzip, 64);
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "gzip")
        .body(bomb)
        .unwrap();
    let seen = run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .unwrap();
    assert!(is_limit(&seen));
    // 1 MiB before the ratio is checked, then at most burst + 1 frames.
    let decoded = seen.frames * FRAME_LIMIT;
    assert!(decoded <= MIB + 4 * FRAME_LIMIT, "{decoded}");
}

#[tokio::test]
async fn ratio_limit_rejects_a_body_under_the_size_limit() {
    let zeros = vec![0u8; 3 * MIB];
    let out = run(
        RequestDecompressionLayer::new(),
        encoded("gzip", gzip(&zeros)),
    )
    .await;
    assert!(is_limit(&out.seen.unwrap()));
    // The same body passes without a ratio limit.
    let layer = RequestDecompressionLayer::new().ratio_limit(None);
    let out = run(layer, encoded("gzip", gzip(&zeros))).await;
    assert_eq!(out.seen.unwrap().body.unwrap().len(), 3 * MIB);
    // A tighter custom ratio catches ordinary text.
    let plain = text(400_000);
    let ratio = RatioLimit::new(2, 1).with_min_size(0);
    let layer = RequestDecompressionLayer::new().ratio_limit(Some(ratio));
    assert!(is_limit(
        &run(layer, encoded("gzip", gzip(&plain)))
            .await
            .seen
            .unwrap()
    ));
}

#[tokio::test]
async fn small_repetitive_body_under_the_minimum_passes() {
    let zeros = vec![0u8; 1024 * 1024 - 1];
    let wire = gzip(&zeros);
    assert!(zeros.len() / wire.len() > 200);
    decoded_ok("gzip", wire, &zeros).await;
}

#[tokio::test]
async fn size_limit_exact_boundary() {
    let plain = text(100_000);
    let limits = DecompressionLimits::none().with_max_size(Some(100_000));
    let out = run(
        RequestDecompressionLayer::new().limits(limits),
        encoded("gzip", gzip(&plain)),
    )
    .await;
    assert_eq!(out.seen.unwrap().body.unwrap(), plain);
    let limits = limits.with_max_size(Some(99_999));
    let out = run(
        RequestDecompressionLayer::new().limits(limits),
        encoded("gzip", gzip(&plain)),
    )
    .await;
    assert!(is_limit(&out.seen.unwrap()));
    let out = run(
        RequestDecompressionLayer::new().no_limits(),
        encoded("gzip", gzip(&plain)),
    )
    .await;
    assert_eq!(out.seen.unwrap().body.unwrap(), plain);
}

#[tokio::test]
async fn limit_applies_to_inner_stages_of_a_chain() {
    // gzip of a gzip bomb: the outer layer is small, the inner stream alone is 8 MiB.
    let inner = gzip(&vec![0u8; 64 * MIB]);
    let wire = gzip(&inner);
    let layer = RequestDecompressionLayer::new()
        .max_decompressed_size(Some(MIB))
        .ratio_limit(None);
    let seen = run(layer, encoded("gzip, gzip", wire)).await.seen.unwrap();
    assert!(is_limit(&seen));
    assert!(seen.frames * FRAME_LIMIT <= MIB + FRAME_LIMIT);
}

#[tokio::test]
async fn limits_through_axum_are_413_and_corrupt_is_400() {
    let (addr, _) = serve(RequestDecompressionLayer::new()).await;
    let client = client();
    let zeros = gzip(&vec![0u8; 8 * MIB]);
    let (status, _) = post_to(&client, addr, "/text", Some("gzip"), Full::from(zeros)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, _) = post_to(
        &client,
        addr,
        "/text",
        Some("gzip"),
        Full::from(vec![1u8; 20]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = post_to(
        &client,
        addr,
        "/text",
        Some("br"),
        Full::from(vec![1u8; 20]),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(body, "Unsupported Content-Encoding\n");
    let (status, body) = post_to(
        &client,
        addr,
        "/text",
        Some("gzip"),
        Full::from(gzip(b"four")),
    )
    .await;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"4"[..]));
}

mod split_anywhere {
    use super::*;
    use proptest::prelude::*;

    fn chunked(wire: &[u8], cuts: &[usize]) -> Vec<Result<Frame<Bytes>, Infallible>> {
        let mut frames = Vec::new();
        let mut rest = wire;
        for &cut in cuts {
            let (head, tail) = rest.split_at(cut.min(rest.len()));
            frames.push(Ok(Frame::data(Bytes::copy_from_slice(head))));
            rest = tail;
        }
        frames.push(Ok(Frame::data(Bytes::copy_from_slice(rest))));
        frames
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any chunking of any (stacked) coding decodes to the input.
        #[test]
        fn decodes_any_chunking(
            len in 0usize..150_000,
            cuts in proptest::collection::vec(0usize..40_000, 0..12),
            chain in 0usize..5,
        ) {
            let plain = text(len);
            let (coding, wire) = match chain {
                0 => ("gzip", gzip(&plain)),
                1 => ("deflate", raw_deflate(&plain)),
                2 => ("gzip, gzip", gzip(&gzip(&plain))),
                3 => ("gzip, deflate", zlib(&gzip(&plain))),
                _ => ("deflate, gzip, gzip", gzip(&gzip(&zlib(&plain)))),
            };
            let frames = chunked(&wire, &cuts);
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let seen = runtime.block_on(async {
                let req = Request::post("/")
                    .header(CONTENT_ENCODING, coding)
                    .body(StreamBody::new(futures_util::stream::iter(frames)))
                    .unwrap();
                run(RequestDecompressionLayer::new(), req).await.seen.unwrap()
            });
            prop_assert_eq!(seen.body.unwrap(), plain);
            prop_assert!(seen.max_frame <= FRAME_LIMIT);
        }
    }
}
