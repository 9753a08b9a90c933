use bytes::BytesMut;

use super::alloc::FreeLists;
use super::encoder::compress;
use super::state::{draw_compressor, draw_decompressor};
use super::*;
use crate::pool::{CodecPool, PooledState};
use crate::{Decode, DecodeError, DecodeErrorKind, Level};
use brotli::enc::encode::BrotliEncoderOperation;

mod padding;
mod resume;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A JSON array of user records, like an API response: mildly compressible.
fn json(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed | 1);
    let names = [
        "ada", "grace", "alan", "edsger", "barbara", "donald", "ken", "dennis",
    ];
    let tags = ["admin", "ops", "dev", "qa", "sales", "beta"];
    let mut out = b"[".to_vec();
    let mut id = 0;
    while out.len() < len {
        let name = names[rng.below(names.len())];
        out.extend_from_slice(
            format!(
                "{{\"id\":{id},\"name\":\"{name}\",\"email\":\"{name}{}@example.com\",\"score\":{},\"tags\":[\"{}\"]}},",
                rng.below(1000),
                rng.below(100_000),
                tags[rng.below(tags.len())]
            )
            .as_bytes(),
        );
        id += 1;
    }
    out.truncate(len);
    out
}

fn level(n: u8) -> Level {
    crate::CompressionLevel::Precise(i32::from(n)).resolve(crate::ContentCoding::Br)
}

/// Streams `input` through a `BrEncoder` in random chunks, flushing at random.
fn encode_chunked(input: &[u8], quality: u8, rng: &mut Rng, pool: &CodecPool) -> Vec<u8> {
    let mut encoder = BrEncoder::new(level(quality), pool);
    let mut out = BytesMut::new();
    let mut rest = input;
    while !rest.is_empty() {
        let n = (1 + rng.below(4096)).min(rest.len());
        let progress = encoder.encode(&rest[..n], &mut out).unwrap();
        assert_eq!(progress.consumed, n);
        rest = &rest[n..];
        if rng.below(8) == 0 {
            encoder.flush(&mut out).unwrap();
        }
    }
    encoder.finish(&mut out).unwrap();
    assert!(encoder.is_finished());
    assert!(!encoder.holds_state());
    assert_eq!(encoder.total_in(), input.len() as u64);
    assert_eq!(encoder.total_out(), out.len() as u64);
    encoder.finish(&mut out).unwrap(); // again: nothing
    assert_eq!(encoder.total_out(), out.len() as u64);
    out.to_vec()
}

/// Decodes `wire` fed in random chunks with output budget `max_out` per call.
fn decode_chunked(
    wire: &[u8],
    max_out: usize,
    rng: &mut Rng,
    pool: &CodecPool,
) -> Result<Vec<u8>, DecodeError> {
    let mut decoder = BrDecoder::new(pool);
    let mut out = BytesMut::new();
    let mut rest = wire;
    while !rest.is_empty() || decoder.has_pending_output() {
        let n = (1 + rng.below(2048)).min(rest.len());
        let before = out.len();
        let progress = decoder.decode(&rest[..n], &mut out, max_out)?;
        assert!(out.len() - before <= max_out);
        assert_eq!(progress.produced, out.len() - before);
        if !decoder.has_pending_output() {
            assert_eq!(
                progress.consumed, n,
                "all input is consumed unless the budget ran out"
            );
        }
        rest = &rest[progress.consumed..];
    }
    decoder.finish()?;
    assert_eq!(decoder.total_in(), wire.len() as u64);
    assert_eq!(decoder.total_out(), out.len() as u64);
    Ok(out.to_vec())
}

fn reference_decode(wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliDecompress(&mut &wire[..], &mut out).unwrap();
    out
}

