//! Runs `examples/server.rs` as a process and checks every route over real HTTP, with a
//! hyper client and with `curl --compressed` (skipped without curl; see `tests/common/tools.rs`).

#[path = "common/demo.rs"]
mod demo;
#[path = "demo_server/metrics.rs"]
mod metrics;
#[path = "common/prometheus.rs"]
mod prometheus;
#[path = "common/tools.rs"]
mod tools;

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
        if in_use("compressors") + in_use("block_compressors") == 0 || Instant::now() > deadline {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(stats["mode"], "tower-gzip");
    for kind in ["compressors", "block_compressors", "decompressors"] {
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
    assert!(stats["pool"]["max_idle"].is_u64(), "{stats}");
    for field in ["compressed", "skipped", "bytes_in", "bytes_out"] {
        assert!(
            stats["compression"][field].is_u64(),
            "compression.{field}: {stats}"
        );
    }
    // Streamed bodies use streaming compressors, small bodies known in full one-shot ones.
    let (c, b) = (
        &stats["pool"]["compressors"],
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
    assert_eq!(stats["pool"]["compressors"]["created"], 0);
    assert!(stats["pool"]["max_idle"].is_null());
    assert!(
        stats["compression"]["compressed"].as_u64().unwrap() >= 3,
        "{stats}"
    );
    assert!(stats["compression"]["bytes_in"].is_null());
}

// ---------------------------------------------------------------------------------------
// Compression Dictionary Transport (RFC 9842)

/// A GET as Chromium sends it once it holds a dictionary: `Available-Dictionary`, the
/// dictionary codings offered, `Sec-Fetch-Site: same-origin`.
#[cfg(feature = "zstd")]
async fn get_with_dictionary(url: &str, available: &str, accept_encoding: &str) -> Reply {
    send(
        Method::GET,
        url,
        &[
            ("accept-encoding", accept_encoding),
            ("available-dictionary", available),
            ("sec-fetch-site", "same-origin"),
            ("sec-fetch-mode", "cors"),
        ],
        Vec::new(),
    )
    .await
}

#[cfg(feature = "zstd")]
fn dictionary_of(bytes: &[u8], pattern: &str) -> tower_gzip::dictionary::Dictionary {
    use tower_gzip::dictionary::Dictionary;
    use tower_gzip::headers::UseAsDictionary;
    Dictionary::new(Bytes::copy_from_slice(bytes), UseAsDictionary::new(pattern)).unwrap()
}

#[cfg(feature = "zstd")]
fn undcz(dictionary: &tower_gzip::dictionary::Dictionary, body: &[u8]) -> Vec<u8> {
    let pool = tower_gzip::CodecPool::global();
    tower_gzip::codec::OneShot::new(tower_gzip::ContentCoding::Dcz)
        .dictionary(dictionary)
        .pool(pool)
        .decode(body, 16 << 20)
        .unwrap()
        .to_vec()
}

#[cfg(feature = "zstd")]
#[tokio::test]
async fn dictionary_transport_for_the_api_and_the_script() {
    let server = Server::start(&[]);

    // GET / announces the dictionary, in a header and in the page.
    let page = get(&server.url("/"), "identity").await;
    assert_eq!(
        page.headers[header::LINK],
        r#"</dictionary>; rel="compression-dictionary""#
    );
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(html.contains(r#"<link rel="compression-dictionary" href="/dictionary">"#));

    // /dictionary: the trained 16 KiB, with the headers Chromium needs to keep it.
    let dict = get(&server.url("/dictionary"), "identity").await;
    assert_eq!(dict.status, StatusCode::OK);
    assert_eq!(dict.headers["use-as-dictionary"], r#"match="/api/items*""#);
    let cache = dict.headers[header::CACHE_CONTROL].to_str().unwrap();
    assert!(cache.contains("max-age="), "{cache}");
    assert!(dict.headers.contains_key(header::ETAG));
    assert!(
        dict.body.len() > 8 << 10 && dict.body.len() <= 16 << 10,
        "{}",
        dict.body.len()
    );
    let api = dictionary_of(&dict.body, "/api/items*");
    let available = api.available_dictionary();
    let available = available.to_str().unwrap();
    // Compressed in transit too, still the same bytes.
    assert_eq!(
        get(&server.url("/dictionary"), "gzip").await.decoded(),
        dict.body
    );

    // /api/items?start=S: items S..S+n.
    let plain = get(&server.url("/api/items?n=5&start=123456789"), "identity").await;
    let list: Value = serde_json::from_slice(&plain.body).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 5);
    assert_eq!(list[0]["id"], 123_456_789);
    assert_eq!(list[4]["name"], "item-123456793");
    let max = get(&server.url("/api/items?n=1&start=1000000000"), "identity").await;
    assert_eq!(max.status, StatusCode::OK);
    for bad in ["start=1000000001", "start=-1", "start=x"] {
        let reply = get(&server.url(&format!("/api/items?{bad}")), "identity").await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{bad}");
    }
    let default = get(&server.url("/api/items?n=3&start=0"), "identity").await;
    assert_eq!(
        default.body,
        get(&server.url("/api/items?n=3"), "identity").await.body
    );

    // Named, offered and readable: dcz against the dictionary, a fraction of plain zstd.
    let url = server.url("/api/items?n=5&start=123456789");
    let dcz = get_with_dictionary(&url, available, "gzip, deflate, br, zstd, dcb, dcz").await;
    assert_eq!(dcz.encoding(), Some("dcz"));
    let vary = dcz
        .headers
        .get_all(header::VARY)
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(", ");
    assert!(vary.contains("available-dictionary"), "{vary}");
    assert_eq!(undcz(&api, &dcz.body), plain.body);
    let zstd = get(&url, "zstd").await;
    assert_eq!(zstd.encoding(), Some("zstd"));
    assert!(
        dcz.body.len() * 10 < zstd.body.len() * 9,
        "dcz {} vs zstd {}",
        dcz.body.len(),
        zstd.body.len()
    );
    // Not offered, unknown, cross-site no-cors: the usual coding.
    let no = get_with_dictionary(&url, available, "gzip").await;
    assert_eq!(no.encoding(), Some("gzip"));
    assert_eq!(no.decoded(), plain.body);
    let unknown = format!(":{}:", "A".repeat(43) + "=");
    let no = get_with_dictionary(&url, &unknown, "gzip, dcz").await;
    assert_eq!(no.encoding(), Some("gzip"));
    let refused = send(
        Method::GET,
        &url,
        &[
            ("accept-encoding", "gzip, dcz"),
            ("available-dictionary", available),
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "no-cors"),
        ],
        Vec::new(),
    )
    .await;
    assert_eq!(refused.encoding(), Some("gzip"));

    // The script: v1 is marked and kept as a dictionary; v2 after it comes as a delta.
    let v1 = get(&server.url("/assets/app-v1.js"), "gzip").await;
    assert_eq!(v1.status, StatusCode::OK);
    assert!(
        v1.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    assert_eq!(
        v1.headers["use-as-dictionary"],
        r#"match="/assets/app-v*.js""#
    );
    assert!(v1.headers.contains_key(header::CACHE_CONTROL));
    let v1 = v1.decoded();
    assert!(v1.len() > 20 << 10, "{}", v1.len());
    let v2_plain = get(&server.url("/assets/app-v2.js"), "identity").await.body;
    assert_ne!(v1, v2_plain.to_vec());
    let old = dictionary_of(&v1, "/assets/app-v*.js");
    let v2_url = server.url("/assets/app-v2.js");
    let available_v1 = old.available_dictionary();
    // The server keeps v1 once it has sent all of it, which can be just after we read it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let delta = loop {
        let reply = get_with_dictionary(&v2_url, available_v1.to_str().unwrap(), "zstd, dcz").await;
        if reply.encoding() == Some("dcz") || Instant::now() > deadline {
            break reply;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(delta.encoding(), Some("dcz"), "v2 after v1 is a delta");
    assert_eq!(
        delta.headers["use-as-dictionary"],
        r#"match="/assets/app-v*.js""#
    );
    assert_eq!(undcz(&old, &delta.body), v2_plain);
    let v2_zstd = get(&v2_url, "zstd").await;
    assert!(
        delta.body.len() * 20 < v2_zstd.body.len(),
        "delta {} vs zstd {}",
        delta.body.len(),
        v2_zstd.body.len()
    );

    // /stats counts it all.
    let stats: Value =
        serde_json::from_slice(&get(&server.url("/stats"), "identity").await.body).unwrap();
    let d = &stats["dictionaries"];
    assert!(d["hits"].as_u64().unwrap() >= 2, "{stats}");
    assert!(d["unknown"].as_u64().unwrap() >= 1, "{stats}");
    assert!(d["refused"].as_u64().unwrap() >= 1, "{stats}");
    assert!(d["not_offered"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(d["api"]["available_dictionary"], available, "{stats}");
    assert!(d["store"]["dictionaries"].as_u64().unwrap() >= 2, "{stats}");
    let dcz = &stats["codings"]["dcz"];
    assert!(dcz["compressed"].as_u64().unwrap() >= 2, "{stats}");
    assert!(
        dcz["bytes_out"].as_u64().unwrap() < dcz["bytes_in"].as_u64().unwrap(),
        "{stats}"
    );
    assert!(
        stats["codings"]["dcb"].is_object() || !cfg!(feature = "br"),
        "{stats}"
    );
    assert_eq!(stats["prefer"][0], "dcz", "{stats}");
}

/// `--prefer`, `--save-dictionary` and `--dictionary`: dcb first, the trained dictionary
/// written and served again from its file, bad lists refused.
#[cfg(all(feature = "dcz", feature = "dcb"))]
#[tokio::test]
async fn prefer_and_dictionary_files() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("demo-dictionary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("api.dict");
    let file_arg = file.to_str().unwrap();

    let server = Server::start(&["--prefer", "dcb,br", "--save-dictionary", file_arg]);
    let served = get(&server.url("/dictionary"), "identity").await.body;
    assert_eq!(std::fs::read(&file).unwrap(), served);
    let api = dictionary_of(&served, "/api/items*");
    let url = server.url("/api/items?n=5&start=555555555");
    let plain = get(&url, "identity").await.body;
    let all = "gzip, deflate, br, zstd, dcb, dcz";
    let dcb = get_with_dictionary(&url, api.available_dictionary().to_str().unwrap(), all).await;
    assert_eq!(dcb.encoding(), Some("dcb"));
    let decoded = tower_gzip::codec::OneShot::new(tower_gzip::ContentCoding::Dcb)
        .dictionary(&api)
        .decode(&dcb.body, 1 << 20)
        .unwrap();
    assert_eq!(&decoded[..], &plain[..]);
    // Plain codings: br first.
    assert_eq!(get(&url, "gzip, zstd, br").await.encoding(), Some("br"));
    // Only dcz offered: still made (the unlisted dictionary coding follows).
    let dcz = get_with_dictionary(&url, api.available_dictionary().to_str().unwrap(), "dcz").await;
    assert_eq!(dcz.encoding(), Some("dcz"));
    let stats: Value =
        serde_json::from_slice(&get(&server.url("/stats"), "identity").await.body).unwrap();
    assert_eq!(
        stats["prefer"],
        serde_json::json!(["dcb", "dcz", "br", "zstd", "gzip", "deflate"])
    );
    drop(server);

    // The file, served as it is: the same hash.
    let server = Server::start(&["--dictionary", file_arg]);
    let again = get(&server.url("/dictionary"), "identity").await.body;
    assert_eq!(again, served);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);

    // Refused command lines: exit status 2, no server.
    for args in [
        &["--prefer", "lzma"][..],
        &["--prefer", ""],
        &["--prefer"],
        &["--baseline", "tower-http", "--prefer", "gzip"],
        &["--dictionary", "/nonexistent/api.dict"],
    ] {
        let out = Command::new(demo::server_binary())
            .args(args)
            .env("ADDR", "127.0.0.1:0")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
}

#[tokio::test]
async fn baseline_tower_http_has_no_dictionaries() {
    let server = Server::start(&["--baseline", "tower-http"]);
    let page = get(&server.url("/"), "identity").await;
    assert!(page.headers.get(header::LINK).is_none());
    assert!(!String::from_utf8_lossy(&page.body).contains("rel=\"compression-dictionary\""));
    assert_eq!(
        get(&server.url("/dictionary"), "identity").await.status,
        StatusCode::NOT_FOUND
    );
    let v1 = get(&server.url("/assets/app-v1.js"), "gzip").await;
    assert_eq!(v1.encoding(), Some("gzip"));
    assert!(v1.headers.get("use-as-dictionary").is_none());
    let stats: Value =
        serde_json::from_slice(&get(&server.url("/stats"), "identity").await.body).unwrap();
    assert!(stats["dictionaries"].is_null(), "{stats}");
}

/// Our own client against the demo, as `examples/client.rs` uses it: `DecompressionLayer`
/// with a `ClientDictionaryStore` follows the page's `Link` to the dictionary, stores it,
/// and gets the API as `dcz`, decoded to the identity bytes; the script's v2 after v1 comes
/// as a delta against v1, which the layer learned from its `Use-As-Dictionary`.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn our_client_learns_and_uses_the_demo_dictionaries() {
    use std::sync::{Arc, Mutex};
    use tower::{ServiceBuilder, ServiceExt};
    use tower_gzip::client::{ClientDictionaryStore, linked_dictionaries};
    use tower_gzip::decompression::DecompressionLayer;

    let server = Server::start(&[]);
    let store = ClientDictionaryStore::new();
    let wire: Arc<Mutex<String>> = Arc::default();
    let tap = wire.clone();
    let client = ServiceBuilder::new()
        .layer(DecompressionLayer::new().dictionaries(store.clone()))
        .map_response(move |response: http::Response<hyper::body::Incoming>| {
            *tap.lock().unwrap() = response
                .headers()
                .get(header::CONTENT_ENCODING)
                .map_or("identity".into(), |v| v.to_str().unwrap().to_owned());
            response
        })
        .service(
            Client::builder(TokioExecutor::new()).build_http::<http_body_util::Empty<Bytes>>(),
        );
    let fetch = |path: String| {
        let client = client.clone();
        let wire = wire.clone();
        async move {
            let request = Request::get(path)
                .body(http_body_util::Empty::new())
                .unwrap();
            let response = client.oneshot(request).await.unwrap();
            let headers = response.headers().clone();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let coding = wire.lock().unwrap().clone();
            (headers, coding, body)
        }
    };

    let (page, _, _) = fetch(server.url("/")).await;
    let linked = linked_dictionaries(&page);
    assert_eq!(linked, ["/dictionary"]);
    let (_, _, dictionary) = fetch(server.url(&linked[0])).await;
    assert_eq!(store.len(), 1);
    assert_eq!(store.bytes(), dictionary.len());

    for start in [123_456_789u64, 987_654_321] {
        let path = format!("/api/items?n=5&start={start}");
        let (_, coding, body) = fetch(server.url(&path)).await;
        assert_eq!(coding, "dcz", "{path}");
        assert_eq!(body, get(&server.url(&path), "identity").await.body);
    }

    let (_, _, v1) = fetch(server.url("/assets/app-v1.js")).await;
    assert_eq!(
        v1,
        get(&server.url("/assets/app-v1.js"), "identity").await.body
    );
    let v2_plain = get(&server.url("/assets/app-v2.js"), "identity").await.body;
    // The server keeps v1 once it has sent all of it, which can be just after we read it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, coding, v2) = fetch(server.url("/assets/app-v2.js")).await;
        assert_eq!(v2, v2_plain);
        if coding == "dcz" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "v2 never came as a delta ({coding})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(store.stats().offered >= 3, "{:?}", store.stats());
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
