//! Response headers (Vary, Content-Length, ETag...) and trailers.

use bytes::Bytes;
use http::header::{ACCEPT_RANGES, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, ETAG, VARY};
use http::{HeaderValue, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Empty, Full};
use tower_gzip::compression::CompressionLayer;

/// The layer's default size floor.
const DEFAULT_MIN_SIZE: u64 = 256;

use crate::common::{ReadyFrames, StutterBody, gunzip, text};
use crate::support::{
    Always, SLICE, UNKNOWN_CODING, collect, full, get, respond, round, stream_of, trailers,
};

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
    let out = round(&CompressionLayer::new(), Some(UNKNOWN_CODING), res).await;
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
