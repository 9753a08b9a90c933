//! Payloads, requests, handlers and drivers the response benches and the allocation
//! counters share.

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, header};
use http_body::Body;
use http_body_util::{BodyExt, Full, StreamBody};

/// A deterministic JSON array of about `len` bytes (records of ~150 B).
pub fn json(len: usize) -> Bytes {
    json_from(0, len)
}

/// Like [`json`], with the records numbered from `start` (other responses of the same API).
pub fn json_from(start: u64, len: usize) -> Bytes {
    let mut out = String::with_capacity(len + 256);
    out.push('[');
    let mut i = start;
    while out.len() < len {
        let price = (i * 7919) % 100_000;
        out.push_str(&format!(
            r#"{{"id":{i},"name":"item-{i:06}","sku":"SKU-{:08X}","price":{}.{:02},"in_stock":{},"tags":["t{}","t{}"]}},"#,
            i.wrapping_mul(2_654_435_761) & 0xffff_ffff,
            price / 100,
            price % 100,
            i % 3 == 0,
            i % 17,
            i % 29
        ));
        i += 1;
    }
    out.truncate(len);
    out.into()
}

/// A reproducible random message (a 32-bit LCG; no extra dependencies): the seed's case.
pub fn random_message(len: usize) -> Vec<u8> {
    let mut state = 0x5eed_u32;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// The sizes every response group runs over.
pub const SIZES: [(&str, usize); 4] = [
    ("1KiB", 1024),
    ("16KiB", 16 * 1024),
    ("256KiB", 256 * 1024),
    ("1MiB", 1024 * 1024),
];

/// A request that accepts gzip.
pub fn gzip_request() -> Request<Full<Bytes>> {
    Request::builder()
        .header(header::ACCEPT_ENCODING, "gzip")
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// A handler answering with the whole payload as one `Full` frame.
pub fn full_response(
    payload: Bytes,
) -> impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> {
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(payload))
        .unwrap();
    std::future::ready(Ok(response))
}

type Frames =
    futures_util::stream::Iter<std::vec::IntoIter<Result<http_body::Frame<Bytes>, Infallible>>>;

/// A handler answering with the payload in 16 KiB frames, all ready.
pub fn streamed_response(
    payload: Bytes,
) -> impl Future<Output = Result<Response<StreamBody<Frames>>, Infallible>> {
    let frames: Vec<_> = (0..payload.len())
        .step_by(16 * 1024)
        .map(|at| {
            Ok(http_body::Frame::data(
                payload.slice(at..(at + 16 * 1024).min(payload.len())),
            ))
        })
        .collect();
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(StreamBody::new(futures_util::stream::iter(frames)))
        .unwrap();
    std::future::ready(Ok(response))
}

/// Calls a clone of `svc` with `request` and reads the response body to the end; returns
/// the bytes seen.
pub async fn respond<S, ReqBody, B>(svc: &S, request: Request<ReqBody>) -> usize
where
    S: tower::Service<Request<ReqBody>, Response = Response<B>> + Clone,
    S::Error: std::fmt::Debug,
    B: Body,
    B::Error: std::fmt::Debug,
{
    use tower::ServiceExt;
    let res = svc.clone().oneshot(request).await.unwrap();
    drain(res.into_body()).await
}

/// Reads a body to the end without keeping it; returns the bytes seen.
pub async fn drain<B>(body: B) -> usize
where
    B: Body,
    B::Error: std::fmt::Debug,
{
    let mut body = std::pin::pin!(body);
    let mut total = 0;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            total += bytes::Buf::remaining(&data);
        }
    }
    total
}

/// A `POST` whose body is `gzipped` (a gzip member), sent with `Content-Encoding: gzip`.
pub fn gzip_body_request(gzipped: Bytes) -> Request<Full<Bytes>> {
    Request::builder()
        .method(http::Method::POST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, "gzip")
        .header(header::CONTENT_LENGTH, gzipped.len())
        .body(Full::new(gzipped))
        .unwrap()
}

/// A `POST` whose body is `payload`, uncompressed.
pub fn identity_body_request(payload: Bytes) -> Request<Full<Bytes>> {
    Request::builder()
        .method(http::Method::POST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, payload.len())
        .body(Full::new(payload))
        .unwrap()
}

/// A handler that reads the request body to the end and answers an empty 200.
pub async fn drain_request<B>(req: Request<B>) -> Result<Response<Full<Bytes>>, Infallible>
where
    B: Body,
    B::Error: std::fmt::Debug,
{
    let seen = drain(req.into_body()).await;
    std::hint::black_box(seen);
    Ok(Response::new(Full::new(Bytes::new())))
}

