//! A br stream that gives its state back at a pause and goes on with another encoder.

use std::time::Duration;

use bytes::BytesMut;

use crate::CompressionLevel;
use crate::br::BrEncoder;
use crate::br::state::draw_compressor;
use crate::pause_steps::step;
use crate::pool::CodecPool;
use crate::{ContentCoding, Level};

fn level(n: u8) -> Level {
    CompressionLevel::Precise(i32::from(n)).resolve(ContentCoding::Br)
}

/// A pool with `max_idle` places; with none, every pause counts as long (a zero park
/// bound), so each event resumes on a fresh encoder primed with the history.
fn pool_with(max_idle: usize) -> CodecPool {
    let bound = if max_idle == 0 {
        Duration::ZERO
    } else {
        Duration::from_secs(1)
    };
    CodecPool::builder()
        .max_idle(max_idle)
        .park_bound(bound)
        .build()
}

fn decode(wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliDecompress(&mut &wire[..], &mut out).expect("one valid br stream");
    out
}

/// An SSE-like event: repeats earlier events (distances into the history) and varies.
fn event(i: usize) -> Vec<u8> {
    format!(
        "event: tick\ndata: {{\"n\":{i},\"msg\":\"hello hello\",\"sq\":{}}}\n\n",
        i * i
    )
    .into_bytes()
}

/// Events with an idle after each: the stream holds no state while idle, and whether the
/// next event takes the parked state back, or a fresh one primed with the history (the
/// parked one taken by another stream), the output is one valid stream.
#[test]
fn idle_gives_the_state_back_and_the_stream_stays_valid() {
    for quality in [2u8, 3, 4, 5, 6, 9, 10] {
        for steal in [false, true] {
            // Every pause long: the state goes back at each.
            let pool = CodecPool::builder()
                .max_idle(2)
                .park_bound(Duration::ZERO)
                .build();
            let mut encoder = BrEncoder::new(level(quality), &pool);
            encoder.options_mut().unwrap().streaming = true;
            let (mut wire, mut plain) = (BytesMut::new(), Vec::new());
            for i in 0..12 {
                let e = event(i);
                encoder.encode(&e, &mut wire).unwrap();
                plain.extend_from_slice(&e);
                encoder.idle(&mut wire).unwrap();
                assert!(!encoder.holds_state(), "q{quality}");
                assert_eq!(decode_prefix(&wire), plain, "q{quality} steal {steal}");
                if steal {
                    drop(draw_compressor(&pool, level(quality)));
                }
            }
            encoder.finish(&mut wire).unwrap();
            assert_eq!(decode(&wire), plain, "q{quality} steal {steal}");
            assert_eq!(pool.stats().in_use(), 0);
        }
    }
}

/// Decodes a stream cut after a flush.
fn decode_prefix(wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut decoder = brotli::Decompressor::new(wire, 4096);
    let _ = std::io::Read::read_to_end(&mut decoder, &mut out);
    out
}