/// A known size lets brotli pick the match finder a whole-body call would: the stream
/// fed 64 KiB at a time is as small as the whole body in one call, where without the
/// hint it is larger.
#[test]
fn size_hint_gives_a_stream_the_whole_body_ratio() {
    let pool = CodecPool::new();
    let input = json(1 << 20, 7);
    let encode = |hint: Option<u64>, piece: usize| {
        let mut encoder = BrEncoder::new(level(4), &pool);
        if let Some(hint) = hint {
            encoder.options_mut().unwrap().size_hint = Some(hint);
        }
        let mut out = BytesMut::new();
        for chunk in input.chunks(piece) {
            encoder.encode(chunk, &mut out).unwrap();
        }
        encoder.finish(&mut out).unwrap();
        out
    };
    let whole = encode(Some(input.len() as u64), input.len());
    let hinted = encode(Some(input.len() as u64), 64 * 1024);
    let unhinted = encode(None, 64 * 1024);
    assert!(hinted == whole, "the same bytes as one whole-body call");
    assert!(unhinted.len() > hinted.len());
    // The window sized to the body (2 MiB here, not 4) costs nothing: no match reaches
    // further back than the body's start.
    let default_window = encode(None, input.len());
    assert!(
        hinted.len() <= default_window.len() + 16,
        "{} vs {}",
        hinted.len(),
        default_window.len()
    );
    let mut plain = Vec::new();
    std::io::Read::read_to_end(
        &mut brotli::Decompressor::new(&hinted[..], 4096),
        &mut plain,
    )
    .unwrap();
    assert_eq!(plain, input);
}

#[test]
fn round_trips_at_levels_0_4_11() {
    let pool = CodecPool::new();
    let mut rng = Rng(7);
    for (quality, sizes) in [
        (0, &[0, 1, 100, 5000, 70_000, 300_000][..]),
        (1, &[0, 3000, 70_000][..]),
        (4, &[0, 1, 100, 5000, 70_000, 300_000][..]),
        (6, &[20_000][..]),
        (11, &[0, 1, 2000, 9000][..]),
    ] {
        for &size in sizes {
            let input = json(size, size as u64 + u64::from(quality));
            let wire = encode_chunked(&input, quality, &mut rng, &pool);
            assert_eq!(
                reference_decode(&wire),
                input,
                "q{quality} {size} (reference decoder)"
            );
            let decoded = decode_chunked(&wire, 64 * 1024, &mut rng, &pool).unwrap();
            assert_eq!(decoded, input, "q{quality} {size}");
        }
    }
    assert_eq!(pool.stats().in_use(), 0);
}

#[test]
fn encode_all_round_trips_and_matches_a_fresh_encoder() {
    let pool = CodecPool::new();
    for quality in [0, 2, 4, 5, 9, 11] {
        for size in [0, 10, 1024, 16 * 1024] {
            let input = json(size, 3);
            // Three times on one pool: the later ones run on reused memory and must give
            // the same bytes as the first (a fresh encoder).
            let mut outputs = Vec::new();
            for _ in 0..3 {
                let mut out = BytesMut::new();
                encode_all(level(quality), &input, 0, &pool, &mut out).unwrap();
                outputs.push(out.to_vec());
            }
            assert_eq!(outputs[0], outputs[1], "q{quality} {size}");
            assert_eq!(outputs[0], outputs[2], "q{quality} {size}");
            assert_eq!(reference_decode(&outputs[0]), input, "q{quality} {size}");
            let decoded = decode_chunked(&outputs[0], usize::MAX, &mut Rng(5), &pool).unwrap();
            assert_eq!(decoded, input);
        }
    }
    let stats = pool.stats().kind(crate::pool::PoolKind::BrCompressors);
    assert!(stats.reused > 0, "{stats:?}");
    assert_eq!(pool.stats().in_use(), 0);
}

/// Streams `input` through one encoder with flushes at fixed points.
fn encode_with_flushes(input: &[u8], quality: u8, pool: &CodecPool) -> Vec<u8> {
    let mut encoder = BrEncoder::new(level(quality), pool);
    let mut out = BytesMut::new();
    for (i, chunk) in input.chunks(3000).enumerate() {
        encoder.encode(chunk, &mut out).unwrap();
        if i % 3 == 1 {
            encoder.flush(&mut out).unwrap();
        }
    }
    encoder.finish(&mut out).unwrap();
    out.to_vec()
}

