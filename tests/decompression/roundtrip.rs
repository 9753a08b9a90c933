//! Codings, 415s, pass-through, stacked codings, trailers, errors, any chunking.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full, StreamBody};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::decompression::{DecompressionBody, RequestDecompressionLayer};

/// The most codings a `Content-Encoding` may stack.
const MAX_CODINGS: usize = 3;

use crate::common::{accepted_codings as accepted, text};
use crate::common::{gzip, raw_deflate, zlib};
use crate::harness::{FRAME_LIMIT, decoded_ok, encoded, flate_only, run, seen_through_default};
use tower_gzip::ContentCoding;

#[tokio::test]
async fn gzip_x_gzip_and_case() {
    let plain = text(300_000);
    for coding in ["gzip", "x-gzip", "GZIP", " X-Gzip "] {
        let seen = decoded_ok(coding, gzip(&plain), &plain).await;
        assert_eq!(seen.exact_hint, None, "decoded size is unknown");
        assert!(seen.frames >= 300_000 / FRAME_LIMIT);
    }
}

#[tokio::test]
async fn deflate_zlib_and_raw() {
    let plain = text(100_000);
    decoded_ok("deflate", zlib(&plain), &plain).await;
    decoded_ok("Deflate", raw_deflate(&plain), &plain).await;
}

#[tokio::test]
async fn multi_member_gzip() {
    let (a, b) = (text(5000), b"second member".to_vec());
    let mut wire = gzip(&a);
    wire.extend(gzip(&b));
    wire.extend(gzip(b""));
    decoded_ok("gzip", wire, &[a, b].concat()).await;
}

#[tokio::test]
async fn identity_passes_with_headers_and_size_hint() {
    for coding in [None, Some("identity"), Some("Identity, ")] {
        let mut req = Request::post("/").header(CONTENT_LENGTH, "5");
        if let Some(coding) = coding {
            req = req.header(CONTENT_ENCODING, coding);
        }
        let out = run(
            RequestDecompressionLayer::new(),
            req.body(Full::new(Bytes::from_static(b"plain"))).unwrap(),
        )
        .await;
        let seen = out.seen.unwrap();
        assert_eq!(seen.body.unwrap(), "plain");
        assert_eq!(seen.exact_hint, Some(5));
        assert_eq!(seen.headers[CONTENT_LENGTH], "5");
        assert_eq!(
            seen.headers.get(CONTENT_ENCODING).is_some(),
            coding.is_some()
        );
    }
}

