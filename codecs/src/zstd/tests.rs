//! Unit tests of the zstd codec: contexts reused clean, web-safe windows, frames and errors.

use super::*;
use crate::{CompressionLevel, ContentCoding, Decoder, Encoder};

fn level(n: i32) -> Level {
    CompressionLevel::Precise(n).resolve(ContentCoding::Zstd)
}

fn text(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b"the quick brown fox jumps over the lazy dog, "[i % 45] ^ (i / 997) as u8)
        .collect()
}

/// Decodes all of `wire` with a budget of `step` bytes per call, then finishes.
fn decode(pool: &CodecPool, wire: &[u8], step: usize) -> Result<Vec<u8>, DecodeError> {
    let mut decoder = Decoder::new(ContentCoding::Zstd, pool);
    let mut out = BytesMut::new();
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let n = decoder.decode(input, &mut out, step)?;
        input = &input[n..];
    }
    decoder.finish()?;
    Ok(out.to_vec())
}

fn reference(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0; zstd_safe::compress_bound(data.len())];
    let n = zstd_safe::compress(&mut out[..], data, 3).unwrap();
    out.truncate(n);
    out
}

#[test]
fn streaming_round_trip_with_flushes_and_idle_frames() {
    let pool = CodecPool::new();
    let data = text(300_000);
    let mut encoder = Encoder::new(ContentCoding::Zstd, CompressionLevel::Default, &pool);
    let mut wire = BytesMut::new();
    for (i, chunk) in data.chunks(7_777).enumerate() {
        encoder.encode(chunk, &mut wire).unwrap();
        match i % 3 {
            0 => {
                encoder.flush(&mut wire).unwrap();
                // Everything so far decodes, though the frame is open.
                let mut d = Decoder::new(ContentCoding::Zstd, &pool);
                let mut out = BytesMut::new();
                d.decode(&wire, &mut out, usize::MAX).unwrap();
                assert_eq!(&out[..], &data[..out.len()]);
                assert_eq!(out.len(), (i + 1) * 7_777);
            }
            1 => {
                encoder.idle(&mut wire).unwrap();
                assert!(!encoder.holds_state());
                assert_eq!(
                    pool.stats()
                        .kind(crate::pool::PoolKind::ZstdCompressors)
                        .in_use(),
                    0
                );
            }
            _ => {}
        }
    }
    encoder.finish(&mut wire).unwrap();
    drop(encoder);
    for step in [1, 100, 65_536, usize::MAX] {
        assert_eq!(decode(&pool, &wire, step).unwrap(), data, "budget {step}");
    }
    let stats = pool.stats();
    assert_eq!(
        stats.kind(crate::pool::PoolKind::ZstdCompressors).in_use(),
        0
    );
    assert!(
        stats.kind(crate::pool::PoolKind::ZstdCompressors).reused > 0,
        "{stats:?}"
    );
    assert_eq!(
        stats
            .kind(crate::pool::PoolKind::ZstdDecompressors)
            .in_use(),
        0
    );
}

#[test]
fn one_shot_records_the_content_size_and_decodes_with_libzstd() {
    let pool = CodecPool::new();
    for len in [0, 1, 1_000, 65_536] {
        let data = text(len);
        let mut out = BytesMut::new();
        encode_all(level(3), &data, 0, &pool, &mut out).unwrap();
        assert_eq!(
            zstd_safe::get_frame_content_size(&out).unwrap(),
            Some(len as u64)
        );
        let mut plain = vec![0; len];
        let n = zstd_safe::decompress(&mut plain[..], &out).unwrap();
        assert_eq!(&plain[..n], &data[..]);
        assert_eq!(decode(&pool, &out, 4096).unwrap(), data);
    }
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::ZstdCompressors)
            .created,
        1
    );
}

