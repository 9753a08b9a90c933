//! tower-http 0.7's own zstd and br tests, ported to this crate's API: its compression tests
//! (`compression/mod.rs`, `compression/layer.rs`), its decompression tests
//! (`decompression/mod.rs`), and the preference cases of its `content_encoding.rs` that
//! `tests/compression/negotiation.rs` does not already cover.
//!
//! Each test is named after the tower-http test it ports and says so. Where this crate
//! deliberately answers differently (documented in the README), the test asserts this
//! crate's answer and says why.
#![cfg(any(feature = "zstd", feature = "br"))]

mod common;

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full, StreamBody};
use tower::{ServiceExt, service_fn};
use tower_gzip::compression::{Compression, CompressionLayer, CompressionLevel, Predicate};
use tower_gzip::decompression::Decompression;

/// Compresses every response, whatever its size (tower-http's `Always`).
#[derive(Clone)]
struct Always;

impl Predicate for Always {
    fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
        true
    }
}

fn trailers(name: &'static str, value: &'static str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(name, HeaderValue::from_static(value));
    map
}

/// tower-http's `handle`: "Hello, World!" with a `foo: bar` trailer.
async fn hello_with_trailers(
    _req: Request<Full<Bytes>>,
) -> Result<Response<impl Body<Data = Bytes, Error = Infallible>>, Infallible> {
    let body = Full::new(Bytes::from_static(b"Hello, World!"))
        .with_trailers(async { Some(Ok(trailers("foo", "bar"))) });
    Ok(Response::new(body))
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

// ---------------------------------------------------------------------------------------
// compression/mod.rs and compression/layer.rs
// ---------------------------------------------------------------------------------------

/// Ports tower-http `compression::tests::zstd_works`.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn zstd_works() {
    let svc = Compression::new(service_fn(hello_with_trailers)).compress_when(Always);
    let res = svc.oneshot(get("zstd")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
    let collected = res.into_body().collect().await.unwrap();
    // tower-http's zstd test does not look at them, its gzip test does: kept here too.
    assert_eq!(collected.trailers().expect("trailers kept")["foo"], "bar");
    let compressed = collected.to_bytes();
    // Decoded by libzstd directly, not by this crate.
    assert_eq!(common::unzstd(&compressed), b"Hello, World!");
}

/// Ports tower-http `compression::layer::tests::zstd_is_web_safe`: 18 MiB of zeros at
/// `CompressionLevel::Best` (zstd 21, which would pick a 2^27 window on its own) decode with
/// a decoder limited to 8 MiB windows (RFC 9659).
#[cfg(feature = "zstd")]
#[tokio::test]
async fn zstd_is_web_safe() {
    const LEN: usize = 18_874_368;
    let svc = tower::ServiceBuilder::new()
        .layer(
            CompressionLayer::new()
                .quality(CompressionLevel::Best)
                .no_br()
                .no_deflate()
                .no_gzip(),
        )
        .service_fn(|_req: Request<Full<Bytes>>| async {
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(vec![0u8; LEN]))))
        });
    let res = svc.oneshot(get("zstd")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
    let body = res.into_body().collect().await.unwrap().to_bytes();
    // Every frame's window descriptor says at most 2^23 (or the frame is single-segment
    // with a content size under 8 MiB): the decoder is limited to that, as tower-http's.
    let plain = unzstd_web_safe(&body);
    assert_eq!(plain.len(), LEN);
    assert!(plain.iter().all(|&b| b == 0));
}

/// Decodes zstd frames with libzstd directly, streaming, with windows limited to 2^23
/// (`WindowLogMax(23)`, RFC 9659): a frame asking for more fails.
#[cfg(feature = "zstd")]
fn unzstd_web_safe(wire: &[u8]) -> Vec<u8> {
    use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(23)).unwrap();
    let mut input = InBuffer::around(wire);
    let mut plain = Vec::new();
    loop {
        // Room for another 1 MiB each call; libzstd writes into the spare capacity.
        plain.reserve(1 << 20);
        let before = (input.pos(), plain.len());
        let mut output = OutBuffer::around_pos(&mut plain, before.1);
        let hint = dctx
            .decompress_stream(&mut output, &mut input)
            .unwrap_or_else(|code| panic!("libzstd: {}", zstd_safe::get_error_name(code)));
        let progress = (input.pos(), plain.len()) != before;
        if hint == 0 && input.pos() == wire.len() {
            return plain;
        }
        assert!(progress, "libzstd stalled: the body ends inside a frame");
    }
}

