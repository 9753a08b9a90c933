//! Runs `examples/server.rs` as a process and checks every route over real HTTP, with a
//! hyper client and with `curl --compressed` (skipped without curl; see the support crate's `tools`).

mod cache;
mod dictionaries;
mod metrics;

use tower_gzip_support::{demo, prometheus, tools};

use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use demo::Server;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Reply {
    fn encoding(&self) -> Option<&str> {
        self.headers
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap())
    }

    /// The body, decoded as its Content-Encoding says (with flate2, not our decoder).
    fn decoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self.encoding() {
            None => out.extend_from_slice(&self.body),
            Some("gzip") => flate2::read::GzDecoder::new(&self.body[..])
                .read_to_end(&mut out)
                .map(drop)
                .unwrap(),
            Some("deflate") => flate2::read::ZlibDecoder::new(&self.body[..])
                .read_to_end(&mut out)
                .map(drop)
                .unwrap(),
            Some(other) => panic!("unexpected Content-Encoding {other}"),
        }
        out
    }
}

async fn send(method: Method, url: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Reply {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut req = Request::builder().method(method).uri(url);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = client
        .request(req.body(Full::from(body)).unwrap())
        .await
        .unwrap();
    let (parts, body) = res.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

async fn get(url: &str, accept_encoding: &str) -> Reply {
    send(
        Method::GET,
        url,
        &[("accept-encoding", accept_encoding)],
        Vec::new(),
    )
    .await
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[tokio::test]
async fn routes_compress_and_decode_to_the_identity_bytes() {
    let server = Server::start(&[]);

    for path in ["/api/items?n=500", "/big.txt?size=1000000", "/"] {
        let plain = get(&server.url(path), "identity").await;
        assert_eq!(plain.status, StatusCode::OK, "{path}");
        assert_eq!(plain.encoding(), None, "{path}");
        for coding in ["gzip", "deflate"] {
            let encoded = get(&server.url(path), coding).await;
            assert_eq!(encoded.encoding(), Some(coding), "{path}");
            assert!(
                encoded.body.len() < plain.body.len() / 2,
                "{path} {coding}: barely compressed"
            );
            assert!(
                encoded.decoded() == plain.body,
                "{path} {coding}: decodes to other bytes"
            );
        }
    }

    let items = get(&server.url("/api/items?n=500"), "gzip").await;
    assert_eq!(items.headers[header::CONTENT_TYPE], "application/json");
    let items: Value = serde_json::from_slice(&items.decoded()).unwrap();
    assert_eq!(items.as_array().unwrap().len(), 500);
    assert_eq!(items[499]["id"], 499);
    assert_eq!(items[499]["name"], "item-000499");
    let again = get(&server.url("/api/items?n=500"), "identity").await;
    assert_eq!(
        serde_json::from_slice::<Value>(&again.body).unwrap(),
        items,
        "deterministic"
    );
    let default = get(&server.url("/api/items"), "identity").await;
    assert_eq!(
        serde_json::from_slice::<Value>(&default.body)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        10
    );
    assert_eq!(
        get(&server.url("/api/items?n=100001"), "gzip").await.status,
        StatusCode::BAD_REQUEST
    );

    let big = get(&server.url("/big.txt?size=1000000"), "gzip").await;
    assert_eq!(
        big.headers[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    assert_eq!(big.decoded().len(), 1_000_000);
    // Again: the streamed body gave its compressor back with its last frame, so this one
    // reuses it (one stream holds one state from head to end while the pool is not crowded).
    let again = get(&server.url("/big.txt?size=1000000"), "gzip").await;
    assert_eq!(again.decoded(), big.decoded());
    assert_eq!(
        get(&server.url("/big.txt?size=12345"), "identity")
            .await
            .body
            .len(),
        12345
    );
    assert_eq!(
        get(&server.url("/big.txt?size=0"), "gzip")
            .await
            .decoded()
            .len(),
        0
    );

    let png = get(&server.url("/image.png"), "gzip, deflate").await;
    assert_eq!(png.status, StatusCode::OK);
    assert_eq!(png.headers[header::CONTENT_TYPE], "image/png");
    assert_eq!(png.encoding(), None, "images must not be compressed");
    assert!(png.body.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(png.body.ends_with(b"IEND\xae\x42\x60\x82"));

    let page = get(&server.url("/"), "gzip").await;
    assert!(
        page.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let page = String::from_utf8(page.decoded()).unwrap();
    assert!(page.contains("<html") && page.contains("EventSource") && page.contains("/stats"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no external resources"
    );

    let echo = send(
        Method::POST,
        &server.url("/api/echo"),
        &[("content-type", "text/csv")],
        b"a,b\n1,2\n".to_vec(),
    )
    .await;
    assert_eq!(echo.status, StatusCode::OK);
    assert_eq!(echo.headers[header::CONTENT_TYPE], "text/csv");
    assert_eq!(&echo.body[..], b"a,b\n1,2\n");
    let echo = send(Method::POST, &server.url("/api/echo"), &[], b"raw".to_vec()).await;
    assert_eq!(
        echo.headers[header::CONTENT_TYPE],
        "application/octet-stream"
    );

    // Every compressor went back to the pool (a body's state returns when the server drops
    // it, which can be just after the client has read the last byte).
    let deadline = Instant::now() + Duration::from_secs(5);
    let stats = loop {
        let stats: Value =
            serde_json::from_slice(&get(&server.url("/stats"), "gzip").await.decoded()).unwrap();
        let pool = &stats["pool"];
        let in_use = |kind: &str| pool[kind]["in_use"].as_u64().unwrap_or(u64::MAX);
        if in_use("deflate_compressors") + in_use("block_compressors") == 0
            || Instant::now() > deadline
        {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(stats["mode"], "tower-gzip");
    for kind in [
        "deflate_compressors",
        "block_compressors",
        "deflate_decompressors",
    ] {
        for field in [
            "created",
            "reused",
            "returned",
            "discarded",
            "idle",
            "in_use",
        ] {
            assert!(
                stats["pool"][kind][field].is_u64(),
                "pool.{kind}.{field}: {stats}"
            );
        }
    }
    for field in ["compressed", "skipped", "bytes_in", "bytes_out"] {
        assert!(
            stats["compression"][field].is_u64(),
            "compression.{field}: {stats}"
        );
    }
    // Streamed bodies use streaming compressors, small bodies known in full one-shot ones.
    let (c, b) = (
        &stats["pool"]["deflate_compressors"],
        &stats["pool"]["block_compressors"],
    );
    assert_eq!(c["in_use"], 0, "{stats}");
    assert_eq!(b["in_use"], 0, "{stats}");
    assert!(
        c["reused"].as_u64().unwrap() > 0
            && (b["reused"].as_u64().unwrap() > 0 || !cfg!(feature = "libdeflate")),
        "sequential requests reuse compressors: {stats}"
    );
    assert!(
        stats["compression"]["compressed"].as_u64().unwrap() >= 8,
        "{stats}"
    );
    let (bytes_in, bytes_out) = (
        &stats["compression"]["bytes_in"],
        &stats["compression"]["bytes_out"],
    );
    assert!(
        bytes_out.as_u64().unwrap() < bytes_in.as_u64().unwrap(),
        "{stats}"
    );
}

#[tokio::test]
async fn events_arrive_one_by_one_through_the_encoder() {
    let server = Server::start(&[]);
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = Request::get(server.url("/events?n=3&interval_ms=300"))
        .header("accept-encoding", "gzip")
        .body(Full::default())
        .unwrap();
    let started = Instant::now();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.headers()[header::CONTENT_TYPE], "text/event-stream");
    assert_eq!(res.headers()[header::CONTENT_ENCODING], "gzip");
    let mut body = res.into_body();
    let mut decoder = flate2::write::GzDecoder::new(Vec::new());
    let mut first_event_at = None;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            decoder.write_all(&data).unwrap();
            decoder.flush().unwrap();
            if first_event_at.is_none() && decoder.get_ref().ends_with(b"\n\n") {
                first_event_at = Some(started.elapsed());
            }
        }
    }
    let total = started.elapsed();
    let text = String::from_utf8(decoder.finish().unwrap()).unwrap();
    assert_eq!(
        text,
        "data: {\"tick\":0}\n\ndata: {\"tick\":1}\n\ndata: {\"tick\":2}\n\n"
    );
    // Ticks at 0, 300 and 600 ms: the first must not wait for the others.
    let first = first_event_at.expect("no complete event before the end");
    assert!(total >= Duration::from_millis(550), "{total:?}");
    assert!(
        total - first >= Duration::from_millis(400),
        "first event at {first:?} of {total:?}"
    );

    let default = get(&server.url("/events?interval_ms=1"), "gzip").await;
    assert_eq!(
        String::from_utf8(default.decoded())
            .unwrap()
            .matches("data: ")
            .count(),
        5
    );
    assert_eq!(
        get(&server.url("/events?n=10001"), "gzip").await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        get(&server.url("/events?interval_ms=0"), "gzip")
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
}

fn curl(args: &[&str]) -> Vec<u8> {
    let out = match Command::new("curl")
        .args(["-sS", "--fail"])
        .args(args)
        .output()
    {
        Ok(out) => out,
        Err(e) => panic!("cannot run curl ({e}): check for it with `tools::available` first"),
    };
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn curl_compressed_gives_the_same_bytes_as_identity() {
    if !tools::available(&["curl"], &[]) {
        return;
    }
    let server = Server::start(&[]);
    let routes = [
        ("/", true),
        ("/api/items?n=1000", true),
        ("/big.txt", true),
        ("/big.txt?size=777777", true),
        ("/events?n=3&interval_ms=20", true),
        ("/image.png", false),
    ];
    for (path, compressible) in routes {
        let url = server.url(path);
        let plain = curl(&[&url]);
        let compressed = curl(&["--compressed", &url]);
        assert!(
            plain == compressed,
            "{path}: curl --compressed gives other bytes"
        );
        let head = String::from_utf8(curl(&[
            "-H",
            "accept-encoding: gzip",
            "-o",
            "/dev/null",
            "-D",
            "-",
            &url,
        ]))
        .unwrap();
        let gzipped = head.to_ascii_lowercase().contains("content-encoding: gzip");
        assert_eq!(gzipped, compressible, "{path}:\n{head}");
    }
    assert_eq!(curl(&[&server.url("/big.txt")]).len(), 4 << 20);

    // /stats changes between calls: compare its shape.
    let keys = |v: Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let plain: Value = serde_json::from_slice(&curl(&[&server.url("/stats")])).unwrap();
    let compressed: Value =
        serde_json::from_slice(&curl(&["--compressed", &server.url("/stats")])).unwrap();
    assert_eq!(keys(plain.clone()), keys(compressed.clone()));
    assert_eq!(
        keys(plain["pool"].clone()),
        keys(compressed["pool"].clone())
    );

    let body = "x=1&y=2 ".repeat(200);
    let echo = |extra: &[&str]| {
        let mut args = vec!["-H", "content-type: text/plain", "--data-binary", &body];
        args.extend_from_slice(extra);
        let url = server.url("/api/echo");
        args.push(&url);
        curl(&args)
    };
    assert_eq!(echo(&[]), body.as_bytes());
    assert_eq!(echo(&["--compressed"]), body.as_bytes());
}

/// A gzip-encoded request body to `/api/echo` comes back decoded.
async fn check_gzip_upload(server: &Server) {
    let text = "compressible upload ".repeat(500);
    let headers = [
        ("content-encoding", "gzip"),
        ("content-type", "text/plain"),
        ("accept-encoding", "gzip"),
    ];
    let echo = send(
        Method::POST,
        &server.url("/api/echo"),
        &headers,
        gzip(text.as_bytes()),
    )
    .await;
    assert_eq!(echo.status, StatusCode::OK);
    assert_eq!(echo.headers[header::CONTENT_TYPE], "text/plain");
    assert!(echo.decoded() == text.as_bytes());
}

#[tokio::test]
async fn gzip_uploads_are_decompressed() {
    let server = Server::start(&[]);
    check_gzip_upload(&server).await;
}

#[tokio::test]
async fn baseline_tower_http_serves_the_same_routes() {
    let server = Server::start(&["--baseline", "tower-http"]);
    for path in ["/api/items?n=300", "/big.txt?size=200000"] {
        let plain = get(&server.url(path), "identity").await;
        let encoded = get(&server.url(path), "gzip").await;
        assert_eq!(encoded.encoding(), Some("gzip"), "{path}");
        assert!(encoded.decoded() == plain.body, "{path}");
    }
    // Same content as our mode, byte for byte.
    let ours = Server::start(&[]);
    let a = get(&server.url("/api/items?n=300"), "identity").await;
    let b = get(&ours.url("/api/items?n=300"), "identity").await;
    assert_eq!(a.body, b.body);

    assert_eq!(
        get(&server.url("/image.png"), "gzip").await.encoding(),
        None
    );
    check_gzip_upload(&server).await;

    // Counted when the server drops each body, which can be just after the client is done.
    let deadline = Instant::now() + Duration::from_secs(5);
    let stats = loop {
        let reply = get(&server.url("/stats"), "identity").await;
        let stats: Value = serde_json::from_slice(&reply.body).unwrap();
        if stats["compression"]["compressed"].as_u64() >= Some(3) || Instant::now() > deadline {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(stats["mode"], "tower-http");
    assert_eq!(stats["pool"]["deflate_compressors"]["created"], 0);
    assert!(
        stats["compression"]["compressed"].as_u64().unwrap() >= 3,
        "{stats}"
    );
    assert!(stats["compression"]["bytes_in"].is_null());
}

/// `--level CODING=N` sets one coding's level, the others keep theirs: gzip at 9 marks its
/// header "maximum compression" (XFL 2, RFC 1952 section 2.3.1), at the default 6 not (0).
#[tokio::test]
async fn level_flag_sets_one_coding() {
    let url_of = |server: &Server| server.url("/api/items?n=50&start=1");
    let default = Server::start(&[]);
    let plain = get(&url_of(&default), "gzip").await;
    assert_eq!(plain.encoding(), Some("gzip"));
    assert_eq!(plain.body[8], 0, "XFL at the default level");
    drop(default);
    let tuned = Server::start(&["--level", "gzip=9,br=5"]);
    let best = get(&url_of(&tuned), "gzip").await;
    assert_eq!(best.encoding(), Some("gzip"));
    assert_eq!(best.body[8], 2, "XFL at level 9");
    assert!(best.body.len() <= plain.body.len());
    // A bad list is refused with the usage, before anything is served.
    let out = Command::new(demo::server_binary())
        .args(["--level", "gzip"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--level"));
}