/// A request that accepts only `coding` (`gzip`, `deflate`, `zstd` or `br`).
pub fn accepting(coding: &'static str) -> Request<Full<Bytes>> {
    Request::builder()
        .header(header::ACCEPT_ENCODING, coding)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// A `POST` whose body is `encoded`, sent with `Content-Encoding: coding`.
pub fn encoded_body_request(coding: &'static str, encoded: Bytes) -> Request<Full<Bytes>> {
    Request::builder()
        .method(http::Method::POST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, coding)
        .header(header::CONTENT_LENGTH, encoded.len())
        .body(Full::new(encoded))
        .unwrap()
}

/// tower-http's compression layer offering only `coding` (`gzip`, `deflate`, `zstd` or `br`)
/// at its default quality.
pub fn tower_http_only(coding: &str) -> tower_http::compression::CompressionLayer {
    let layer = tower_http::compression::CompressionLayer::new()
        .quality(tower_http::CompressionLevel::Default);
    match coding {
        "gzip" => layer.no_deflate().no_br().no_zstd(),
        "deflate" => layer.no_gzip().no_br().no_zstd(),
        "zstd" => layer.no_gzip().no_deflate().no_br(),
        "br" => layer.no_gzip().no_deflate().no_zstd(),
        other => panic!("unknown coding {other}"),
    }
}

/// Calls a clone of `svc` once with `request`; panics unless the response is encoded with
/// `coding`. Returns the encoded body's length. For benchmark setup: proves a group
/// measures the coding it is named after.
pub async fn expect_coding<S, B>(svc: &S, request: Request<Full<Bytes>>, coding: &str) -> usize
where
    S: tower::Service<Request<Full<Bytes>>, Response = Response<B>> + Clone,
    S::Error: std::fmt::Debug,
    B: Body,
    B::Error: std::fmt::Debug,
{
    use tower::ServiceExt;
    let res = svc.clone().oneshot(request).await.unwrap();
    let got = res
        .headers()
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(got.as_deref(), Some(coding), "content-encoding");
    drain(res.into_body()).await
}

/// The 400 responses of the [`json`] API numbered from 10^6 (records the measured bodies,
/// numbered from 0, do not contain) that the benches' dictionaries are trained on.
pub fn dictionary_samples() -> Vec<Bytes> {
    (0..400)
        .map(|k| json_from(1_000_000 + k * 37, 1024 + (k as usize % 7) * 512))
        .collect()
}

/// A same-origin request accepting only `coding`, offering the dictionary whose
/// `Available-Dictionary` value is `available`.
pub fn offering(coding: &'static str, available: HeaderValue) -> Request<Full<Bytes>> {
    let mut req = accepting(coding);
    req.headers_mut().insert("available-dictionary", available);
    req.headers_mut()
        .insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
    req
}

/// A handler that reads the request body to the end and answers with it.
pub async fn echo<B>(req: Request<B>) -> Result<Response<Full<Bytes>>, B::Error>
where
    B: Body<Data = Bytes>,
{
    let body = req.into_body().collect().await?.to_bytes();
    Ok(Response::new(Full::new(body)))
}

/// What a request-decoding service around [`echo`] hands its handler when sent `encoded`
/// with `Content-Encoding: coding`.
pub async fn decoded<S, B>(svc: S, coding: &'static str, encoded: &Bytes) -> Bytes
where
    S: tower::Service<Request<Full<Bytes>>, Response = Response<B>>,
    S::Error: std::fmt::Debug,
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    use tower::ServiceExt;
    let request = encoded_body_request(coding, encoded.clone());
    let res = svc.oneshot(request).await.unwrap();
    res.into_body().collect().await.unwrap().to_bytes()
}

/// `ours` (a request-decoding service around [`echo`]) and tower-http's
/// `RequestDecompressionLayer` both hand the handler exactly `payload` when sent `encoded`
/// with `Content-Encoding: coding` (so the request groups measure real decoding).
pub fn check_request_decoding<S, B>(
    rt: &tokio::runtime::Runtime,
    ours: S,
    coding: &'static str,
    payload: &Bytes,
    encoded: &Bytes,
) where
    S: tower::Service<Request<Full<Bytes>>, Response = Response<B>>,
    S::Error: std::fmt::Debug,
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    use tower::Layer;
    let got = rt.block_on(decoded(ours, coding, encoded));
    assert_eq!(&got, payload, "tower-gzip decoding {coding}");
    let theirs =
        tower_http::decompression::RequestDecompressionLayer::new().layer(tower::service_fn(echo));
    let got = rt.block_on(decoded(theirs, coding, encoded));
    assert_eq!(&got, payload, "tower-http decoding {coding}");
}