/// Ports tower-http `compression::tests::compress_with_quality`: br at `Best` is exactly
/// what brotli itself writes at that quality (11). tower-http compares with
/// async-compression's encoder; here the reference is the `brotli` crate with this crate's
/// documented window (2^22) and the body's size as the size hint, as a one-shot body is
/// encoded.
#[cfg(feature = "br")]
#[tokio::test]
async fn compress_with_quality() {
    const DATA: &str = "Check compression quality level! Check compression quality level! Check compression quality level!";
    let svc = service_fn(|_req: Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
            DATA.as_bytes(),
        ))))
    });
    // tower-http's default predicate compresses from 32 bytes; this crate's from 256.
    let svc = Compression::new(svc)
        .quality(CompressionLevel::Best)
        .min_size(0);
    let res = svc.oneshot(get("br")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    let compressed = res.into_body().collect().await.unwrap().to_bytes();

    let reference = {
        let params = brotli::enc::BrotliEncoderParams {
            quality: 11,
            lgwin: 22,
            size_hint: DATA.len(),
            ..Default::default()
        };
        let mut out = Vec::new();
        brotli::BrotliCompress(&mut DATA.as_bytes(), &mut out, &params).unwrap();
        out
    };
    assert_eq!(
        &compressed[..],
        &reference[..],
        "Compression level is not respected"
    );
    assert_eq!(common::unbrotli(&compressed), DATA.as_bytes());
    // And a different quality gives different bytes (the assertion above can fail).
    let fastest = Compression::new(service_fn(|_req: Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
            DATA.as_bytes(),
        ))))
    }))
    .quality(CompressionLevel::Fastest)
    .min_size(0);
    let res = fastest.oneshot(get("br")).await.unwrap();
    let fast = res.into_body().collect().await.unwrap().to_bytes();
    assert_ne!(fast, compressed);
    assert_eq!(common::unbrotli(&fast), DATA.as_bytes());
}

/// Not a port: a br body larger than one poll's slice (1 MiB) streams 64 KiB at a time, and
/// its known size reaches brotli as the size hint, so the stream is byte for byte what the
/// `brotli` crate writes for the whole body in one call (as tower-http's encoder sees a
/// `Full` body); without the hint brotli keeps the small-input match finder.
#[cfg(feature = "br")]
#[tokio::test]
async fn br_stream_of_known_size_uses_the_size_hint() {
    let data = Bytes::from(common::text(1 << 20));
    let body = data.clone();
    let svc = Compression::new(service_fn(move |_req: Request<Full<Bytes>>| {
        let body = body.clone();
        async move { Ok::<_, Infallible>(Response::new(Full::new(body))) }
    }));
    let res = svc.oneshot(get("br")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    let compressed = res.into_body().collect().await.unwrap().to_bytes();
    let reference = |size_hint: usize| {
        let params = brotli::enc::BrotliEncoderParams {
            quality: 4,
            lgwin: 22,
            size_hint,
            ..Default::default()
        };
        let mut out = Vec::new();
        brotli::BrotliCompress(&mut &data[..], &mut out, &params).unwrap();
        out
    };
    assert_eq!(&compressed[..], &reference(data.len())[..]);
    assert_eq!(common::unbrotli(&compressed), data);
}

/// Ports tower-http `compression::layer::tests::accept_encoding_configuration_works`: a layer
/// offering only deflate (then only br) answers `gzip, deflate, br` with that coding, and the
/// body decodes to the file it streamed. tower-http streams `Cargo.toml` from disk; here the
/// same file is streamed in 4 KiB frames of unknown total size.
#[cfg(feature = "br")]
#[tokio::test]
async fn accept_encoding_configuration_works() {
    let expected = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let file = Bytes::from(expected.clone());
    let handler = move |_req: Request<Full<Bytes>>| {
        let chunks = (0..file.len())
            .step_by(4096)
            .map(|i| file.slice(i..(i + 4096).min(file.len())))
            .collect();
        async move { Ok::<_, Infallible>(Response::new(streamed(chunks, None))) }
    };

    // zstd is offered by default here (not in tower-http 0.7's default build), but the
    // request does not name it.
    let deflate_only = CompressionLayer::new()
        .quality(CompressionLevel::Best)
        .no_br()
        .no_gzip();
    let svc = tower::ServiceBuilder::new()
        .layer(deflate_only)
        .service_fn(handler.clone());
    let res = svc.oneshot(get("gzip, deflate, br")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "deflate");
    let body = res.into_body().collect().await.unwrap().to_bytes();
    // `deflate` is zlib framing (RFC 1950).
    assert_eq!(common::inflate(&body), expected);

    let br_only = CompressionLayer::new()
        .quality(CompressionLevel::Best)
        .no_gzip()
        .no_deflate();
    let svc = tower::ServiceBuilder::new()
        .layer(br_only)
        .service_fn(handler);
    let res = svc.oneshot(get("gzip, deflate, br")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(common::unbrotli(&body), expected);
}

/// Ports tower-http `compression::tests::no_recompress`: a response already in br is not
/// compressed again for a client that asked for gzip.
#[cfg(feature = "br")]
#[tokio::test]
async fn no_recompress() {
    const DATA: &str = "Hello, World! I'm already compressed with br!";
    let svc = service_fn(|_req: Request<Full<Bytes>>| async {
        let mut encoded = Vec::new();
        {
            let mut writer = brotli::CompressorWriter::new(&mut encoded, 4096, 5, 20);
            std::io::Write::write_all(&mut writer, DATA.as_bytes()).unwrap();
        }
        let res = Response::builder()
            .header(CONTENT_ENCODING, "br")
            .body(Full::new(Bytes::from(encoded)))
            .unwrap();
        Ok::<_, Infallible>(res)
    });
    let res = Compression::new(svc).oneshot(get("gzip")).await.unwrap();
    let codings: Vec<_> = res.headers().get_all(CONTENT_ENCODING).iter().collect();
    assert_eq!(codings, [HeaderValue::from_static("br")]);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(common::unbrotli(&body), DATA.as_bytes());
}

/// Ports tower-http `compression::tests::will_not_compress_if_filtered_out`, which asks for
/// br: a predicate that says no for the first response and yes for the second.
#[cfg(feature = "br")]
#[tokio::test]
async fn will_not_compress_if_filtered_out() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    const DATA: &str = "Hello world uncompressed";

    #[derive(Clone, Default)]
    struct EveryOtherResponse(Arc<AtomicU64>);

    impl Predicate for EveryOtherResponse {
        fn should_compress<B: Body>(&self, _: &Response<B>) -> bool {
            self.0.fetch_add(1, Ordering::SeqCst) % 2 != 0
        }
    }

    let svc = Compression::new(service_fn(|_req: Request<Full<Bytes>>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
            DATA.as_bytes(),
        ))))
    }))
    .compress_when(EveryOtherResponse::default());

    let res = svc.clone().oneshot(get("br")).await.unwrap();
    assert!(res.headers().get(CONTENT_ENCODING).is_none());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, DATA.as_bytes());

    let res = svc.oneshot(get("br")).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_ne!(body, DATA.as_bytes());
    assert_eq!(common::unbrotli(&body), DATA.as_bytes());
}

