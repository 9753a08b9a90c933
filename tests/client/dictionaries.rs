//! `DecompressionLayer::dictionaries` (RFC 9842, client side) against a hand-written server
//! on loopback: it learns a dictionary, offers it only where it matches, decodes `dcz` and
//! `dcb` with it, and refuses what a hostile server sends (another dictionary's hash, a
//! dictionary coding nobody offered, a truncated header). Responses that must not become
//! dictionaries (no-store, cross-origin, too large, dropped early) are not stored.

use std::convert::Infallible;
use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::extract::Request as AxumRequest;
use axum::response::{IntoResponse, Response as AxumResponse};
use axum::routing::get;
use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING};
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, StreamBody};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::{Layer, Service, ServiceExt, service_fn};
use tower_gzip::client::ClientDictionaryStore;
use tower_gzip::codec::OneShot;
use tower_gzip::codec::{DecodeError, DecodeErrorKind};
use tower_gzip::decompression::DecompressionLayer;
use tower_gzip::dictionary::Dictionary;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::{BoxError, ContentCoding};

use crate::common::server::Loopback;

/// The dictionary the server hands out at `/dict` (for `/api/*`).
fn dictionary_bytes() -> &'static Bytes {
    static BYTES: OnceLock<Bytes> = OnceLock::new();
    BYTES.get_or_init(|| {
        let items: Vec<_> = (0..40)
            .map(|i| serde_json::json!({"id": i, "name": format!("widget {i}"), "price": {"amount": i * 3, "currency": "EUR"}, "tags": ["new", "sale"]}))
            .collect();
        Bytes::from(serde_json::to_vec(&items).unwrap())
    })
}

fn dictionary() -> Dictionary {
    Dictionary::new(dictionary_bytes().clone(), UseAsDictionary::new("/api/*")).unwrap()
}

/// Another dictionary, for a server that compresses with the wrong one.
fn other_dictionary() -> Dictionary {
    Dictionary::new(
        Bytes::from_static(b"{\"something\":\"else entirely\"}"),
        UseAsDictionary::new("/api/*"),
    )
    .unwrap()
}

fn items_body(start: u64) -> Bytes {
    let items: Vec<_> = (start..start + 5)
        .map(|i| serde_json::json!({"id": i, "name": format!("widget {i}"), "price": {"amount": i * 3, "currency": "EUR"}, "tags": ["new"]}))
        .collect();
    Bytes::from(serde_json::to_vec(&items).unwrap())
}

/// `body` compressed against `dictionary` as `coding` (`dcz` or `dcb`).
fn dict_encoded(coding: ContentCoding, dictionary: &Dictionary, body: &[u8]) -> Bytes {
    let mut wire = BytesMut::new();
    OneShot::new(coding)
        .dictionary(dictionary)
        .encode(body, &mut wire)
        .unwrap();
    wire.freeze()
}

fn dcz(dictionary: &Dictionary, body: &[u8]) -> Bytes {
    dict_encoded(ContentCoding::Dcz, dictionary, body)
}

#[cfg(feature = "br")]
fn dcb(dictionary: &Dictionary, body: &[u8]) -> Bytes {
    dict_encoded(ContentCoding::Dcb, dictionary, body)
}

fn dictionary_response(use_as: &str, cache_control: &str, body: Bytes) -> AxumResponse {
    (
        [
            ("use-as-dictionary", use_as),
            ("cache-control", cache_control),
        ],
        body,
    )
        .into_response()
}

/// What the request said about dictionaries, as the server saw it.
fn seen(headers: &HeaderMap) -> String {
    let get = |name: &str| {
        headers
            .get(name)
            .map_or("-", |v| v.to_str().unwrap())
            .to_owned()
    };
    format!(
        "accept-encoding: {}\navailable-dictionary: {}\ndictionary-id: {}",
        get("accept-encoding"),
        get("available-dictionary"),
        get("dictionary-id")
    )
}