#[test]
fn reused_state_gives_the_output_of_a_fresh_encoder() {
    // Reused memory and a recycled hasher must not change a byte: the output is a
    // function of the input and the level only.
    let dirt = [json(300_000, 99), json(1_100_000, 98), json(700, 97)];
    for quality in [1, 2, 4, 5, 9, 10] {
        let pool = CodecPool::new();
        for size in [0, 100, 1000, 4000, 5000, 20_000] {
            let size = if quality >= 9 { size.min(5000) } else { size };
            let input = json(size, size as u64 + 1);
            let fresh_all = {
                let mut out = BytesMut::new();
                encode_all(level(quality), &input, 0, &CodecPool::new(), &mut out).unwrap();
                out
            };
            let fresh_stream = encode_with_flushes(&input, quality, &CodecPool::new());
            for dirt in &dirt {
                // Dirty the pooled state: other data, other sizes (one over the 1 MiB
                // size hint, where brotli picks another hasher), one-shot and streamed.
                let dirt = if quality >= 5 {
                    &dirt[..dirt.len().min(40_000)]
                } else {
                    &dirt[..]
                };
                let mut scratch = BytesMut::new();
                encode_all(level(quality), dirt, 0, &pool, &mut scratch).unwrap();
                let mut out = BytesMut::new();
                encode_all(level(quality), &input, 0, &pool, &mut out).unwrap();
                assert_eq!(out, fresh_all, "q{quality} {size} one-shot");
                encode_with_flushes(dirt, quality, &pool);
                assert_eq!(
                    encode_with_flushes(&input, quality, &pool),
                    fresh_stream,
                    "q{quality} {size} streamed"
                );
            }
            assert_eq!(reference_decode(&fresh_all), input);
            assert_eq!(reference_decode(&fresh_stream), input);
        }
        let stats = pool.stats().kind(crate::pool::PoolKind::BrCompressors);
        assert_eq!(stats.created, 1, "q{quality}: {stats:?}");
    }
}

#[test]
fn reset_leaves_nothing_live_but_the_spare_hasher() {
    let pool = CodecPool::new();
    for quality in [0, 1, 4, 10] {
        let mut state = draw_compressor(&pool, level(quality));
        let input = json(50_000, 1);
        compress(
            &mut state,
            BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
            &input,
            &mut BytesMut::new(),
        )
        .unwrap();
        assert!(state.reset());
        let live = state.core.m8.0.live();
        match quality {
            4 => assert!(
                state.spare.is_some() && live > 0 && live < 600_000,
                "q{quality}: {live}"
            ),
            _ => assert!(state.spare.is_none() && live == 0, "q{quality}: {live}"),
        }
    }
    let mut state = draw_decompressor(&pool);
    let mut wire = BytesMut::new();
    encode_all(level(4), &json(50_000, 1), 0, &pool, &mut wire).unwrap();
    let mut budget = usize::MAX;
    super::decoder::step(
        &mut state.core,
        &[],
        &wire,
        &mut BytesMut::new(),
        &mut budget,
    )
    .1
    .unwrap();
    assert!(state.lists.lists().live() > 0);
    assert!(state.reset());
    assert_eq!(state.lists.lists().live(), 0);
}

#[test]
fn flush_makes_every_prefix_decodable() {
    let pool = CodecPool::new();
    let input = json(50_000, 21);
    for quality in [0, 1, 4, 11] {
        let input = if quality == 11 {
            &input[..6000]
        } else {
            &input[..]
        };
        let mut encoder = BrEncoder::new(level(quality), &pool);
        let mut decoder = BrDecoder::new(&pool);
        let mut wire = BytesMut::new();
        let mut plain = BytesMut::new();
        let mut rng = Rng(u64::from(quality) + 1);
        let mut fed = 0;
        while fed < input.len() {
            let n = (1 + rng.below(3000)).min(input.len() - fed);
            encoder.encode(&input[fed..fed + n], &mut wire).unwrap();
            fed += n;
            encoder.flush(&mut wire).unwrap();
            // A second flush with nothing new adds at most an empty block.
            let again = encoder.flush(&mut wire).unwrap();
            assert!(again.produced <= 2, "q{quality}: {again:?}");
            let chunk = wire.split();
            let progress = decoder.decode(&chunk, &mut plain, usize::MAX).unwrap();
            assert_eq!(progress.consumed, chunk.len());
            assert_eq!(
                &plain[..],
                &input[..fed],
                "q{quality}: everything fed is decodable"
            );
            assert!(!decoder.is_stream_end());
        }
        // idle is a flush too and keeps the state.
        encoder.idle(&mut wire).unwrap();
        assert!(encoder.holds_state());
        encoder.finish(&mut wire).unwrap();
        decoder.decode(&wire, &mut plain, usize::MAX).unwrap();
        decoder.finish().unwrap();
        assert!(decoder.is_stream_end());
        assert_eq!(decoder.members(), 1);
        assert_eq!(&plain[..], input);
    }
}

