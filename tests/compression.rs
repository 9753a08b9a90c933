//! Behaviour of `CompressionLayer` at the service level: tower `oneshot` against handlers
//! that return full, streamed, stuttering, channel-fed and failing bodies. Every compressed
//! body is decoded with flate2, independently of this crate's decoder.

mod common;

use std::convert::Infallible;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use common::{
    BoxError, ReadyFrames, StutterBody, channel_body, decode, gunzip, inflate, noise, text,
};
use http::header::{
    ACCEPT_ENCODING, ACCEPT_RANGES, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE,
    CONTENT_TYPE, ETAG, VARY,
};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::compression::{CompressionBody, CompressionLayer, DEFAULT_MIN_SIZE};
use tower_gzip::predicate::{DefaultPredicate, Predicate};
use tower_gzip::{CodecPool, CompressionLevel};

/// The most input one `poll_frame` may compress (spec: 64 KiB).
const SLICE: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

#[derive(Clone)]
struct Always;

impl Predicate for Always {
    fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
        true
    }
}

fn get(accept: Option<&str>) -> Request<()> {
    let mut builder = Request::builder().uri("/");
    if let Some(accept) = accept {
        builder = builder.header(ACCEPT_ENCODING, accept);
    }
    builder.body(()).unwrap()
}

fn full(data: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::new(Full::new(data.into()))
}

fn typed(content_type: &str, data: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut res = full(data);
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
    res
}

/// Runs `req` through `layer` around a handler that answers `res`.
async fn respond<P, B>(
    layer: &CompressionLayer<P>,
    req: Request<()>,
    res: Response<B>,
) -> Response<CompressionBody<B>>
where
    P: Predicate,
    B: Body + Send + 'static,
    B::Error: Into<BoxError>,
{
    let mut res = Some(res);
    let svc = layer.layer(service_fn(move |_req: Request<()>| {
        let res = res.take().expect("handler called once");
        async move { Ok::<_, Infallible>(res) }
    }));
    svc.oneshot(req).await.unwrap()
}

struct Collected {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    trailers: Option<HeaderMap>,
}

impl Collected {
    fn encoding(&self) -> Option<&str> {
        self.headers
            .get(CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap())
    }

    fn decoded(&self) -> Vec<u8> {
        decode(self.encoding(), &self.body)
    }

    fn vary_count(&self) -> usize {
        self.headers
            .get_all(VARY)
            .iter()
            .flat_map(|v| v.to_str().unwrap().split(','))
            .filter(|t| t.trim().eq_ignore_ascii_case("accept-encoding"))
            .count()
    }
}

async fn collect<B>(res: Response<CompressionBody<B>>) -> Collected
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let (parts, body) = res.into_parts();
    let collected = body.collect().await.expect("body completes");
    let trailers = collected.trailers().cloned();
    Collected {
        status: parts.status,
        headers: parts.headers,
        body: collected.to_bytes(),
        trailers,
    }
}

async fn round<P, B>(
    layer: &CompressionLayer<P>,
    accept: Option<&str>,
    res: Response<B>,
) -> Collected
where
    P: Predicate,
    B: Body + Send + 'static,
    B::Error: Into<BoxError>,
{
    collect(respond(layer, get(accept), res).await).await
}

fn trailers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(*k, HeaderValue::from_static(v));
    }
    map
}

fn stream_of(
    chunks: Vec<Bytes>,
) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, BoxError>>> {
    StreamBody::new(futures_util::stream::iter(
        chunks.into_iter().map(|c| Ok(Frame::data(c))),
    ))
}

fn private_pool() -> CodecPool {
    CodecPool::builder().max_idle(4).build()
}

// ---------------------------------------------------------------------------------------
// Round trips and negotiation (tower-http's list first)
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn gzip_round_trip() {
    let data = text(4000);
    let out = round(&CompressionLayer::new(), Some("gzip"), full(data.clone())).await;
    assert_eq!(out.status, StatusCode::OK);
    assert_eq!(out.encoding(), Some("gzip"));
    assert!(out.body.len() < data.len() / 2, "gzip should shrink text");
    assert_eq!(gunzip(&out.body), data);
    assert_eq!(out.vary_count(), 1);
}

#[tokio::test]
async fn tower_http_hello_world_with_trailers() {
    // tower-http's `gzip_works`: a 13-byte body with trailers, predicate Always.
    let layer = CompressionLayer::new().compress_when(Always).min_size(0);
    let body = Full::new(Bytes::from_static(b"Hello, World!"))
        .with_trailers(async { Some(Ok(trailers(&[("foo", "bar")]))) });
    let out = round(&layer, Some("gzip"), Response::new(body)).await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), b"Hello, World!");
    assert_eq!(out.trailers.expect("trailers kept")["foo"], "bar");
}

#[tokio::test]
async fn x_gzip_is_answered_with_gzip() {
    let data = text(1000);
    let res = respond(
        &CompressionLayer::new(),
        get(Some("x-gzip")),
        full(data.clone()),
    )
    .await;
    let values: Vec<_> = res.headers().get_all(CONTENT_ENCODING).iter().collect();
    assert_eq!(values, vec![HeaderValue::from_static("gzip")]);
    let out = collect(res).await;
    assert_eq!(gunzip(&out.body), data);
}

#[tokio::test]
async fn deflate_round_trip_is_zlib() {
    let data = text(5000);
    let out = round(
        &CompressionLayer::new(),
        Some("deflate"),
        full(data.clone()),
    )
    .await;
    assert_eq!(out.encoding(), Some("deflate"));
    assert_eq!(inflate(&out.body), data);
}

#[tokio::test]
async fn no_accept_encoding_is_identity_with_vary() {
    let data = text(3000);
    let out = round(&CompressionLayer::new(), None, full(data.clone())).await;
    assert_eq!(out.encoding(), None);
    assert_eq!(&out.body[..], &data[..]);
    assert_eq!(out.vary_count(), 1);
}