#[test]
fn every_level_stays_web_safe() {
    // A window over 8 MiB would show in the frame header's window descriptor.
    let pool = CodecPool::new();
    let data = text(20_000);
    for n in [1, 3, 19, 20, 22] {
        let mut encoder = Encoder::new(ContentCoding::Zstd, CompressionLevel::Precise(n), &pool);
        let mut wire = BytesMut::new();
        encoder.encode(&data, &mut wire).unwrap();
        encoder.finish(&mut wire).unwrap();
        let mut dctx = DCtx::create();
        dctx.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG))
            .unwrap();
        let mut plain = Vec::with_capacity(data.len());
        dctx.decompress(&mut plain, &wire).unwrap();
        assert_eq!(plain, data, "level {n}");
    }
}

/// A stream of unknown size at the densest levels holds at most level 19's tables: libzstd's
/// own for level 22 make a context of 850 MB.
#[test]
fn the_densest_levels_hold_level_19s_tables() {
    let data = text(50_000);
    let mut sizes = Vec::new();
    for n in [19, 22] {
        let CompressContext(mut cctx) = CompressContext::new(level(n)).unwrap();
        let mut input = InBuffer::around(&data[..]);
        let mut out = BytesMut::new();
        compress_step(
            &mut cctx,
            &mut input,
            &mut out,
            1 << 20,
            EndDirective::ZSTD_e_continue,
        )
        .unwrap();
        while compress_step(
            &mut cctx,
            &mut input,
            &mut out,
            1 << 20,
            EndDirective::ZSTD_e_end,
        )
        .unwrap()
            > 0
        {}
        sizes.push(cctx.sizeof());
    }
    eprintln!(
        "context after a stream of unknown size: level 19 {} B, 22 {} B",
        sizes[0], sizes[1]
    );
    assert!(sizes[1] <= sizes[0] + (1 << 20), "{sizes:?}");
}

/// A frame header asking for a 2^27 window, then a block; valid but too big for HTTP.
fn wide_window_frame() -> Vec<u8> {
    // Magic, descriptor 0x00 (no checksum, no size, window descriptor present),
    // window descriptor exponent 27-10 = 17 (17 << 3), then a raw last block of 1 byte.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 17 << 3];
    frame.extend_from_slice(&[0x09, 0x00, 0x00, b'x']);
    frame
}

#[test]
fn windows_over_8_mib_are_refused_before_allocating() {
    let pool = CodecPool::new();
    let frame = wide_window_frame();
    // libzstd itself accepts it with a large enough limit: the frame is valid.
    let mut plain = Vec::with_capacity(16);
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(27)).unwrap();
    dctx.decompress(&mut plain, &frame).unwrap();
    assert_eq!(plain, b"x");
    let err = decode(&pool, &frame, 1 << 20).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::WindowTooLarge);
    let stats = pool.stats().kind(crate::pool::PoolKind::ZstdDecompressors);
    assert_eq!(stats.in_use(), 0);
    // The failed context was reset before going back, and serves the next body.
    assert_eq!(decode(&pool, &reference(b"hello"), 64).unwrap(), b"hello");
}

#[test]
fn concatenated_and_skippable_frames() {
    let pool = CodecPool::new();
    let mut wire = reference(b"first ");
    // A skippable frame (RFC 8878 section 3.1.2): magic 0x184D2A5x, length, payload.
    wire.extend_from_slice(&[0x53, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    wire.extend_from_slice(&reference(b"second"));
    wire.extend_from_slice(&reference(b""));
    assert_eq!(decode(&pool, &wire, 1 << 20).unwrap(), b"first second");
    for step in [1, 3] {
        // Input fed a byte at a time, too.
        let mut decoder = Decoder::new(ContentCoding::Zstd, &pool);
        let mut out = BytesMut::new();
        for byte in wire.chunks(1) {
            let mut input = byte;
            while !input.is_empty() || decoder.has_pending_output() {
                let n = decoder.decode(input, &mut out, step).unwrap();
                input = &input[n..];
            }
        }
        decoder.finish().unwrap();
        assert_eq!(&out[..], b"first second");
    }
    // A flood of skippable frames costs no output and no error.
    let flood: Vec<u8> = (0..10_000)
        .flat_map(|_| [0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0])
        .collect();
    assert_eq!(decode(&pool, &flood, 1 << 20).unwrap(), b"");
}

#[test]
fn truncation_corruption_and_trailing_data_are_typed() {
    let pool = CodecPool::new();
    let data = text(5_000);
    let mut wire = BytesMut::new();
    let mut encoder = Encoder::new(ContentCoding::Zstd, CompressionLevel::Default, &pool);
    encoder.encode(&data, &mut wire).unwrap();
    encoder.finish(&mut wire).unwrap();
    for cut in 1..wire.len() {
        let err = decode(&pool, &wire[..cut], 1 << 20).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::Truncated, "cut at {cut}");
    }
    // A flipped bit in the last block's literals: corrupt data, or a checksum mismatch.
    let mut flipped = checksummed(&data).to_vec();
    let at = flipped.len() - 6;
    flipped[at] ^= 0x01;
    let err = decode(&pool, &flipped, 1 << 20).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::Checksum | DecodeErrorKind::CorruptData
        ),
        "{err}"
    );
    let mut trailing = wire.to_vec();
    trailing.extend_from_slice(b"junk");
    let err = decode(&pool, &trailing, 1 << 20).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::TrailingData);
    let err = decode(&pool, b"not zstd at all", 1 << 20).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::CorruptHeader);
    // Errors are sticky, and no context leaked.
    assert_eq!(decode(&pool, b"", 1).unwrap(), b"");
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::ZstdDecompressors)
            .in_use(),
        0
    );
}

