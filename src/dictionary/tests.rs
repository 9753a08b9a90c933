//! Tests across the module: round trips, raw-content proof, interop, hostile input.

/// `n` API-like JSON records of varied content, deterministic per `seed`.
pub(super) fn json_samples(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    const NAMES: &[&str] = &[
        "Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances",
    ];
    const CITIES: &[&str] = &[
        "Paris", "Lagos", "Osaka", "Lima", "Oslo", "Pune", "Quito", "Accra",
    ];
    const TAGS: &[&str] = &[
        "admin", "beta", "staff", "trial", "verified", "legacy", "api", "mobile",
    ];
    (0..n)
        .map(|_| {
            let items = 1 + next() % 10;
            let mut s = String::from("{\"data\":[");
            for i in 0..items {
                if i > 0 {
                    s.push(',');
                }
                let name = NAMES[(next() % 8) as usize];
                let city = CITIES[(next() % 8) as usize];
                let tags: Vec<String> = (0..next() % 4)
                    .map(|_| format!("\"{}\"", TAGS[(next() % 8) as usize]))
                    .collect();
                s.push_str(&format!(
                    "{{\"id\":{},\"name\":\"{} {:x}\",\"email\":\"{}.{}@example.com\",\"address\":{{\"city\":\"{}\",\"zip\":\"{:05}\"}},\"active\":{},\"score\":{}.{:02},\"tags\":[{}],\"created_at\":\"2026-{:02}-{:02}T{:02}:{:02}:00Z\"}}",
                    next() % 1_000_000,
                    name,
                    next() % 0xffff,
                    name.to_lowercase(),
                    next() % 1000,
                    city,
                    next() % 100_000,
                    next() % 2 == 0,
                    next() % 100,
                    next() % 100,
                    tags.join(","),
                    1 + next() % 12,
                    1 + next() % 28,
                    next() % 24,
                    next() % 60,
                ));
            }
            s.push_str(&format!("],\"page\":{},\"total\":{}}}", next() % 50, next() % 5000));
            s.into_bytes()
        })
        .collect()
}

use bytes::BytesMut;
use proptest::prelude::*;

use super::*;
use crate::codec::{Decode, DecodeErrorKind, Encode};
use crate::{CodecPool, CompressionLevel};

const LIMIT: usize = 64 << 20;

fn dictionary(bytes: impl Into<bytes::Bytes>) -> Dictionary {
    Dictionary::new(bytes, UseAsDictionary::new("/*")).unwrap()
}

/// A dictionary trained on one set of JSON samples, and bodies from another.
fn trained() -> (Dictionary, Vec<Vec<u8>>) {
    let bytes = train(&json_samples(800, 11), 16 * 1024).unwrap();
    (dictionary(bytes), json_samples(50, 12))
}

/// The window size a zstd frame header declares (its content size for single-segment
/// frames), per RFC 8878 section 3.1.1.1.
fn frame_window(frame: &[u8]) -> u64 {
    assert_eq!(&frame[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    let descriptor = frame[4];
    if descriptor & 0x20 == 0 {
        let window = frame[5];
        let base = 1u64 << (10 + (window >> 3));
        base + (base / 8) * u64::from(window & 7)
    } else {
        zstd_safe::get_frame_content_size(frame).unwrap().unwrap()
    }
}

/// Streams `body` through `encoder` in `cuts`-sized chunks, flushing after some.
fn stream<E: Encode>(encoder: &mut E, body: &[u8], cuts: &[usize], flush_every: usize) -> BytesMut {
    let mut wire = BytesMut::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let n = cuts
            .get(i % cuts.len().max(1))
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len());
        encoder.encode(&rest[..n], &mut wire).unwrap();
        rest = &rest[n..];
        i += 1;
        if flush_every > 0 && i % flush_every == 0 {
            encoder.flush(&mut wire).unwrap();
        }
    }
    encoder.finish(&mut wire).unwrap();
    assert!(encoder.is_finished() && !encoder.holds_state());
    assert_eq!(encoder.total_in(), body.len() as u64);
    assert_eq!(encoder.total_out(), wire.len() as u64);
    wire
}

/// Decodes `wire` fed in `cuts`-sized pieces with `budget` bytes of output per call.
fn decode_chunked<D: Decode>(
    decoder: &mut D,
    wire: &[u8],
    cuts: &[usize],
    budget: usize,
) -> BytesMut {
    let mut out = BytesMut::new();
    let mut rest = wire;
    let mut i = 0;
    loop {
        let n = cuts
            .get(i % cuts.len().max(1))
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len().max(1))
            .min(rest.len());
        i += 1;
        let mut piece = &rest[..n];
        loop {
            let progress = decoder.decode(piece, &mut out, budget).unwrap();
            piece = &piece[progress.consumed..];
            if piece.is_empty() && !decoder.has_pending_output() {
                break;
            }
        }
        rest = &rest[n..];
        if rest.is_empty() {
            break;
        }
    }
    decoder.finish().unwrap();
    assert_eq!(decoder.total_in(), wire.len() as u64);
    assert_eq!(decoder.total_out(), out.len() as u64);
    out
}

