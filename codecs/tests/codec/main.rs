//! Behaviour of the streaming gzip / zlib / raw deflate codecs: round trips under arbitrary
//! chunking and budgets, sync flush, every corruption kind, header fields, multi-member gzip.

use tower_gzip_support as common;
mod corrupt;
mod one_shot;

use bytes::BytesMut;
use proptest::prelude::*;
use tower_gzip_codecs::ContentCoding;
use tower_gzip_codecs::{CodecPool, CompressionLevel};
use tower_gzip_codecs::{DecodeError, DecodeErrorKind, Decoder, Encoder};

use common::{raw_deflate, text, zlib};

// ---------------------------------------------------------------------------------------
// Helpers

/// Feeds `wire` to `decoder` in chunks of the given sizes (cycled), with `max_out` per call,
/// checking the budget on every call. Returns the output, or the first error.
fn feed(
    decoder: &mut Decoder,
    wire: &[u8],
    chunks: &[usize],
    max_out: usize,
    out: &mut BytesMut,
) -> Result<(), DecodeError> {
    let mut sizes = chunks.iter().copied().cycle();
    let mut rest = wire;
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        let mut input = chunk;
        loop {
            let before = out.len();
            let consumed = decoder.decode(input, out, max_out)?;
            let produced = out.len() - before;
            assert!(
                produced <= max_out,
                "{produced} bytes out with max_out {max_out}"
            );
            assert!(consumed <= input.len());
            input = &input[consumed..];
            if input.is_empty() && !decoder.has_pending_output() {
                break;
            }
            assert!(
                consumed > 0 || produced > 0 || decoder.has_pending_output(),
                "decoder made no progress"
            );
        }
    }
    Ok(())
}

/// Decodes a whole stream with a fresh decoder, then calls `finish`.
fn decode_with(
    format: ContentCoding,
    wire: &[u8],
    chunks: &[usize],
    max_out: usize,
) -> Result<Vec<u8>, DecodeError> {
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
    let mut out = BytesMut::new();
    feed(&mut decoder, wire, chunks, max_out, &mut out)?;
    decoder.finish()?;
    Ok(out.to_vec())
}

fn decode(format: ContentCoding, wire: &[u8]) -> Result<Vec<u8>, DecodeError> {
    decode_with(format, wire, &[wire.len().max(1)], 64 * 1024)
}

fn decode_err(format: ContentCoding, wire: &[u8]) -> DecodeErrorKind {
    match decode(format, wire) {
        Ok(out) => panic!("expected an error, decoded {} bytes", out.len()),
        Err(e) => e.kind(),
    }
}

fn encode(format: ContentCoding, level: u32, data: &[u8]) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut encoder =
        Encoder::for_coding(format, CompressionLevel::Precise(level as i32), None, &pool).unwrap();
    let mut wire = BytesMut::new();
    encoder.encode(data, &mut wire).unwrap();
    encoder.finish(&mut wire).unwrap();
    wire.to_vec()
}

// ---------------------------------------------------------------------------------------
// Property tests

fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..3000),
        // Compressible: runs and repeats from a small alphabet.
        proptest::collection::vec((0u8..4, 1usize..200), 0..40).prop_map(|runs| {
            runs.into_iter()
                .flat_map(|(b, n)| std::iter::repeat_n(b"ab\n{"[b as usize], n))
                .collect()
        }),
        (0usize..20_000).prop_map(text),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any data, any level, any chunking of input and wire, interleaved flushes and small
    /// budgets round-trip; after every sync flush the bytes so far decode to the input so far.
    #[test]
    fn round_trip_with_flushes(
        data in data_strategy(),
        gzip in any::<bool>(),
        level in 0i32..=9,
        in_chunks in proptest::collection::vec(1usize..700, 1..8),
        flushes in proptest::collection::vec(any::<bool>(), 1..8),
        wire_chunks in proptest::collection::vec(1usize..300, 1..8),
        max_out in 1usize..3000,
    ) {
        let format = if gzip { ContentCoding::Gzip } else { ContentCoding::Deflate };
        let pool = CodecPool::new();
        let mut encoder = Encoder::for_coding(format, CompressionLevel::Precise(level), None, &pool).unwrap();
        let mut wire = BytesMut::new();
        let mut fed = 0;
        let mut sizes = in_chunks.iter().cycle();
        let mut flush_at = flushes.iter().cycle();
        let mut checked_prefixes = 0;
        while fed < data.len() {
            let n = (*sizes.next().unwrap()).min(data.len() - fed);
            encoder.encode(&data[fed..fed + n], &mut wire).unwrap();
            fed += n;
            if *flush_at.next().unwrap() {
                encoder.flush(&mut wire).unwrap();
                // Everything fed so far is decodable from the bytes produced so far.
                if checked_prefixes < 4 {
                    checked_prefixes += 1;
                    let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
                    let mut out = BytesMut::new();
                    feed(&mut decoder, &wire, &wire_chunks, max_out, &mut out).unwrap();
                    prop_assert_eq!(&out[..], &data[..fed]);
                    prop_assert!(!decoder.is_stream_end());
                    prop_assert_eq!(
                        decoder.finish().unwrap_err().kind(),
                        DecodeErrorKind::Truncated
                    );
                }
            }
        }
        encoder.finish(&mut wire).unwrap();
        let out = decode_with(format, &wire, &wire_chunks, max_out).unwrap();
        prop_assert_eq!(out, data);
    }

    /// Concatenated gzip members decode to the concatenation, split anywhere.
    #[test]
    fn multi_member_split_anywhere(
        parts in proptest::collection::vec(data_strategy(), 1..4),
        wire_chunks in proptest::collection::vec(1usize..200, 1..6),
        max_out in 1usize..5000,
    ) {
        let mut wire = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            wire.extend(encode(ContentCoding::Gzip, (i % 10) as u32, part));
        }
        let out = decode_with(ContentCoding::Gzip, &wire, &wire_chunks, max_out).unwrap();
        prop_assert_eq!(out, parts.concat());
    }

    /// Raw deflate and zlib from flate2 decode as `deflate`, split anywhere.
    #[test]
    fn deflate_accepts_raw_and_zlib(
        data in data_strategy(),
        wire_chunks in proptest::collection::vec(1usize..200, 1..6),
        max_out in 1usize..5000,
    ) {
        for wire in [raw_deflate(&data), zlib(&data)] {
            let out = decode_with(ContentCoding::Deflate, &wire, &wire_chunks, max_out).unwrap();
            prop_assert_eq!(&out, &data);
        }
    }

    /// Arbitrary bytes never panic the decoder, and how they are cut does not change the
    /// verdict: the same bytes or the same kind of error whether fed whole or in small
    /// pieces with a small output budget.
    #[test]
    fn garbage_never_panics(
        wire in proptest::collection::vec(any::<u8>(), 0..400),
        gzip in any::<bool>(),
        chunk in 1usize..50,
    ) {
        let format = if gzip { ContentCoding::Gzip } else { ContentCoding::Deflate };
        let pieces = decode_with(format, &wire, &[chunk], 100).map_err(|e| e.kind());
        let whole = decode_with(format, &wire, &[wire.len().max(1)], 64 * 1024).map_err(|e| e.kind());
        prop_assert_eq!(pieces, whole);
    }
}

// ---------------------------------------------------------------------------------------
// Sync flush, empty input, budget

#[test]
fn every_level_and_format_round_trips() {
    let data = text(50_000);
    for level in 0..=9 {
        for format in [ContentCoding::Gzip, ContentCoding::Deflate] {
            let wire = encode(format, level, &data);
            assert_eq!(
                decode(format, &wire).unwrap(),
                data,
                "{format:?} level {level}"
            );
        }
    }
}

#[test]
fn empty_input_finishes_ok_with_no_output() {
    for format in [ContentCoding::Gzip, ContentCoding::Deflate] {
        let pool = CodecPool::new();
        let decoder = Decoder::for_coding(format, None, &pool).unwrap();
        decoder.finish().unwrap();
        let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
        let mut out = BytesMut::new();
        assert_eq!(decoder.decode(&[], &mut out, 100).unwrap(), 0);
        decoder.finish().unwrap();
        assert!(out.is_empty());
        // An encoded empty body also decodes to nothing.
        assert_eq!(decode(format, &encode(format, 6, b"")).unwrap(), b"");
    }
}

#[test]
fn flush_without_input_is_decodable_and_idempotent() {
    let pool = CodecPool::new();
    let mut encoder =
        Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, &pool).unwrap();
    let mut wire = BytesMut::new();
    encoder.flush(&mut wire).unwrap();
    encoder.flush(&mut wire).unwrap();
    encoder.encode(b"abc", &mut wire).unwrap();
    encoder.flush(&mut wire).unwrap();
    let len = wire.len();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    feed(&mut decoder, &wire, &[1], 10, &mut out).unwrap();
    assert_eq!(&out[..], b"abc");
    encoder.finish(&mut wire).unwrap();
    encoder.finish(&mut wire).unwrap(); // a second finish writes nothing
    feed(&mut decoder, &wire[len..], &[3], 10, &mut out).unwrap();
    decoder.finish().unwrap();
    assert!(encoder.encode(b"late", &mut wire).is_err());
}