#[tokio::test]
async fn negotiation_cases() {
    let cases: &[(&str, Option<&str>)] = &[
        ("GZIP", Some("gzip")),
        ("X-Gzip", Some("gzip")),
        ("Deflate", Some("deflate")),
        ("br", None),
        ("deflate, gzip", Some("gzip")),
        ("gzip, deflate", Some("gzip")),
        ("gzip;q=0.5, deflate;q=0.8", Some("deflate")),
        ("gzip;Q=0.9, deflate;q=0.8", Some("gzip")),
        ("gzip ; q=0.5 , deflate ; q=0.6", Some("deflate")),
        ("gzip;q=0, deflate", Some("deflate")),
        ("gzip;q=0, deflate;q=0", None),
        ("gzip;q=0.001", Some("gzip")),
        ("gzip;q=1.01, deflate;q=0.1", Some("deflate")),
        ("gzip;q=-0.1, deflate;q=0.1", Some("deflate")),
        ("gzip;q=00.5, deflate;q=0.1", Some("deflate")),
        ("gzip;q=0.5000, deflate;q=0.1", Some("deflate")),
        ("gzip;q=.5, deflate;q=0.1", Some("deflate")),
        ("gzip;q=1.000, deflate", Some("gzip")),
        ("*", Some("gzip")),
        ("*;q=0.5, deflate", Some("deflate")),
        ("*, gzip;q=0", Some("deflate")),
        ("identity", None),
        ("identity;q=1, gzip;q=0.5", None),
        ("identity;q=0.5, gzip;q=0.5", Some("gzip")),
        ("br;q=1, gzip;q=0.2", Some("gzip")),
        ("", None),
    ];
    let data = text(2000);
    for &(accept, expected) in cases {
        let out = round(&CompressionLayer::new(), Some(accept), full(data.clone())).await;
        assert_eq!(out.status, StatusCode::OK, "accept-encoding {accept:?}");
        assert_eq!(out.encoding(), expected, "accept-encoding {accept:?}");
        assert_eq!(out.decoded(), data, "accept-encoding {accept:?}");
        assert_eq!(out.vary_count(), 1, "accept-encoding {accept:?}");
    }
}

#[tokio::test]
async fn multiple_accept_encoding_lines_are_merged() {
    let data = text(2000);
    let cases: &[(&[&str], Option<&str>)] = &[
        (&["br", "deflate"], Some("deflate")),
        (&["deflate;q=0.5", "gzip;q=0.7"], Some("gzip")),
        (&["gzip;q=0.5", "deflate;q=0.7"], Some("deflate")),
        (&["gzip;q=0", "deflate"], Some("deflate")),
        (&["identity;q=0", "gzip"], Some("gzip")),
    ];
    for &(lines, expected) in cases {
        let mut req = get(None);
        for line in lines {
            req.headers_mut()
                .append(ACCEPT_ENCODING, HeaderValue::from_static(line));
        }
        let out = collect(respond(&CompressionLayer::new(), req, full(data.clone())).await).await;
        assert_eq!(out.encoding(), expected, "lines {lines:?}");
        assert_eq!(out.decoded(), data);
    }
}

#[tokio::test]
async fn wildcard_and_identity_exclusions() {
    let data = text(2000);
    let layer = CompressionLayer::new();
    // tower-http: `*;q=0` alone and `identity;q=0` alone answer 406 with Vary.
    for accept in [
        "*;q=0",
        "identity;q=0",
        "identity;q=0, gzip;q=0",
        "*;q=0, br",
    ] {
        let out = round(&layer, Some(accept), full(data.clone())).await;
        assert_eq!(out.status, StatusCode::NOT_ACCEPTABLE, "{accept:?}");
        assert_eq!(out.vary_count(), 1, "{accept:?}");
        assert!(out.headers.get(CONTENT_ENCODING).is_none());
        assert_ne!(
            &out.body[..],
            &data[..],
            "406 must not leak the representation"
        );
    }
    // An acceptable coding wins.
    for (accept, coding) in [
        ("*;q=0, gzip", "gzip"),
        ("identity;q=0, gzip", "gzip"),
        ("*;q=0, deflate", "deflate"),
        ("*", "gzip"),
    ] {
        let out = round(&layer, Some(accept), full(data.clone())).await;
        assert_eq!(out.status, StatusCode::OK, "{accept:?}");
        assert_eq!(out.encoding(), Some(coding), "{accept:?}");
        assert_eq!(out.decoded(), data);
    }
}

#[tokio::test]
async fn identity_excluded_small_body_is_still_encoded() {
    // tower-http's `identity_q_zero_with_gzip_picks_gzip` uses a 13-byte body: a client
    // that refuses identity must not get identity just because the body is small.
    let layer = CompressionLayer::new();
    for accept in ["identity;q=0, gzip", "*;q=0, gzip", "gzip, identity;q=0"] {
        let out = round(&layer, Some(accept), full("Hello, World!")).await;
        assert_eq!(out.status, StatusCode::OK, "{accept:?}");
        assert_eq!(out.encoding(), Some("gzip"), "{accept:?}");
        assert_eq!(gunzip(&out.body), b"Hello, World!");
    }
    // Unknown size, ends below min_size.
    let out = round(
        &layer,
        Some("identity;q=0, deflate"),
        Response::new(ReadyFrames::data(["tiny"])),
    )
    .await;
    assert_eq!(out.encoding(), Some("deflate"));
    assert_eq!(inflate(&out.body), b"tiny");
}

#[tokio::test]
async fn not_acceptable_only_for_success() {
    let data = text(2000);
    for status in [StatusCode::NOT_FOUND, StatusCode::INTERNAL_SERVER_ERROR] {
        let mut res = full(data.clone());
        *res.status_mut() = status;
        let out = round(&CompressionLayer::new(), Some("*;q=0"), res).await;
        assert_eq!(out.status, status);
        assert_eq!(out.encoding(), None);
        assert_eq!(&out.body[..], &data[..]);
        assert_eq!(out.vary_count(), 1);
    }
    // The predicate excludes it: no 406 either, and no Vary.
    let out = round(
        &CompressionLayer::new(),
        Some("identity;q=0"),
        typed("image/png", data.clone()),
    )
    .await;
    assert_eq!(out.status, StatusCode::OK);
    assert_eq!(&out.body[..], &data[..]);
}

#[tokio::test]
async fn builder_toggles() {
    let data = text(2000);
    let cases: Vec<(CompressionLayer, &str, Option<&str>)> = vec![
        (
            CompressionLayer::new().no_gzip(),
            "gzip, deflate",
            Some("deflate"),
        ),
        (CompressionLayer::new().no_gzip(), "gzip", None),
        (
            CompressionLayer::new().gzip(false),
            "gzip, deflate",
            Some("deflate"),
        ),
        (CompressionLayer::new().no_deflate(), "deflate", None),
        (
            CompressionLayer::new().deflate(false),
            "gzip, deflate",
            Some("gzip"),
        ),
        (
            CompressionLayer::new().deflate(false),
            "gzip;q=0.1, deflate",
            Some("gzip"),
        ),
        (
            CompressionLayer::new().gzip(false).deflate(false),
            "gzip, deflate",
            None,
        ),
        (
            CompressionLayer::new().no_gzip().gzip(true),
            "gzip",
            Some("gzip"),
        ),
    ];
    for (layer, accept, expected) in cases {
        let out = round(&layer, Some(accept), full(data.clone())).await;
        assert_eq!(out.encoding(), expected, "{accept:?}");
        assert_eq!(out.decoded(), data);
    }
    // Nothing offered and identity refused: 406.
    let layer = CompressionLayer::new().gzip(false).deflate(false);
    let out = round(&layer, Some("gzip, identity;q=0"), full(data.clone())).await;
    assert_eq!(out.status, StatusCode::NOT_ACCEPTABLE);
}

