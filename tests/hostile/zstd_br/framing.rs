//! Where a zstd or br body ends and what follows it: cut at every offset, checksums and
//! bytes changed, garbage after the end (each a 400, the client the matching
//! `DecodeErrorKind`, never a crash or a hang), and RFC 8878 frames concatenated in every
//! shape and split anywhere (decoded whole).

use super::*;

// ---------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------

/// Every prefix of `wire` (a whole `coding` body of `plain`) is a 400 `Truncated` upload
/// and a `Truncated` error for the client; nothing past what the prefix holds reaches the
/// handler. The empty prefix is an empty body, and the whole body decodes.
async fn truncated_at_every_offset(server: &Server, coding: &str, plain: &[u8], wire: &[u8]) {
    server
        .upload(coding, &[], StatusCode::OK, Some("none"))
        .await;
    server.client_expect(coding, &[], Ok(b"")).await;
    for cut in 1..wire.len() {
        let seen = server
            .upload(
                coding,
                &wire[..cut],
                StatusCode::BAD_REQUEST,
                Some("Truncated"),
            )
            .await;
        assert!(seen.decoded <= plain.len() as u64);
        server
            .client_expect(coding, &wire[..cut], Err("Truncated"))
            .await;
    }
    server
        .upload(coding, wire, StatusCode::OK, Some("none"))
        .await;
    server.client_expect(coding, wire, Ok(plain)).await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_truncated_at_every_offset_is_400() {
    let server = start().await;
    let plain =
        b"a small zstd body, truncated at every byte offset in turn, twice: a small zstd body";
    for wire in [zstd_frame(plain, true), zstd_streamed_frame(plain)] {
        truncated_at_every_offset(&server, "zstd", plain, &wire).await;
    }
    server.still_good("zstd truncation").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_truncated_at_every_offset_is_400() {
    let server = start().await;
    let plain = b"a small br body, truncated at every byte offset in turn, twice: a small br body";
    for wire in [
        br_stream(plain, 5, 22),
        br_stream(plain, 0, 16),
        br_stream(plain, 11, 24),
    ] {
        truncated_at_every_offset(&server, "br", plain, &wire).await;
    }
    server.still_good("br truncation").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// Checksums, corrupt data, trailing garbage
// ---------------------------------------------------------------------------------------

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_content_checksum_mismatch_is_400() {
    let server = start().await;
    let plain = text(5_000);
    for good in [zstd_frame(&plain, true), zstd_streamed_frame(&plain)] {
        // Frame_Header_Descriptor bit 2: Content_Checksum_flag, set by libzstd as asked.
        assert_eq!(good[4] & 0x04, 0x04, "the checksum flag is set");
        server
            .upload("zstd", &good, StatusCode::OK, Some("none"))
            .await;
        // The last four bytes are the content checksum (the low 32 bits of XXH64): the
        // lowest and the highest bit of each, flipped one at a time, must all be caught.
        for at in good.len() - 4..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut wire = good.clone();
                wire[at] ^= bit;
                server
                    .upload("zstd", &wire, StatusCode::BAD_REQUEST, Some("Checksum"))
                    .await;
                server.client_expect("zstd", &wire, Err("Checksum")).await;
            }
        }
        // A checksum that matches other content: the frame's data changed, the checksum
        // did not. A byte of the last block's literals (raw, past the block header) is
        // caught by the checksum if the block still decodes, or as corrupt data.
        let mut wire = good.clone();
        let at = wire.len() - 4 - 2;
        wire[at] ^= 0x20;
        let seen = server
            .upload("zstd", &wire, StatusCode::BAD_REQUEST, None)
            .await;
        assert!(
            seen.kind == "Checksum" || seen.kind == "CorruptData",
            "{seen:?}"
        );
    }
    // Without the flag, the same frame has no checksum to check, and decodes.
    let unchecked = zstd_frame(&plain, false);
    assert_eq!(unchecked[4] & 0x04, 0);
    server
        .upload("zstd", &unchecked, StatusCode::OK, Some("none"))
        .await;
    // The checksum flag on a frame that then lacks the checksum (cut off): truncated.
    let good = zstd_frame(&plain, true);
    server
        .upload(
            "zstd",
            &good[..good.len() - 4],
            StatusCode::BAD_REQUEST,
            Some("Truncated"),
        )
        .await;
    server.still_good("zstd checksums").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_trailing_garbage_is_400() {
    let server = start().await;
    let plain = text(3_000);
    let good = zstd_frame(&plain, true);
    // (what follows the frame, the kind): bytes that cannot start a frame are trailing data;
    // the start of a frame (magic or skippable magic) cut short is a truncated frame.
    let cases: &[(&[u8], &str)] = &[
        (b"x", "TrailingData"),
        (b"junk after the frame", "TrailingData"),
        (b"\0\0\0\0", "TrailingData"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "TrailingData"),
        (b"\x28\xb5\x2f\xfd", "Truncated"),
        (b"\x28\xb5\x2f\xfd\x00", "Truncated"),
        (b"\x50\x2a\x4d\x18\x10\x00\x00\x00abc", "Truncated"),
    ];
    for (garbage, kind) in cases {
        let mut wire = good.clone();
        wire.extend_from_slice(garbage);
        server
            .upload("zstd", &wire, StatusCode::BAD_REQUEST, Some(kind))
            .await;
        server.client_expect("zstd", &wire, Err(kind)).await;
        // Garbage that arrives in its own chunk, after the frame: the same answer.
        let mut body = vec![Bytes::from(good.clone()), Bytes::from_static(garbage)];
        body.retain(|b| !b.is_empty());
        let frames: Vec<_> = body
            .into_iter()
            .map(|b| Ok::<_, BoxError>(Frame::data(b)))
            .collect();
        let seen = server
            .inspect(
                "zstd",
                boxed(StreamBody::new(futures_util::stream::iter(frames))),
            )
            .await;
        assert_eq!(
            (seen.status, seen.kind.as_str()),
            (StatusCode::BAD_REQUEST, *kind)
        );
        // What came before the garbage was delivered in full.
        assert_eq!(seen.decoded, plain.len() as u64);
    }
    server.still_good("zstd trailing garbage").await;
    server.pools_are_healthy().await;
}

#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_trailing_garbage_is_400() {
    let server = start().await;
    let plain = text(3_000);
    let good = br_stream(&plain, 5, 22);
    // RFC 7932: one stream, nothing after its last meta-block; a second stream is junk too.
    let second = br_stream(b"another stream", 5, 22);
    let cases: &[&[u8]] = &[b"x", b"\0", b"\x3b", &second, b"junk after the stream"];
    for garbage in cases {
        let mut wire = good.clone();
        wire.extend_from_slice(garbage);
        server
            .upload("br", &wire, StatusCode::BAD_REQUEST, Some("TrailingData"))
            .await;
        server.client_expect("br", &wire, Err("TrailingData")).await;
    }
    server.still_good("br trailing garbage").await;
    server.pools_are_healthy().await;
}

/// br has no checksum: a changed byte is caught when the stream stops making sense, or not
/// at all. Whatever the byte, the answer is 200 or 400, never a crash or a hang, and the
/// pool gets every state back.
#[cfg(feature = "br")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn br_corrupt_bytes_are_400_or_decode() {
    let server = start().await;
    let plain = text(2_000);
    let good = br_stream(&plain, 5, 22);
    let mut refused = 0;
    for at in 0..good.len() {
        let mut wire = good.clone();
        wire[at] ^= 0x55;
        let seen = server
            .inspect("br", boxed(Full::new(Bytes::from(wire))))
            .await;
        match seen.status {
            StatusCode::OK => {}
            StatusCode::BAD_REQUEST => {
                refused += 1;
                assert!(
                    ["CorruptData", "Truncated", "TrailingData"].contains(&seen.kind.as_str()),
                    "{seen:?}"
                );
            }
            other => panic!("byte {at}: {other} {seen:?}"),
        }
    }
    eprintln!("br, one byte changed: {refused} of {} refused", good.len());
    assert!(refused > 0);
    server.still_good("br corrupt bytes").await;
    server.pools_are_healthy().await;
}

// ---------------------------------------------------------------------------------------
// RFC 8878 concatenation
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
