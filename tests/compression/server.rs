//! `CompressionLayer` under real servers on loopback: an axum Router served by hyper-util's
//! auto builder (HTTP/1.1 and HTTP/2), hyper clients, raw TCP and curl.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::common::server::{
    Loopback, TIMEOUT, TestClient, http1_client, http2_client, no_body, send,
};
use crate::common::{Collected, eventually, gunzip, text};
use axum::Router;
use axum::body::Body as AxumBody;
use axum::http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Json};
use axum::routing::get;
use bytes::Bytes;
use http::header::{
    ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG, RANGE,
    TRANSFER_ENCODING, VARY,
};
use http_body::Frame;
use http_body_util::{BodyExt, Empty, StreamBody};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_gzip::CodecPool;
use tower_gzip::compression::CompressionLayer;

fn json_value() -> serde_json::Value {
    let items: Vec<_> = (0..60)
        .map(|i| serde_json::json!({"id": i, "name": format!("item {i}"), "tags": ["a", "b"]}))
        .collect();
    serde_json::json!({ "items": items })
}

fn big_chunks() -> Vec<Bytes> {
    text(400_000)
        .chunks(8 * 1024)
        .map(Bytes::copy_from_slice)
        .collect()
}

/// The expected identity bytes of each static route.
fn expected(path: &str) -> Vec<u8> {
    match path {
        "/json" => serde_json::to_vec(&json_value()).unwrap(),
        "/big" => text(400_000),
        "/small" => b"hi there".to_vec(),
        "/html" => text(5000),
        other => panic!("no route {other}"),
    }
}

fn stream_body(chunks: Vec<Bytes>) -> AxumBody {
    AxumBody::from_stream(futures_util::stream::iter(
        chunks.into_iter().map(Ok::<_, std::io::Error>),
    ))
}

/// The routes shared by most tests.
fn routes() -> Router {
    Router::new()
        .route("/json", get(|| async { Json(json_value()) }))
        .route("/big", get(|| async { stream_body(big_chunks()) }))
        .route("/small", get(|| async { "hi there" }))
        .route(
            "/html",
            get(|| async {
                (
                    [(CONTENT_TYPE, "text/html"), (ETAG, "\"v1\"")],
                    String::from_utf8(text(5000)).unwrap(),
                )
            }),
        )
        .route(
            "/cached",
            get(|| async {
                (
                    StatusCode::NOT_MODIFIED,
                    [(ETAG, "\"v1\"")],
                    AxumBody::empty(),
                )
            }),
        )
        .route(
            "/range",
            get(|| async {
                let all = text(5000);
                (
                    StatusCode::PARTIAL_CONTENT,
                    [(CONTENT_RANGE, "bytes 0-2999/5000")],
                    AxumBody::from(all[..3000].to_vec()),
                )
            }),
        )
        .route(
            "/trailers",
            get(|| async {
                let mut trailers = HeaderMap::new();
                trailers.insert("x-checksum", HeaderValue::from_static("abc123"));
                let frames = vec![
                    Ok::<_, std::io::Error>(Frame::data(Bytes::from(text(2000)))),
                    Ok(Frame::trailers(trailers)),
                ];
                let body = StreamBody::new(futures_util::stream::iter(frames));
                Response::builder()
                    .header("trailer", "x-checksum")
                    .body(AxumBody::new(body))
                    .unwrap()
            }),
        )
}

async fn fetch(
    client: &TestClient,
    addr: SocketAddr,
    method: http::Method,
    path: &str,
    headers: &[(&str, &str)],
) -> Collected {
    let mut req = Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    send(client, req.body(Empty::<Bytes>::new()).unwrap()).await
}

async fn get_with(client: &TestClient, addr: SocketAddr, path: &str, accept: &str) -> Collected {
    fetch(
        client,
        addr,
        http::Method::GET,
        path,
        &[("accept-encoding", accept)],
    )
    .await
}

