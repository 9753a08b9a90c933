//! RFC 8878 framing as an attacker uses it: frames concatenated in every shape, floods of
//! skippable frames, endless runs of empty frames that decode to nothing.

use super::*;

// ---------------------------------------------------------------------------------------
// RFC 8878 framing: concatenation, skippable frames, empty frames
// ---------------------------------------------------------------------------------------

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_concatenated_frames_decode() {
    let server = start().await;
    // Frames of every shape libzstd writes, with skippable frames of every magic nibble
    // and empty frames between them.
    let parts: [&[u8]; 4] = [b"first frame, ", b"second frame, ", b"", b"last frame"];
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        wire.extend(skippable(i as u8 * 5, format!("skip {i}").as_bytes()));
        wire.extend(match i % 3 {
            0 => zstd_frame(part, true),
            1 => zstd_frame(part, false),
            _ => zstd_streamed_frame(part),
        });
        expected.extend_from_slice(part);
    }
    wire.extend(skippable(15, b""));
    assert_eq!(unzstd(&wire), expected, "libzstd reads it the same");
    let seen = server
        .upload("zstd", &wire, StatusCode::OK, Some("none"))
        .await;
    assert_eq!(seen.crc, crc32fast::hash(&expected));
    server.client_expect("zstd", &wire, Ok(&expected)).await;
    // Chunks of 1, 2, 3, 5 and 7 bytes put a chunk boundary inside every magic number,
    // header, block and checksum: the decoder must carry any partial frame over.
    for chunk in [1, 2, 3, 5, 7] {
        let seen = server.inspect("zstd", chunked(&wire, chunk)).await;
        assert_eq!(
            (seen.status, seen.decoded, seen.crc),
            (
                StatusCode::OK,
                expected.len() as u64,
                crc32fast::hash(&expected)
            ),
            "chunks of {chunk}"
        );
    }
    // Many frames of real content: 500 frames of 1,000 to 1,499 bytes, every other one with
    // a content checksum.
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for i in 0..500 {
        let part = text(1_000 + i);
        wire.extend(zstd_frame(&part, i % 2 == 0));
        expected.extend(part);
    }
    let seen = server
        .upload("zstd", &wire, StatusCode::OK, Some("none"))
        .await;
    assert_eq!(seen.crc, crc32fast::hash(&expected));
    server.client_expect("zstd", &wire, Ok(&expected)).await;
    server.still_good("zstd concatenation").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_skippable_frame_floods() {
    let server = start().await;
    let content = text(4_000);
    let frame = zstd_frame(&content, true);

    // 1,000,000 empty skippable frames (8 MB), then a frame: generated as it is sent.
    let floods = 1_000_000u64;
    let flood = move || -> Chunks {
        let chunk = skippable(0, b"").repeat(8192);
        let n = floods / 8192;
        let tail = skippable(7, b"").repeat((floods % 8192) as usize);
        Box::new(std::iter::repeat_n(chunk, n as usize).chain([tail]))
    };
    reset_peak_rss();
    let rss_before = proc_status_kib("VmRSS");
    let frame_copy = frame.clone();
    let seen = server
        .raw_post("zstd", Box::new(flood().chain([frame_copy])))
        .await;
    let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
    assert_eq!(
        (seen.status, seen.decoded, seen.crc),
        (
            StatusCode::OK,
            content.len() as u64,
            crc32fast::hash(&content)
        ),
        "{seen:?}"
    );
    eprintln!("{floods} skippable frames then a frame: 200, peak RSS +{peak} KiB");
    // The client side: the same flood served as a response.
    let pulled = server.arm(Box::new(flood().chain([frame.clone()])));
    let req = Request::get(server.url("/bomb/zstd"))
        .body(boxed(Full::new(Bytes::new())))
        .unwrap();
    let (result, _) = server.read_client_response(req).await;
    assert!(result.expect("the flood decodes") == content);
    assert_eq!(
        pulled.load(Ordering::SeqCst),
        floods * 8 + frame.len() as u64
    );

    // Skippable frames with large payloads: 16 MiB of junk in frames of up to 4 MiB.
    let junk = crate::common::noise(4 << 20, 5);
    let big: Chunks = Box::new(
        (0..4)
            .map(move |_| skippable(3, &junk))
            .chain([frame.clone()]),
    );
    let seen = server.raw_post("zstd", big).await;
    assert_eq!(
        (seen.status, seen.decoded),
        (StatusCode::OK, content.len() as u64),
        "{seen:?}"
    );

    // A skippable frame that claims 4 GiB - 1 and ends after 1 MiB: truncated.
    let mut head = (0x184D_2A5Fu32).to_le_bytes().to_vec();
    head.extend_from_slice(&u32::MAX.to_le_bytes());
    let cut: Chunks = Box::new([head, vec![0xa5; 1 << 20]].into_iter());
    let seen = server.raw_post("zstd", cut).await;
    assert_eq!(
        (seen.status, seen.kind.as_str()),
        (StatusCode::BAD_REQUEST, "Truncated")
    );
    server.still_good("skippable floods").await;
    server.pools_are_healthy().await;
}

