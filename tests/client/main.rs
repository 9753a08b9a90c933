//! The client layers (DecompressionLayer, RequestCompressionLayer), against mock services and
//! a real server on loopback; and the server layer against clients nobody here wrote (curl,
//! the gzip CLI, Python's urllib).

use tower_gzip_support as common;

#[cfg(feature = "zstd")]
#[cfg(dictionary_client)]
mod dictionaries;
mod loopback;
mod tools;

use std::convert::Infallible;
use std::io::Write;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::{accepted_codings, gunzip, gzip, raw_deflate, zlib};
use http::header::{
    ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RANGE,
};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Empty, Full, LengthLimitError, StreamBody};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::ContentCoding;
use tower_gzip::client::RequestCompressionLayer;
use tower_gzip::codec::{DecodeError, DecodeErrorKind};
use tower_gzip::compression::CompressionBody;
use tower_gzip::compression::predicate::{DefaultPredicate, Predicate, RequestFn, SizeAbove};
use tower_gzip::decompression::DecompressionBody;
use tower_gzip::decompression::DecompressionLayer;
use tower_gzip::{BoxError, CodecPool};

fn json_document(items: usize) -> String {
    let items: Vec<_> = (0..items)
        .map(|i| serde_json::json!({ "id": i, "name": format!("item {i}"), "tags": ["a", "b"] }))
        .collect();
    serde_json::json!({ "items": items }).to_string()
}

// ---------------------------------------------------------------------------------------
// DecompressionLayer against a mock server.

/// A mock server that records the request headers and answers with `response`.
async fn fetch<B>(
    layer: DecompressionLayer,
    request: Request<Empty<Bytes>>,
    response: Response<B>,
) -> (HeaderMap, Response<DecompressionBody<B>>)
where
    B: Body + Send + 'static,
{
    let seen = Arc::new(Mutex::new(HeaderMap::new()));
    let slot = seen.clone();
    let response = Arc::new(Mutex::new(Some(response)));
    let svc = layer.layer(service_fn(move |req: Request<Empty<Bytes>>| {
        *slot.lock().unwrap() = req.headers().clone();
        let response = response.lock().unwrap().take().unwrap();
        async move { Ok::<_, Infallible>(response) }
    }));
    let response = svc.oneshot(request).await.unwrap();
    let headers = seen.lock().unwrap().clone();
    (headers, response)
}

fn encoded_response(coding: &str, wire: Vec<u8>) -> Response<Full<Bytes>> {
    Response::builder()
        .header(CONTENT_ENCODING, coding)
        .header(CONTENT_LENGTH, wire.len())
        .body(Full::new(Bytes::from(wire)))
        .unwrap()
}

fn get_request() -> Request<Empty<Bytes>> {
    Request::get("http://example.test/")
        .body(Empty::new())
        .unwrap()
}

#[tokio::test]
async fn adds_accept_encoding_only_when_absent() {
    let (sent, _) = fetch(
        DecompressionLayer::new(),
        get_request(),
        Response::new(Full::new(Bytes::new())),
    )
    .await;
    // Every coding compiled in: "zstd, br, gzip, deflate" with the default features.
    assert_eq!(sent[ACCEPT_ENCODING], accepted_codings(&[]));
    #[cfg(all(feature = "dcz", feature = "dcb"))]
    assert_eq!(sent[ACCEPT_ENCODING], "zstd, br, gzip, deflate");
    #[cfg(all(feature = "zstd", not(feature = "br")))]
    assert_eq!(sent[ACCEPT_ENCODING], "zstd, gzip, deflate");

    let (sent, _) = fetch(
        DecompressionLayer::new().deflate(false),
        get_request(),
        Response::new(Full::new(Bytes::new())),
    )
    .await;
    assert_eq!(
        sent[ACCEPT_ENCODING],
        accepted_codings(&[ContentCoding::Deflate.as_str()])
    );

    // Only gzip left: exactly "gzip".
    #[allow(unused_mut)] // only changed with the zstd or br feature
    let mut gzip_only = DecompressionLayer::new().deflate(false);
    #[cfg(feature = "zstd")]
    {
        gzip_only = gzip_only.no_zstd();
    }
    #[cfg(feature = "br")]
    {
        gzip_only = gzip_only.no_br();
    }
    let (sent, _) = fetch(
        gzip_only,
        get_request(),
        Response::new(Full::new(Bytes::new())),
    )
    .await;
    assert_eq!(sent[ACCEPT_ENCODING], "gzip");

    let mut request = get_request();
    request
        .headers_mut()
        .insert(ACCEPT_ENCODING, HeaderValue::from_static("br"));
    let (sent, _) = fetch(
        DecompressionLayer::new(),
        request,
        Response::new(Full::new(Bytes::new())),
    )
    .await;
    assert_eq!(sent.get_all(ACCEPT_ENCODING).iter().count(), 1);
    assert_eq!(sent[ACCEPT_ENCODING], "br");

    let mut request = get_request();
    request
        .headers_mut()
        .insert(RANGE, HeaderValue::from_static("bytes=0-99"));
    let (sent, _) = fetch(
        DecompressionLayer::new(),
        request,
        Response::new(Full::new(Bytes::new())),
    )
    .await;
    assert!(sent.get(ACCEPT_ENCODING).is_none(), "no coding for a range");
}

