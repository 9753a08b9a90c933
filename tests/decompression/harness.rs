//! Runs a request through `RequestDecompressionLayer` to a service that reads the whole
//! body, and records what it saw.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::{HeaderMap, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full, LengthLimitError};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::BoxError;
use tower_gzip::codec::{DecodeError, DecodeErrorKind};
use tower_gzip::decompression::{DecompressionBody, RequestDecompressionLayer};

pub const FRAME_LIMIT: usize = 64 * 1024;

/// A layer that decodes only gzip and deflate: zstd and br are decoded too with their
/// cargo features (on by default), which cases about unaccepted codings must turn off.
pub fn flate_only() -> RequestDecompressionLayer {
    let layer = RequestDecompressionLayer::new();
    #[cfg(feature = "zstd")]
    let layer = layer.no_zstd();
    #[cfg(feature = "br")]
    let layer = layer.no_br();
    layer
}

/// What the inner service saw.
#[derive(Debug)]
pub struct Seen {
    pub headers: HeaderMap,
    pub body: Result<Bytes, BoxError>,
    pub trailers: Option<HeaderMap>,
    pub exact_hint: Option<u64>,
    pub frames: usize,
    pub max_frame: usize,
}

pub struct Outcome {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub seen: Option<Seen>,
}

pub async fn read_all<B>(body: DecompressionBody<B>) -> Seen
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let exact_hint = body.size_hint().exact();
    let mut body = std::pin::pin!(body);
    let (mut data, mut frames, mut max_frame, mut trailers) = (BytesMut::new(), 0, 0, None);
    let mut result = Ok(());
    while let Some(frame) = body.as_mut().frame().await {
        match frame {
            Ok(frame) => match frame.into_data() {
                Ok(chunk) => {
                    frames += 1;
                    max_frame = max_frame.max(chunk.len());
                    data.extend_from_slice(&chunk);
                }
                Err(frame) => trailers = frame.into_trailers().ok(),
            },
            Err(err) => {
                result = Err(err);
                break;
            }
        }
    }
    Seen {
        headers: HeaderMap::new(),
        body: result.map(|()| data.freeze()),
        trailers,
        exact_hint,
        frames,
        max_frame,
    }
}

/// Sends `req` through `layer` to a service that reads the whole body.
pub async fn run<B>(layer: RequestDecompressionLayer, req: Request<B>) -> Outcome
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let seen = Arc::new(Mutex::new(None));
    let slot = seen.clone();
    let svc = layer.layer(service_fn(move |req: Request<DecompressionBody<B>>| {
        let slot = slot.clone();
        async move {
            let (parts, body) = req.into_parts();
            let mut seen = read_all(body).await;
            seen.headers = parts.headers;
            *slot.lock().unwrap() = Some(seen);
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"inner"))))
        }
    }));
    let response = svc.oneshot(req).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    let seen = seen.lock().unwrap().take();
    Outcome {
        status: parts.status,
        headers: parts.headers,
        body,
        seen,
    }
}

/// What the inner service saw of `body`, sent with `Content-Encoding: coding` through the
/// default layer.
pub async fn seen_through_default<B>(coding: &str, body: B) -> Seen
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let req = Request::post("/")
        .header(CONTENT_ENCODING, coding)
        .body(body)
        .unwrap();
    run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .expect("inner service called")
}

pub fn encoded(coding: &str, wire: Vec<u8>) -> Request<Full<Bytes>> {
    Request::post("/")
        .header(CONTENT_ENCODING, coding)
        .header(CONTENT_LENGTH, wire.len())
        .body(Full::new(Bytes::from(wire)))
        .unwrap()
}

pub async fn decoded_ok(coding: &str, wire: Vec<u8>, plain: &[u8]) -> Seen {
    let out = run(RequestDecompressionLayer::new(), encoded(coding, wire)).await;
    assert_eq!(out.status, StatusCode::OK);
    assert_eq!(out.body, "inner");
    let seen = out.seen.expect("inner service called");
    assert_eq!(seen.body.as_deref().unwrap(), plain, "coding {coding}");
    assert!(seen.headers.get(CONTENT_ENCODING).is_none());
    assert!(seen.headers.get(CONTENT_LENGTH).is_none());
    assert!(seen.max_frame <= FRAME_LIMIT);
    seen
}

pub fn decode_error(seen: &Seen) -> DecodeErrorKind {
    let err = seen.body.as_ref().expect_err("body should fail");
    err.downcast_ref::<DecodeError>()
        .unwrap_or_else(|| panic!("not a DecodeError: {err}"))
        .kind()
}

pub fn is_limit(seen: &Seen) -> bool {
    let err = seen.body.as_ref().expect_err("body should fail");
    err.downcast_ref::<LengthLimitError>().is_some()
}
