//! Corrupt input: the decoder's error kind, and 400 from a real server that keeps serving.

use http::StatusCode;
use http_body_util::Full;
use tower_gzip::codec::DecodeErrorKind;
use tower_gzip::decompression::RequestDecompressionLayer;

use crate::common::server::http1_client as client;
use crate::common::text;
use crate::common::{gzip, zlib};
use crate::harness::{decode_error, encoded, run};
use crate::server::{post_to, serve};

/// The corrupt body gets 400 from axum, and the server then serves a valid request.
async fn corrupt_case(coding: &str, wire: Vec<u8>, kind: DecodeErrorKind) {
    let out = run(
        RequestDecompressionLayer::new(),
        encoded(coding, wire.clone()),
    )
    .await;
    assert_eq!(decode_error(&out.seen.unwrap()), kind);

    let (server, _) = serve(RequestDecompressionLayer::new()).await;
    let client = client();
    let (status, body) = post_to(&client, &server, "/echo", Some(coding), Full::from(wire)).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let plain = text(50_000);
    let (status, body) = post_to(
        &client,
        &server,
        "/echo",
        Some("gzip"),
        Full::from(gzip(&plain)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, plain);
}

#[tokio::test]
async fn corrupt_bad_header() {
    let mut wire = gzip(&text(1000));
    wire[0] = 0x1e;
    corrupt_case("gzip", wire, DecodeErrorKind::CorruptHeader).await;
}

#[tokio::test]
async fn corrupt_deflate_data() {
    // A gzip header, then a final block of the reserved type 3.
    let wire = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255, 0x07, 0, 0, 0, 0];
    corrupt_case("gzip", wire, DecodeErrorKind::CorruptData).await;
}

#[tokio::test]
async fn corrupt_crc() {
    let mut wire = gzip(&text(1000));
    let at = wire.len() - 8;
    wire[at] ^= 0xff;
    corrupt_case("gzip", wire, DecodeErrorKind::Checksum).await;
}

#[tokio::test]
async fn corrupt_isize() {
    let mut wire = gzip(&text(1000));
    let at = wire.len() - 1;
    wire[at] ^= 0x01;
    corrupt_case("gzip", wire, DecodeErrorKind::Checksum).await;
}

#[tokio::test]
async fn corrupt_adler32() {
    let mut wire = zlib(&text(1000));
    let at = wire.len() - 1;
    wire[at] ^= 0x01;
    corrupt_case("deflate", wire, DecodeErrorKind::Checksum).await;
}

#[tokio::test]
async fn corrupt_truncated() {
    let mut wire = gzip(&text(10_000));
    wire.truncate(wire.len() / 2);
    corrupt_case("gzip", wire, DecodeErrorKind::Truncated).await;
}

#[tokio::test]
async fn corrupt_trailing_garbage() {
    let mut wire = gzip(&text(1000));
    wire.extend_from_slice(b"garbage");
    corrupt_case("gzip", wire, DecodeErrorKind::TrailingData).await;
    let mut wire = zlib(&text(1000));
    wire.extend_from_slice(b"extra");
    corrupt_case("deflate", wire, DecodeErrorKind::TrailingData).await;
}