#[tokio::test]
async fn decodes_gzip_x_gzip_deflate_and_multi_member() {
    let plain = json_document(2000).into_bytes();
    let mut members = gzip(&plain[..1000]);
    members.extend(gzip(&plain[1000..]));
    for (coding, wire) in [
        ("gzip", gzip(&plain)),
        ("X-GZIP", gzip(&plain)),
        ("deflate", zlib(&plain)),
        ("DEFLATE", raw_deflate(&plain)),
        ("gzip", members),
        ("gzip, deflate", zlib(&gzip(&plain))),
    ] {
        let (_, response) = fetch(
            DecompressionLayer::new(),
            get_request(),
            encoded_response(coding, wire),
        )
        .await;
        assert!(response.headers().get(CONTENT_ENCODING).is_none());
        assert!(response.headers().get(CONTENT_LENGTH).is_none());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, plain, "{coding}");
    }
}

#[tokio::test]
async fn unknown_or_disabled_codings_are_left_untouched() {
    // zstd and br are decoded when compiled in, so they are tested disabled; `compress` and
    // `lzw` stand for unknown codings.
    #[allow(unused_mut)]
    let mut cases = vec![
        (DecompressionLayer::new(), "compress"),
        (DecompressionLayer::new(), "gzip, lzw"),
        (DecompressionLayer::new().gzip(false), "gzip"),
        (DecompressionLayer::new(), "gzip, gzip, gzip, gzip"),
    ];
    #[cfg(not(feature = "br"))]
    cases.push((DecompressionLayer::new(), "br"));
    #[cfg(feature = "br")]
    cases.push((DecompressionLayer::new().no_br(), "br"));
    #[cfg(not(feature = "zstd"))]
    cases.push((DecompressionLayer::new(), "gzip, zstd"));
    #[cfg(feature = "zstd")]
    cases.push((DecompressionLayer::new().no_zstd(), "gzip, zstd"));
    for (layer, coding) in cases {
        let wire = b"\x1f\x8bnot decoded".to_vec();
        let (_, response) =
            fetch(layer, get_request(), encoded_response(coding, wire.clone())).await;
        assert_eq!(response.headers()[CONTENT_ENCODING], coding);
        assert_eq!(response.headers()[CONTENT_LENGTH], wire.len().to_string());
        assert_eq!(response.body().size_hint().exact(), Some(wire.len() as u64));
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, wire);
    }
}

#[tokio::test]
async fn head_204_and_304_are_not_decoded() {
    let mut head = Request::head("http://example.test/")
        .body(Empty::new())
        .unwrap();
    *head.method_mut() = Method::HEAD;
    let response = Response::builder()
        .header(CONTENT_ENCODING, "gzip")
        .header(CONTENT_LENGTH, "1234")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (_, response) = fetch(DecompressionLayer::new(), head, response).await;
    assert_eq!(response.headers()[CONTENT_ENCODING], "gzip");
    assert_eq!(response.headers()[CONTENT_LENGTH], "1234");
    assert!(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .is_empty()
    );

    for status in [StatusCode::NO_CONTENT, StatusCode::NOT_MODIFIED] {
        let response = Response::builder()
            .status(status)
            .header(CONTENT_ENCODING, "gzip")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let (_, response) = fetch(DecompressionLayer::new(), get_request(), response).await;
        assert_eq!(response.headers()[CONTENT_ENCODING], "gzip");
        assert!(!response.body().is_decoding());
    }
}

#[tokio::test]
async fn decodes_empty_body_with_trailers() {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let frames: Vec<Result<Frame<Bytes>, Infallible>> = vec![Ok(Frame::trailers(trailers))];
    let response = Response::builder()
        .header(CONTENT_ENCODING, "gzip")
        .body(StreamBody::new(futures_util::stream::iter(frames)))
        .unwrap();
    let (_, response) = fetch(DecompressionLayer::new(), get_request(), response).await;
    let collected = response.into_body().collect().await.unwrap();
    assert_eq!(collected.trailers().unwrap()["grpc-status"], "0");
    assert!(collected.to_bytes().is_empty());
}