/// `/api/items?start=S`: `dcz` (or `dcb` on `/api/dcb`) when the request names the
/// dictionary and offers the coding, else identity; `x-coding` says which.
async fn items(request: AxumRequest) -> AxumResponse {
    let start: u64 = request
        .uri()
        .query()
        .and_then(|q| q.strip_prefix("start="))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let plain = items_body(start);
    let headers = request.headers();
    let named = headers.get("available-dictionary") == Some(&dictionary().available_dictionary());
    let offers = |coding: &str| {
        headers
            .get(ACCEPT_ENCODING)
            .is_some_and(|v| v.to_str().unwrap().split(',').any(|t| t.trim() == coding))
    };
    let want_dcb = request.uri().path() == "/api/dcb";
    match (named, want_dcb) {
        (true, false) if offers("dcz") => (
            [
                (CONTENT_ENCODING, "dcz"),
                (http::HeaderName::from_static("x-coding"), "dcz"),
            ],
            dcz(&dictionary(), &plain),
        )
            .into_response(),
        #[cfg(feature = "br")]
        (true, true) if offers("dcb") => (
            [
                (CONTENT_ENCODING, "dcb"),
                (http::HeaderName::from_static("x-coding"), "dcb"),
            ],
            dcb(&dictionary(), &plain),
        )
            .into_response(),
        _ => ([("x-coding", "identity")], plain).into_response(),
    }
}

fn app() -> Router {
    let d = r#"match="/api/*", id="api-v1""#;
    Router::new()
        .route(
            "/dict",
            get(move || async move {
                dictionary_response(d, "max-age=3600", dictionary_bytes().clone())
            }),
        )
        .route(
            "/dict-no-store",
            get(move || async move {
                dictionary_response(d, "no-store, max-age=3600", dictionary_bytes().clone())
            }),
        )
        .route(
            "/dict-no-lifetime",
            get(move || async move {
                ([("use-as-dictionary", d)], dictionary_bytes().clone()).into_response()
            }),
        )
        .route(
            "/dict-cross-origin",
            get(|| async {
                dictionary_response(
                    r#"match="http://elsewhere.test/api/*""#,
                    "max-age=3600",
                    dictionary_bytes().clone(),
                )
            }),
        )
        .route(
            "/dict-large",
            get(move || async move {
                dictionary_response(d, "max-age=3600", Bytes::from(vec![b'x'; 64 << 10]))
            }),
        )
        .route(
            "/dict-gzip",
            get(move || async move {
                let wire = crate::common::gzip(dictionary_bytes());
                (
                    [
                        ("use-as-dictionary", d),
                        ("cache-control", "max-age=3600"),
                        ("content-encoding", "gzip"),
                    ],
                    wire,
                )
                    .into_response()
            }),
        )
        .route("/api/items", get(items))
        .route("/api/dcb", get(items))
        .route(
            "/api/echo",
            get(|r: AxumRequest| async move { seen(r.headers()) }),
        )
        .route(
            "/other/echo",
            get(|r: AxumRequest| async move { seen(r.headers()) }),
        )
        .route(
            "/api/wrong-hash",
            get(|| async {
                (
                    [(CONTENT_ENCODING, "dcz")],
                    dcz(&other_dictionary(), &items_body(1)),
                )
            }),
        )
        .route(
            "/other/unoffered",
            get(|| async {
                (
                    [(CONTENT_ENCODING, "dcz")],
                    dcz(&dictionary(), &items_body(1)),
                )
            }),
        )
        .route(
            "/api/truncated",
            get(|| async {
                let wire = dcz(&dictionary(), &items_body(1));
                ([(CONTENT_ENCODING, "dcz")], wire.slice(..20))
            }),
        )
}

type Client_ = tower::util::BoxCloneService<
    Request<Empty<Bytes>>,
    Response<tower_gzip::decompression::DecompressionBody<hyper::body::Incoming>>,
    BoxError,
>;

fn client(store: &ClientDictionaryStore) -> Client_ {
    let http = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let svc = DecompressionLayer::new()
        .dictionaries(store.clone())
        .layer(http)
        .map_err(BoxError::from);
    tower::util::BoxCloneService::new(svc)
}

struct Fetched {
    status: StatusCode,
    headers: HeaderMap,
    body: Result<Bytes, BoxError>,
}

