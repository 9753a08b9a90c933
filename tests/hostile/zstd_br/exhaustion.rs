//! Bodies that aim at the server's time and memory: floods of zstd frames that decode to
//! nothing (skippable frames, empty frames), zstd frames that ask for oversized windows, br
//! streams with the large-window extension, and 1 GiB of zeros in both codings, in a
//! request and in a response.

use super::*;

// ---------------------------------------------------------------------------------------
// Floods: skippable frames, empty frames
// ---------------------------------------------------------------------------------------

/// POSTs `chunks` as a zstd body that must decode to exactly `content` (a 200); returns
/// the server's peak RSS growth meanwhile, in KiB.
#[cfg(feature = "zstd")]
async fn uploads_whole(server: &Server, chunks: Chunks, content: &[u8]) -> u64 {
    reset_peak_rss();
    let rss_before = proc_status_kib("VmRSS");
    let seen = server.raw_post("zstd", chunks).await;
    let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
    assert_eq!(
        (seen.status, seen.decoded, seen.crc),
        (
            StatusCode::OK,
            content.len() as u64,
            crc32fast::hash(content)
        ),
        "{seen:?}"
    );
    peak
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
    let peak = uploads_whole(&server, Box::new(flood().chain([frame.clone()])), &content).await;
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
    let peak = uploads_whole(&server, stream(empty.clone(), content.clone()), &content).await;
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

// ---------------------------------------------------------------------------------------
// Window bombs
// ---------------------------------------------------------------------------------------

/// The pool's zstd decoder counters once nothing is checked out.
#[cfg(feature = "zstd")]
async fn settled_zstd_decoders(pool: &CodecPool) -> tower_gzip::pool::KindStats {
    let p = pool.clone();
    assert!(
        eventually(|| p
            .stats()
            .kind(tower_gzip::pool::PoolKind::ZstdDecompressors)
            .in_use()
            == 0)
        .await
    );
    pool.stats()
        .kind(tower_gzip::pool::PoolKind::ZstdDecompressors)
}

/// Frames that ask for a window over 8 MiB are refused with 400 before the window is
/// allocated. The pool shows it: a context that allocated a window of 8 MiB or more has
/// grown past what the pool keeps (4 MiB) and is dropped on return, while one that refused
/// the frame goes back to the shelf. The control case (a 2^23 window, allowed) shows the
/// measurement sees an allocation when there is one.
#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_window_bombs_are_400_before_allocating() {
    let server = start().await;

    // The control: 2^23 is allowed, decodes, and its 8 MiB window is allocated.
    let allowed = zstd_window_frame(23);
    assert_eq!(unzstd(&allowed), b"x");
    let before = settled_zstd_decoders(&server.pool).await;
    let seen = server
        .inspect("zstd", boxed(Full::new(Bytes::from(allowed))))
        .await;
    assert_eq!((seen.status, seen.decoded), (StatusCode::OK, 1));
    let after = settled_zstd_decoders(&server.pool).await;
    assert_eq!(
        after.discarded - before.discarded,
        1,
        "an 8 MiB window was allocated and its context not kept: {after:?}"
    );

    // A single-segment frame whose content size (1 GiB) is its window.
    let mut single_segment = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    single_segment.extend_from_slice(&(1u64 << 30).to_le_bytes());
    single_segment.extend_from_slice(&[0x09, 0x00, 0x00, b'x']);
    let mut bombs: Vec<(String, Vec<u8>)> = [24u8, 27, 31]
        .iter()
        .map(|&log| (format!("window 2^{log}"), zstd_window_frame(log)))
        .collect();
    bombs.push(("single segment, 1 GiB".into(), single_segment));
    for (case, wire) in &bombs {
        // libzstd reads the header as asking for that window: with no window limit (its
        // own maximum, 2^31) the window frames decode; the single-segment one declares
        // 1 GiB of content (it would then fail for want of it).
        assert_eq!(
            zstd_safe::get_frame_content_size(wire).ok(),
            Some(case.starts_with("single").then_some(1 << 30)),
            "{case}"
        );
        if !case.starts_with("single") {
            let mut dctx = zstd_safe::DCtx::create();
            dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(31))
                .unwrap();
            let mut plain = Vec::with_capacity(16);
            dctx.decompress(&mut plain, wire)
                .unwrap_or_else(|code| panic!("{case}: {}", zstd_safe::get_error_name(code)));
            assert_eq!(plain, b"x", "{case}");
        }
        let before = settled_zstd_decoders(&server.pool).await;
        let seen = server
            .inspect("zstd", boxed(Full::new(Bytes::from(wire.clone()))))
            .await;
        assert_eq!(
            (seen.status, seen.kind.as_str(), seen.decoded),
            (StatusCode::BAD_REQUEST, "WindowTooLarge", 0),
            "{case}"
        );
        let after = settled_zstd_decoders(&server.pool).await;
        assert_eq!(
            (after.discarded, after.returned - before.returned),
            (before.discarded, 1),
            "{case}: the context went back to the shelf, so it never grew: {after:?}"
        );
        server
            .upload(
                "zstd",
                wire,
                StatusCode::BAD_REQUEST,
                Some("WindowTooLarge"),
            )
            .await;
        server
            .client_expect("zstd", wire, Err("WindowTooLarge"))
            .await;
    }

    // Refused from the header alone: the header of a 2^31 frame, then 64 MiB the server
    // never needs to read.
    let pulled = Arc::new(AtomicU64::new(0));
    let counter = pulled.clone();
    let mut first = Some(zstd_window_frame(31)[..6].to_vec());
    let endless: Chunks = Box::new(
        std::iter::from_fn(move || Some(first.take().unwrap_or_else(|| vec![0u8; 64 * 1024])))
            .take(1 + 1024)
            .inspect(move |c| {
                counter.fetch_add(c.len() as u64, Ordering::SeqCst);
            }),
    );
    let seen = server.raw_post("zstd", endless).await;
    assert_eq!(
        (seen.status, seen.kind.as_str()),
        (StatusCode::BAD_REQUEST, "WindowTooLarge")
    );
    let pulled = pulled.load(Ordering::SeqCst);
    eprintln!("2^31 window header then 64 MiB: 400 after the client generated {pulled} bytes");
    assert!(pulled < 64 * MIB, "the server read the whole body first");
    server.still_good("window bombs").await;
    server.pools_are_healthy().await;
}