#[tokio::test]
async fn extra_data_after_the_end_is_rejected() {
    let mut wire = zlib(b"hello");
    wire.extend_from_slice(b"more");
    let (_, response) = fetch(
        DecompressionLayer::new(),
        get_request(),
        encoded_response("deflate", wire),
    )
    .await;
    let err = response.into_body().collect().await.unwrap_err();
    let kind = err.downcast_ref::<DecodeError>().unwrap().kind();
    assert_eq!(kind, DecodeErrorKind::TrailingData);
}

#[tokio::test]
async fn response_bombs_are_stopped() {
    let wire = gzip(&vec![0u8; 16 * 1024 * 1024]);
    let pool = CodecPool::new();
    let layer = DecompressionLayer::new()
        .limits(
            tower_gzip::decompression::DecompressionLimits::none()
                .with_max_size(Some(4 * 1024 * 1024)),
        )
        .pool(pool.clone());
    let (_, response) = fetch(layer, get_request(), encoded_response("gzip", wire.clone())).await;
    let mut body = response.into_body();
    let mut total = 0;
    let err = loop {
        match body.frame().await.unwrap() {
            Ok(frame) => total += frame.into_data().unwrap().len(),
            Err(err) => break err,
        }
    };
    assert!(err.downcast_ref::<LengthLimitError>().is_some());
    assert!(total <= 4 * 1024 * 1024);
    assert_eq!(
        pool.stats()
            .kind(tower_gzip::pool::PoolKind::DeflateDecompressors)
            .in_use(),
        0
    );
    // The default ratio limit stops it too.
    let (_, response) = fetch(
        DecompressionLayer::new(),
        get_request(),
        encoded_response("gzip", wire),
    )
    .await;
    let err = response.into_body().collect().await.unwrap_err();
    assert!(err.is::<LengthLimitError>());
}

// ---------------------------------------------------------------------------------------
// RequestCompressionLayer against a mock server.

/// What the mock server received.
struct Received {
    headers: HeaderMap,
    wire: Bytes,
}

async fn send<B, P>(layer: RequestCompressionLayer<P>, request: Request<B>) -> Received
where
    P: Predicate,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let seen = Arc::new(Mutex::new(None));
    let slot = seen.clone();
    let svc = layer.layer(service_fn(move |req: Request<CompressionBody<B>>| {
        let slot = slot.clone();
        async move {
            let (parts, body) = req.into_parts();
            let wire = body.collect().await.unwrap().to_bytes();
            *slot.lock().unwrap() = Some(Received {
                headers: parts.headers,
                wire,
            });
            Ok::<_, Infallible>(Response::new(Empty::<Bytes>::new()))
        }
    }));
    svc.oneshot(request).await.unwrap();
    seen.lock().unwrap().take().unwrap()
}

fn post_req(body: impl Into<Bytes>) -> http::request::Builder {
    let body: Bytes = body.into();
    Request::post("http://example.test/api").header(CONTENT_LENGTH, body.len())
}

#[tokio::test]
async fn compresses_request_bodies() {
    let doc = json_document(100);
    let req = post_req(doc.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(doc.clone())))
        .unwrap();
    let got = send(RequestCompressionLayer::new(), req).await;
    assert_eq!(got.headers[CONTENT_ENCODING], "gzip");
    assert!(got.headers.get(CONTENT_LENGTH).is_none());
    assert!(got.wire.len() < doc.len() / 3);
    assert_eq!(gunzip(&got.wire), doc.as_bytes());

    let req = Request::put("http://example.test/")
        .body(Full::new(Bytes::from(doc.clone())))
        .unwrap();
    let got = send(
        RequestCompressionLayer::new().coding(ContentCoding::Deflate),
        req,
    )
    .await;
    assert_eq!(got.headers[CONTENT_ENCODING], "deflate");
    let mut d = flate2::write::ZlibDecoder::new(Vec::new());
    d.write_all(&got.wire).unwrap();
    assert_eq!(d.finish().unwrap(), doc.as_bytes());
}

#[tokio::test]
async fn streams_bodies_of_unknown_size() {
    let chunks: Vec<Result<Frame<Bytes>, Infallible>> = (0..50)
        .map(|i| Ok(Frame::data(Bytes::from(format!("line {i}\n").repeat(10)))))
        .collect();
    let expected: String = (0..50).map(|i| format!("line {i}\n").repeat(10)).collect();
    let req = Request::post("http://example.test/")
        .body(StreamBody::new(futures_util::stream::iter(chunks)))
        .unwrap();
    let got = send(RequestCompressionLayer::new(), req).await;
    assert_eq!(got.headers[CONTENT_ENCODING], "gzip");
    assert_eq!(gunzip(&got.wire), expected.as_bytes());
}

