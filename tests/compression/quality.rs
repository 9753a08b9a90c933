//! Compression levels, BREACH jitter, and pool statistics.

use std::io::Write;

use http::header::CONTENT_ENCODING;
use http::{HeaderValue, Response};
use tower_gzip::CompressionLevel;
use tower_gzip::compression::CompressionLayer;

use crate::common::{StutterBody, gunzip, text};
use crate::support::{full, private_pool, round, typed};

#[tokio::test]
async fn quality_levels() {
    let data = text(100_000);
    let mut sizes = Vec::new();
    for level in [
        CompressionLevel::Fastest,
        CompressionLevel::Default,
        CompressionLevel::Best,
    ] {
        let layer = CompressionLayer::new().quality(level).pool(private_pool());
        let out = round(&layer, Some("gzip"), full(data.clone())).await;
        assert_eq!(gunzip(&out.body), data);
        sizes.push(out.body.len());
    }
    assert!(
        sizes[0] > sizes[2],
        "Fastest {} vs Best {}",
        sizes[0],
        sizes[2]
    );
    assert!(sizes[0] >= sizes[1], "{sizes:?}");

    // The deflate stream is exactly what flate2 produces at that level (a body over 64 KiB
    // streams through zlib-rs, with no flush when the body never goes pending). The layer
    // feeds deflate 16 KiB at a time, and zlib-rs's output depends on how input arrives, so
    // the reference is fed the same way.
    let small = text(100_000);
    for level in [1, 6, 9] {
        let layer = CompressionLayer::new().quality(CompressionLevel::Precise(level));
        let out = round(&layer, Some("gzip"), full(small.clone())).await;
        let mut reference =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level as u32));
        for chunk in small.chunks(16 * 1024) {
            reference.write_all(chunk).unwrap();
        }
        let reference = reference.finish().unwrap();
        assert_eq!(
            &out.body[10..out.body.len() - 8],
            &reference[..],
            "level {level}"
        );
    }
    // Level 0 stores.
    let layer = CompressionLayer::new().quality(CompressionLevel::Precise(0));
    let out = round(&layer, Some("gzip"), full(small.clone())).await;
    assert!(out.body.len() > small.len());
    assert_eq!(gunzip(&out.body), small);
}

#[tokio::test]
async fn breach_jitter_varies_gzip_length_only() {
    let data = text(4000);
    let layer = CompressionLayer::new().breach_jitter(64);
    let mut lengths = std::collections::BTreeSet::new();
    let mut streamed = std::collections::BTreeSet::new();
    let mut bodies = Vec::new();
    for i in 0..20 {
        // Alternate the one-shot and the streaming path.
        let out = if i % 2 == 0 {
            round(&layer, Some("gzip"), full(data.clone())).await
        } else {
            round(
                &layer,
                Some("gzip"),
                Response::new(StutterBody::data([data.clone()])),
            )
            .await
        };
        assert_eq!(gunzip(&out.body), data);
        if i % 2 == 0 {
            lengths.insert(out.body.len());
        } else {
            streamed.insert(out.body.len());
        }
        bodies.push(out.body);
    }
    assert!(
        lengths.len() >= 3,
        "one-shot gzip lengths vary: {lengths:?}"
    );
    assert!(
        streamed.len() >= 3,
        "streamed gzip lengths vary: {streamed:?}"
    );
    // Padding is 1..=64 bytes on top of the unpadded output.
    let plain = round(&CompressionLayer::new(), Some("gzip"), full(data.clone())).await;
    assert!(lengths.iter().all(|&l| l > plain.body.len()));
    assert!(lengths.iter().all(|&l| l <= plain.body.len() + 64));

    // deflate: unaffected.
    let deflate_plain = round(
        &CompressionLayer::new(),
        Some("deflate"),
        full(data.clone()),
    )
    .await;
    for _ in 0..5 {
        let out = round(&layer, Some("deflate"), full(data.clone())).await;
        assert_eq!(out.body, deflate_plain.body);
    }

    // The gzip CLI decodes padded members.
    let mut child = std::process::Command::new("gzip")
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the gzip CLI is required for this test (apt-get install gzip)");
    let mut stdin = child.stdin.take().unwrap();
    let feed = bodies.clone();
    let writer = std::thread::spawn(move || {
        for b in feed {
            stdin.write_all(&b).unwrap();
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout.len(), data.len() * bodies.len());
    assert!(output.stdout.chunks(data.len()).all(|c| c == &data[..]));
}

#[tokio::test]
async fn stats_add_up() {
    let layer = CompressionLayer::new().pool(private_pool());
    let stats = layer.stats();
    let mut expected_in = 0u64;
    let mut expected_out = 0u64;
    // compressed: one-shot
    let a = text(1000);
    let out = round(&layer, Some("gzip"), full(a.clone())).await;
    expected_in += a.len() as u64;
    expected_out += out.body.len() as u64;
    // compressed: streaming
    let b = text(200_000);
    let out = round(&layer, Some("deflate"), full(b.clone())).await;
    expected_in += b.len() as u64;
    expected_out += out.body.len() as u64;
    // compressed: stuttering
    let out = round(
        &layer,
        Some("gzip"),
        Response::new(StutterBody::data(["ab", "cd"])),
    )
    .await;
    expected_in += 4;
    expected_out += out.body.len() as u64;
    // skipped: small, no accept, image, 406, encoded
    round(&layer, Some("gzip"), full("tiny")).await;
    round(&layer, None, full(a.clone())).await;
    round(&layer, Some("gzip"), typed("image/png", a.clone())).await;
    round(&layer, Some("*;q=0"), full(a.clone())).await;
    let mut res = full(a.clone());
    res.headers_mut()
        .insert(CONTENT_ENCODING, HeaderValue::from_static("br"));
    round(&layer, Some("gzip"), res).await;

    let snap = stats.snapshot();
    assert_eq!(snap.compressed, 3);
    assert_eq!(snap.skipped, 5);
    assert_eq!(snap.bytes_in, expected_in);
    assert_eq!(snap.bytes_out, expected_out);
    // Clones share counters.
    assert_eq!(layer.clone().stats().snapshot(), snap);
}