#[test]
fn tiny_output_budgets() {
    let pool = CodecPool::new();
    let input = json(20_000, 4);
    let mut wire = BytesMut::new();
    encode_all(level(4), &input, 0, &pool, &mut wire).unwrap();
    for max_out in [1, 7, 100, 4096] {
        let decoded = decode_chunked(&wire, max_out, &mut Rng(max_out as u64), &pool).unwrap();
        assert_eq!(decoded, input, "max_out {max_out}");
    }
    // A budget of zero makes no progress but loses nothing.
    let mut decoder = BrDecoder::new(&pool);
    let mut out = BytesMut::new();
    let progress = decoder.decode(&wire, &mut out, 0).unwrap();
    assert_eq!(progress.produced, 0);
    assert!(decoder.has_pending_output());
    let mut rest = &wire[progress.consumed..];
    while !rest.is_empty() || decoder.has_pending_output() {
        let progress = decoder.decode(rest, &mut out, 1000).unwrap();
        rest = &rest[progress.consumed..];
    }
    decoder.finish().unwrap();
    assert_eq!(&out[..], &input[..]);
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    let pool = CodecPool::new();
    let input = json(3000, 9);
    let mut wire = BytesMut::new();
    encode_all(level(4), &input, 0, &pool, &mut wire).unwrap();
    for cut in 1..wire.len() {
        let mut decoder = BrDecoder::new(&pool);
        let mut out = BytesMut::new();
        let result = decoder
            .decode(&wire[..cut], &mut out, usize::MAX)
            .and_then(|_| decoder.finish());
        let error = result.expect_err("a truncated stream is never Ok");
        assert!(
            matches!(
                error.kind(),
                DecodeErrorKind::Truncated | DecodeErrorKind::CorruptData
            ),
            "cut {cut}: {error}"
        );
        assert!(
            input.starts_with(&out),
            "cut {cut}: only a prefix of the data"
        );
        assert_eq!(
            decoder.finish().unwrap_err().kind(),
            error.kind(),
            "errors are sticky"
        );
    }
    // The empty body is fine: no stream at all.
    let decoder = BrDecoder::new(&pool);
    decoder.finish().unwrap();
    drop(decoder);
    assert_eq!(pool.stats().in_use(), 0);
}

#[test]
fn corrupt_bytes_never_panic() {
    let pool = CodecPool::new();
    let input = json(2000, 13);
    let mut wire = BytesMut::new();
    encode_all(level(4), &input, 0, &pool, &mut wire).unwrap();
    let mut rng = Rng(17);
    for i in 0..wire.len() {
        for _ in 0..3 {
            let mut bad = wire.to_vec();
            bad[i] ^= 1 << rng.below(8);
            let mut decoder = BrDecoder::new(&pool);
            let mut out = BytesMut::new();
            let _ = decoder
                .decode(&bad, &mut out, 1 << 20)
                .and_then(|_| decoder.finish());
        }
    }
    for _ in 0..200 {
        let garbage: Vec<u8> = (0..1 + rng.below(300)).map(|_| rng.next() as u8).collect();
        let mut decoder = BrDecoder::new(&pool);
        let _ = decoder.decode(&garbage, &mut BytesMut::new(), 1 << 20);
    }
    assert_eq!(pool.stats().in_use(), 0);
}

