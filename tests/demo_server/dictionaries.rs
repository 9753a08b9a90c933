//! Compression Dictionary Transport (RFC 9842) in the demo: the API dictionary learned from
//! its responses (announced, served, used, rotated when the schema changes, shared by two
//! instances through a directory), the script's versions as deltas, our own client, and a
//! dictionary file.

use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, StatusCode, header};
use serde_json::Value;

use super::{Reply, Server, demo, get, send};

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
    use tower_gzip::dictionary::UseAsDictionary;
    Dictionary::new(Bytes::copy_from_slice(bytes), UseAsDictionary::new(pattern)).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

    // A cold start: nothing to announce until the API's responses have taught a dictionary,
    // which 1,000 of them do.
    let page = get(&server.url("/"), "identity").await;
    assert!(page.headers.get(header::LINK).is_none());
    assert!(!String::from_utf8_lossy(&page.body).contains("rel=\"compression-dictionary\""));
    server.visit_api(0, 1000);
    let learned = server.learned(1);
    let dict_url = learned["url"].as_str().unwrap().to_owned();
    assert!(
        dict_url.starts_with("/.well-known/dictionaries/"),
        "{learned}"
    );

    // GET / announces it, in a header and in the page; so do the API's responses.
    let page = get(&server.url("/"), "identity").await;
    let link = format!(r#"<{dict_url}>; rel="compression-dictionary""#);
    assert_eq!(page.headers[header::LINK], link.as_str());
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(html.contains(&format!(
        r#"<link rel="compression-dictionary" href="{dict_url}">"#
    )));
    let browser = [("accept-encoding", "identity"), ("sec-fetch-mode", "cors")];
    let items = send(
        Method::GET,
        &server.url("/api/items?n=2"),
        &browser,
        Vec::new(),
    )
    .await;
    assert_eq!(items.headers[header::LINK], link.as_str());
    // An API client (no browser, no dictionary) is not told.
    let items = get(&server.url("/api/items?n=2"), "identity").await;
    assert!(items.headers.get(header::LINK).is_none());

    // The dictionary, with the headers Chromium needs to keep it.
    let dict = get(&server.url(&dict_url), "identity").await;
    assert_eq!(dict.status, StatusCode::OK);
    assert_eq!(
        dict.headers["use-as-dictionary"],
        r#"match="/api/items*", id="v1""#
    );
    let cache = dict.headers[header::CACHE_CONTROL].to_str().unwrap();
    assert!(cache.contains("max-age="), "{cache}");
    assert!(dict.headers.contains_key(header::ETAG));
    assert!(
        dict.body.len() > 1 << 10 && dict.body.len() <= 64 << 10,
        "{}",
        dict.body.len()
    );
    let api = dictionary_of(&dict.body, "/api/items*");
    assert_eq!(learned["sha256"], hex(&api.hash()));
    let available = api.available_dictionary();
    let available = available.to_str().unwrap();
    // Compressed in transit too, still the same bytes.
    assert_eq!(
        get(&server.url(&dict_url), "gzip").await.decoded(),
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

/// `--prefer` and `--dictionary`: dcb first, a dictionary file (here the one a first
/// instance learned, as a deploy would save it) served at `/dictionary`, bad lists refused.
#[cfg(all(feature = "dcz", feature = "dcb"))]
#[tokio::test]
async fn prefer_and_dictionary_files() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("demo-dictionary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("api.dict");
    let file_arg = file.to_str().unwrap();

    let first = Server::start(&[]);
    first.visit_api(0, 1000);
    let learned = first.learned(1);
    let saved = first.identity(learned["url"].as_str().unwrap());
    std::fs::write(&file, &saved).unwrap();
    drop(first);

    let server = Server::start(&["--prefer", "dcb,br", "--dictionary", file_arg]);
    let served = get(&server.url("/dictionary"), "identity").await.body;
    assert_eq!(served, saved);
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
    assert!(
        stats["dictionaries"]["learned"].is_null(),
        "a file, not learning: {stats}"
    );
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
/// as a delta against v1, which the layer learned from its `Use-As-Dictionary`. Needs the
/// client's dictionary store (`--features dictionary-client`).
#[cfg(all(feature = "zstd", dictionary_client))]
#[tokio::test]
async fn our_client_learns_and_uses_the_demo_dictionaries() {
    use std::sync::{Arc, Mutex};

    use http::Request;
    use http_body_util::BodyExt;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use tower::{ServiceBuilder, ServiceExt};
    use tower_gzip::client::{ClientDictionaryStore, linked_dictionaries};
    use tower_gzip::decompression::DecompressionLayer;

    let server = Server::start(&[]);
    server.visit_api(0, 1000);
    let learned = server.learned(1);
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
    assert_eq!(linked, [learned["url"].as_str().unwrap()]);
    let (_, _, dictionary) = fetch(server.url(&linked[0])).await;
    assert_eq!(store.stats().entries, 1);
    assert_eq!(store.stats().bytes, dictionary.len());

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

/// The dcz body of `path` against `dictionary` (named as a browser names it), decoded.
fn dcz_from(
    server: &Server,
    path: &str,
    dictionary: &tower_gzip::dictionary::Dictionary,
) -> Vec<u8> {
    let available = dictionary.available_dictionary();
    let headers = [
        ("Accept-Encoding", "gzip, br, zstd, dcb, dcz"),
        ("Available-Dictionary", available.to_str().unwrap()),
        ("Sec-Fetch-Site", "same-origin"),
    ];
    let (head, body) = server.raw(path, &headers);
    assert!(head.contains("content-encoding: dcz\r\n"), "{path}: {head}");
    undcz(dictionary, &body)
}

/// The schema changes at run time: what the dictionary saves falls, the next one is learned
/// and announced, and a request naming the first still gets a correct response.
#[tokio::test]
async fn a_new_schema_gets_a_new_dictionary_and_the_old_one_still_works() {
    let server = Server::start(&[]);
    server.visit_api(0, 1000);
    let v1 = server.learned(1);
    let v1_url = v1["url"].as_str().unwrap();
    let old = dictionary_of(&server.identity(v1_url), "/api/items*");
    let (head, _) = server.request("POST", "/api/schema?v=1", &[]);
    assert!(head.starts_with("http/1.0 200"), "{head}");
    let plain = server.identity("/api/items?n=3&start=42");
    assert!(
        String::from_utf8_lossy(&plain).contains("itemId"),
        "the new shape"
    );
    // Fresh samples in the new shape: checked, found wanting, and a new dictionary built.
    let v2 = server.visit_until_learned(1000, 2);
    let stats = server.stats();
    let learned = &stats["dictionaries"]["learned"];
    assert_eq!(learned["builds"], 2, "{stats}");
    assert_eq!(learned["held"], 2, "{stats}");
    let v2_url = v2["url"].as_str().unwrap();
    assert_ne!(v1_url, v2_url);
    let page = get(&server.url("/"), "identity").await;
    assert!(
        page.headers[header::LINK]
            .to_str()
            .unwrap()
            .contains(v2_url)
    );
    let dict = get(&server.url(v2_url), "identity").await;
    assert_eq!(
        dict.headers["use-as-dictionary"],
        r#"match="/api/items*", id="v2""#
    );
    let new = dictionary_of(&dict.body, "/api/items*");
    // Both dictionaries give the right bytes; the new one fewer of them.
    let path = "/api/items?n=5&start=987654321";
    let plain = server.identity(path);
    assert_eq!(dcz_from(&server, path, &old), plain);
    assert_eq!(dcz_from(&server, path, &new), plain);
    assert!(
        v1_url != v2_url && server.raw(v1_url, &[]).1 == old.bytes()[..],
        "v1 still served"
    );
}

/// Two instances started with the same `--dictionary-dir`: what one learns, the other
/// serves and uses within its polling interval.
#[tokio::test]
async fn instances_sharing_a_directory_share_what_they_learn() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("demo-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.to_str().unwrap();
    let args = ["--dictionary-dir", dir_arg, "--dictionary-poll", "0.5"];
    let (a, b) = (Server::start(&args), Server::start(&args));
    a.visit_api(0, 1000);
    let learned = a.learned(1);
    let started = Instant::now();
    let loaded = b.learned(1);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(loaded["sha256"], learned["sha256"]);
    let b_stats = b.stats();
    assert_eq!(b_stats["dictionaries"]["learned"]["loaded"], 1, "{b_stats}");
    assert_eq!(b_stats["dictionaries"]["learned"]["builds"], 0, "{b_stats}");
    let url = learned["url"].as_str().unwrap();
    let bytes = b.identity(url);
    assert_eq!(bytes, a.identity(url));
    let dictionary = dictionary_of(&bytes, "/api/items*");
    let path = "/api/items?n=5&start=123123123";
    assert_eq!(dcz_from(&b, path, &dictionary), b.identity(path));
    let files: Vec<_> = walk(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    drop((a, b));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