#[tokio::test]
async fn default_layer_equals_new() {
    let data = text(3000);
    let a = round(&CompressionLayer::new(), Some("gzip"), full(data.clone())).await;
    let b = round(
        &CompressionLayer::default(),
        Some("gzip"),
        full(data.clone()),
    )
    .await;
    assert_eq!(a.body, b.body);
    assert_eq!(DEFAULT_MIN_SIZE, 256);
}

// ---------------------------------------------------------------------------------------
// Hard rules
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn never_recompresses() {
    let data = Bytes::from_static(b"already encoded, pretend this is brotli ......");
    for encoding in ["br", "gzip", "identity"] {
        let mut res = full(data.clone());
        res.headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static(encoding));
        let layer = CompressionLayer::new().compress_when(Always).min_size(0);
        let out = round(&layer, Some("gzip"), res).await;
        let values: Vec<_> = out.headers.get_all(CONTENT_ENCODING).iter().collect();
        assert_eq!(values, vec![HeaderValue::from_static(encoding)]);
        assert_eq!(out.body, data);
    }
}

#[tokio::test]
async fn content_range_and_206_not_compressed() {
    let data = text(2000);
    // tower-http's case: Content-Range on a 200.
    let mut res = full(data.clone());
    res.headers_mut()
        .insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    res.headers_mut()
        .insert(CONTENT_RANGE, HeaderValue::from_static("bytes 0-1999/*"));
    let layer = CompressionLayer::new().compress_when(Always);
    let out = round(&layer, Some("gzip"), res).await;
    assert_eq!(out.encoding(), None);
    assert_eq!(out.headers[ACCEPT_RANGES], "bytes");
    assert_eq!(&out.body[..], &data[..]);

    // A 206 without Content-Range (multipart/byteranges).
    let mut res = typed("multipart/byteranges; boundary=x", data.clone());
    *res.status_mut() = StatusCode::PARTIAL_CONTENT;
    let out = round(&layer, Some("gzip"), res).await;
    assert_eq!(out.encoding(), None);
    assert_eq!(&out.body[..], &data[..]);
}

#[tokio::test]
async fn head_gets_vary_but_no_encoding() {
    let data = text(2000);
    let mut res = full(data.clone());
    res.headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(data.len()));
    res.headers_mut()
        .insert(ETAG, HeaderValue::from_static("\"abc\""));
    let mut req = get(Some("gzip"));
    *req.method_mut() = Method::HEAD;
    let res = respond(&CompressionLayer::new(), req, res).await;
    assert_eq!(res.body().size_hint().exact(), Some(data.len() as u64));
    let out = collect(res).await;
    assert_eq!(out.encoding(), None);
    assert_eq!(out.vary_count(), 1);
    assert_eq!(out.headers[CONTENT_LENGTH], data.len().to_string().as_str());
    assert_eq!(out.headers[ETAG], "\"abc\"");

    // HEAD with a refused identity is not turned into a 406 body either way: no encoding.
    let mut req = get(Some("identity;q=0"));
    *req.method_mut() = Method::HEAD;
    let res = respond(&CompressionLayer::new(), req, full(data.clone())).await;
    assert!(res.headers().get(CONTENT_ENCODING).is_none());

    // Excluded by the predicate: no Vary.
    let mut req = get(Some("gzip"));
    *req.method_mut() = Method::HEAD;
    let out = collect(respond(&CompressionLayer::new(), req, typed("image/png", data)).await).await;
    assert_eq!(out.vary_count(), 0);
}

#[tokio::test]
async fn bodiless_statuses_untouched() {
    // 304: Vary (a GET would have varied), no encoding.
    let mut res = Response::new(Empty::<Bytes>::new());
    *res.status_mut() = StatusCode::NOT_MODIFIED;
    res.headers_mut()
        .insert(ETAG, HeaderValue::from_static("\"v1\""));
    let out = round(&CompressionLayer::new().min_size(0), Some("gzip"), res).await;
    assert_eq!(out.status, StatusCode::NOT_MODIFIED);
    assert_eq!(out.encoding(), None);
    assert_eq!(out.vary_count(), 1);
    assert_eq!(out.headers[ETAG], "\"v1\"");
    assert!(out.body.is_empty());

    // 304 of an excluded type: nothing added.
    let mut res = Response::new(Empty::<Bytes>::new());
    *res.status_mut() = StatusCode::NOT_MODIFIED;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("image/jpeg"));
    let out = round(&CompressionLayer::new(), Some("gzip"), res).await;
    assert_eq!(out.vary_count(), 0);

    // 204 and 1xx: left alone, even with a body and predicate Always.
    let layer = CompressionLayer::new().compress_when(Always).min_size(0);
    for status in [
        StatusCode::NO_CONTENT,
        StatusCode::from_u16(103).unwrap(),
        StatusCode::CONTINUE,
    ] {
        let mut res = full(text(1000));
        *res.status_mut() = status;
        let out = round(&layer, Some("gzip"), res).await;
        assert_eq!(out.status, status);
        assert_eq!(out.encoding(), None, "{status}");
        assert_eq!(&out.body[..], &text(1000)[..]);
    }
}

#[tokio::test]
async fn no_transform_respected() {
    let data = text(2000);
    for value in [
        "no-transform",
        "public, No-Transform",
        "max-age=60 ,no-transform ",
    ] {
        let mut res = full(data.clone());
        res.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static(value));
        let layer = CompressionLayer::new().compress_when(Always);
        let out = round(&layer, Some("gzip"), res).await;
        assert_eq!(out.encoding(), None, "{value:?}");
        assert_eq!(&out.body[..], &data[..]);
    }
    // Other directives do not stop compression.
    let mut res = full(data.clone());
    res.headers_mut().insert(
        CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-store"),
    );
    let out = round(&CompressionLayer::new(), Some("gzip"), res).await;
    assert_eq!(out.encoding(), Some("gzip"));
}

// ---------------------------------------------------------------------------------------
// Predicate
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn default_predicate_content_types() {
    let data = text(2000);
    let skipped = [
        "image/png",
        "image/jpeg",
        "IMAGE/WEBP",
        "audio/mpeg",
        "video/mp4",
        "application/grpc",
        "application/grpc+proto",
        "application/zip",
        "application/gzip",
        "font/woff2",
        "application/epub+zip",
    ];
    for ct in skipped {
        let out = round(
            &CompressionLayer::new(),
            Some("gzip"),
            typed(ct, data.clone()),
        )
        .await;
        assert_eq!(out.encoding(), None, "{ct}");
        assert_eq!(out.vary_count(), 0, "{ct}: excluded responses do not vary");
        assert_eq!(&out.body[..], &data[..]);
    }
    let compressed = [
        "image/svg+xml",
        "image/svg+xml; charset=utf-8",
        "application/grpc-web",
        "application/grpc-web+proto",
        "text/event-stream",
        "text/html; charset=utf-8",
        "application/json",
        "application/javascript",
    ];
    for ct in compressed {
        let out = round(
            &CompressionLayer::new(),
            Some("gzip"),
            typed(ct, data.clone()),
        )
        .await;
        assert_eq!(out.encoding(), Some("gzip"), "{ct}");
        assert_eq!(gunzip(&out.body), data);
    }
}