/// What resuming costs in bytes: the demo's events, each followed by an idle, against
/// the same stream keeping its encoder (flushed after each event).
#[test]
fn resumed_streams_cost_few_bytes() {
    let events: Vec<Vec<u8>> = (0..50)
        .map(|i| format!("data: {{\"tick\":{i}}}\n\n").into_bytes())
        .collect();
    let plain: Vec<u8> = events.concat();
    // Every pause long: each event resumes on a fresh, primed encoder.
    let pool = CodecPool::builder()
        .max_idle(0)
        .park_bound(Duration::ZERO)
        .build();
    let mut sizes = Vec::new();
    for give_back in [false, true] {
        let mut encoder = BrEncoder::new(level(4), &pool);
        encoder.options_mut().unwrap().streaming = true;
        let mut wire = BytesMut::new();
        for e in &events {
            encoder.encode(e, &mut wire).unwrap();
            if give_back {
                encoder.idle(&mut wire).unwrap();
            } else {
                encoder.flush(&mut wire).unwrap();
            }
        }
        encoder.finish(&mut wire).unwrap();
        assert_eq!(decode(&wire), plain);
        sizes.push(wire.len());
    }
    eprintln!(
        "50 demo events ({} B): kept {} B, given back {} B",
        plain.len(),
        sizes[0],
        sizes[1]
    );
    assert!(sizes[1] <= sizes[0] * 3 / 2, "{sizes:?}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Any mix of encode, flush and idle (parked and taken back, or taken by another
    /// stream and a fresh one primed) stays one valid stream: chunks of a few bytes from a
    /// small alphabet (matches everywhere, across every history boundary) and long ones.
    #[test]
    fn idle_releases_round_trip(
        ops in proptest::collection::vec(
            (0u8..4, proptest::prop_oneof![
                proptest::collection::vec(0u8..4, 0..24),
                proptest::collection::vec(0u8..4, 0..40_000),
            ]),
            1..12,
        ),
        quality in 2u8..=9,
        known in proptest::option::of(1u64..200_000),
        long_pauses in proptest::bool::ANY,
    ) {
        let bound = if long_pauses { Duration::ZERO } else { Duration::from_secs(1) };
        let pool = CodecPool::builder().max_idle(2).park_bound(bound).build();
        let mut encoder = BrEncoder::new(level(quality), &pool);
        encoder.options_mut().unwrap().streaming = true;
        if let Some(len) = known {
            encoder.options_mut().unwrap().size_hint = Some(len);
        }
        let mut wire = BytesMut::new();
        let mut plain = Vec::new();
        for (op, symbols) in &ops {
            let chunk: Vec<u8> = symbols.iter().map(|&s| b"ab{\n"[usize::from(s)]).collect();
            let other_draw = || drop(draw_compressor(&pool, level(quality)));
            // With long pauses, a stream of one byte keeps its state; from two on a pause
            // gives it back (and one that sent nothing has none).
            if step(&mut encoder, &chunk, *op, &mut wire, &mut plain, other_draw) && long_pauses {
                proptest::prop_assert_eq!(encoder.holds_state(), plain.len() == 1);
            }
        }
        encoder.finish(&mut wire).unwrap();
        proptest::prop_assert!(decode(&wire) == plain);
        proptest::prop_assert_eq!(pool.stats().in_use(), 0);
    }
}

/// The fuzz finding: a stream whose first pause comes after one byte. A fresh encoder
/// cannot resume from a one-byte history (brotli takes no custom dictionary that short, and
/// would code the literals after the next flush against a context byte the decoder does not
/// have: qualities 7-9 decoded to other bytes), so that stream keeps its state over the
/// pause; from two bytes on it gives it back.
#[test]
fn a_one_byte_history_keeps_the_state() {
    let plain: Vec<u8> = [0xffu8, 0x17, 0x5a].repeat(64);
    for quality in 2u8..=11 {
        for steal in [false, true] {
            for max_idle in [0usize, 2] {
                let pool = pool_with(max_idle);
                let mut encoder = BrEncoder::new(level(quality), &pool);
                encoder.options_mut().unwrap().streaming = true;
                let (mut wire, mut held) = (BytesMut::new(), Vec::new());
                let chunks = [&plain[..1], &plain[1..2], &plain[2..3], &plain[3..]];
                for (i, chunk) in chunks.into_iter().enumerate() {
                    encoder.encode(chunk, &mut wire).unwrap();
                    if i < 2 {
                        encoder.idle(&mut wire).unwrap();
                        held.push(encoder.holds_state());
                        if steal {
                            drop(draw_compressor(&pool, level(quality)));
                        }
                    }
                }
                encoder.finish(&mut wire).unwrap();
                let case = format!("q{quality} steal {steal} max_idle {max_idle}");
                assert_eq!(decode(&wire), plain, "{case}");
                assert_eq!(held, [true, false], "{case}");
            }
        }
    }
}

/// A fuzz finding: a stream resumed from a two-byte history whose later input matches from
/// the history's last byte on. brotli cuts such a match at the end of a custom dictionary
/// to a one-byte copy and panics coding it (quality 5 here), so the encoder is primed with
/// no dictionary boundary (`CompressorState::load_history`).
#[test]
fn a_match_from_the_last_history_byte_is_coded() {
    let events: [&[&[u8]]; 3] = [
        &[&[0xff], &[0xff]],
        &[&[0xff], &[0xba]],
        &[
            &[0x00, 0xff, 0xff, 0xff, 0xba, 0x00, 0xff, 0xff, 0xff],
            &[0xba],
        ],
    ];
    for quality in 2u8..=11 {
        for (max_idle, steal) in [(0usize, false), (2, false), (2, true)] {
            let pool = pool_with(max_idle);
            let mut encoder = BrEncoder::new(level(quality), &pool);
            encoder.options_mut().unwrap().streaming = true;
            let (mut wire, mut plain) = (BytesMut::new(), Vec::new());
            for chunks in events {
                for chunk in chunks {
                    encoder.encode(chunk, &mut wire).unwrap();
                    plain.extend_from_slice(chunk);
                }
                encoder.idle(&mut wire).unwrap();
                if steal {
                    drop(draw_compressor(&pool, level(quality)));
                }
            }
            encoder.finish(&mut wire).unwrap();
            let case = format!("q{quality} max_idle {max_idle} steal {steal}");
            assert_eq!(decode(&wire), plain, "{case}");
        }
    }
}

/// Short pauses keep the encoder, places to park or not (parked, it would be taken by the
/// next draw whenever streams outnumber the places, and priming one again costs ~80 us at
/// quality 4 against ~13 for a kept one); the first pause, whose length is unknown, gives
/// it back.
#[test]
fn short_pauses_keep_the_state() {
    for max_idle in [0, 8] {
        let pool = CodecPool::builder().max_idle(max_idle).build();
        let mut encoder = BrEncoder::new(level(4), &pool);
        encoder.options_mut().unwrap().streaming = true;
        let (mut wire, mut plain, mut held) = (BytesMut::new(), Vec::new(), Vec::new());
        for i in 0..5 {
            let e = event(i);
            encoder.encode(&e, &mut wire).unwrap();
            plain.extend_from_slice(&e);
            encoder.idle(&mut wire).unwrap();
            held.push(encoder.holds_state());
        }
        assert_eq!(held, [false, true, true, true, true], "max_idle {max_idle}");
        let stats = pool.stats();
        let primed: u64 = stats.kinds().map(|(_, k)| k.primed_bytes).sum();
        assert_eq!(
            primed,
            event(0).len() as u64,
            "primed once, after the first pause"
        );
        assert_eq!(stats.kind(crate::pool::PoolKind::BrCompressors).parked, 0);
        encoder.finish(&mut wire).unwrap();
        assert_eq!(decode(&wire), plain);
    }
}