async fn fetch(client: &Client_, url: &str) -> Fetched {
    let request = Request::get(url).body(Empty::new()).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(30), client.clone().oneshot(request))
        .await
        .expect("timed out")
        .unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map(|c| c.to_bytes());
    Fetched {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

fn decode_error(fetched: Fetched) -> DecodeError {
    let err = fetched.body.expect_err("the body must fail");
    err.downcast_ref::<DecodeError>()
        .unwrap_or_else(|| panic!("not a DecodeError: {err}"))
        .clone()
}

#[tokio::test]
async fn learns_offers_where_it_matches_and_decodes_dcz() {
    let server = Loopback::serve(app()).await;
    let store = ClientDictionaryStore::new();
    let client = client(&store);

    // Before the dictionary: nothing offered, no dcz/dcb in Accept-Encoding.
    let echo = fetch(&client, &server.url("/api/echo")).await;
    let echo = String::from_utf8(echo.body.unwrap().to_vec()).unwrap();
    assert!(echo.contains("available-dictionary: -"), "{echo}");
    assert!(!echo.contains("dcz"), "{echo}");

    let dict = fetch(&client, &server.url("/dict")).await;
    assert_eq!(dict.status, StatusCode::OK);
    assert_eq!(dict.body.unwrap(), dictionary_bytes());
    assert_eq!(store.stats().entries, 1);
    assert!(store.contains(&dictionary().hash()));

    let echo = fetch(&client, &server.url("/api/echo")).await;
    let echo = String::from_utf8(echo.body.unwrap().to_vec()).unwrap();
    let available = dictionary().available_dictionary();
    assert!(
        echo.contains(&format!(
            "available-dictionary: {}",
            available.to_str().unwrap()
        )),
        "{echo}"
    );
    assert!(echo.contains(r#"dictionary-id: "api-v1""#), "{echo}");
    #[cfg(all(feature = "dcz", feature = "dcb"))]
    assert!(
        echo.contains("accept-encoding: zstd, br, gzip, deflate, dcz, dcb"),
        "{echo}"
    );

    // A URL the pattern does not match: exactly as without a store.
    let other = fetch(&client, &server.url("/other/echo")).await;
    let other = String::from_utf8(other.body.unwrap().to_vec()).unwrap();
    assert!(other.contains("available-dictionary: -"), "{other}");
    assert!(!other.contains("dcz"), "{other}");

    for start in [7, 1_000, 424_242] {
        let reply = fetch(&client, &server.url(&format!("/api/items?start={start}"))).await;
        assert_eq!(reply.headers["x-coding"], "dcz");
        assert!(!reply.headers.contains_key(CONTENT_ENCODING));
        assert_eq!(reply.body.unwrap(), items_body(start));
    }
    assert!(store.stats().offered >= 4, "{:?}", store.stats());
}

#[cfg(feature = "br")]
#[tokio::test]
async fn decodes_dcb_with_the_offered_dictionary() {
    let server = Loopback::serve(app()).await;
    let store = ClientDictionaryStore::new();
    let client = client(&store);
    fetch(&client, &server.url("/dict")).await.body.unwrap();
    let reply = fetch(&client, &server.url("/api/dcb?start=99")).await;
    assert_eq!(reply.headers["x-coding"], "dcb");
    assert_eq!(reply.body.unwrap(), items_body(99));
}

#[tokio::test]
async fn a_dictionary_sent_compressed_is_stored_decoded() {
    let server = Loopback::serve(app()).await;
    let store = ClientDictionaryStore::new();
    let client = client(&store);
    assert_eq!(
        fetch(&client, &server.url("/dict-gzip"))
            .await
            .body
            .unwrap(),
        dictionary_bytes()
    );
    assert!(store.contains(&dictionary().hash()));
    let reply = fetch(&client, &server.url("/api/items?start=3")).await;
    assert_eq!(reply.headers["x-coding"], "dcz");
    assert_eq!(reply.body.unwrap(), items_body(3));
}

#[tokio::test]
async fn a_hostile_server_gets_typed_errors_and_leaves_no_dirty_state() {
    let server = Loopback::serve(app()).await;
    let store = ClientDictionaryStore::new();
    let client = client(&store);
    fetch(&client, &server.url("/dict")).await.body.unwrap();

    let wrong = fetch(&client, &server.url("/api/wrong-hash")).await;
    assert_eq!(
        decode_error(wrong).kind(),
        DecodeErrorKind::DictionaryMismatch
    );

    // /other/* matches no dictionary, so none was offered: dcz is an error.
    let unoffered = fetch(&client, &server.url("/other/unoffered")).await;
    assert_eq!(
        decode_error(unoffered).kind(),
        DecodeErrorKind::DictionaryMismatch
    );

    let truncated = fetch(&client, &server.url("/api/truncated")).await;
    assert_eq!(decode_error(truncated).kind(), DecodeErrorKind::Truncated);

    // Pooled decoders that saw those errors were not handed out dirty.
    for start in 0..20 {
        let reply = fetch(&client, &server.url(&format!("/api/items?start={start}"))).await;
        assert_eq!(reply.body.unwrap(), items_body(start));
    }
}

#[tokio::test]
async fn a_layer_without_a_store_leaves_dictionary_codings_alone() {
    let server = Loopback::serve(app()).await;
    let http = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let mut client = DecompressionLayer::new().layer(http);
    let request = Request::get(server.url("/other/unoffered"))
        .body(Empty::new())
        .unwrap();
    let reply = client.ready().await.unwrap().call(request).await.unwrap();
    // Passed through untouched, as tower-http does with codings it does not know.
    assert_eq!(reply.headers()[CONTENT_ENCODING], "dcz");
    let wire = reply.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(wire, dcz(&dictionary(), &items_body(1)));
}

#[tokio::test]
async fn responses_that_must_not_become_dictionaries() {
    let server = Loopback::serve(app()).await;
    let store = ClientDictionaryStore::builder()
        .max_entry_bytes(32 << 10)
        .build();
    let client = client(&store);
    for path in [
        "/dict-no-store",
        "/dict-no-lifetime",
        "/dict-cross-origin",
        "/dict-large",
    ] {
        let reply = fetch(&client, &server.url(path)).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        reply.body.unwrap();
        assert_eq!(store.stats().entries, 0, "{path} was stored");
    }
    // Only the too-large one got as far as its body.
    assert_eq!(store.stats().not_stored, 1);
    let echo = fetch(&client, &server.url("/api/echo")).await;
    let echo = String::from_utf8(echo.body.unwrap().to_vec()).unwrap();
    assert!(echo.contains("available-dictionary: -"), "{echo}");
}

/// A dictionary response whose body the caller drops halfway stores nothing; the same
/// response read to its end is stored.
#[tokio::test]
async fn a_body_dropped_early_stores_nothing() {
    let store = ClientDictionaryStore::new();
    for read_all in [false, true] {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<http_body::Frame<Bytes>, Infallible>>(4);
        let mut rx = Some(rx);
        let svc = service_fn(move |_req: Request<Empty<Bytes>>| {
            let rx = rx.take().unwrap();
            async move {
                let body = StreamBody::new(tokio_stream_from(rx));
                let response = Response::builder()
                    .header("use-as-dictionary", r#"match="/api/*""#)
                    .header(CACHE_CONTROL, "max-age=60")
                    .body(body)
                    .unwrap();
                Ok::<_, Infallible>(response)
            }
        });
        let svc = DecompressionLayer::new()
            .dictionaries(store.clone())
            .layer(svc);
        let request = Request::get("http://h.test/dict")
            .body(Empty::new())
            .unwrap();
        let response = svc.oneshot(request).await.unwrap();
        let mut body = Box::pin(response.into_body());
        let (half, rest) = dictionary_bytes().split_at(100);
        tx.send(Ok(http_body::Frame::data(Bytes::copy_from_slice(half))))
            .await
            .unwrap();
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), half);
        if read_all {
            tx.send(Ok(http_body::Frame::data(Bytes::copy_from_slice(rest))))
                .await
                .unwrap();
            drop(tx);
            assert_eq!(body.collect().await.unwrap().to_bytes(), rest);
            assert!(store.contains(&dictionary().hash()));
        } else {
            drop(body);
            drop(tx);
            assert_eq!(store.stats().entries, 0);
        }
    }
}

/// The receiving half of a channel as a stream of frames.
fn tokio_stream_from<T>(rx: tokio::sync::mpsc::Receiver<T>) -> impl futures_util::Stream<Item = T> {
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|t| (t, rx)) })
}