/// An endless stream of empty frames produces no output, so no limit stops it: the decoder
/// must keep up without growing, and answer once the body ends. 500,000 empty frames (libzstd's
/// own empty frame, 9 bytes) then content.
#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_endless_empty_frames() {
    let server = start().await;
    let empty = zstd_frame(b"", false);
    assert_eq!(unzstd(&empty.repeat(3)), b"");
    let content = text(2_000);
    let frames = 500_000usize;
    let per_chunk = 4096;
    let stream = |empty: Vec<u8>, content: Vec<u8>| -> Chunks {
        let chunk = empty.repeat(per_chunk);
        Box::new(
            std::iter::repeat_n(chunk, frames / per_chunk)
                .chain([empty.repeat(frames % per_chunk), zstd_frame(&content, true)]),
        )
    };
    reset_peak_rss();
    let rss_before = proc_status_kib("VmRSS");
    let seen = server
        .raw_post("zstd", stream(empty.clone(), content.clone()))
        .await;
    let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
    assert_eq!(
        (seen.status, seen.decoded, seen.crc),
        (
            StatusCode::OK,
            content.len() as u64,
            crc32fast::hash(&content)
        ),
        "{seen:?}"
    );
    eprintln!(
        "{frames} empty zstd frames ({} bytes) then content: 200, peak RSS +{peak} KiB",
        frames * empty.len()
    );
    // Only empty frames: an empty body.
    let seen = server
        .raw_post(
            "zstd",
            Box::new(std::iter::repeat_n(empty.repeat(per_chunk), 32)),
        )
        .await;
    assert_eq!((seen.status, seen.decoded), (StatusCode::OK, 0));
    // The client side.
    server.arm(stream(empty, content.clone()));
    let req = Request::get(server.url("/bomb/zstd"))
        .body(boxed(Full::new(Bytes::new())))
        .unwrap();
    let (result, _) = server.read_client_response(req).await;
    assert!(result.expect("empty frames then content decode") == content);
    server.still_good("empty frames").await;
    server.pools_are_healthy().await;
}

/// Empty frames without end decode to nothing, so no decoded-size or ratio limit sees them:
/// the compressed body is bounded too (`DecompressionLimits::max_wire_size`, the 20 MiB size
/// limit plus room for framing), and the body stops with a 413 / `LengthLimitError`.
#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_endless_empty_frames_are_413() {
    let server = start().await;
    let max_wire = tower_gzip::decompression::DecompressionLimits::new()
        .max_wire_size()
        .unwrap();
    let endless = |pulled: Arc<AtomicU64>| -> Chunks {
        let chunk = zstd_frame(b"", false).repeat(4096);
        Box::new(std::iter::repeat(chunk).inspect(move |c| {
            pulled.fetch_add(c.len() as u64, Ordering::SeqCst);
        }))
    };
    let pulled = Arc::new(AtomicU64::new(0));
    let seen = server.raw_post("zstd", endless(pulled.clone())).await;
    assert_eq!(
        (seen.status, seen.kind.as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "limit")
    );
    let sent = pulled.load(Ordering::SeqCst);
    eprintln!("endless empty zstd frames: 413 after {sent} bytes generated (bound {max_wire})");
    // What the server read, plus what the socket buffers took before the answer.
    assert!(
        sent > max_wire && sent < max_wire + (16 << 20),
        "{sent} bytes"
    );

    // The client side: a response of endless empty frames.
    server.arm(endless(Arc::default()));
    let req = Request::get(server.url("/bomb/zstd"))
        .body(boxed(Full::new(Bytes::new())))
        .unwrap();
    let (result, _) = server.read_client_response(req).await;
    let err = result.expect_err("endless empty frames must not end well");
    assert!(
        err.downcast_ref::<http_body_util::LengthLimitError>()
            .is_some(),
        "{err}"
    );
    server.still_good("endless empty frames").await;
    server.pools_are_healthy().await;
}
