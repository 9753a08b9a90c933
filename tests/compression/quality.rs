//! Compression levels, BREACH jitter, and pool statistics.

use std::io::Write;

use http::header::CONTENT_ENCODING;
use http::{HeaderValue, Response};
use tower_gzip::compression::{CompressionLayer, SkipReason};
use tower_gzip::{CodecPool, CompressionLevel};

use crate::common::{StutterBody, gunzip, text};
use crate::support::{SLICE, full, private_pool, round, typed};

/// Raw deflate of `data` at `level` by flate2 alone, as the streaming body writes it for a
/// body that never goes pending: input fed 16 KiB at a time, one slice per poll.
/// With `release` (a crowded pool) every slice ends with a sync flush and gives the state
/// back (a crowded pool parks nothing), and the next slice primes a fresh one. Without, one
/// state runs to the end with no flush. The last slice finishes the stream.
fn sliced_reference(data: &[u8], level: u32, release: bool) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    const CHUNK: usize = 16 * 1024;

    fn run(c: &mut Compress, mut input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) {
        loop {
            out.reserve(input.len() + 4096);
            let before = c.total_in();
            let status = c.compress_vec(input, out, flush).unwrap();
            input = &input[(c.total_in() - before) as usize..];
            // As the body does: plain input calls stop once the input is taken (zlib-rs's
            // medium strategy at level 6 emits differently after an extra empty call);
            // flushes go on while deflate fills the room.
            let done = match flush {
                FlushCompress::Finish => status == Status::StreamEnd,
                FlushCompress::None => input.is_empty(),
                _ => input.is_empty() && out.len() < out.capacity(),
            };
            if done {
                return;
            }
        }
    }

    let mut out = Vec::new();
    let mut state = Compress::new(Compression::new(level), false);
    // 64 KiB per slice, except that a slice goes on to the end of the input in hand when at
    // most one more slice of it is left (the body's "finish the chunk" rule; `data` is one
    // chunk here).
    let mut start = 0;
    while start < data.len() {
        let mut end = (start + SLICE).min(data.len());
        if data.len() - end <= SLICE {
            end = data.len();
        }
        let slice = &data[start..end];
        start = end;
        for chunk in slice.chunks(CHUNK) {
            run(&mut state, chunk, &mut out, FlushCompress::None);
        }
        if slice.len() < SLICE {
            // The budget was not used up: the body saw its end in the same poll.
            break;
        }
        if release {
            // Every slice that used up its budget ends with a sync flush, output or not
            // (also the last one: the end is only seen in the next poll), and gives the
            // state back; the next slice primes a fresh one with the last 16 KiB (half a
            // window: the pool is crowded).
            run(&mut state, &[], &mut out, FlushCompress::Sync);
            state = Compress::new(Compression::new(level), false);
            state
                .set_dictionary(&data[end.saturating_sub(16 * 1024)..end])
                .unwrap();
        }
    }
    run(&mut state, &[], &mut out, FlushCompress::Finish);
    out
}

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
    // streams through zlib-rs). The layer feeds deflate 16 KiB at a time, and zlib-rs's
    // output depends on how input arrives, so the reference is fed the same way. In a pool
    // crowded past its hold limit (0 here) streaming bodies give their gzip/deflate state
    // back between 64 KiB slices after a sync flush, so the reference also flushes there (see
    // `sliced_reference`); under the limit one state runs through. Each pool is private, so other tests cannot crowd it.
    // Crowded: 300,000 bytes, slices of 64, 64, 64 and 101.4 KiB (the last takes the rest
    // in hand), each ending with a release. Under the limit: 100,000 bytes, one state.
    for (hold_limit, release, len) in [(0, true, 300_000), (usize::MAX, false, 100_000)] {
        let small = text(len);
        for level in [1, 6, 9] {
            let pool = CodecPool::builder().hold_limit(hold_limit).build();
            let layer = CompressionLayer::new()
                .quality(CompressionLevel::Precise(level))
                .pool(pool);
            let out = round(&layer, Some("gzip"), full(small.clone())).await;
            let reference = sliced_reference(&small, level as u32, release);
            assert_eq!(
                &out.body[10..out.body.len() - 8],
                &reference[..],
                "level {level}, hold limit {hold_limit}"
            );
        }
    }
    // Level 0 stores.
    let small = text(100_000);
    let layer = CompressionLayer::new().quality(CompressionLevel::Precise(0));
    let out = round(&layer, Some("gzip"), full(small.clone())).await;
    assert!(out.body.len() > small.len());
    assert_eq!(gunzip(&out.body), small);
}

