//! Round trips and `Accept-Encoding` negotiation (tower-http's list first), builder toggles.

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use tower_gzip::compression::CompressionLayer;

use crate::common::{ReadyFrames, gunzip, inflate, text};
use crate::support::{
    Always, UNKNOWN_CODING, collect, flate_only, full, get, respond, round, trailers, typed,
};
use tower_gzip::ContentCoding;

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

/// gzip and deflate negotiation, against a layer offering only those two (zstd and br,
/// offered by default with their features, are in `every_coding_compiled_in_is_offered`).
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
        let out = round(&flate_only(), Some(accept), full(data.clone())).await;
        assert_eq!(out.status, StatusCode::OK, "accept-encoding {accept:?}");
        assert_eq!(out.encoding(), expected, "accept-encoding {accept:?}");
        assert_eq!(out.decoded(), data, "accept-encoding {accept:?}");
        assert_eq!(out.vary_count(), 1, "accept-encoding {accept:?}");
    }
}

/// The default layer offers every coding compiled in: zstd > br > gzip > deflate when
/// q-values tie, `prefer` reorders them.
#[tokio::test]
async fn every_coding_compiled_in_is_offered() {
    let data = text(2000);
    let first = ContentCoding::PLAIN[0].as_str();
    let first_but_gzip = ContentCoding::PLAIN
        .iter()
        .find(|f| **f != ContentCoding::Gzip)
        .unwrap();
    let br = ContentCoding::from_token("br").map(|f| f.as_str());
    let zstd = ContentCoding::from_token("zstd").map(|f| f.as_str());
    let cases: &[(&str, Option<&str>)] = &[
        ("*", Some(first)),
        ("gzip, deflate, br, zstd", Some(first)),
        ("deflate, gzip, zstd, br", Some(first)),
        ("*, gzip;q=0", Some(first_but_gzip.as_str())),
        ("br", br),
        ("zstd", zstd),
        ("ZSTD;q=0.5, gzip", Some("gzip")),
        ("br;q=0.5, deflate;q=0.6", Some("deflate")),
        ("zstd;q=0.9, br;q=1", br.or(zstd)),
        (UNKNOWN_CODING, None),
    ];
    for &(accept, expected) in cases {
        let out = round(&CompressionLayer::new(), Some(accept), full(data.clone())).await;
        assert_eq!(out.status, StatusCode::OK, "accept-encoding {accept:?}");
        assert_eq!(out.encoding(), expected, "accept-encoding {accept:?}");
        assert_eq!(out.decoded(), data, "accept-encoding {accept:?}");
        assert_eq!(out.vary_count(), 1, "accept-encoding {accept:?}");
    }
    #[cfg(all(feature = "dcz", feature = "dcb"))]
    assert_eq!(first, "zstd");
    // `prefer` moves gzip to the front for ties, the others follow in the default order.
    let layer = CompressionLayer::new().prefer(&[ContentCoding::Gzip]);
    for (accept, expected) in [
        ("*", "gzip"),
        ("zstd, br, gzip", "gzip"),
        ("deflate", "deflate"),
    ] {
        let out = round(&layer, Some(accept), full(data.clone())).await;
        assert_eq!(out.encoding(), Some(expected), "prefer gzip, {accept:?}");
        assert_eq!(out.decoded(), data);
    }
    let layer = CompressionLayer::new().prefer(&[ContentCoding::Deflate, ContentCoding::Gzip]);
    let out = round(&layer, Some("*"), full(data.clone())).await;
    assert_eq!(out.encoding(), Some("deflate"));
    let out = round(&layer, Some("gzip, zstd, br"), full(data.clone())).await;
    assert_eq!(out.encoding(), Some("gzip"));
}

/// gzip and deflate only (see `negotiation_cases`).
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
        let out = collect(respond(&flate_only(), req, full(data.clone())).await).await;
        assert_eq!(out.encoding(), expected, "lines {lines:?}");
        assert_eq!(out.decoded(), data);
    }
}

#[tokio::test]
async fn wildcard_and_identity_exclusions() {
    let data = text(2000);
    // gzip and deflate only: `*` would pick zstd and `br` be acceptable with their features.
    let layer = flate_only();
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
}