/// br's window is at most 16 MiB (RFC 7932: WBITS 10..=24) and streams with the
/// large-window extension (up to 2^30) are not RFC 7932: refused, both ways.
#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_large_window_streams_are_400() {
    let server = start().await;
    let plain = text(10_000);
    let params = brotli::enc::BrotliEncoderParams {
        quality: 5,
        lgwin: 30,
        large_window: true,
        ..Default::default()
    };
    let mut wire = Vec::new();
    brotli::BrotliCompress(&mut &plain[..], &mut wire, &params).unwrap();
    server
        .upload("br", &wire, StatusCode::BAD_REQUEST, Some("CorruptData"))
        .await;
    server.client_expect("br", &wire, Err("CorruptData")).await;
    // The largest RFC 7932 window decodes.
    let wire = br_stream(&plain, 5, 24);
    server
        .upload("br", &wire, StatusCode::OK, Some("none"))
        .await;
    server.client_expect("br", &wire, Ok(&plain)).await;
    server.still_good("br large window").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// Bombs
// ---------------------------------------------------------------------------------------

/// Makes a bomb of that many bytes of zeros.
type MakeBomb = fn(u64) -> Chunks;

fn counted(chunks: Chunks) -> (Chunks, Arc<AtomicU64>) {
    let pulled = Arc::new(AtomicU64::new(0));
    let counter = pulled.clone();
    let chunks = chunks.inspect(move |c| {
        counter.fetch_add(c.len() as u64, Ordering::SeqCst);
    });
    (Box::new(chunks), pulled)
}

