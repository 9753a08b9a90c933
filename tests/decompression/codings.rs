//! tower-http 0.7's own zstd and br decompression tests (`decompression/mod.rs`), ported to
//! this crate's API: the client-side `Decompression` service around a handler that answers
//! compressed responses. Each test is named after the tower-http test it ports and says so.

// Written for both codings; with only one compiled in, the other's helpers and imports
// go unused.
#![cfg_attr(
    not(all(feature = "dcz", feature = "dcb")),
    allow(unused_imports, dead_code)
)]

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody};
use tower::{ServiceExt, service_fn};
use tower_gzip::decompression::Decompression;

use crate::common;

fn trailers(name: &'static str, value: &'static str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(name, HeaderValue::from_static(value));
    map
}

fn get(accept: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .header(ACCEPT_ENCODING, accept)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// A body of `chunks` as data frames, then `trailers` if any, size unknown.
fn streamed(
    chunks: Vec<Bytes>,
    trailers: Option<HeaderMap>,
) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>>> {
    let frames = chunks
        .into_iter()
        .map(Frame::data)
        .chain(trailers.map(Frame::trailers))
        .map(Ok);
    StreamBody::new(futures_util::stream::iter(frames))
}

/// Ports tower-http `decompression::tests::decompress_multi_zstd`: a response of two zstd
/// frames back to back (RFC 8878 section 3.1) decodes to both frames' content.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn decompress_multi_zstd() {
    let svc = service_fn(|_req: Request<Full<Bytes>>| async {
        let mut wire = common::zstd_frame(b"Hello, ", true);
        wire.extend(common::zstd_frame(b"World!", true));
        let res = Response::builder()
            .header(CONTENT_ENCODING, "zstd")
            .body(Full::new(Bytes::from(wire)))
            .unwrap();
        Ok::<_, Infallible>(res)
    });
    let res = Decompression::new(svc).oneshot(get("zstd")).await.unwrap();
    assert!(res.headers().get(CONTENT_ENCODING).is_none());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "Hello, World!");
}

/// Polls `future` with a no-op waker until it is ready, at most `polls` times: `None` if it
/// is still pending. The bodies here are in memory, so a future that stays pending waits
/// for input that will never come.
fn poll_now<F: Future>(future: F, polls: usize) -> Option<F::Output> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    (0..polls).find_map(|_| match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    })
}

/// Ports tower-http `decompression::tests::brotli_rejects_extra_data_without_waiting_for_end_of_body`:
/// bytes after the end of the br stream fail the body as soon as they arrive, while the
/// body itself stays open (it never ends). tower-http bounds the wait with a 1 s timeout;
/// here the body is polled with a no-op waker and must be ready with the error, no clock
/// involved. The error is this crate's typed `DecodeError` (`TrailingData`) rather than
/// tower-http's string.
#[cfg(feature = "br")]
#[tokio::test]
async fn brotli_rejects_extra_data_without_waiting_for_end_of_body() {
    use futures_util::StreamExt;
    use tower_gzip::codec::{DecodeError, DecodeErrorKind};

    let compressed = Bytes::from(common::br_stream(b"Hello, World!", 5, 20));
    let svc = service_fn(move |_req: Request<Full<Bytes>>| {
        let frames = futures_util::stream::iter([
            Ok::<_, Infallible>(Frame::data(compressed.clone())),
            Ok(Frame::data(Bytes::from_static(b"extra"))),
        ])
        .chain(futures_util::stream::pending());
        async move {
            let res = Response::builder()
                .header(CONTENT_ENCODING, "br")
                .body(StreamBody::new(frames))
                .unwrap();
            Ok::<_, Infallible>(res)
        }
    });
    let res = Decompression::new(svc).oneshot(get("br")).await.unwrap();
    let result = poll_now(res.into_body().collect(), 100)
        .expect("extra data should produce an error without waiting for the body to end");
    let error = result.unwrap_err();
    let error = error
        .downcast_ref::<DecodeError>()
        .unwrap_or_else(|| panic!("not a DecodeError: {error}"));
    assert_eq!(error.kind(), DecodeErrorKind::TrailingData);
}

/// Ports tower-http `decompression::tests::brotli_keeps_trailers_that_follow_an_empty_data_frame`:
/// an empty data frame between the br stream and the trailers is not the end of the body.
#[cfg(feature = "br")]
#[tokio::test]
async fn brotli_keeps_trailers_that_follow_an_empty_data_frame() {
    let compressed = Bytes::from(common::br_stream(b"Hello, World!", 5, 20));
    let svc = service_fn(move |_req: Request<Full<Bytes>>| {
        let body = streamed(
            vec![compressed.clone(), Bytes::new()],
            Some(trailers("foo", "bar")),
        );
        async move {
            let res = Response::builder()
                .header(CONTENT_ENCODING, "br")
                .body(body)
                .unwrap();
            Ok::<_, Infallible>(res)
        }
    });
    let res = Decompression::new(svc).oneshot(get("br")).await.unwrap();
    let collected = res.into_body().collect().await.unwrap();
    let trailers = collected
        .trailers()
        .cloned()
        .expect("trailers following an empty data frame should still arrive");
    assert_eq!(trailers["foo"], "bar");
    assert_eq!(collected.to_bytes(), "Hello, World!");
}