#[tokio::test]
async fn breach_jitter_varies_gzip_and_deflate_lengths() {
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

    // deflate is padded too (empty blocks after the zlib header), and still decodes.
    let deflate_plain = round(
        &CompressionLayer::new(),
        Some("deflate"),
        full(data.clone()),
    )
    .await;
    let mut deflated = std::collections::BTreeSet::new();
    for _ in 0..5 {
        let out = round(&layer, Some("deflate"), full(data.clone())).await;
        assert_eq!(crate::common::decode::inflate(&out.body), data);
        assert!(out.body.len() > deflate_plain.body.len());
        deflated.insert(out.body.len());
    }
    assert!(deflated.len() >= 2, "deflate lengths vary: {deflated:?}");

    // The gzip CLI decodes padded members.
    if !crate::common::tools::available(&["gzip"], &[]) {
        return;
    }
    let mut child = std::process::Command::new("gzip")
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run the gzip CLI");
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

    let snap = stats.total();
    assert_eq!(snap.compressed, 3);
    let skipped: u64 = SkipReason::ALL.iter().map(|&r| stats.skipped_for(r)).sum();
    assert_eq!(skipped, 5);
    assert_eq!(snap.bytes_in, expected_in);
    assert_eq!(snap.bytes_out, expected_out);
    // Clones share counters.
    assert_eq!(layer.clone().stats().total(), snap);
}

/// A body known in full, compressed in one shot as the layer does: what `coding` at `level`
/// must produce, byte for byte (every coding's one-shot output is deterministic).
fn one_shot(coding: tower_gzip::ContentCoding, level: CompressionLevel, data: &[u8]) -> Vec<u8> {
    let mut out = bytes::BytesMut::new();
    tower_gzip::codec::OneShot::new(coding)
        .level(level)
        .pool(&private_pool())
        .encode(data, &mut out)
        .unwrap();
    out.to_vec()
}

/// `level(coding, ..)` sets that coding's level and leaves the others at `quality(..)`'s:
/// each coding's response is exactly its one-shot output at its own level.
#[tokio::test]
async fn each_coding_uses_its_own_level() {
    use tower_gzip::ContentCoding;
    let data = text(20_000);
    let own = [
        (ContentCoding::Gzip, CompressionLevel::Precise(4)),
        (ContentCoding::Deflate, CompressionLevel::Precise(9)),
        (ContentCoding::Zstd, CompressionLevel::Precise(19)),
        (ContentCoding::Br, CompressionLevel::Precise(9)),
    ];
    let mut layer = CompressionLayer::new()
        .pool(private_pool())
        .quality(CompressionLevel::Fastest);
    for (coding, level) in own {
        layer = layer.level(coding, level);
    }
    for &coding in ContentCoding::PLAIN {
        let (_, level) = own.iter().find(|(c, _)| *c == coding).unwrap();
        let out = round(&layer, Some(coding.as_str()), full(data.clone())).await;
        assert_eq!(out.encoding(), Some(coding.as_str()));
        assert_eq!(out.body, one_shot(coding, *level, &data), "{coding:?}");
        // Not what the layer's own quality would have made.
        let fastest = one_shot(coding, CompressionLevel::Fastest, &data);
        assert_ne!(out.body, fastest, "{coding:?} at its own level");
    }
}