// ---------------------------------------------------------------------------------------
// decompression/mod.rs
// ---------------------------------------------------------------------------------------

/// One zstd frame of `data`, by libzstd directly (not this crate's encoder).
#[cfg(feature = "zstd")]
fn zstd_frame(data: &[u8], checksum: bool) -> Vec<u8> {
    use zstd_safe::{CCtx, CParameter};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(checksum))
        .unwrap();
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    cctx.compress2(&mut out, data).unwrap();
    out
}

/// Ports tower-http `decompression::tests::decompress_multi_zstd`: a response of two zstd
/// frames back to back (RFC 8878 section 3.1) decodes to both frames' content.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn decompress_multi_zstd() {
    let svc = service_fn(|_req: Request<Full<Bytes>>| async {
        let mut wire = zstd_frame(b"Hello, ", true);
        wire.extend(zstd_frame(b"World!", true));
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

/// One br stream of `data`, by the `brotli` crate (quality 5, window 2^20), as tower-http's
/// br decompression tests build it.
#[cfg(feature = "br")]
fn br_stream(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 5, 20);
        std::io::Write::write_all(&mut writer, data).unwrap();
    }
    out
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

    let compressed = Bytes::from(br_stream(b"Hello, World!"));
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
    let compressed = Bytes::from(br_stream(b"Hello, World!"));
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

// ---------------------------------------------------------------------------------------
// content_encoding.rs: the preference cases not in tests/compression/negotiation.rs
// ---------------------------------------------------------------------------------------
//
// tower-http runs these against `SupportedEncodingsAll` (gzip, deflate, br and zstd), so
// they need both cargo features here, as there. Already covered elsewhere, and not
// repeated: `no_accept_encoding_header` (`no_accept_encoding_is_identity_with_vary`),
// `accept_encoding_header_single_encoding` (`gzip_round_trip`),
// `wildcard_alone_picks_best_supported` (`every_coding_compiled_in_is_offered`: `*` gives
// zstd), `wildcard_q_zero_with_nothing_else_returns_not_satisfiable`,
// `identity_q_zero_alone_returns_not_satisfiable`, `wildcard_q_zero_with_gzip_picks_gzip`
// and `wildcard_q_zero_with_unsupported_encoding_returns_not_satisfiable`
// (`wildcard_and_identity_exclusions`), `identity_q_zero_with_gzip_picks_gzip`
// (`identity_excluded_small_body_is_still_encoded`).
#[cfg(all(feature = "zstd", feature = "br"))]
mod content_encoding {
    use super::*;

    /// What `layer` answers for these `Accept-Encoding` field lines: the status and the
    /// coding (`None` for identity). The body must decode to what the handler sent.
    async fn negotiate(
        layer: CompressionLayer,
        lines: &[&'static str],
    ) -> (StatusCode, Option<String>) {
        let data = common::text(2_000);
        let sent = data.clone();
        let svc = tower::ServiceBuilder::new().layer(layer).service_fn(
            move |_req: Request<Full<Bytes>>| {
                let sent = sent.clone();
                async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(sent)))) }
            },
        );
        let mut req = Request::new(Full::new(Bytes::new()));
        for line in lines {
            req.headers_mut()
                .append(ACCEPT_ENCODING, HeaderValue::from_static(line));
        }
        let res = svc.oneshot(req).await.unwrap();
        let status = res.status();
        let coding = res
            .headers()
            .get(CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = res.into_body().collect().await.unwrap().to_bytes();
        if status == StatusCode::OK {
            assert_eq!(common::decode(coding.as_deref(), &body), data, "{lines:?}");
        }
        (status, coding)
    }

    /// The coding chosen by the default layer (every coding on) for one header line.
    async fn chosen(value: &'static str) -> Option<String> {
        let (status, coding) = negotiate(CompressionLayer::new(), &[value]).await;
        assert_eq!(status, StatusCode::OK, "{value:?}");
        coding
    }

    async fn chosen_lines(lines: &[&'static str]) -> Option<String> {
        let (status, coding) = negotiate(CompressionLayer::new(), lines).await;
        assert_eq!(status, StatusCode::OK, "{lines:?}");
        coding
    }

    fn some(coding: &str) -> Option<String> {
        Some(coding.to_owned())
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_two_encodings`.
    #[tokio::test]
    async fn accept_encoding_header_two_encodings() {
        assert_eq!(chosen("gzip,br").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_gzip_x_gzip`.
    #[tokio::test]
    async fn accept_encoding_header_gzip_x_gzip() {
        assert_eq!(chosen("gzip,x-gzip").await, some("gzip"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_x_gzip_deflate`.
    #[tokio::test]
    async fn accept_encoding_header_x_gzip_deflate() {
        assert_eq!(chosen("deflate,x-gzip").await, some("gzip"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_three_encodings`.
    #[tokio::test]
    async fn accept_encoding_header_three_encodings() {
        assert_eq!(chosen("gzip,deflate,br").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_two_encodings_with_one_qvalue`.
    #[tokio::test]
    async fn accept_encoding_header_two_encodings_with_one_qvalue() {
        assert_eq!(chosen("gzip;q=0.5,br").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_three_encodings_with_one_qvalue`.
    #[tokio::test]
    async fn accept_encoding_header_three_encodings_with_one_qvalue() {
        assert_eq!(chosen("gzip;q=0.5,deflate,br").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::two_accept_encoding_headers_with_one_qvalue`.
    #[tokio::test]
    async fn two_accept_encoding_headers_with_one_qvalue() {
        assert_eq!(chosen_lines(&["gzip;q=0.5", "br"]).await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::two_accept_encoding_headers_three_encodings_with_one_qvalue`.
    #[tokio::test]
    async fn two_accept_encoding_headers_three_encodings_with_one_qvalue() {
        assert_eq!(
            chosen_lines(&["gzip;q=0.5,deflate", "br"]).await,
            some("br")
        );
    }

    /// Ports tower-http `content_encoding::tests::three_accept_encoding_headers_with_one_qvalue`.
    #[tokio::test]
    async fn three_accept_encoding_headers_with_one_qvalue() {
        assert_eq!(
            chosen_lines(&["gzip;q=0.5", "deflate", "br"]).await,
            some("br")
        );
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_two_encodings_with_two_qvalues`.
    #[tokio::test]
    async fn accept_encoding_header_two_encodings_with_two_qvalues() {
        assert_eq!(chosen("gzip;q=0.5,br;q=0.8").await, some("br"));
        assert_eq!(chosen("gzip;q=0.8,br;q=0.5").await, some("gzip"));
        assert_eq!(chosen("gzip;q=0.995,br;q=0.999").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_three_encodings_with_three_qvalues`.
    #[tokio::test]
    async fn accept_encoding_header_three_encodings_with_three_qvalues() {
        assert_eq!(
            chosen("gzip;q=0.5,deflate;q=0.6,br;q=0.8").await,
            some("br")
        );
        assert_eq!(
            chosen("gzip;q=0.8,deflate;q=0.6,br;q=0.5").await,
            some("gzip")
        );
        assert_eq!(
            chosen("gzip;q=0.6,deflate;q=0.8,br;q=0.5").await,
            some("deflate")
        );
        assert_eq!(
            chosen("gzip;q=0.995,deflate;q=0.997,br;q=0.999").await,
            some("br")
        );
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_invalid_encdoing`
    /// (sic).
    #[tokio::test]
    async fn accept_encoding_header_invalid_encdoing() {
        assert_eq!(chosen("invalid,gzip").await, some("gzip"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_with_qvalue_zero`.
    #[tokio::test]
    async fn accept_encoding_header_with_qvalue_zero() {
        assert_eq!(chosen("gzip;q=0").await, None);
        assert_eq!(chosen("gzip;q=0.").await, None);
        assert_eq!(chosen("gzip;q=0,br;q=0.5").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_with_uppercase_letters`.
    #[tokio::test]
    async fn accept_encoding_header_with_uppercase_letters() {
        assert_eq!(chosen("gZiP").await, some("gzip"));
        assert_eq!(chosen("gzip;q=0.5,br;Q=0.8").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_with_allowed_spaces`.
    #[tokio::test]
    async fn accept_encoding_header_with_allowed_spaces() {
        assert_eq!(chosen(" gzip\t; q=0.5 ,\tbr ;\tq=0.8\t").await, some("br"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_with_invalid_spaces`.
    /// tower-http drops an entry with whitespace around `=` (identity); this crate
    /// tolerates it, as real clients send it (README, "Where it differs"), so the weight is
    /// read and gzip chosen. The weights still count: against br at a higher weight, br.
    #[tokio::test]
    async fn accept_encoding_header_with_invalid_spaces() {
        assert_eq!(chosen("gzip;q =0.5").await, some("gzip"));
        assert_eq!(chosen("gzip;q= 0.5").await, some("gzip"));
        assert_eq!(chosen("gzip;q =0.5, br;q= 0.6").await, some("br"));
        assert_eq!(chosen("gzip;q= 0.7, br;q =0.6").await, some("gzip"));
    }

    /// Ports tower-http `content_encoding::tests::accept_encoding_header_with_invalid_quvalues`
    /// (sic): each entry alone, so identity (`negotiation_cases` has them beside a valid
    /// entry).
    #[tokio::test]
    async fn accept_encoding_header_with_invalid_quvalues() {
        for value in [
            "gzip;q=-0.1",
            "gzip;q=00.5",
            "gzip;q=0.5000",
            "gzip;q=.5",
            "gzip;q=1.01",
            "gzip;q=1.001",
        ] {
            assert_eq!(chosen(value).await, None, "{value:?}");
        }
    }

    /// Ports tower-http `content_encoding::tests::wildcard_q_zero_identity_q_zero_no_compression_returns_not_satisfiable`.
    #[tokio::test]
    async fn wildcard_q_zero_identity_q_zero_no_compression_returns_not_satisfiable() {
        let (status, coding) = negotiate(CompressionLayer::new(), &["*;q=0,identity;q=0"]).await;
        assert_eq!((status, coding), (StatusCode::NOT_ACCEPTABLE, None));
    }

    /// Ports tower-http `content_encoding::tests::wildcard_with_low_qvalue`: gzip at 1 beats
    /// zstd and br at the wildcard's 0.5.
    #[tokio::test]
    async fn wildcard_with_low_qvalue() {
        assert_eq!(chosen("*;q=0.5,gzip;q=1").await, some("gzip"));
    }

    /// Ports tower-http `content_encoding::tests::wildcard_q_zero_with_identity_picks_identity`.
    #[tokio::test]
    async fn wildcard_q_zero_with_identity_picks_identity() {
        assert_eq!(chosen("*;q=0,identity").await, None);
    }

    /// Ports tower-http `content_encoding::tests::wildcard_with_partial_server_support_picks_best_available`:
    /// a server offering gzip alone answers `*` with gzip, not zstd or br.
    #[tokio::test]
    async fn wildcard_with_partial_server_support_picks_best_available() {
        let gzip_only = CompressionLayer::new().no_zstd().no_br().no_deflate();
        let (status, coding) = negotiate(gzip_only, &["*"]).await;
        assert_eq!((status, coding), (StatusCode::OK, some("gzip")));
    }
}