#[test]
fn bytes_after_the_stream_are_trailing_data() {
    let pool = CodecPool::new();
    let input = json(5000, 2);
    let mut wire = BytesMut::new();
    encode_all(level(4), &input, 0, &pool, &mut wire).unwrap();

    // In the same call.
    let mut with_junk = wire.to_vec();
    with_junk.extend_from_slice(b"junk");
    let mut decoder = BrDecoder::new(&pool);
    let error = decoder
        .decode(&with_junk, &mut BytesMut::new(), usize::MAX)
        .unwrap_err();
    assert_eq!(error.kind(), DecodeErrorKind::TrailingData);
    assert_eq!(
        decoder.finish().unwrap_err().kind(),
        DecodeErrorKind::TrailingData
    );

    // In a later call, even one byte (a second br stream is junk too).
    let mut decoder = BrDecoder::new(&pool);
    let mut out = BytesMut::new();
    decoder.decode(&wire, &mut out, usize::MAX).unwrap();
    assert!(decoder.is_stream_end());
    decoder.finish().unwrap();
    decoder.decode(&[], &mut out, usize::MAX).unwrap();
    let error = decoder
        .decode(&wire[..1], &mut out, usize::MAX)
        .unwrap_err();
    assert_eq!(error.kind(), DecodeErrorKind::TrailingData);
    assert_eq!(&out[..], &input[..]);
}

#[test]
fn interop_with_the_brotli_crate() {
    let pool = CodecPool::new();
    for (size, quality) in [
        (0, 4),
        (1, 4),
        (1000, 1),
        (30_000, 5),
        (200_000, 4),
        (5000, 11),
    ] {
        let input = json(size, size as u64);
        // Theirs -> ours, at their defaults (quality 11, window 22) and at others.
        for (their_quality, lgwin) in [(11, 22), (quality, 24), (quality, 10)] {
            let params = brotli::enc::BrotliEncoderParams {
                quality: their_quality,
                lgwin,
                ..Default::default()
            };
            let mut theirs = Vec::new();
            brotli::BrotliCompress(&mut &input[..], &mut theirs, &params).unwrap();
            let decoded = decode_chunked(&theirs, 1 << 16, &mut Rng(1), &pool).unwrap();
            assert_eq!(decoded, input, "{size} q{their_quality} w{lgwin}");
        }
        // Ours -> theirs.
        let ours = encode_chunked(&input, quality as u8, &mut Rng(2), &pool);
        assert_eq!(reference_decode(&ours), input);
    }
}

#[test]
fn states_are_reused_and_returned() {
    let pool = CodecPool::new();
    let input = json(8000, 5);
    for _ in 0..2 {
        let wire = encode_chunked(&input, 4, &mut Rng(1), &pool);
        assert_eq!(
            decode_chunked(&wire, 1 << 16, &mut Rng(1), &pool).unwrap(),
            input
        );
    }
    let stats = pool.stats();
    assert_eq!(
        stats.kind(crate::pool::PoolKind::BrCompressors).created,
        1,
        "{stats:?}"
    );
    assert!(
        stats.kind(crate::pool::PoolKind::BrCompressors).reused > 0,
        "{stats:?}"
    );
    assert_eq!(
        stats.kind(crate::pool::PoolKind::BrDecompressors).created,
        1,
        "{stats:?}"
    );
    assert!(
        stats.kind(crate::pool::PoolKind::BrDecompressors).reused > 0,
        "{stats:?}"
    );
    assert_eq!(stats.in_use(), 0);

    // Dropped mid-stream: returned, and the next stream on it is still correct.
    let mut encoder = BrEncoder::new(level(4), &pool);
    encoder
        .encode(&json(100_000, 8), &mut BytesMut::new())
        .unwrap();
    assert_eq!(pool.stats().in_use(), 1);
    drop(encoder);
    assert_eq!(pool.stats().in_use(), 0);
    let wire = encode_chunked(&input, 4, &mut Rng(1), &pool);
    assert_eq!(reference_decode(&wire), input);

    // Levels do not share states.
    let mut out = BytesMut::new();
    encode_all(level(5), &input, 0, &pool, &mut out).unwrap();
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::BrCompressors)
            .created,
        2
    );
}