/// The checks every client/protocol combination must pass.
async fn check_routes(client: &TestClient, addr: SocketAddr, version: http::Version) {
    for path in ["/json", "/big", "/html"] {
        for accept in ["gzip", "deflate", "gzip;q=0.5, deflate"] {
            let got = get_with(client, addr, path, accept).await;
            assert_eq!(got.version, version);
            assert_eq!(got.status, StatusCode::OK, "{path}");
            assert!(got.encoding().is_some(), "{path} {accept}: compressed");
            assert!(got.decoded() == expected(path), "{path} {accept}");
            assert_eq!(got.headers.get_all(VARY).iter().count(), 1, "{path}");
        }
        let identity = get_with(client, addr, path, "identity").await;
        assert_eq!(identity.encoding(), None);
        assert!(identity.body == expected(path), "{path} identity");
    }
    // Small: identity, with Vary and Content-Length.
    let small = get_with(client, addr, "/small", "gzip").await;
    assert_eq!(small.encoding(), None);
    assert_eq!(&small.body[..], b"hi there");
    assert_eq!(small.headers[CONTENT_LENGTH], "8");
    assert!(small.headers.contains_key(VARY));

    // One-shot: Content-Length equal to the compressed size, not chunked.
    for path in ["/json", "/html"] {
        let got = get_with(client, addr, path, "gzip").await;
        assert_eq!(got.encoding(), Some("gzip"));
        assert_eq!(
            got.headers
                .get(CONTENT_LENGTH)
                .unwrap_or_else(|| panic!("{path}: content-length on the one-shot path")),
            got.body.len().to_string().as_str()
        );
        assert!(!got.headers.contains_key(TRANSFER_ENCODING), "{path}");
        if path == "/html" {
            assert_eq!(got.headers[ETAG], "W/\"v1\"", "strong ETag made weak");
        }
    }
    // Streamed: no Content-Length.
    let big = get_with(client, addr, "/big", "gzip").await;
    assert!(!big.headers.contains_key(CONTENT_LENGTH));
    if version == http::Version::HTTP_11 {
        assert_eq!(big.headers[TRANSFER_ENCODING], "chunked");
    }

    // HEAD, 304 and 206 are left alone.
    let head = fetch(
        client,
        addr,
        http::Method::HEAD,
        "/html",
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(head.encoding(), None);
    assert!(head.body.is_empty());
    assert!(head.headers.contains_key(VARY));
    assert_eq!(head.headers[ETAG], "\"v1\"");

    let cached = get_with(client, addr, "/cached", "gzip").await;
    assert_eq!(cached.status, StatusCode::NOT_MODIFIED);
    assert_eq!(cached.encoding(), None);
    assert!(cached.body.is_empty());
    assert!(cached.headers.contains_key(VARY));
    assert_eq!(cached.headers[ETAG], "\"v1\"");

    let range = fetch(
        client,
        addr,
        http::Method::GET,
        "/range",
        &[
            ("accept-encoding", "gzip"),
            (RANGE.as_str(), "bytes=0-2999"),
        ],
    )
    .await;
    assert_eq!(range.status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(range.encoding(), None);
    assert_eq!(&range.body[..], &text(5000)[..3000]);

    // 406.
    // (`compress`, a coding no build offers; br, here before, is offered with its feature.)
    let refused = get_with(client, addr, "/html", "identity;q=0, compress").await;
    assert_eq!(refused.status, StatusCode::NOT_ACCEPTABLE);
    assert!(refused.headers.contains_key(VARY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_hyper_client() {
    let server = Loopback::serve(routes().layer(CompressionLayer::new())).await;
    let addr = server.addr;
    check_routes(&http1_client(), addr, http::Version::HTTP_11).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_hyper_client() {
    let server = Loopback::serve(routes().layer(CompressionLayer::new())).await;
    let addr = server.addr;
    check_routes(&http2_client(), addr, http::Version::HTTP_2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trailers_reach_the_client() {
    let server = Loopback::serve(routes().layer(CompressionLayer::new())).await;
    let addr = server.addr;
    // HTTP/2 client: trailers come as a frame.
    let got = get_with(&http2_client(), addr, "/trailers", "gzip").await;
    assert_eq!(got.encoding(), Some("gzip"));
    assert_eq!(gunzip(&got.body), text(2000));
    assert_eq!(got.trailers.expect("h2 trailers")["x-checksum"], "abc123");

    // HTTP/1.1 on the wire: chunked, with the declared trailer after the last chunk.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"GET /trailers HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\nte: trailers\r\n\
              connection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(TIMEOUT, stream.read_to_end(&mut raw))
        .await
        .expect("in time")
        .unwrap();
    let raw = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    assert!(raw.contains("content-encoding: gzip"), "{raw:.300}");
    assert!(raw.contains("transfer-encoding: chunked"), "{raw:.300}");
    assert!(
        raw.contains("\r\n0\r\nx-checksum: abc123\r\n"),
        "trailer on the wire"
    );
}

// ---------------------------------------------------------------------------------------
// SSE
// ---------------------------------------------------------------------------------------

type EventRx = Arc<Mutex<Option<mpsc::UnboundedReceiver<String>>>>;

fn sse_app(rx: EventRx) -> Router {
    Router::new()
        .route(
            "/sse",
            get(move || {
                let rx = rx.lock().unwrap().take().expect("one SSE request");
                async move {
                    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                        let msg = rx.recv().await?;
                        Some((
                            Ok::<_, std::convert::Infallible>(Event::default().data(msg)),
                            rx,
                        ))
                    });
                    Sse::new(stream).into_response()
                }
            }),
        )
        .layer(CompressionLayer::new())
}

/// Each event must be decodable before the server produces the next one: the server's
/// stream waits for the test to send each message.
async fn sse_events_arrive_one_by_one(client: TestClient) {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let server = Loopback::serve(sse_app(Arc::new(Mutex::new(Some(rx))))).await;
    let addr = server.addr;
    let req = Request::builder()
        .uri(format!("http://{addr}/sse"))
        .header(ACCEPT_ENCODING, "gzip")
        .body(no_body())
        .unwrap();
    // The first event is sent before the request so that the response head is not held
    // by anything but compression.
    tx.send("event 0".into()).unwrap();
    let res = tokio::time::timeout(TIMEOUT, client.request(req))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
    assert_eq!(res.headers()[CONTENT_TYPE], "text/event-stream");
    let mut body = res.into_body();
    let mut decoder = flate2::write::GzDecoder::new(Vec::new());
    let mut expected_text = String::new();
    for i in 0..5 {
        if i > 0 {
            tx.send(format!("event {i}")).unwrap();
        }
        expected_text.push_str(&format!("data: event {i}\n\n"));
        // Read frames until event i decodes; event i+1 does not exist yet.
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            use std::io::Write;
            decoder.flush().unwrap();
            if decoder.get_ref().len() >= expected_text.len() {
                break;
            }
            let frame = tokio::time::timeout_at(deadline, body.frame())
                .await
                .unwrap_or_else(|_| panic!("event {i} did not arrive decodable in time"))
                .expect("stream still open")
                .expect("no error");
            if let Ok(data) = frame.into_data() {
                decoder.write_all(&data).unwrap();
            }
        }
        assert_eq!(
            String::from_utf8(decoder.get_ref().clone()).unwrap(),
            expected_text,
            "exactly events 0..={i}"
        );
    }
    drop(tx);
    while let Some(frame) = tokio::time::timeout(TIMEOUT, body.frame()).await.unwrap() {
        use std::io::Write;
        if let Ok(data) = frame.unwrap().into_data() {
            decoder.write_all(&data).unwrap();
        }
    }
    let all = decoder.finish().unwrap();
    assert_eq!(String::from_utf8(all).unwrap(), expected_text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_http1() {
    sse_events_arrive_one_by_one(http1_client()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_http2() {
    sse_events_arrive_one_by_one(http2_client()).await;
}

// ---------------------------------------------------------------------------------------
// curl
// ---------------------------------------------------------------------------------------

struct CurlOut {
    headers: String,
    body: Vec<u8>,
}

async fn curl(args: &[&str], url: &str) -> CurlOut {
    let output = tokio::process::Command::new("curl")
        .args(["-sS", "--max-time", "10", "-D", "-", "-o", "/dev/stdout"])
        .args(args)
        .arg(url)
        .output()
        .await
        .unwrap_or_else(|e| {
            panic!("cannot run curl ({e}): check for it with `tools::available` first")
        });
    assert!(
        output.status.success(),
        "curl {args:?} {url} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Headers then body: split at the end of the last header block.
    let raw = output.stdout;
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header block")
        + 4;
    CurlOut {
        headers: String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase(),
        body: raw[end..].to_vec(),
    }
}

/// curl `--compressed` against a layer offering gzip and deflate only (curl asks for
/// "deflate, gzip" first, plus br and zstd when it is built with them: gzip wins), then
/// against the default layer, which answers with the best coding curl and this build
/// share (zstd with the default features and a curl built with libzstd).
async fn curl_compares(http2: bool) {
    let flate_only = CompressionLayer::new();
    #[cfg(feature = "zstd")]
    let flate_only = flate_only.no_zstd();
    #[cfg(feature = "br")]
    let flate_only = flate_only.no_br();
    curl_compares_with(http2, flate_only, Some("gzip")).await;
    curl_compares_with(http2, CompressionLayer::new(), None).await;
}

/// `coding`: the `Content-Encoding` expected, or `None` for any this crate speaks.
async fn curl_compares_with(http2: bool, layer: CompressionLayer, coding: Option<&str>) {
    let server = Loopback::serve(routes().layer(layer)).await;
    let addr = server.addr;
    let proto: &[&str] = if http2 {
        &["--http2-prior-knowledge"]
    } else {
        &["--http1.1"]
    };
    for path in ["/json", "/big", "/html", "/small"] {
        let url = format!("http://{addr}{path}");
        let mut args = proto.to_vec();
        let identity = curl(&args, &url).await;
        args.push("--compressed");
        let compressed = curl(&args, &url).await;
        assert!(
            !identity.headers.contains("content-encoding"),
            "{path}: {}",
            identity.headers
        );
        if path != "/small" {
            let expected: Vec<String> = match coding {
                Some(coding) => vec![format!("content-encoding: {coding}\r\n")],
                None => tower_gzip::ContentCoding::ALL
                    .iter()
                    .map(|f| format!("content-encoding: {}\r\n", f.as_str()))
                    .collect(),
            };
            assert!(
                expected
                    .iter()
                    .any(|e| compressed.headers.contains(e.as_str())),
                "{path}: {}",
                compressed.headers
            );
        }
        if http2 {
            assert!(
                compressed.headers.starts_with("http/2"),
                "{}",
                compressed.headers
            );
        }
        assert!(identity.body == expected(path), "{path}: identity bytes");
        assert!(
            compressed.body == identity.body,
            "{path}: curl --compressed differs"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_compressed_matches_identity_http1() {
    if !crate::common::tools::available(&["curl"], &[]) {
        return;
    }
    curl_compares(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_compressed_matches_identity_http2() {
    if !crate::common::tools::available(&["curl"], &[]) {
        return;
    }
    curl_compares(true).await;
}

// ---------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------

/// A client that stops reading mid-stream, then hangs up: the state comes back.
///
/// While the client stalls (the socket full, the server waiting on it), a gzip or zstd
/// stream holds its state under the pool's hold limit ("held mid-stream"), and none in a
/// pool crowded past it (hold limit 0 here): there streaming bodies give it back between
/// slices (a crowded pool parks nothing), gzip resuming from the last 32 KiB, zstd with a
/// new frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_mid_stream_returns_codec() {
    for hold_limit in [0, 64] {
        let pool = CodecPool::builder()
            .max_idle(4)
            .hold_limit(hold_limit)
            .build();
        disconnect_mid_stream(&pool, usize::from(hold_limit > 0) as u64).await;
    }
}

async fn disconnect_mid_stream(pool: &CodecPool, held_mid_stream: u64) {
    let app = Router::new()
        .route(
            "/endless",
            get(|| async {
                // 64 MiB in 16 KiB chunks of noise (so the compressed stream fills the socket
                // buffers quickly), far more than socket buffers hold. Always ready: a stream
                // that goes Pending gives its state back while it waits.
                let stream = futures_util::stream::unfold(0u32, move |i| async move {
                    if i == 4096 {
                        return None;
                    }
                    let chunk = Bytes::from(crate::common::noise(16 * 1024, u64::from(i) + 1));
                    Some((Ok::<_, std::io::Error>(chunk), i + 1))
                });
                AxumBody::from_stream(stream)
            }),
        )
        .layer(CompressionLayer::new().pool(pool.clone()));
    let server = Loopback::serve(app).await;
    let addr = server.addr;

    #[allow(unused_mut)]
    let mut codings = vec![("gzip", held_mid_stream)];
    #[cfg(feature = "zstd")]
    codings.push(("zstd", held_mid_stream));
    for (coding, held) in codings {
        for http2 in [false, true] {
            let client = if http2 {
                http2_client()
            } else {
                http1_client()
            };
            let req = Request::builder()
                .uri(format!("http://{addr}/endless"))
                .header(ACCEPT_ENCODING, coding)
                .body(no_body())
                .unwrap();
            let res = tokio::time::timeout(TIMEOUT, client.request(req))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(res.headers()[CONTENT_ENCODING], coding);
            let mut body = res.into_body();
            let mut got = 0;
            while got < 4096 {
                let frame = tokio::time::timeout(TIMEOUT, body.frame())
                    .await
                    .unwrap()
                    .unwrap()
                    .unwrap();
                got += frame.into_data().map_or(0, |d| d.len());
            }
            // A zstd context parked at a slice end stays its stream's (the stream takes it
            // back at its next slice): held too, whichever the writer stopped at.
            let holding = |stats: tower_gzip::pool::PoolStats| {
                let parked = if coding == "zstd" {
                    stats
                        .kind(tower_gzip::pool::PoolKind::ZstdCompressors)
                        .idle_parked as u64
                } else {
                    0
                };
                stats.in_use() + parked
            };
            assert!(
                eventually(|| holding(pool.stats()) == held).await,
                "{coding} http2 {http2}: {held} state(s) held mid-stream: {:?}",
                pool.stats()
            );
            drop(body);
            drop(client);
            assert!(
                eventually(|| pool.stats().in_use() == 0).await,
                "{coding} http2 {http2}: codec not returned after disconnect: {:?}",
                pool.stats()
            );
        }
    }
    let stats = pool.stats();
    assert_eq!(
        stats
            .kind(tower_gzip::pool::PoolKind::DeflateCompressors)
            .discarded,
        0,
        "{stats:?}"
    );
    assert_eq!(
        stats
            .kind(tower_gzip::pool::PoolKind::ZstdCompressors)
            .discarded,
        0,
        "{stats:?}"
    );
}
