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

/// `wire` with the byte at `at` (from the end when negative) XORed with `mask`.
fn flipped(mut wire: Vec<u8>, at: isize, mask: u8) -> Vec<u8> {
    let at = if at < 0 {
        wire.len() - at.unsigned_abs()
    } else {
        at as usize
    };
    wire[at] ^= mask;
    wire
}

#[tokio::test]
async fn corrupt_inputs_fail_with_their_kind() {
    let gzipped = gzip(&text(1000));
    let zlibbed = zlib(&text(1000));
    let mut truncated = gzip(&text(10_000));
    truncated.truncate(truncated.len() / 2);
    let cases = [
        // A bad magic byte.
        (
            "gzip",
            flipped(gzipped.clone(), 0, 0x01),
            DecodeErrorKind::CorruptHeader,
        ),
        // A gzip header, then a final block of the reserved type 3.
        (
            "gzip",
            vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255, 0x07, 0, 0, 0, 0],
            DecodeErrorKind::CorruptData,
        ),
        // The CRC-32, the ISIZE, the Adler-32.
        (
            "gzip",
            flipped(gzipped.clone(), -8, 0xff),
            DecodeErrorKind::Checksum,
        ),
        (
            "gzip",
            flipped(gzipped.clone(), -1, 0x01),
            DecodeErrorKind::Checksum,
        ),
        (
            "deflate",
            flipped(zlibbed.clone(), -1, 0x01),
            DecodeErrorKind::Checksum,
        ),
        ("gzip", truncated, DecodeErrorKind::Truncated),
        (
            "gzip",
            [&gzipped[..], b"garbage"].concat(),
            DecodeErrorKind::TrailingData,
        ),
        (
            "deflate",
            [&zlibbed[..], b"extra"].concat(),
            DecodeErrorKind::TrailingData,
        ),
    ];
    for (coding, wire, kind) in cases {
        corrupt_case(coding, wire, kind).await;
    }
}