/// One frame of `data` with the content checksum on, as other encoders may send it.
fn checksummed(data: &[u8]) -> Vec<u8> {
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::ChecksumFlag(true)).unwrap();
    let mut wire = vec![0u8; zstd_safe::compress_bound(data.len())];
    let n = cctx.compress2(&mut wire[..], data).unwrap();
    wire.truncate(n);
    wire
}

#[test]
fn checksum_mismatch_is_reported() {
    let pool = CodecPool::new();
    let mut wire = checksummed(&text(2_000));
    assert_eq!(decode(&pool, &wire, 1 << 20).unwrap(), text(2_000));
    // The last four bytes are the content checksum.
    let n = wire.len();
    wire[n - 1] ^= 0xff;
    let err = decode(&pool, &wire, 1 << 20).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Checksum);
}

#[test]
fn finish_refuses_a_stream_that_failed() {
    let pool = CodecPool::new();
    let mut encoder = ZstdEncoder::new(level(3), &pool);
    let mut wire = BytesMut::new();
    encoder.encode(b"some input", &mut wire).unwrap();
    encoder.idle(&mut wire).unwrap();
    // What a failed call leaves (its context dropped), between frames: finishing must not
    // report a complete stream.
    encoder.fail();
    assert!(encoder.finish(&mut wire).is_err());
    assert!(!encoder.is_finished());
}

/// A stream that pauses after every event: alone in its pool it parks its context and
/// takes it back (one frame after the first pause, which releases: its length is not
/// known yet); when another stream takes the
/// context at each pause, or there is no room to park it, each event is a frame of its own.
/// Every variant decodes, finished while paused or not.
#[test]
fn paused_streams_park_their_context() {
    let events: Vec<Vec<u8>> = (0..20)
        .map(|i| format!("data: {{\"tick\":{i},\"msg\":\"hello hello\"}}\n\n").into_bytes())
        .collect();
    let plain = events.concat();
    for (case, max_idle, taken, frames) in [
        ("quiet", 8, false, 2),
        // A draw takes a parked state only when parked states fill the shelf.
        ("taken", 1, true, 20),
        ("no room", 0, false, 20),
    ] {
        for finish_paused in [true, false] {
            let pool = CodecPool::builder().max_idle(max_idle).build();
            let mut encoder = ZstdEncoder::new(level(3), &pool);
            let mut wire = BytesMut::new();
            for event in &events {
                encoder.encode(event, &mut wire).unwrap();
                encoder.idle(&mut wire).unwrap();
                assert!(!encoder.holds_state(), "{case}");
                if taken {
                    drop(draw_compressor(&pool, level(3)).unwrap());
                }
            }
            if !finish_paused {
                encoder.encode(b"", &mut wire).unwrap();
                encoder.flush(&mut wire).unwrap();
            }
            encoder.finish(&mut wire).unwrap();
            drop(encoder);
            let mut decoder = Decoder::new(ContentCoding::Zstd, &pool);
            let mut out = BytesMut::new();
            assert_eq!(
                decoder.decode(&wire, &mut out, usize::MAX).unwrap(),
                wire.len()
            );
            decoder.finish().unwrap();
            assert_eq!(out[..], plain[..], "{case}");
            assert_eq!(
                decoder.members(),
                frames,
                "{case}, finished while paused: {finish_paused}"
            );
            let stats = pool.stats().kind(crate::pool::PoolKind::ZstdCompressors);
            assert_eq!(stats.in_use(), 0, "{case}: {stats:?}");
            if case == "quiet" {
                assert_eq!((stats.created, stats.reclaimed), (1, 18), "{stats:?}");
            }
        }
    }
}