#[tokio::test]
async fn custom_predicate_every_other_response() {
    #[derive(Clone, Default)]
    struct EveryOther(Arc<AtomicU64>);
    impl Predicate for EveryOther {
        fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
            self.0.fetch_add(1, Ordering::Relaxed) % 2 == 1
        }
    }
    let layer = CompressionLayer::new().compress_when(EveryOther::default());
    let data = text(2000);
    let first = round(&layer, Some("gzip"), full(data.clone())).await;
    assert_eq!(first.encoding(), None);
    assert_eq!(&first.body[..], &data[..]);
    let second = round(&layer, Some("gzip"), full(data.clone())).await;
    assert_eq!(second.encoding(), Some("gzip"));
    assert_eq!(gunzip(&second.body), data);
}

#[tokio::test]
async fn compress_when_does_not_override_hard_rules_or_min_size() {
    let data = text(100);
    let layer = CompressionLayer::new().compress_when(Always);
    // min_size still applies.
    let out = round(&layer, Some("gzip"), full(data.clone())).await;
    assert_eq!(out.encoding(), None);
    // image skipped by default predicate, compressed with Always.
    let big = text(2000);
    let out = round(&layer, Some("gzip"), typed("image/png", big.clone())).await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), big);
    // Predicate composition: default AND not json.
    let not_json = |_: StatusCode, _: http::Version, h: &HeaderMap, _: &http::Extensions| {
        h.get(CONTENT_TYPE).is_none_or(|v| v != "application/json")
    };
    let layer = CompressionLayer::new().compress_when(DefaultPredicate::new().and(not_json));
    let out = round(&layer, Some("gzip"), typed("application/json", big.clone())).await;
    assert_eq!(out.encoding(), None);
    let out = round(&layer, Some("gzip"), typed("text/plain", big.clone())).await;
    assert_eq!(out.encoding(), Some("gzip"));
}

// ---------------------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn min_size_known_sizes() {
    let layer = CompressionLayer::new();
    for (len, compressed) in [
        (0, false),
        (1, false),
        (255, false),
        (256, true),
        (257, true),
    ] {
        let data = text(len);
        let res = respond(&layer, get(Some("gzip")), full(data.clone())).await;
        if !compressed {
            assert_eq!(res.body().size_hint().exact(), Some(len as u64));
        }
        let out = collect(res).await;
        assert_eq!(out.encoding().is_some(), compressed, "len {len}");
        assert_eq!(out.decoded(), data);
        assert_eq!(
            out.vary_count(),
            1,
            "len {len}: Vary whenever the predicate passes"
        );
    }
    let layer = CompressionLayer::new().min_size(1000);
    let out = round(&layer, Some("gzip"), full(text(999))).await;
    assert_eq!(out.encoding(), None);
    let out = round(&layer, Some("gzip"), full(text(1000))).await;
    assert_eq!(out.encoding(), Some("gzip"));
    let layer = CompressionLayer::new().min_size(0);
    let out = round(&layer, Some("gzip"), full("x")).await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), b"x");
}

#[tokio::test]
async fn min_size_from_content_length_header() {
    // Unknown size hint but a Content-Length header below min_size: identity.
    let mut res = Response::new(ReadyFrames::data(["small body"]));
    res.headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from_static("10"));
    let out = round(&CompressionLayer::new(), Some("gzip"), res).await;
    assert_eq!(out.encoding(), None);
    assert_eq!(&out.body[..], b"small body");
    assert_eq!(out.headers[CONTENT_LENGTH], "10");
}

#[tokio::test]
async fn unknown_size_below_min_size_stays_identity() {
    let out = round(
        &CompressionLayer::new(),
        Some("gzip"),
        Response::new(ReadyFrames::data(["abc", "def", "ghi"])),
    )
    .await;
    assert_eq!(out.encoding(), None);
    assert_eq!(&out.body[..], b"abcdefghi");
    assert_eq!(out.vary_count(), 1);

    // Ready, unknown size, above min_size: compressed.
    let data = text(3000);
    let chunks: Vec<Bytes> = data.chunks(100).map(Bytes::copy_from_slice).collect();
    let res = respond(
        &CompressionLayer::new(),
        get(Some("gzip")),
        Response::new(stream_of(chunks)),
    )
    .await;
    assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
    let out = collect(res).await;
    assert_eq!(gunzip(&out.body), data);
}

#[tokio::test]
async fn unknown_size_pending_first_is_compressed() {
    // The body goes pending before min_size is known: stream compressed, even though the
    // total ends up tiny, so streaming is never delayed.
    let out = round(
        &CompressionLayer::new(),
        Some("gzip"),
        Response::new(StutterBody::data(["tiny", " body"])),
    )
    .await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), b"tiny body");
}

#[tokio::test]
async fn size_hint_preserved_for_identity() {
    let msg = "Hello, world!";
    // tower-http's case: no Accept-Encoding.
    let res = respond(&CompressionLayer::new(), get(None), full(msg)).await;
    assert_eq!(res.body().size_hint().exact(), Some(msg.len() as u64));
    // Too small.
    let res = respond(&CompressionLayer::new(), get(Some("gzip")), full(msg)).await;
    assert_eq!(res.body().size_hint().exact(), Some(msg.len() as u64));
    // Excluded type, large.
    let big = text(100_000);
    let res = respond(
        &CompressionLayer::new(),
        get(Some("gzip")),
        typed("video/mp4", big.clone()),
    )
    .await;
    assert_eq!(res.body().size_hint().exact(), Some(big.len() as u64));
    // Identity chosen by the client, large.
    let res = respond(&CompressionLayer::new(), get(Some("br")), full(big.clone())).await;
    assert_eq!(res.body().size_hint().exact(), Some(big.len() as u64));
    assert_eq!(collect(res).await.body.len(), big.len());
}