#[test]
fn an_errored_decoder_state_is_not_reused() {
    let pool = CodecPool::new();
    let mut wire = BytesMut::new();
    encode_all(level(4), &json(4000, 1), 0, &pool, &mut wire).unwrap();
    let mut bad = wire.to_vec();
    bad[wire.len() / 2] ^= 0xff;
    bad.extend_from_slice(b"\xff\xff\xff\xff");

    let mut decoder = BrDecoder::new(&pool);
    let error = decoder
        .decode(&bad, &mut BytesMut::new(), usize::MAX)
        .and_then(|_| decoder.finish())
        .unwrap_err();
    assert!(matches!(
        error.kind(),
        DecodeErrorKind::CorruptData | DecodeErrorKind::TrailingData
    ));
    assert!(!decoder.holds_state(), "dropped at the error");
    assert_eq!(
        decoder.decode(&wire, &mut BytesMut::new(), 10).unwrap_err(),
        error
    );
    drop(decoder);
    let stats = pool.stats().kind(crate::pool::PoolKind::BrDecompressors);
    assert_eq!(
        (stats.created, stats.discarded, stats.idle),
        (1, 1, 0),
        "{stats:?}"
    );

    // The next decoder gets a new state and works.
    let decoded = decode_chunked(&wire, 1 << 16, &mut Rng(3), &pool).unwrap();
    assert_eq!(decoded, json(4000, 1));
    let stats = pool.stats().kind(crate::pool::PoolKind::BrDecompressors);
    assert_eq!((stats.created, stats.reused), (2, 0), "{stats:?}");
}

#[test]
fn free_lists_stay_bounded() {
    let mut lists = FreeLists::new(1000);
    let a: Vec<u32> = lists.alloc(100);
    let b: Vec<u32> = lists.alloc(200);
    lists.free(a);
    lists.free(b);
    assert_eq!(lists.kept(), 1200.min(lists.kept()));
    assert!(lists.kept() <= 1000);
    // Reused blocks come back cleared.
    let mut c: Vec<u32> = lists.alloc(50);
    assert!(c.iter().all(|&x| x == 0));
    c.fill(7);
    lists.free(c);
    let d: Vec<u32> = lists.alloc(100);
    assert_eq!(d.len(), 100);
    assert!(d.iter().all(|&x| x == 0));
    // A request no kept block fits frees one too-small block.
    let before = lists.kept();
    let e: Vec<u32> = lists.alloc(10_000);
    assert!(lists.kept() < before || before == 0);
    drop((d, e));
}

/// What one streaming body's encoder holds (brotli's live blocks) while it streams 1 MB
/// of text in 64 KiB slices with a flush after each: bounded by the window sized for
/// streams (256 KiB for an unknown size: ~2 MB in all; a 1 MiB window for a known 1 MB
/// body: ~3.6 MB), where the default 4 MiB window and one meta-block per 8 MiB of input
/// held ~6 MB of blocks and a 16 MiB-capable ring buffer. Also: the flushes cost little.
#[test]
fn a_streaming_encoder_holds_a_bounded_state() {
    let pool = CodecPool::new();
    let input = text_for_measure(1_000_000);
    let whole = encode_all_to_vec(&CodecPool::new(), &input);
    for (hint, bound) in [(None, 2_300_000), (Some(1_000_000u64), 4_000_000)] {
        let mut encoder = BrEncoder::new(level(4), &pool);
        encoder.options_mut().unwrap().streaming = true;
        if let Some(h) = hint {
            encoder.options_mut().unwrap().size_hint = Some(h);
        }
        let mut out = BytesMut::new();
        let mut most = 0;
        for slice in input.chunks(64 * 1024) {
            encoder.encode(slice, &mut out).unwrap();
            encoder.flush(&mut out).unwrap();
            most = most.max(encoder.live_bytes());
        }
        encoder.finish(&mut out).unwrap();
        assert!(most <= bound, "{hint:?}: {most} bytes live");
        assert!(
            out.len() * 100 <= whole.len() * 102,
            "{hint:?}: {} vs {}",
            out.len(),
            whole.len()
        );
        assert_eq!(reference_decode(&out), input);
    }
}

fn encode_all_to_vec(pool: &CodecPool, input: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    super::encode_all(level(4), input, 0, pool, &mut out).unwrap();
    out.to_vec()
}

fn text_for_measure(len: usize) -> Vec<u8> {
    let words = [
        "alpha", "bridge", "cobalt", "delta", "ember", "the", "of", "stream", "window",
    ];
    let mut out = Vec::with_capacity(len);
    let mut x = 1u64;
    while out.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.extend_from_slice(words[(x >> 33) as usize % words.len()].as_bytes());
        out.push(if (x >> 20) % 11 == 0 { b'\n' } else { b' ' });
    }
    out.truncate(len);
    out
}