/// 1 GiB of zeros in zstd and in br, generated as it is read, in a request and in a
/// response: 413 (the client's `LengthLimitError`) once the ratio limit (200:1 past 1 MiB,
/// burst 3) sees it, with at most ~1.3 MiB decoded and the peak RSS of the whole process
/// measured. Then bodies that stay under the ratio (about 20:1 here) stop at the 20 MiB
/// size limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gib_bombs_are_413_with_bounded_memory() {
    const GIB: u64 = 1 << 30;
    let server = start().await;
    let bombs: &[(&str, MakeBomb)] = &[
        #[cfg(feature = "zstd")]
        ("zstd", zstd_zeros),
        #[cfg(feature = "br")]
        ("br", br_zeros),
    ];
    for &(coding, make) in bombs {
        // The generators are right: small ones decode with the reference decoders.
        let small: Vec<u8> = make(3 * MIB + 5).flatten().collect();
        let plain = match coding {
            #[cfg(feature = "zstd")]
            "zstd" => unzstd(&small),
            _ => crate::common::decode(Some(coding), &small),
        };
        assert!(plain.len() as u64 == 3 * MIB + 5 && plain.iter().all(|&b| b == 0));

        // A request.
        let measured = reset_peak_rss();
        let rss_before = proc_status_kib("VmRSS");
        let (chunks, pulled) = counted(make(GIB));
        let seen = server.raw_post(coding, chunks).await;
        let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
        assert_eq!(
            (seen.status, seen.kind.as_str()),
            (StatusCode::PAYLOAD_TOO_LARGE, "limit"),
            "{coding}"
        );
        assert!(seen.decoded <= 2 * MIB, "{coding}: {seen:?}");
        let pulled = pulled.load(Ordering::SeqCst);
        eprintln!(
            "{coding} 1 GiB bomb (request): 413 after {} decoded bytes; client generated \
             {pulled} compressed bytes; peak RSS +{peak} KiB{}",
            seen.decoded,
            if measured { "" } else { " (peak not reset)" }
        );
        if measured {
            assert!(peak < 256 * 1024, "{coding}: peak RSS grew by {peak} KiB");
        }
        server.pools_are_healthy().await;
        server.still_good(coding).await;

        // A response, read by the client layer.
        reset_peak_rss();
        let rss_before = proc_status_kib("VmRSS");
        let pulled = server.arm(make(GIB));
        let req = Request::get(server.url(&format!("/bomb/{coding}")))
            .body(boxed(Full::new(Bytes::new())))
            .unwrap();
        let (result, decoded) = server.read_client_response(req).await;
        let peak = proc_status_kib("VmHWM").saturating_sub(rss_before);
        let err = result.expect_err("the bomb is stopped");
        assert!(err.is::<LengthLimitError>(), "{coding}: {err}");
        assert!(decoded <= 2 * MIB, "{coding}: {decoded} bytes decoded");
        eprintln!(
            "{coding} 1 GiB bomb (response): LengthLimitError after {decoded} decoded bytes; \
             server generated {} compressed bytes; peak RSS +{peak} KiB",
            pulled.load(Ordering::SeqCst)
        );
        if measured {
            assert!(peak < 256 * 1024, "{coding}: peak RSS grew by {peak} KiB");
        }
        server.pools_are_healthy().await;

        // Under the ratio's radar: 21 MiB that compresses about 20:1 stops at 20 MiB.
        let plain = crate::noisy_zeros(21 << 20, 11);
        let wire = match coding {
            #[cfg(feature = "zstd")]
            "zstd" => zstd_frame(&plain, true),
            #[cfg(feature = "br")]
            "br" => br_stream(&plain, 1, 22),
            _ => unreachable!(),
        };
        assert!(wire.len() * 200 > plain.len(), "{coding}: ratio under 200");
        let seen = server
            .upload(coding, &wire, StatusCode::PAYLOAD_TOO_LARGE, Some("limit"))
            .await;
        assert!(seen.decoded <= 20 * MIB, "{seen:?}");
        let (result, decoded) = server.fetch(coding, &wire).await;
        assert!(result.expect_err("stopped").is::<LengthLimitError>());
        assert!(decoded <= 20 * MIB);
        eprintln!(
            "{coding} 21 MiB at ~{}:1: 413 after {} decoded bytes (client: {decoded})",
            plain.len() / wire.len(),
            seen.decoded
        );
        server.still_good(coding).await;
    }
    server.pools_are_healthy().await;
}