// ---------------------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn vary_is_merged_not_duplicated() {
    let data = text(2000);
    let cases: &[(&[&str], usize)] = &[
        (&["accept-encoding"], 0),
        (&["Accept-Encoding"], 0),
        (&["origin, ACCEPT-ENCODING"], 0),
        (&["origin", " accept-encoding "], 0),
        (&["*"], 0),
        (&["origin, *"], 0),
        (&["origin"], 1),
        (&["accept-encodings"], 1),
    ];
    for &(existing, added) in cases {
        for accept in [Some("gzip"), None] {
            let mut res = full(data.clone());
            for v in existing {
                res.headers_mut().append(VARY, HeaderValue::from_static(v));
            }
            let out = round(&CompressionLayer::new(), accept, res).await;
            let values: Vec<_> = out.headers.get_all(VARY).iter().collect();
            assert_eq!(
                values.len(),
                existing.len() + added,
                "{existing:?} / {accept:?}: {values:?}"
            );
            for v in existing {
                assert!(values.iter().any(|x| x == v), "{v:?} kept");
            }
            let star = existing.iter().any(|v| v.contains('*'));
            assert_eq!(out.vary_count(), usize::from(!star), "{existing:?}");
        }
    }
}

#[tokio::test]
async fn encoded_response_headers() {
    let data = text(3000);
    for (etag, expected) in [
        ("\"abc\"", "W/\"abc\""),
        ("W/\"abc\"", "W/\"abc\""),
        ("\"\"", "W/\"\""),
    ] {
        let mut res = full(data.clone());
        let h = res.headers_mut();
        h.insert(ETAG, HeaderValue::from_static(etag));
        h.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        h.insert(CONTENT_LENGTH, HeaderValue::from(data.len()));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        let res = respond(&CompressionLayer::new(), get(Some("gzip")), res).await;
        let h = res.headers();
        assert_eq!(h[CONTENT_ENCODING], "gzip");
        assert_eq!(h[ETAG], expected);
        assert!(!h.contains_key(ACCEPT_RANGES), "Accept-Ranges stripped");
        assert!(
            !h.contains_key(CONTENT_LENGTH),
            "stale Content-Length removed"
        );
        assert_eq!(h[CONTENT_TYPE], "text/plain");
        let out = collect(res).await;
        assert_eq!(gunzip(&out.body), data);
    }
    // Identity: ETag and Accept-Ranges untouched.
    let mut res = full(data.clone());
    res.headers_mut()
        .insert(ETAG, HeaderValue::from_static("\"abc\""));
    res.headers_mut()
        .insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let out = round(&CompressionLayer::new(), Some("br"), res).await;
    assert_eq!(out.headers[ETAG], "\"abc\"");
    assert_eq!(out.headers[ACCEPT_RANGES], "bytes");
}

#[tokio::test]
async fn one_shot_reports_exact_size() {
    for data in [text(300), text(10_000), text(SLICE)] {
        let res = respond(
            &CompressionLayer::new(),
            get(Some("gzip")),
            full(data.clone()),
        )
        .await;
        let hint = res.body().size_hint().exact();
        let out = collect(res).await;
        assert_eq!(hint, Some(out.body.len() as u64), "{} bytes", data.len());
        assert_eq!(gunzip(&out.body), data);
    }
    // A streamed (large) body has no exact size and no Content-Length.
    let data = text(SLICE + 1);
    let mut res = full(data.clone());
    res.headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(data.len()));
    let res = respond(&CompressionLayer::new(), get(Some("gzip")), res).await;
    assert_eq!(res.body().size_hint().exact(), None);
    assert!(!res.headers().contains_key(CONTENT_LENGTH));
    assert_eq!(gunzip(&collect(res).await.body), data);
}

#[tokio::test]
async fn error_page_is_compressed_too() {
    let data = text(2000);
    let mut res = full(data.clone());
    *res.status_mut() = StatusCode::NOT_FOUND;
    let out = round(&CompressionLayer::new(), Some("gzip"), res).await;
    assert_eq!(out.status, StatusCode::NOT_FOUND);
    assert_eq!(gunzip(&out.body), data);
}

// ---------------------------------------------------------------------------------------
// Trailers
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn trailers_with_empty_body() {
    for min_size in [0, DEFAULT_MIN_SIZE] {
        let body = Empty::<Bytes>::new().with_trailers(async {
            Some(Ok(trailers(&[
                ("grpc-status", "0"),
                ("grpc-message", "OK"),
            ])))
        });
        let layer = CompressionLayer::new()
            .compress_when(Always)
            .min_size(min_size);
        let out = round(&layer, Some("gzip"), Response::new(body)).await;
        let t = out.trailers.clone().expect("trailers kept");
        assert_eq!(t["grpc-status"], "0");
        assert_eq!(t["grpc-message"], "OK");
        assert!(out.decoded().is_empty(), "min_size {min_size}");
    }
    // Unknown size, empty, trailers only.
    let body = ReadyFrames::new([Ok(Frame::trailers(trailers(&[("x-t", "1")])))]);
    let out = round(&CompressionLayer::new(), Some("gzip"), Response::new(body)).await;
    assert!(out.decoded().is_empty());
    assert_eq!(out.trailers.expect("trailers")["x-t"], "1");
}

#[tokio::test]
async fn trailers_with_streamed_body() {
    // tower-http's case (ready chunks, unknown size, small), with min_size 0.
    let body = stream_of(vec!["chunk1".into(), "chunk2".into(), "chunk3".into()])
        .with_trailers(async { Some(Ok(trailers(&[("grpc-status", "0")]))) });
    let layer = CompressionLayer::new().compress_when(Always).min_size(0);
    let out = round(&layer, Some("gzip"), Response::new(body)).await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), b"chunk1chunk2chunk3");
    assert_eq!(out.trailers.expect("trailers")["grpc-status"], "0");

    // A stuttering body (the streaming path) with trailers.
    let data = text(5000);
    for accept in ["gzip", "deflate"] {
        let mut frames: Vec<Frame<Bytes>> = data
            .chunks(700)
            .map(|c| Frame::data(Bytes::copy_from_slice(c)))
            .collect();
        frames.push(Frame::trailers(trailers(&[("grpc-status", "0")])));
        let body = StutterBody::new(frames);
        let out = round(&CompressionLayer::new(), Some(accept), Response::new(body)).await;
        assert_eq!(out.encoding(), Some(accept));
        assert_eq!(out.decoded(), data);
        assert_eq!(out.trailers.expect("trailers")["grpc-status"], "0");
    }

    // A large known-size body with trailers (streamed from the start).
    let big = text(200_000);
    let body = Full::new(Bytes::from(big.clone()))
        .with_trailers(async { Some(Ok(trailers(&[("done", "yes")]))) });
    let out = round(&CompressionLayer::new(), Some("gzip"), Response::new(body)).await;
    assert_eq!(gunzip(&out.body), big);
    assert_eq!(out.trailers.expect("trailers")["done"], "yes");
}

#[tokio::test]
async fn trailers_with_grpc_web_content_type() {
    let data = text(1000);
    let body = Full::new(Bytes::from(data.clone()))
        .with_trailers(async { Some(Ok(trailers(&[("grpc-status", "0")]))) });
    let mut res = Response::new(body);
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/grpc-web+proto"),
    );
    let out = round(&CompressionLayer::new(), Some("gzip"), res).await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), data);
    assert_eq!(out.trailers.expect("trailers")["grpc-status"], "0");
}

