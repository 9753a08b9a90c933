//! Hard rules (never recompress, ranges, HEAD, bodiless statuses, no-transform), the
//! predicate, and the minimum size.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::header::{
    ACCEPT_RANGES, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE,
    ETAG,
};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use http_body::Body;
use http_body_util::Empty;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::compression::predicate::{DefaultPredicate, Predicate};

use crate::common::{ReadyFrames, StutterBody, gunzip, text};
use crate::support::{
    Always, UNKNOWN_CODING, collect, full, get, respond, round, stream_of, typed,
};

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

/// A custom predicate decides alone: the `min_size` floor does not apply to bodies of known
/// size under a custom predicate, as in tower-http (a 100-byte `Full` body is compressed
/// under `compress_when(Always)`). The same holds for bodies of unknown size found complete
/// and small when read ahead: tower-http compresses them under `Always`, and so do we; under
/// `DefaultPredicate` they stay identity.
#[tokio::test]
async fn compress_when_does_not_override_hard_rules_and_decides_alone_on_any_size() {
    let data = text(100);
    let layer = CompressionLayer::new().compress_when(Always);
    // Known size, under min_size, custom predicate: compressed.
    let out = round(&layer, Some("gzip"), full(data.clone())).await;
    assert_eq!(
        out.encoding(),
        Some("gzip"),
        "a custom predicate decides alone"
    );
    assert_eq!(gunzip(&out.body), data);
    // A Content-Length header is a known size too.
    let mut res = Response::new(ReadyFrames::data(["small body"]));
    res.headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from_static("10"));
    let out = round(&layer, Some("gzip"), res).await;
    assert_eq!(
        out.encoding(),
        Some("gzip"),
        "Content-Length, custom predicate"
    );
    assert_eq!(gunzip(&out.body), b"small body");
    // Under DefaultPredicate (alone or combined) the floor still holds for known sizes.
    let default_and = CompressionLayer::new().compress_when(DefaultPredicate::new().and(Always));
    let out = round(&default_and, Some("gzip"), full(data.clone())).await;
    assert_eq!(out.encoding(), None, "DefaultPredicate and Always");
    // Unknown size, read ahead, complete and small: the custom predicate decides alone...
    let out = round(
        &layer,
        Some("gzip"),
        Response::new(ReadyFrames::data(["abc", "def", "ghi"])),
    )
    .await;
    assert_eq!(out.encoding(), Some("gzip"), "unknown size, found small");
    assert_eq!(gunzip(&out.body), b"abcdefghi");
    // ...and under DefaultPredicate the floor holds.
    let out = round(
        &CompressionLayer::new(),
        Some("gzip"),
        Response::new(ReadyFrames::data(["abc", "def", "ghi"])),
    )
    .await;
    assert_eq!(out.encoding(), None, "unknown size, found small, default");
    assert_eq!(&out.body[..], b"abcdefghi");
    // The hard rules hold whatever the predicate says.
    let mut res = full(text(2000));
    res.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-transform"));
    assert_eq!(round(&layer, Some("gzip"), res).await.encoding(), None);
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
    let res = respond(
        &CompressionLayer::new(),
        get(Some(UNKNOWN_CODING)),
        full(big.clone()),
    )
    .await;
    assert_eq!(res.body().size_hint().exact(), Some(big.len() as u64));
    assert_eq!(collect(res).await.body.len(), big.len());
}