#[tokio::test]
async fn skips_what_should_not_be_compressed() {
    let doc = json_document(100);
    let big = || Full::new(Bytes::from(doc.clone()));
    let cases: Vec<(RequestCompressionLayer, Request<Full<Bytes>>)> = vec![
        (
            RequestCompressionLayer::new(),
            post_req(doc.clone())
                .header(CONTENT_ENCODING, "br")
                .body(big())
                .unwrap(),
        ),
        (
            RequestCompressionLayer::new(),
            Request::get("http://example.test/").body(big()).unwrap(),
        ),
        (
            RequestCompressionLayer::new(),
            post_req("small")
                .body(Full::new(Bytes::from("small")))
                .unwrap(),
        ),
        (
            RequestCompressionLayer::new().min_size(1_000_000),
            post_req(doc.clone()).body(big()).unwrap(),
        ),
        (
            RequestCompressionLayer::new(),
            post_req(doc.clone())
                .header(CONTENT_TYPE, "image/png")
                .body(big())
                .unwrap(),
        ),
        (
            RequestCompressionLayer::new(),
            Request::delete("http://example.test/")
                .body(Full::new(Bytes::new()))
                .unwrap(),
        ),
    ];
    for (i, (layer, req)) in cases.into_iter().enumerate() {
        assert_sent_as_is(layer, req, &i.to_string()).await;
    }
    // A request-side predicate (another layer type, so outside the list) can refuse too.
    assert_sent_as_is(
        RequestCompressionLayer::new()
            .compress_when(RequestFn::new(|_, uri: &http::Uri, _| uri.path() != "/api")),
        post_req(doc.clone()).body(big()).unwrap(),
        "request predicate",
    )
    .await;
    // SVG is text: compressed.
    let req = post_req(doc.clone())
        .header(CONTENT_TYPE, "image/svg+xml")
        .body(big())
        .unwrap();
    assert_eq!(
        send(RequestCompressionLayer::new(), req).await.headers[CONTENT_ENCODING],
        "gzip"
    );
    // Compressed types on request when the check is off.
    let req = post_req(doc.clone())
        .header(CONTENT_TYPE, "image/png")
        .body(big())
        .unwrap();
    // Any predicate other than DefaultPredicate leaves content types alone.
    let layer = RequestCompressionLayer::new().compress_when(SizeAbove::new(0));
    assert_eq!(send(layer, req).await.headers[CONTENT_ENCODING], "gzip");
}

/// A custom predicate decides alone: the 1 KiB request floor applies under
/// DefaultPredicate only; any other predicate decides alone on bodies of known size.
#[tokio::test]
async fn custom_request_predicate_decides_alone_on_small_bodies() {
    let small = || {
        post_req("small")
            .body(Full::new(Bytes::from("small")))
            .unwrap()
    };
    assert_sent_as_is(RequestCompressionLayer::new(), small(), "default, small").await;
    let got = send(
        RequestCompressionLayer::new().compress_when(SizeAbove::new(0)),
        small(),
    )
    .await;
    assert_eq!(got.headers[CONTENT_ENCODING], "gzip");
    assert!(got.headers.get(CONTENT_LENGTH).is_none());
    assert_eq!(gunzip(&got.wire), b"small");
    // Combined with DefaultPredicate, the floor holds again.
    let layer = RequestCompressionLayer::new()
        .compress_when(DefaultPredicate::new().and(SizeAbove::new(0)));
    assert_sent_as_is(layer, small(), "default and SizeAbove(0), small").await;
    // Empty bodies are never compressed, whatever the predicate.
    let empty = post_req("").body(Full::new(Bytes::new())).unwrap();
    let layer = RequestCompressionLayer::new().compress_when(SizeAbove::new(0));
    assert_sent_as_is(layer, empty, "empty").await;
}

/// `request` goes out untouched: the same `Content-Encoding` (or none) and `Content-Length`.
async fn assert_sent_as_is<P: Predicate>(
    layer: RequestCompressionLayer<P>,
    req: Request<Full<Bytes>>,
    case: &str,
) {
    let before = req.headers().get(CONTENT_ENCODING).cloned();
    let length = req.headers().get(CONTENT_LENGTH).cloned();
    let got = send(layer, req).await;
    assert_eq!(
        got.headers.get(CONTENT_ENCODING),
        before.as_ref(),
        "case {case}"
    );
    assert_eq!(
        got.headers.get(CONTENT_LENGTH),
        length.as_ref(),
        "case {case}"
    );
}