#[tokio::test]
async fn identity_trailers_pass_through() {
    let body = ReadyFrames::new([
        Ok(Frame::data(Bytes::from_static(b"small"))),
        Ok(Frame::trailers(trailers(&[("a", "b")]))),
    ]);
    let out = round(&CompressionLayer::new(), Some("gzip"), Response::new(body)).await;
    assert_eq!(out.encoding(), None);
    assert_eq!(&out.body[..], b"small");
    assert_eq!(out.trailers.expect("trailers")["a"], "b");
}

#[tokio::test]
async fn one_shot_with_trailers_does_not_claim_exact_size() {
    // HTTP/1.1 cannot send trailers with Content-Length. A small ready body with trailers
    // that is compressed in one go must keep a non-exact size, or hyper switches to
    // Content-Length and drops the trailers.
    for min_size in [0, DEFAULT_MIN_SIZE] {
        let data = if min_size == 0 { text(100) } else { text(1000) };
        let body = ReadyFrames::new([
            Ok(Frame::data(Bytes::from(data.clone()))),
            Ok(Frame::trailers(trailers(&[("x-checksum", "1")]))),
        ]);
        let layer = CompressionLayer::new().min_size(min_size);
        let res = respond(&layer, get(Some("gzip")), Response::new(body)).await;
        assert_eq!(res.body().size_hint().exact(), None, "min_size {min_size}");
        let out = collect(res).await;
        assert_eq!(out.decoded(), data);
        assert_eq!(out.trailers.expect("trailers")["x-checksum"], "1");
    }
    // Kept identity because small: same rule.
    let body = ReadyFrames::new([
        Ok(Frame::data(Bytes::from_static(b"tiny"))),
        Ok(Frame::trailers(trailers(&[("x-checksum", "1")]))),
    ]);
    let res = respond(
        &CompressionLayer::new(),
        get(Some("gzip")),
        Response::new(body),
    )
    .await;
    assert_eq!(res.body().size_hint().exact(), None);
}

// ---------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------

/// Decodes a gzip stream incrementally: `feed` returns what became decodable.
struct Incremental {
    decoder: flate2::write::GzDecoder<Vec<u8>>,
    seen: usize,
}

impl Incremental {
    fn new() -> Self {
        Incremental {
            decoder: flate2::write::GzDecoder::new(Vec::new()),
            seen: 0,
        }
    }

    fn feed(&mut self, data: &[u8]) -> Vec<u8> {
        self.decoder.write_all(data).unwrap();
        self.decoder.flush().unwrap();
        let out = self.decoder.get_ref()[self.seen..].to_vec();
        self.seen = self.decoder.get_ref().len();
        out
    }

    fn total(&self) -> usize {
        self.decoder.get_ref().len()
    }
}

#[tokio::test]
async fn each_frame_is_flushed_when_the_producer_waits() {
    for accept in ["gzip", "text/event-stream"] {
        let (tx, body) = channel_body();
        let mut res = Response::new(body);
        res.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        let accept = if accept == "gzip" {
            "gzip"
        } else {
            "gzip;q=0.9"
        };
        tx.data("data: first\n\n");
        let res = respond(&CompressionLayer::new(), get(Some(accept)), res).await;
        assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
        let mut body = res.into_body();
        let mut dec = Incremental::new();
        for i in 0..5 {
            if i > 0 {
                tx.data(format!("data: event {i}\n\n"));
            }
            let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
                .await
                .expect("a frame without waiting for the end")
                .expect("not the end")
                .expect("no error");
            let data = frame.into_data().expect("data frame");
            let got = dec.feed(&data);
            let expected = if i == 0 {
                "data: first\n\n".to_string()
            } else {
                format!("data: event {i}\n\n")
            };
            assert_eq!(String::from_utf8(got).unwrap(), expected, "event {i}");
        }
        drop(tx);
        let mut rest = Vec::new();
        while let Some(frame) = body.frame().await {
            rest.extend_from_slice(&frame.unwrap().into_data().unwrap());
        }
        assert!(dec.feed(&rest).is_empty());
        dec.decoder.try_finish().unwrap();
    }
}

#[tokio::test]
async fn huge_frame_is_split_across_polls() {
    let data = noise(1024 * 1024, 7);
    // Known size (streamed from the start), unknown size (read ahead whole), and unknown
    // size with an accurate `is_end_stream` (`map_frame` drops the exact size hint).
    for (known, case) in [(true, "full"), (false, "ready"), (false, "map_frame")] {
        let layer = CompressionLayer::new();
        let res = match case {
            "full" => respond(&layer, get(Some("gzip")), full(data.clone()))
                .await
                .map(BodyExt::boxed_unsync),
            "ready" => {
                let body = ReadyFrames::data([data.clone()]);
                respond(&layer, get(Some("gzip")), Response::new(body))
                    .await
                    .map(BodyExt::boxed_unsync)
            }
            _ => {
                let body = Full::new(Bytes::from(data.clone())).map_frame(|f| f);
                assert_eq!(body.size_hint().exact(), None);
                respond(&layer, get(Some("gzip")), Response::new(body))
                    .await
                    .map(BodyExt::boxed_unsync)
            }
        };
        let known = format!("{known} {case}");
        let mut body = res.into_body();
        let mut dec = Incremental::new();
        let mut frames = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.unwrap().into_data().unwrap();
            frames += 1;
            // Input behind the output so far is at most one slice per poll that returned it.
            dec.feed(&frame);
            assert!(
                dec.total() <= frames * SLICE,
                "known {known}: after {frames} frames {} bytes decoded",
                dec.total()
            );
            assert!(frames <= 200, "bounded");
        }
        assert!(
            frames >= 16,
            "known {known}: only {frames} frames for 1 MiB"
        );
        dec.decoder.try_finish().unwrap();
        assert_eq!(dec.decoder.get_ref().len(), data.len());
        assert!(dec.decoder.get_ref() == &data, "known {known}");
    }
}