/// `quality(..)` after `level(..)` sets every coding again.
#[tokio::test]
async fn quality_sets_every_coding() {
    use tower_gzip::ContentCoding;
    let data = text(20_000);
    let layer = CompressionLayer::new()
        .pool(private_pool())
        .level(ContentCoding::Gzip, CompressionLevel::Precise(1))
        .quality(CompressionLevel::Best);
    for &coding in ContentCoding::PLAIN {
        if coding == ContentCoding::Br {
            continue; // quality 11 takes seconds on debug builds; covered by the test above
        }
        let out = round(&layer, Some(coding.as_str()), full(data.clone())).await;
        assert_eq!(
            out.body,
            one_shot(coding, CompressionLevel::Best, &data),
            "{coding:?}"
        );
    }
}

/// `level_for` chooses per response from its parts: the coding, the size, the path and the
/// content type each change the level, `None` sends it unencoded, and a client that refuses
/// identity still gets it compressed.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn level_for_chooses_per_response() {
    use crate::support::{collect, respond};
    use http::header::CONTENT_TYPE;
    use tower_gzip::ContentCoding;
    let data = text(20_000);
    let layer = CompressionLayer::new()
        .pool(private_pool())
        .level_for(|response| {
            let csv = response
                .headers()
                .get(CONTENT_TYPE)
                .is_some_and(|t| t == "text/csv");
            match (response.coding(), response.path()) {
                (_, "/raw") => None,
                _ if csv => Some(CompressionLevel::Precise(1)),
                (ContentCoding::Zstd, _) if response.size() == Some(20_000) => {
                    Some(CompressionLevel::Precise(19))
                }
                _ => Some(response.level()),
            }
        });
    let request = |path: &str, accept: &str| {
        http::Request::get(path)
            .header(http::header::ACCEPT_ENCODING, accept)
            .body(())
            .unwrap()
    };
    let zstd = collect(respond(&layer, request("/", "zstd"), full(data.clone())).await).await;
    assert_eq!(
        zstd.body,
        one_shot(ContentCoding::Zstd, CompressionLevel::Precise(19), &data)
    );

    let gzip = collect(respond(&layer, request("/", "gzip"), full(data.clone())).await).await;
    assert_eq!(
        gzip.body,
        one_shot(ContentCoding::Gzip, CompressionLevel::Default, &data)
    );

    let csv = typed("text/csv", data.clone());
    let csv = collect(respond(&layer, request("/", "gzip"), csv).await).await;
    assert_eq!(
        csv.body,
        one_shot(ContentCoding::Gzip, CompressionLevel::Precise(1), &data)
    );

    let raw = collect(respond(&layer, request("/raw", "gzip"), full(data.clone())).await).await;
    assert_eq!(raw.encoding(), None);
    assert_eq!(raw.body, data);
    assert_eq!(raw.headers[http::header::VARY], "accept-encoding");

    let refused = request("/raw", "gzip, identity;q=0");
    let refused = collect(respond(&layer, refused, full(data.clone())).await).await;
    assert_eq!(refused.encoding(), Some("gzip"));
}

/// At light load a governor changes nothing: the same bytes as the configured level, and
/// its stats show the level each coding used.
#[tokio::test]
async fn a_governor_at_light_load_leaves_the_bytes_alone() {
    use tower_gzip::ContentCoding;
    use tower_gzip::compression::Governor;
    let data = text(20_000);
    let governor = Governor::new();
    let layer = CompressionLayer::new()
        .pool(private_pool())
        .level(ContentCoding::Gzip, CompressionLevel::Precise(9))
        .adaptive(governor.clone());
    for _ in 0..3 {
        let out = round(&layer, Some("gzip"), full(data.clone())).await;
        assert_eq!(
            out.body,
            one_shot(ContentCoding::Gzip, CompressionLevel::Precise(9), &data)
        );
    }
    let stats = governor.stats();
    assert_eq!(stats.step, 0);
    assert!(
        stats.levels.contains(&(ContentCoding::Gzip, Some(9))),
        "{stats:?}"
    );
}