#[test]
fn dcz_round_trips_one_shot_and_streaming() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    for level in [
        CompressionLevel::Fastest,
        CompressionLevel::Default,
        CompressionLevel::Precise(9),
        CompressionLevel::Precise(19),
    ] {
        for body in bodies.iter().take(10) {
            let mut wire = BytesMut::new();
            encode_dcz(&dict, level, body, &pool, &mut wire).unwrap();
            assert_eq!(&wire[..8], &DCZ_MAGIC);
            assert_eq!(&wire[8..40], &dict.hash());
            assert_eq!(
                DictCoding::peek(&wire),
                Some((DictCoding::Dcz, dict.hash()))
            );
            assert_eq!(
                &decode_dcz(&dict, &wire, &pool, LIMIT).unwrap()[..],
                &body[..]
            );

            let mut encoder = DczEncoder::new(&dict, level, &pool).unwrap();
            let streamed = stream(&mut encoder, body, &[7, 100, 1], 3);
            let mut decoder = DczDecoder::new(&dict, &pool).unwrap();
            assert_eq!(
                &decode_chunked(&mut decoder, &streamed, &[1, 5, 39, 3], 17)[..],
                &body[..]
            );
            assert!(decoder.is_stream_end());
        }
    }
}

#[test]
fn dcb_round_trips_one_shot_and_streaming() {
    let (dict, bodies) = trained();
    for level in [
        CompressionLevel::Fastest,
        CompressionLevel::Default,
        CompressionLevel::Precise(9),
    ] {
        for body in bodies.iter().take(6) {
            let mut wire = BytesMut::new();
            encode_dcb(&dict, level, body, &mut wire).unwrap();
            assert_eq!(&wire[..4], &DCB_MAGIC);
            assert_eq!(&wire[4..36], &dict.hash());
            assert_eq!(
                DictCoding::peek(&wire),
                Some((DictCoding::Dcb, dict.hash()))
            );
            assert_eq!(&decode_dcb(&dict, &wire, LIMIT).unwrap()[..], &body[..]);

            let mut encoder = DcbEncoder::new(&dict, level);
            let streamed = stream(&mut encoder, body, &[13, 1, 200], 2);
            let mut decoder = DcbDecoder::new(&dict);
            assert_eq!(
                &decode_chunked(&mut decoder, &streamed, &[2, 35, 1, 64], 5)[..],
                &body[..]
            );
            assert!(decoder.is_stream_end());
        }
    }
}

#[test]
fn empty_bodies_and_empty_streams() {
    let pool = CodecPool::new();
    let dict = dictionary(&b"some dictionary bytes"[..]);
    for wire in [
        {
            let mut w = BytesMut::new();
            encode_dcz(&dict, CompressionLevel::Default, b"", &pool, &mut w).unwrap();
            w
        },
        {
            let mut e = DczEncoder::new(&dict, CompressionLevel::Default, &pool).unwrap();
            let mut w = BytesMut::new();
            e.finish(&mut w).unwrap();
            w
        },
    ] {
        assert!(wire.len() > 40);
        assert!(decode_dcz(&dict, &wire, &pool, LIMIT).unwrap().is_empty());
    }
    for wire in [
        {
            let mut w = BytesMut::new();
            encode_dcb(&dict, CompressionLevel::Default, b"", &mut w).unwrap();
            w
        },
        {
            let mut e = DcbEncoder::new(&dict, CompressionLevel::Default);
            let mut w = BytesMut::new();
            e.finish(&mut w).unwrap();
            w
        },
    ] {
        assert!(wire.len() > 36);
        assert!(decode_dcb(&dict, &wire, LIMIT).unwrap().is_empty());
    }
    // No body at all (a HEAD response) is not an error; a header alone is.
    assert!(decode_dcz(&dict, b"", &pool, LIMIT).unwrap().is_empty());
    assert!(decode_dcb(&dict, b"", LIMIT).unwrap().is_empty());
    let mut header = DCZ_MAGIC.to_vec();
    header.extend_from_slice(&dict.hash());
    assert!(
        matches!(decode_dcz(&dict, &header, &pool, LIMIT), Err(DictDecodeError::Codec(e)) if e.kind() == DecodeErrorKind::Truncated)
    );
}

#[test]
fn the_dictionary_is_used() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    let (mut with, mut without, mut br_with) = (0, 0, 0);
    for body in &bodies {
        let mut wire = BytesMut::new();
        encode_dcz(&dict, CompressionLevel::Default, body, &pool, &mut wire).unwrap();
        with += wire.len() - 40;
        without += zstd_safe::compress(&mut vec![0u8; body.len() + 1024], body, 3).unwrap();
        let mut wire = BytesMut::new();
        encode_dcb(&dict, CompressionLevel::Default, body, &mut wire).unwrap();
        br_with += wire.len() - 36;
    }
    assert!(with * 10 < without * 8, "dcz {with} vs zstd {without}");
    assert!(
        br_with * 10 < without * 8,
        "dcb {br_with} vs zstd {without}"
    );
}
