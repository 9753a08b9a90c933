//! Size and ratio limits: boundaries, chains, and the statuses axum gives them.

use http::StatusCode;
use http_body_util::Full;
use tower_gzip::decompression::{DecompressionLimits, RatioLimit, RequestDecompressionLayer};

use crate::common::bomb::{Bomb, BombKind, MIB};
use crate::common::gzip;
use crate::common::server::http1_client as client;
use crate::common::text;
use crate::harness::{FRAME_LIMIT, decoded_ok, encoded, is_limit, run, seen_through_default};
use crate::server::{post_to, serve};

#[tokio::test]
async fn default_limits_stop_a_bomb_by_ratio() {
    let bomb = Bomb::new(BombKind::Gzip, 64);
    let seen = seen_through_default("gzip", bomb).await;
    assert!(is_limit(&seen));
    // 1 MiB before the ratio is checked, then at most burst + 1 frames.
    let decoded = seen.frames * FRAME_LIMIT;
    assert!(decoded <= MIB + 4 * FRAME_LIMIT, "{decoded}");
}

#[tokio::test]
async fn ratio_limit_rejects_a_body_under_the_size_limit() {
    let zeros = vec![0u8; 3 * MIB];
    let out = run(
        RequestDecompressionLayer::new(),
        encoded("gzip", gzip(&zeros)),
    )
    .await;
    assert!(is_limit(&out.seen.unwrap()));
    // The same body passes without a ratio limit.
    let layer =
        RequestDecompressionLayer::new().limits(DecompressionLimits::new().with_ratio(None));
    let out = run(layer, encoded("gzip", gzip(&zeros))).await;
    assert_eq!(out.seen.unwrap().body.unwrap().len(), 3 * MIB);
    // A tighter custom ratio catches ordinary text.
    let plain = text(400_000);
    let mut ratio = RatioLimit::new(2, 1);
    ratio.min_size = 0;
    let layer =
        RequestDecompressionLayer::new().limits(DecompressionLimits::new().with_ratio(Some(ratio)));
    assert!(is_limit(
        &run(layer, encoded("gzip", gzip(&plain)))
            .await
            .seen
            .unwrap()
    ));
}

#[tokio::test]
async fn small_repetitive_body_under_the_minimum_passes() {
    let zeros = vec![0u8; 1024 * 1024 - 1];
    let wire = gzip(&zeros);
    assert!(zeros.len() / wire.len() > 200);
    decoded_ok("gzip", wire, &zeros).await;
}

#[tokio::test]
async fn size_limit_exact_boundary() {
    let plain = text(100_000);
    let limits = DecompressionLimits::none().with_max_size(Some(100_000));
    let out = run(
        RequestDecompressionLayer::new().limits(limits),
        encoded("gzip", gzip(&plain)),
    )
    .await;
    assert_eq!(out.seen.unwrap().body.unwrap(), plain);
    let limits = limits.with_max_size(Some(99_999));
    let out = run(
        RequestDecompressionLayer::new().limits(limits),
        encoded("gzip", gzip(&plain)),
    )
    .await;
    assert!(is_limit(&out.seen.unwrap()));
    let out = run(
        RequestDecompressionLayer::new().limits(DecompressionLimits::none()),
        encoded("gzip", gzip(&plain)),
    )
    .await;
    assert_eq!(out.seen.unwrap().body.unwrap(), plain);
}

#[tokio::test]
async fn limit_applies_to_inner_stages_of_a_chain() {
    // gzip of a gzip bomb: the outer layer is small, the inner stream alone is 8 MiB.
    let inner = gzip(&vec![0u8; 64 * MIB]);
    let wire = gzip(&inner);
    let layer = RequestDecompressionLayer::new()
        .limits(DecompressionLimits::none().with_max_size(Some(MIB)));
    let seen = run(layer, encoded("gzip, gzip", wire)).await.seen.unwrap();
    assert!(is_limit(&seen));
    assert!(seen.frames * FRAME_LIMIT <= MIB + FRAME_LIMIT);
}

#[tokio::test]
async fn limits_through_axum_are_413_and_corrupt_is_400() {
    let (server, _) = serve(RequestDecompressionLayer::new()).await;
    let client = client();
    // (Content-Encoding, body, status, and the reply's body where it is checked)
    let cases: [(&str, Vec<u8>, StatusCode, Option<&str>); 4] = [
        (
            "gzip",
            gzip(&vec![0u8; 8 * MIB]),
            StatusCode::PAYLOAD_TOO_LARGE,
            Some(
                "Payload Too Large: the body inflates past 200:1 after 1048576 bytes (ratio limit)\n",
            ),
        ),
        ("gzip", vec![1u8; 20], StatusCode::BAD_REQUEST, None),
        // Unknown to every build (br, here before, is decoded with its feature).
        (
            "compress",
            vec![1u8; 20],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Some("Unsupported Content-Encoding\n"),
        ),
        ("gzip", gzip(b"four"), StatusCode::OK, Some("4")),
    ];
    for (coding, wire, expected, reply) in cases {
        let (status, body) =
            post_to(&client, &server, "/text", Some(coding), Full::from(wire)).await;
        assert_eq!(status, expected, "{coding}");
        if let Some(reply) = reply {
            assert_eq!(body, reply);
        }
    }
}

#[tokio::test]
async fn a_413_names_the_size_limit_that_tripped() {
    let limits = DecompressionLimits::none().with_max_size(Some(100_000));
    let (server, _) = serve(RequestDecompressionLayer::new().limits(limits)).await;
    let client = client();
    let wire = gzip(&text(200_000));
    let (status, body) = post_to(&client, &server, "/text", Some("gzip"), Full::from(wire)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let expected = "Payload Too Large: the body decodes to more than 100000 bytes (size limit)\n";
    assert_eq!(body, expected);
}