#[tokio::test]
async fn unsupported_coding_is_415_without_calling_inner() {
    // zstd and br are decoded with their features (on by default), so the layers here turn
    // them off where the case needs a disabled coding; `compress` and `lzw` are unknown to
    // every build. The 415 lists what is left, in the order zstd, br, gzip, deflate.
    let all = accepted(&[]);
    #[allow(unused_mut)] // only pushed to with the zstd or br feature
    let mut cases = vec![
        (flate_only(), "br", "gzip, deflate".to_owned()),
        (flate_only(), "gzip, zstd", "gzip, deflate".to_owned()),
        (RequestDecompressionLayer::new(), "compress", all.clone()),
        (RequestDecompressionLayer::new(), "gzip, lzw", all.clone()),
        (flate_only().deflate(false), "deflate", "gzip".to_owned()),
        (flate_only().gzip(false), "x-gzip", "deflate".to_owned()),
        (
            RequestDecompressionLayer::new().deflate(false),
            "deflate",
            accepted(&[ContentCoding::Deflate.as_str()]),
        ),
    ];
    #[cfg(feature = "zstd")]
    cases.push((
        RequestDecompressionLayer::new().no_zstd(),
        "zstd",
        accepted(&[ContentCoding::Zstd.as_str()]),
    ));
    #[cfg(feature = "br")]
    cases.push((
        RequestDecompressionLayer::new().no_br(),
        "br",
        accepted(&[ContentCoding::Br.as_str()]),
    ));
    for (layer, coding, accept) in cases {
        let called = Arc::new(AtomicBool::new(false));
        let flag = called.clone();
        let svc = layer.layer(service_fn(move |_req: Request<DecompressionBody<_>>| {
            flag.store(true, Ordering::SeqCst);
            async { Ok::<_, Infallible>(Response::new(Full::new(Bytes::new()))) }
        }));
        let req = Request::post("/")
            .header(CONTENT_ENCODING, coding)
            .body(Full::new(Bytes::from_static(b"whatever")))
            .unwrap();
        let response = svc.oneshot(req).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(
            response.headers()[ACCEPT_ENCODING],
            accept.as_str(),
            "{coding}"
        );
        assert_eq!(
            response.headers()[CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert_eq!(response.body().size_hint().exact(), Some(29));
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "Unsupported Content-Encoding\n");
        assert!(!called.load(Ordering::SeqCst), "inner called for {coding}");
    }
}

#[tokio::test]
async fn pass_through_unaccepted_forwards_unchanged() {
    // br disabled where it is compiled in, so it is not accepted.
    let layer = flate_only().pass_through_unaccepted(true);
    let out = run(layer, encoded("br", b"\x0b\x02\x80raw".to_vec())).await;
    assert_eq!(out.status, StatusCode::OK);
    let seen = out.seen.unwrap();
    assert_eq!(seen.headers[CONTENT_ENCODING], "br");
    assert_eq!(seen.headers[CONTENT_LENGTH], "6");
    assert_eq!(seen.body.unwrap(), &b"\x0b\x02\x80raw"[..]);
    assert_eq!(seen.exact_hint, Some(6));
}

#[tokio::test]
async fn stacked_codings_decode_in_reverse_order() {
    let plain = text(70_000);
    decoded_ok("gzip, gzip", gzip(&gzip(&plain)), &plain).await;
    // gzip applied first, then deflate: the wire is deflate of gzip.
    decoded_ok("gzip, deflate", zlib(&gzip(&plain)), &plain).await;
    decoded_ok("deflate,x-gzip,gzip", gzip(&gzip(&zlib(&plain))), &plain).await;
    // Two field lines form one list.
    let req = Request::post("/")
        .header(CONTENT_ENCODING, "deflate")
        .header(CONTENT_ENCODING, "gzip")
        .body(Full::new(Bytes::from(gzip(&zlib(&plain)))))
        .unwrap();
    let seen = run(RequestDecompressionLayer::new(), req)
        .await
        .seen
        .unwrap();
    assert_eq!(seen.body.unwrap(), plain);
}

#[tokio::test]
async fn overlong_chain_is_refused_even_with_pass_through() {
    let chain = ["gzip"; MAX_CODINGS + 1].join(", ");
    let mut wire = b"x".to_vec();
    for _ in 0..=MAX_CODINGS {
        wire = gzip(&wire);
    }
    for layer in [
        RequestDecompressionLayer::new(),
        RequestDecompressionLayer::new().pass_through_unaccepted(true),
    ] {
        let out = run(layer, encoded(&chain, wire.clone())).await;
        assert_eq!(out.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(out.seen.is_none());
        assert_eq!(out.headers[ACCEPT_ENCODING], accepted(&[]));
        assert!(
            std::str::from_utf8(&out.body)
                .unwrap()
                .contains("at most 3")
        );
    }
}

#[tokio::test]
async fn trailers_are_forwarded_after_streamed_data() {
    let plain = text(200_000);
    let wire = gzip(&plain);
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let mut frames: Vec<Result<Frame<Bytes>, Infallible>> = wire
        .chunks(777)
        .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    frames.push(Ok(Frame::trailers(trailers)));
    let body = StreamBody::new(futures_util::stream::iter(frames));
    let seen = seen_through_default("gzip", body).await;
    assert_eq!(seen.body.unwrap(), plain);
    assert_eq!(seen.trailers.unwrap()["grpc-status"], "0");
}

#[tokio::test]
async fn empty_encoded_body_with_trailers() {
    let mut trailers = HeaderMap::new();
    trailers.insert("x-checksum", HeaderValue::from_static("none"));
    let frames: Vec<Result<Frame<Bytes>, Infallible>> = vec![Ok(Frame::trailers(trailers))];
    let seen =
        seen_through_default("gzip", StreamBody::new(futures_util::stream::iter(frames))).await;
    assert_eq!(seen.body.unwrap(), "");
    assert_eq!(seen.trailers.unwrap()["x-checksum"], "none");
}

#[tokio::test]
async fn inner_body_errors_pass_through() {
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = vec![
        Ok(Frame::data(Bytes::from(gzip(b"abc")[..12].to_vec()))),
        Err(std::io::Error::other("connection reset")),
    ];
    let seen =
        seen_through_default("gzip", StreamBody::new(futures_util::stream::iter(frames))).await;
    let err = seen.body.unwrap_err();
    assert!(err.downcast_ref::<std::io::Error>().is_some(), "{err}");
}

mod split_anywhere {
    use super::*;
    use proptest::prelude::*;

    fn chunked(wire: &[u8], cuts: &[usize]) -> Vec<Result<Frame<Bytes>, Infallible>> {
        let mut frames = Vec::new();
        let mut rest = wire;
        for &cut in cuts {
            let (head, tail) = rest.split_at(cut.min(rest.len()));
            frames.push(Ok(Frame::data(Bytes::copy_from_slice(head))));
            rest = tail;
        }
        frames.push(Ok(Frame::data(Bytes::copy_from_slice(rest))));
        frames
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any chunking of any (stacked) coding decodes to the input.
        #[test]
        fn decodes_any_chunking(
            len in 0usize..150_000,
            cuts in proptest::collection::vec(0usize..40_000, 0..12),
            chain in 0usize..5,
        ) {
            let plain = text(len);
            let (coding, wire) = match chain {
                0 => ("gzip", gzip(&plain)),
                1 => ("deflate", raw_deflate(&plain)),
                2 => ("gzip, gzip", gzip(&gzip(&plain))),
                3 => ("gzip, deflate", zlib(&gzip(&plain))),
                _ => ("deflate, gzip, gzip", gzip(&gzip(&zlib(&plain)))),
            };
            let frames = chunked(&wire, &cuts);
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let seen = runtime.block_on(async {
                let req = Request::post("/")
                    .header(CONTENT_ENCODING, coding)
                    .body(StreamBody::new(futures_util::stream::iter(frames)))
                    .unwrap();
                run(RequestDecompressionLayer::new(), req).await.seen.unwrap()
            });
            prop_assert_eq!(seen.body.unwrap(), plain);
            prop_assert!(seen.max_frame <= FRAME_LIMIT);
        }
    }
}

/// A request body waiting for its next chunk holds none of the chunks it has decoded: the
/// received `Bytes` (in a server, a piece of hyper's read buffer) is let go as soon as it
/// is used up, not kept as an empty view until more arrives (a slow upload would pin it).
#[tokio::test]
async fn a_waiting_body_lets_go_of_decoded_chunks() {
    use futures_util::FutureExt;

    let plain = text(50_000);
    let wire = gzip(&plain);
    let (first, rest) = wire.split_at(wire.len() / 2);
    // The first half goes in on its own allocation; `probe` shares it and sees when the
    // body lets go.
    let probe = Bytes::copy_from_slice(first);
    let (tx, body) = crate::common::channel_body();
    tx.data(probe.clone());
    // The handler hands the decoding body out, to be read here step by step.
    let handed = Arc::new(std::sync::Mutex::new(None));
    let slot = handed.clone();
    let svc = RequestDecompressionLayer::new().layer(service_fn(move |req: Request<_>| {
        *slot.lock().unwrap() = Some(req.into_body());
        async { Ok::<_, Infallible>(Response::new(Full::<Bytes>::default())) }
    }));
    let req = Request::builder()
        .header(CONTENT_ENCODING, "gzip")
        .body(body)
        .unwrap();
    let _ = svc.oneshot(req).await.unwrap();
    let mut body = handed.lock().unwrap().take().unwrap();
    let mut out = Vec::new();
    // Decode everything the first chunk gives, up to the point where the body waits.
    while let Some(Some(frame)) = body.frame().now_or_never() {
        out.extend_from_slice(&frame.unwrap().into_data().unwrap());
    }
    assert!(!out.is_empty() && out.len() < plain.len());
    assert!(
        probe.is_unique(),
        "the waiting body still holds the decoded chunk"
    );
    tx.data(Bytes::copy_from_slice(rest));
    drop(tx);
    while let Some(frame) = body.frame().await {
        out.extend_from_slice(&frame.unwrap().into_data().unwrap());
    }
    assert_eq!(out, plain);
}
