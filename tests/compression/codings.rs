//! tower-http 0.7's own zstd and br compression tests, ported to this crate's API: its
//! `compression/mod.rs` and `compression/layer.rs` tests, and the preference cases of its
//! `content_encoding.rs` that `negotiation.rs` does not already cover. (Its zstd and br
//! decompression tests are in `tests/decompression/codings.rs`.)
//!
//! Each test is named after the tower-http test it ports and says so. Where this crate
//! deliberately answers differently (documented in the README), the test asserts this
//! crate's answer and says why.

// Written for both codings; with only one compiled in, the other's helpers and imports
// go unused.
#![cfg_attr(
    not(all(feature = "dcz", feature = "dcb")),
    allow(unused_imports, dead_code)
)]

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::compression::{Compression, CompressionLayer, CompressionLevel, Predicate};

use crate::common;
use crate::support::{Always, get, stream_of, trailers};

/// tower-http's `handle`: "Hello, World!" with a `foo: bar` trailer.
async fn hello_with_trailers(
    _req: Request<()>,
) -> Result<Response<impl Body<Data = Bytes, Error = Infallible>>, Infallible> {
    let body = Full::new(Bytes::from_static(b"Hello, World!"))
        .with_trailers(async { Some(Ok(trailers(&[("foo", "bar")]))) });
    Ok(Response::new(body))
}

// ---------------------------------------------------------------------------------------
// compression/mod.rs and compression/layer.rs
// ---------------------------------------------------------------------------------------

/// Ports tower-http `compression::tests::zstd_works`.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn zstd_works() {
    let svc = Compression::new(service_fn(hello_with_trailers)).compress_when(Always);
    let res = svc.oneshot(get(Some("zstd"))).await.unwrap();
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
    let layer = CompressionLayer::new()
        .quality(CompressionLevel::Best)
        .no_deflate()
        .no_gzip();
    // `no_br` exists only when br is compiled in, as in tower-http.
    #[cfg(feature = "br")]
    let layer = layer.no_br();
    let svc = tower::ServiceBuilder::new()
        .layer(layer)
        .service_fn(|_req: Request<()>| async {
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(vec![0u8; LEN]))))
        });
    let res = svc.oneshot(get(Some("zstd"))).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
    let body = res.into_body().collect().await.unwrap().to_bytes();
    // `common::unzstd` sets libzstd's `WindowLogMax(23)`, as tower-http's decoder does: it
    // fails on any frame whose window descriptor (or, single-segment, content size) asks for
    // more than 8 MiB, so decoding at all is the check.
    let plain = common::unzstd(&body);
    assert_eq!(plain.len(), LEN);
    assert!(plain.iter().all(|&b| b == 0));
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
    let svc = service_fn(|_req: Request<()>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
            DATA.as_bytes(),
        ))))
    });
    // tower-http's default predicate compresses from 32 bytes; this crate's from 256.
    let svc = CompressionLayer::new()
        .quality(CompressionLevel::Best)
        .min_size(0)
        .layer(svc);
    let res = svc.oneshot(get(Some("br"))).await.unwrap();
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
    let fastest = CompressionLayer::new()
        .quality(CompressionLevel::Fastest)
        .min_size(0)
        .layer(service_fn(|_req: Request<()>| async {
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
                DATA.as_bytes(),
            ))))
        }));
    let res = fastest.oneshot(get(Some("br"))).await.unwrap();
    let fast = res.into_body().collect().await.unwrap().to_bytes();
    assert_ne!(fast, compressed);
    assert_eq!(common::unbrotli(&fast), DATA.as_bytes());
}

/// Not a port: a br body larger than one poll's slice (1 MiB) streams 64 KiB at a time, and
/// its known size reaches brotli as the size hint, so the stream is as small as what the
/// `brotli` crate writes for the whole body in one call (as tower-http's encoder sees a
/// `Full` body) within 1%, although it flushes at every slice (so its output keeps pace
/// with its input) and uses a window sized to the body; without the hint brotli keeps the
/// small-input match finder and the stream is larger.
#[cfg(feature = "br")]
#[tokio::test]
async fn br_stream_of_known_size_uses_the_size_hint() {
    let data = Bytes::from(common::text(1 << 20));
    let body = data.clone();
    let svc = Compression::new(service_fn(move |_req: Request<()>| {
        let body = body.clone();
        async move { Ok::<_, Infallible>(Response::new(Full::new(body))) }
    }));
    let res = svc.oneshot(get(Some("br"))).await.unwrap();
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
    let (ours, whole) = (compressed.len(), reference(data.len()).len());
    assert!(ours * 100 <= whole * 101, "{ours} vs {whole} bytes");
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
    let handler = move |_req: Request<()>| {
        let chunks = (0..file.len())
            .step_by(4096)
            .map(|i| file.slice(i..(i + 4096).min(file.len())))
            .collect();
        async move { Ok::<_, Infallible>(Response::new(stream_of(chunks))) }
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
    let res = svc.oneshot(get(Some("gzip, deflate, br"))).await.unwrap();
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
    let res = svc.oneshot(get(Some("gzip, deflate, br"))).await.unwrap();
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
    let svc = service_fn(|_req: Request<()>| async {
        let encoded = common::br_stream(DATA.as_bytes(), 5, 20);
        let res = Response::builder()
            .header(CONTENT_ENCODING, "br")
            .body(Full::new(Bytes::from(encoded)))
            .unwrap();
        Ok::<_, Infallible>(res)
    });
    let res = Compression::new(svc)
        .oneshot(get(Some("gzip")))
        .await
        .unwrap();
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

    let svc = Compression::new(service_fn(|_req: Request<()>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
            DATA.as_bytes(),
        ))))
    }))
    .compress_when(EveryOtherResponse::default());

    let res = svc.clone().oneshot(get(Some("br"))).await.unwrap();
    assert!(res.headers().get(CONTENT_ENCODING).is_none());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, DATA.as_bytes());

    let res = svc.oneshot(get(Some("br"))).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "br");
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_ne!(body, DATA.as_bytes());
    assert_eq!(common::unbrotli(&body), DATA.as_bytes());
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
#[cfg(all(feature = "dcz", feature = "dcb"))]
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
        let svc = tower::ServiceBuilder::new()
            .layer(layer)
            .service_fn(move |_req: Request<()>| {
                let sent = sent.clone();
                async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(sent)))) }
            });
        let mut req = Request::new(());
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