#[tokio::test]
async fn a_single_poll_compresses_at_most_one_slice() {
    // Poll by hand: each Ready frame of a compressible 1 MiB body is followed by counting
    // how much the decoded output grew; a Pending with a self-wake is allowed in between.
    let data = text(1024 * 1024);
    let res = respond(
        &CompressionLayer::new(),
        get(Some("gzip")),
        full(data.clone()),
    )
    .await;
    let mut body = std::pin::pin!(res.into_body());
    let mut dec = Incremental::new();
    let mut polls = 0usize;
    let mut frames = 0usize;
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    loop {
        polls += 1;
        assert!(polls < 10_000, "bounded");
        match body.as_mut().poll_frame(&mut cx) {
            std::task::Poll::Ready(Some(frame)) => {
                frames += 1;
                dec.feed(&frame.unwrap().into_data().unwrap());
                // Sync flushes are not forced here, so decoded growth may lag; it can
                // never exceed the input compressed across all polls so far.
                assert!(
                    dec.total() <= polls * SLICE,
                    "{} after {polls}",
                    dec.total()
                );
            }
            std::task::Poll::Ready(None) => break,
            std::task::Poll::Pending => {}
        }
    }
    assert!(polls >= 16, "1 MiB needs at least 16 polls, took {polls}");
    assert!(frames >= 1);
    dec.decoder.try_finish().unwrap();
    assert!(dec.decoder.get_ref() == &data);
}

#[tokio::test]
async fn streaming_round_trips_many_shapes() {
    let data = text(300_000);
    for chunk in [1, 7, 1000, 65_536, 100_000] {
        for accept in ["gzip", "deflate"] {
            let chunks: Vec<Bytes> = data.chunks(chunk).map(Bytes::copy_from_slice).collect();
            let out = round(
                &CompressionLayer::new(),
                Some(accept),
                Response::new(stream_of(chunks)),
            )
            .await;
            assert_eq!(out.encoding(), Some(accept));
            assert!(out.decoded() == data, "chunk {chunk} {accept}");
        }
    }
    // Stuttering, with empty frames in between.
    let frames = ["", "hello ", "", "", "world", ""];
    let out = round(
        &CompressionLayer::new(),
        Some("gzip"),
        Response::new(StutterBody::data(frames)),
    )
    .await;
    assert_eq!(gunzip(&out.body), b"hello world");
}

// ---------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------

/// States checked out, streaming (zlib-rs) and one-shot (libdeflate) alike.
fn in_use(pool: &CodecPool) -> u64 {
    let stats = pool.stats();
    stats.compressors.in_use() + stats.block_compressors.in_use()
}

#[tokio::test]
async fn codec_returns_to_pool_when_body_ends() {
    let pool = private_pool();
    let layer = CompressionLayer::new().pool(pool.clone());
    // One-shot: back as soon as the response is built.
    let out = round(&layer, Some("gzip"), full(text(1000))).await;
    assert_eq!(gunzip(&out.body), text(1000));
    assert_eq!(in_use(&pool), 0);
    // Streaming: held while streaming, back at the end.
    let (tx, body) = channel_body();
    tx.data(text(1000));
    let res = respond(&layer, get(Some("gzip")), Response::new(body)).await;
    let mut body = res.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(in_use(&pool), 1, "held while streaming");
    drop(tx);
    let mut all = first.to_vec();
    while let Some(f) = body.frame().await {
        all.extend_from_slice(&f.unwrap().into_data().unwrap());
    }
    assert_eq!(
        in_use(&pool),
        0,
        "returned at the end, before the body is dropped"
    );
    assert_eq!(gunzip(&all), text(1000));
    drop(body);
    // The one-shot body used a whole-buffer compressor (libdeflate with the default
    // features), the streamed one a streaming state; each is back on its shelf.
    let stats = pool.stats();
    let (streaming, block) = (stats.compressors, stats.block_compressors);
    assert_eq!(streaming.created + block.created, 2, "{stats:?}");
    assert_eq!(streaming.idle + block.idle, 2, "{stats:?}");
    assert_eq!(streaming.in_use() + block.in_use(), 0);
}

#[tokio::test]
async fn codec_returns_to_pool_when_body_is_dropped() {
    let pool = private_pool();
    let layer = CompressionLayer::new().pool(pool.clone());
    let (tx, body) = channel_body();
    tx.data(text(5000));
    let res = respond(&layer, get(Some("deflate")), Response::new(body)).await;
    let mut body = res.into_body();
    let _ = body.frame().await.unwrap().unwrap();
    assert_eq!(in_use(&pool), 1);
    drop(body);
    assert_eq!(in_use(&pool), 0);
    assert!(tx.is_closed(), "inner body dropped too");
    // Dropped before the first poll.
    let res = respond(&layer, get(Some("gzip")), full(text(200_000))).await;
    assert_eq!(in_use(&pool), 1);
    drop(res);
    assert_eq!(in_use(&pool), 0);
    assert_eq!(pool.stats().compressors.discarded, 0);
}

#[tokio::test]
async fn inner_error_mid_stream_reaches_consumer_and_pool_recovers() {
    let pool = CodecPool::builder().max_idle(1).build();
    let layer = CompressionLayer::new().pool(pool.clone());
    for accept in ["gzip", "deflate"] {
        let (tx, body) = channel_body();
        tx.data(noise(10_000, 3));
        let res = respond(&layer, get(Some(accept)), Response::new(body)).await;
        let mut body = res.into_body();
        let first = body.frame().await.unwrap();
        assert!(first.is_ok());
        tx.data(text(3000));
        tx.error("upstream broke");
        let mut saw_error = false;
        for _ in 0..10 {
            match body.frame().await {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    assert!(e.to_string().contains("upstream broke"), "{e}");
                    saw_error = true;
                    break;
                }
                None => break,
            }
        }
        assert!(saw_error, "{accept}: the error reaches the consumer");
        assert_eq!(in_use(&pool), 0, "{accept}: state returned on error");
        assert!(body.frame().await.is_none(), "ends after the error");
        drop(body);

        // The next response reuses the (reset) state and decodes correctly, on both paths.
        let data = text(20_000);
        let out = round(
            &layer,
            Some(accept),
            Response::new(StutterBody::data([data.clone()])),
        )
        .await;
        assert!(out.decoded() == data);
        let out = round(&layer, Some(accept), full(data.clone())).await;
        assert!(out.decoded() == data);
    }
    // Streaming states were reused after each error; one-shot bodies reuse theirs too.
    let stats = pool.stats();
    assert!(stats.compressors.reused >= 3, "{stats:?}");
    assert!(
        stats.compressors.reused + stats.block_compressors.reused >= 4,
        "{stats:?}"
    );
}

#[tokio::test]
async fn error_before_anything_is_sent() {
    let pool = private_pool();
    let layer = CompressionLayer::new().pool(pool.clone());
    let body = ReadyFrames::new([
        Ok(Frame::data(Bytes::from_static(b"partial"))),
        Err("boom".into()),
    ]);
    let res = respond(&layer, get(Some("gzip")), Response::new(body)).await;
    assert!(res.headers().get(CONTENT_ENCODING).is_none());
    let mut body = res.into_body();
    let mut got = Vec::new();
    let mut err = None;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => got.extend_from_slice(&f.into_data().unwrap()),
            Err(e) => {
                err = Some(e.to_string());
                break;
            }
        }
    }
    assert_eq!(err.as_deref(), Some("boom"));
    assert_eq!(got, b"partial");
    assert_eq!(in_use(&pool), 0);
}