/// `max-age=1` under tokio's paused clock: offered at once, not after two seconds.
#[tokio::test(start_paused = true)]
async fn an_expired_dictionary_is_no_longer_offered() {
    let store = ClientDictionaryStore::builder()
        .clock(|| tokio::time::Instant::now().into_std())
        .build();
    let svc = service_fn(|req: Request<Empty<Bytes>>| async move {
        let response = if req.uri().path() == "/dict" {
            Response::builder()
                .header("use-as-dictionary", r#"match="/api/*""#)
                .header(CACHE_CONTROL, "max-age=1")
                .body(http_body_util::Full::new(dictionary_bytes().clone()))
        } else {
            Response::builder().body(http_body_util::Full::new(Bytes::from(seen(req.headers()))))
        };
        Ok::<_, Infallible>(response.unwrap())
    });
    let client = DecompressionLayer::new()
        .dictionaries(store.clone())
        .layer(svc);
    let get = |path: &'static str| {
        let client = client.clone();
        async move {
            let request = Request::get(format!("http://h.test{path}"))
                .body(Empty::new())
                .unwrap();
            let body = client.oneshot(request).await.unwrap().into_body();
            String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap()
        }
    };
    get("/dict").await;
    assert!(!get("/api/x").await.contains("available-dictionary: -"));
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(get("/api/x").await.contains("available-dictionary: -"));
    assert_eq!(store.stats().expired, 1);
    assert_eq!(store.stats().entries, 0);
}