#[test]
fn zeros_bomb_never_exceeds_budget() {
    let bomb = encode(ContentCoding::Gzip, 9, &vec![0u8; 2 << 20]);
    assert!(bomb.len() < 4096, "a bomb: {} bytes", bomb.len());
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    feed(&mut decoder, &bomb, &[bomb.len()], 1000, &mut out).unwrap();
    decoder.finish().unwrap();
    assert_eq!(out.len(), 2 << 20);
    assert!(out.iter().all(|&b| b == 0));

    // A consumer with a limit stops early: one call, at most the budget, input left over.
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let consumed = decoder.decode(&bomb, &mut out, 64 * 1024).unwrap();
    assert_eq!(out.len(), 64 * 1024);
    assert!(consumed < bomb.len());
    assert!(decoder.has_pending_output());
    assert_eq!(
        decoder.finish().unwrap_err().kind(),
        DecodeErrorKind::Truncated
    );
}

#[test]
fn zero_budget_makes_no_output() {
    let wire = encode(ContentCoding::Gzip, 6, b"hello");
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let consumed = decoder.decode(&wire, &mut out, 0).unwrap();
    assert!(out.is_empty());
    assert!(decoder.has_pending_output());
    let rest = decoder.decode(&wire[consumed..], &mut out, 100).unwrap();
    assert_eq!(consumed + rest, wire.len());
    assert_eq!(&out[..], b"hello");
    decoder.finish().unwrap();
}

#[test]
fn gzip_padding_is_a_header_comment_and_round_trips() {
    let pool = CodecPool::new();
    for pad in [1, 2, 100, 65_535] {
        let mut encoder =
            Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Fastest, None, &pool)
                .unwrap()
                .with_padding(pad);
        let mut wire = BytesMut::new();
        encoder.encode(b"padded", &mut wire).unwrap();
        encoder.finish(&mut wire).unwrap();
        assert_eq!(wire[3], 0x10, "FCOMMENT set");
        assert_eq!(wire[10 + pad - 1], 0, "comment ends with its NUL");
        assert_eq!(decode(ContentCoding::Gzip, &wire).unwrap(), b"padded");
    }
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn an_error_is_sticky() {
    let mut wire = encode(ContentCoding::Gzip, 6, &text(1000));
    let at = wire.len() - 8;
    wire[at] ^= 1;
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let err = decoder.decode(&wire, &mut out, 1 << 20).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Checksum);
    assert!(!decoder.has_pending_output());
    // Further input, even valid, and finish report the same error.
    let again = decoder.decode(&[], &mut out, 100).unwrap_err();
    assert_eq!(again, err);
    assert_eq!(decoder.finish().unwrap_err(), err);
    assert!(err.to_string().contains("checksum"));
}

#[test]
fn format_tokens() {
    assert_eq!(
        ContentCoding::from_token(" X-GZIP "),
        Some(ContentCoding::Gzip)
    );
    assert_eq!(
        ContentCoding::from_token("Deflate"),
        Some(ContentCoding::Deflate)
    );
    assert_eq!(ContentCoding::from_token("compress"), None);
    // zstd and br exist with their cargo features, and are unknown tokens without them.
    assert_eq!(
        ContentCoding::from_token("br").is_some(),
        cfg!(feature = "br")
    );
    assert_eq!(
        ContentCoding::from_token(" ZSTD").is_some(),
        cfg!(feature = "zstd")
    );
    for format in ContentCoding::PLAIN {
        assert_eq!(ContentCoding::from_token(format.as_str()), Some(*format));
    }
    assert_eq!(ContentCoding::Gzip.as_str(), "gzip");
}

/// A coding whose cargo feature is off exists as a name only: not parsed from a token, and an
/// encoder or decoder asked for it is refused with a typed error.
#[cfg(not(feature = "zstd"))]
#[test]
fn a_coding_not_compiled_in_is_refused() {
    let pool = CodecPool::new();
    assert_eq!(ContentCoding::from_token("zstd"), None);
    assert!(!ContentCoding::Zstd.is_compiled());
    assert!(!ContentCoding::ALL.contains(&ContentCoding::Zstd));
    assert!(
        Encoder::for_coding(ContentCoding::Zstd, CompressionLevel::Default, None, &pool).is_err()
    );
    let error = Decoder::for_coding(ContentCoding::Zstd, None, &pool).unwrap_err();
    assert_eq!(error.kind(), DecodeErrorKind::Unsupported);
    let mut out = BytesMut::new();
    assert!(
        tower_gzip_codecs::OneShot::new(ContentCoding::Zstd)
            .encode(b"hello", &mut out)
            .is_err()
    );
    assert_eq!(pool.stats().in_use(), 0);
}