// ---------------------------------------------------------------------------------------
// Quality, jitter, stats
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn quality_levels() {
    let data = text(100_000);
    let mut sizes = Vec::new();
    for level in [
        CompressionLevel::Fastest,
        CompressionLevel::Default,
        CompressionLevel::Best,
    ] {
        let layer = CompressionLayer::new().quality(level).pool(private_pool());
        let out = round(&layer, Some("gzip"), full(data.clone())).await;
        assert_eq!(gunzip(&out.body), data);
        sizes.push(out.body.len());
    }
    assert!(
        sizes[0] > sizes[2],
        "Fastest {} vs Best {}",
        sizes[0],
        sizes[2]
    );
    assert!(sizes[0] >= sizes[1], "{sizes:?}");

    // The deflate stream is exactly what flate2 produces at that level (a body over 64 KiB
    // streams through zlib-rs, with no flush when the body never goes pending).
    let small = text(100_000);
    for level in [1, 6, 9] {
        let layer = CompressionLayer::new().quality(CompressionLevel::Precise(level));
        let out = round(&layer, Some("gzip"), full(small.clone())).await;
        let mut reference =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level as u32));
        reference.write_all(&small).unwrap();
        let reference = reference.finish().unwrap();
        assert_eq!(
            &out.body[10..out.body.len() - 8],
            &reference[..],
            "level {level}"
        );
    }
    // Level 0 stores.
    let layer = CompressionLayer::new().quality(CompressionLevel::Precise(0));
    let out = round(&layer, Some("gzip"), full(small.clone())).await;
    assert!(out.body.len() > small.len());
    assert_eq!(gunzip(&out.body), small);
}

#[tokio::test]
async fn breach_jitter_varies_gzip_length_only() {
    let data = text(4000);
    let layer = CompressionLayer::new().breach_jitter(64);
    let mut lengths = std::collections::BTreeSet::new();
    let mut streamed = std::collections::BTreeSet::new();
    let mut bodies = Vec::new();
    for i in 0..20 {
        // Alternate the one-shot and the streaming path.
        let out = if i % 2 == 0 {
            round(&layer, Some("gzip"), full(data.clone())).await
        } else {
            round(
                &layer,
                Some("gzip"),
                Response::new(StutterBody::data([data.clone()])),
            )
            .await
        };
        assert_eq!(gunzip(&out.body), data);
        if i % 2 == 0 {
            lengths.insert(out.body.len());
        } else {
            streamed.insert(out.body.len());
        }
        bodies.push(out.body);
    }
    assert!(
        lengths.len() >= 3,
        "one-shot gzip lengths vary: {lengths:?}"
    );
    assert!(
        streamed.len() >= 3,
        "streamed gzip lengths vary: {streamed:?}"
    );
    // Padding is 1..=64 bytes on top of the unpadded output.
    let plain = round(&CompressionLayer::new(), Some("gzip"), full(data.clone())).await;
    assert!(lengths.iter().all(|&l| l > plain.body.len()));
    assert!(lengths.iter().all(|&l| l <= plain.body.len() + 64));

    // deflate: unaffected.
    let deflate_plain = round(
        &CompressionLayer::new(),
        Some("deflate"),
        full(data.clone()),
    )
    .await;
    for _ in 0..5 {
        let out = round(&layer, Some("deflate"), full(data.clone())).await;
        assert_eq!(out.body, deflate_plain.body);
    }

    // The gzip CLI decodes padded members.
    let mut child = std::process::Command::new("gzip")
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the gzip CLI is required for this test (apt-get install gzip)");
    let mut stdin = child.stdin.take().unwrap();
    let feed = bodies.clone();
    let writer = std::thread::spawn(move || {
        for b in feed {
            stdin.write_all(&b).unwrap();
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout.len(), data.len() * bodies.len());
    assert!(output.stdout.chunks(data.len()).all(|c| c == &data[..]));
}

#[tokio::test]
async fn stats_add_up() {
    let layer = CompressionLayer::new().pool(private_pool());
    let stats = layer.stats();
    let mut expected_in = 0u64;
    let mut expected_out = 0u64;
    // compressed: one-shot
    let a = text(1000);
    let out = round(&layer, Some("gzip"), full(a.clone())).await;
    expected_in += a.len() as u64;
    expected_out += out.body.len() as u64;
    // compressed: streaming
    let b = text(200_000);
    let out = round(&layer, Some("deflate"), full(b.clone())).await;
    expected_in += b.len() as u64;
    expected_out += out.body.len() as u64;
    // compressed: stuttering
    let out = round(
        &layer,
        Some("gzip"),
        Response::new(StutterBody::data(["ab", "cd"])),
    )
    .await;
    expected_in += 4;
    expected_out += out.body.len() as u64;
    // skipped: small, no accept, image, 406, encoded
    round(&layer, Some("gzip"), full("tiny")).await;
    round(&layer, None, full(a.clone())).await;
    round(&layer, Some("gzip"), typed("image/png", a.clone())).await;
    round(&layer, Some("*;q=0"), full(a.clone())).await;
    let mut res = full(a.clone());
    res.headers_mut()
        .insert(CONTENT_ENCODING, HeaderValue::from_static("br"));
    round(&layer, Some("gzip"), res).await;

    let snap = stats.snapshot();
    assert_eq!(snap.compressed, 3);
    assert_eq!(snap.skipped, 5);
    assert_eq!(snap.bytes_in, expected_in);
    assert_eq!(snap.bytes_out, expected_out);
    // Clones share counters.
    assert_eq!(layer.clone().stats().snapshot(), snap);
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    #[test]
    fn any_chunking_round_trips(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20_000),
        cuts in proptest::collection::vec(1usize..5000, 0..8),
        gzip in proptest::prelude::any::<bool>(),
        stutter in proptest::prelude::any::<bool>(),
        min_size in 0u64..600,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut chunks = Vec::new();
        let mut rest = &data[..];
        for cut in cuts {
            let n = cut.min(rest.len());
            chunks.push(Bytes::copy_from_slice(&rest[..n]));
            rest = &rest[n..];
        }
        chunks.push(Bytes::copy_from_slice(rest));
        let accept = if gzip { "gzip" } else { "deflate" };
        let layer = CompressionLayer::new().min_size(min_size);
        let out = rt.block_on(async {
            if stutter {
                round(&layer, Some(accept), Response::new(StutterBody::data(chunks))).await
            } else {
                round(&layer, Some(accept), Response::new(stream_of(chunks))).await
            }
        });
        if let Some(enc) = out.encoding() {
            proptest::prop_assert_eq!(enc, accept);
        } else {
            proptest::prop_assert!(!stutter && (data.len() as u64) < min_size);
        }
        proptest::prop_assert!(out.decoded() == data);
    }
}