/// The 3-byte end a stream writes for a frame whose context was taken is what libzstd
/// writes itself when a flushed frame ends.
#[test]
fn a_flushed_frame_ends_as_libzstd_ends_it() {
    let pool = CodecPool::new();
    let mut encoder = ZstdEncoder::new(level(3), &pool);
    let mut wire = BytesMut::new();
    encoder.encode(b"hello hello hello", &mut wire).unwrap();
    encoder.flush(&mut wire).unwrap();
    let flushed = wire.len();
    encoder.finish(&mut wire).unwrap();
    assert_eq!(wire[flushed..], LAST_EMPTY_BLOCK);
}

/// The skippable frame of `padding` bytes that ends a padded stream.
fn assert_padded_end(wire: &[u8], padding: usize) {
    let frame = &wire[wire.len() - 8 - padding..];
    assert_eq!(frame[..4], 0x184D_2A50u32.to_le_bytes(), "skippable magic");
    assert_eq!(frame[4..8], (padding as u32).to_le_bytes(), "its size");
}

/// Padding is a skippable frame after the last frame, streamed (with flushes and idle
/// frames) or in one shot: the one-shot frame still records the content size, and libzstd's
/// one-call decoder and ours both skip the padding.
#[test]
fn padding_is_a_skippable_frame_after_the_last_frame() {
    let pool = CodecPool::new();
    let data = text(50_000);
    for padding in [1, 255, 65_535] {
        let mut encoder = Encoder::new(ContentCoding::Zstd, CompressionLevel::Default, &pool)
            .with_padding(padding);
        let mut streamed = BytesMut::new();
        for (i, chunk) in data.chunks(7_000).enumerate() {
            encoder.encode(chunk, &mut streamed).unwrap();
            match i % 2 {
                0 => encoder.flush(&mut streamed).unwrap(),
                _ => encoder.idle(&mut streamed).unwrap(),
            }
        }
        encoder.finish(&mut streamed).unwrap();
        let mut shot = BytesMut::new();
        encode_all(level(3), &data, padding, &pool, &mut shot).unwrap();
        let size = zstd_safe::get_frame_content_size(&shot).unwrap();
        assert_eq!(size, Some(data.len() as u64));
        for wire in [&streamed[..], &shot[..]] {
            assert_padded_end(wire, padding);
            assert_eq!(decode(&pool, wire, 4096).unwrap(), data, "pad {padding}");
            let mut plain = vec![0; data.len()];
            let n = zstd_safe::decompress(&mut plain[..], wire).unwrap();
            assert_eq!(&plain[..n], &data[..], "libzstd, pad {padding}");
        }
    }
    // An empty body is an empty frame, then the padding.
    let mut encoder =
        Encoder::new(ContentCoding::Zstd, CompressionLevel::Default, &pool).with_padding(9);
    let mut wire = BytesMut::new();
    encoder.finish(&mut wire).unwrap();
    assert_padded_end(&wire, 9);
    assert_eq!(decode(&pool, &wire, 4096).unwrap(), b"");
    // A request past 65,535 bytes is cut to it.
    let mut encoder = Encoder::new(ContentCoding::Zstd, CompressionLevel::Default, &pool)
        .with_padding(usize::MAX);
    let mut wire = BytesMut::new();
    encoder.finish(&mut wire).unwrap();
    assert_padded_end(&wire, 65_535);
}
