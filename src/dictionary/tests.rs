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

#[test]
fn trained_dictionaries_are_used_as_raw_content() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    assert_eq!(
        &dict.bytes()[..4],
        &[0x37, 0xa4, 0x30, 0xec],
        "starts with zstd's dict magic"
    );
    assert!(
        zstd_safe::get_dict_id(dict.bytes()).is_some(),
        "zstd parses it as a dictionary"
    );
    // A body that repeats the dictionary's first bytes (its magic and entropy header):
    // as raw content they are matchable; as a zstd dictionary they are not content at all.
    let mut body = dict.bytes()[..300].to_vec();
    body.extend_from_slice(&bodies[0]);
    let body = &body;
    let mut wire = BytesMut::new();
    encode_dcz(&dict, CompressionLevel::Default, body, &pool, &mut wire).unwrap();
    let frame = &wire[40..];
    // Raw content has no dictionary id: auto mode writes the trained dictionary's id.
    assert_eq!(zstd_safe::get_dict_id_from_frame(frame), None);
    assert!(
        frame.len() < 300,
        "the header bytes were matched: {}",
        frame.len()
    );

    // A raw-content prefix (zstd's refPrefix is raw content), as Chromium and Python's
    // DICT_TYPE_RAWCONTENT use it, decodes the frame ...
    let raw_decode = |frame: &[u8]| {
        let mut plain = vec![0u8; body.len() + 64];
        let mut dctx = zstd_safe::DCtx::create();
        dctx.ref_prefix(dict.bytes()).unwrap();
        dctx.decompress(&mut plain, frame)
            .map(|n| plain[..n].to_vec())
    };
    assert_eq!(raw_decode(frame).unwrap(), &body[..]);
    // (Decoding is not where auto mode fails: libzstd's auto-mode DDict keeps the whole
    // buffer as content, header included. Encoding is: see below.)

    // The pitfall itself: an encoder loading the bytes in auto mode writes frames that a
    // raw-content client refuses (the frame names a dictionary id the client does not have).
    let mut auto = vec![0u8; body.len() + 1024];
    let mut cctx = zstd_safe::CCtx::create();
    cctx.load_dictionary(dict.bytes()).unwrap();
    let n = cctx.compress2(&mut auto, body).unwrap();
    assert!(zstd_safe::get_dict_id_from_frame(&auto[..n]).is_some());
    assert!(raw_decode(&auto[..n]).is_err());
    // This module's own decoder is a raw-content client too.
    let mut auto_dcz = DCZ_MAGIC.to_vec();
    auto_dcz.extend_from_slice(&dict.hash());
    auto_dcz.extend_from_slice(&auto[..n]);
    assert!(decode_dcz(&dict, &auto_dcz, &pool, LIMIT).is_err());
    assert_eq!(
        &decode_dcz(&dict, &wire, &pool, LIMIT).unwrap()[..],
        &body[..]
    );

    // Both codings and both directions agree for a dictionary that is all magic and header.
    let mut dcb = BytesMut::new();
    encode_dcb(&dict, CompressionLevel::Default, body, &mut dcb).unwrap();
    assert_eq!(&decode_dcb(&dict, &dcb, LIMIT).unwrap()[..], &body[..]);
}

#[test]
fn one_digested_dictionary_per_level_shared_by_responses() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    assert_eq!(dict.prepared_size(), 0, "made lazily");
    let mut wire = BytesMut::new();
    encode_dcz(
        &dict,
        CompressionLevel::Default,
        &bodies[0],
        &pool,
        &mut wire,
    )
    .unwrap();
    let one = dict.prepared_size();
    assert!(one > 0);
    for body in &bodies {
        let mut wire = BytesMut::new();
        encode_dcz(&dict, CompressionLevel::Default, body, &pool, &mut wire).unwrap();
        let clone = dict.clone();
        let _ = DczEncoder::new(&clone, CompressionLevel::Precise(3), &pool).unwrap();
    }
    assert_eq!(dict.prepared_size(), one, "no new CDict for the same level");
    encode_dcz(
        &dict,
        CompressionLevel::Precise(9),
        &bodies[0],
        &pool,
        &mut BytesMut::new(),
    )
    .unwrap();
    assert!(dict.prepared_size() > one, "a second level gets its own");
}

#[test]
fn pooled_contexts_come_back_neutral() {
    // Contexts go back to one shelf whatever dictionary they served: alternate two
    // dictionaries (and levels) on one pool, from several threads, and check every body.
    let pool = CodecPool::builder().max_idle(2).build();
    let a = dictionary(json_samples(30, 5).concat());
    let b = dictionary(json_samples(30, 6).concat());
    let bodies = json_samples(40, 7);
    std::thread::scope(|scope| {
        for t in 0..3 {
            let (pool, a, b, bodies) = (&pool, &a, &b, &bodies);
            scope.spawn(move || {
                for (i, body) in bodies.iter().enumerate() {
                    let dict = if (i + t) % 2 == 0 { a } else { b };
                    let level = CompressionLevel::Precise(1 + (i % 5) as i32);
                    let mut wire = BytesMut::new();
                    let mut encoder = DczEncoder::new(dict, level, pool).unwrap();
                    encoder.encode(body, &mut wire).unwrap();
                    if i % 3 == 0 {
                        drop(encoder); // abandoned mid-frame: reset by the pool
                        continue;
                    }
                    encoder.finish(&mut wire).unwrap();
                    assert_eq!(
                        &decode_dcz(dict, &wire, pool, LIMIT).unwrap()[..],
                        &body[..]
                    );
                    let other = if dict == a { b } else { a };
                    assert!(matches!(
                        decode_dcz(other, &wire, pool, LIMIT),
                        Err(DictDecodeError::WrongDictionary { .. })
                    ));
                }
            });
        }
    });
    // A plain zstd response on the same pool is not touched by any dictionary.
    let mut wire = BytesMut::new();
    crate::codec::OneShot::new(crate::codec::Format::Zstd)
        .pool(&pool)
        .encode(&bodies[0], &mut wire)
        .unwrap();
    assert_eq!(zstd_safe::get_dict_id_from_frame(&wire), None);
    let mut plain = vec![0u8; bodies[0].len()];
    assert_eq!(
        zstd_safe::decompress(&mut plain, &wire).unwrap(),
        bodies[0].len()
    );
}

#[test]
fn typed_errors_for_wrong_dictionary_and_broken_bodies() {
    let pool = CodecPool::new();
    let dict = dictionary(&b"the dictionary the body was made with"[..]);
    let other = dictionary(&b"another dictionary"[..]);
    let body = b"the body, made with the dictionary, the dictionary".repeat(20);
    let mut dcz = BytesMut::new();
    encode_dcz(&dict, CompressionLevel::Default, &body, &pool, &mut dcz).unwrap();
    let mut dcb = BytesMut::new();
    encode_dcb(&dict, CompressionLevel::Default, &body, &mut dcb).unwrap();

    let wrong = DictDecodeError::WrongDictionary { found: dict.hash() };
    assert_eq!(decode_dcz(&other, &dcz, &pool, LIMIT).unwrap_err(), wrong);
    assert_eq!(decode_dcb(&other, &dcb, LIMIT).unwrap_err(), wrong);
    assert_eq!(
        wrong.to_decode_error().kind(),
        DecodeErrorKind::CorruptHeader
    );
    // Truncated inside the header, at every length.
    for cut in 1..40 {
        assert_eq!(
            decode_dcz(&dict, &dcz[..cut], &pool, LIMIT).unwrap_err(),
            DictDecodeError::TruncatedHeader,
            "{cut}"
        );
    }
    for cut in 1..36 {
        assert_eq!(
            decode_dcb(&dict, &dcb[..cut], LIMIT).unwrap_err(),
            DictDecodeError::TruncatedHeader,
            "{cut}"
        );
    }
    // Bad magic: plain zstd / br bodies, or the other coding's header.
    assert_eq!(
        decode_dcz(&dict, &dcb, &pool, LIMIT).unwrap_err(),
        DictDecodeError::BadMagic
    );
    assert_eq!(
        decode_dcb(&dict, &dcz, LIMIT).unwrap_err(),
        DictDecodeError::BadMagic
    );
    // Truncated inside the compressed stream.
    let err = decode_dcz(&dict, &dcz[..dcz.len() - 3], &pool, LIMIT).unwrap_err();
    assert!(
        matches!(&err, DictDecodeError::Codec(e) if e.kind() == DecodeErrorKind::Truncated),
        "{err:?}"
    );
    let err = decode_dcb(&dict, &dcb[..dcb.len() - 2], LIMIT).unwrap_err();
    assert!(
        matches!(&err, DictDecodeError::Codec(e) if e.kind() == DecodeErrorKind::Truncated),
        "{err:?}"
    );
    // Trailing garbage.
    let mut extra = dcz.to_vec();
    extra.extend_from_slice(b"garbage!");
    let err = decode_dcz(&dict, &extra, &pool, LIMIT).unwrap_err();
    assert!(
        matches!(&err, DictDecodeError::Codec(e) if e.kind() == DecodeErrorKind::TrailingData),
        "{err:?}"
    );
    let mut extra = dcb.to_vec();
    extra.push(0);
    let err = decode_dcb(&dict, &extra, LIMIT).unwrap_err();
    assert!(
        matches!(&err, DictDecodeError::Codec(e) if e.kind() == DecodeErrorKind::TrailingData),
        "{err:?}"
    );
    // Corrupt payloads never panic.
    for i in 40..dcz.len() {
        let mut bad = dcz.to_vec();
        bad[i] ^= 0x55;
        let _ = decode_dcz(&dict, &bad, &pool, LIMIT);
    }
    for i in 36..dcb.len() {
        let mut bad = dcb.to_vec();
        bad[i] ^= 0x55;
        let _ = decode_dcb(&dict, &bad, LIMIT);
    }
    // The output bound.
    assert_eq!(
        decode_dcz(&dict, &dcz, &pool, body.len() - 1).unwrap_err(),
        DictDecodeError::OutputTooLarge {
            limit: body.len() - 1
        }
    );
    assert_eq!(
        decode_dcb(&dict, &dcb, body.len() - 1).unwrap_err(),
        DictDecodeError::OutputTooLarge {
            limit: body.len() - 1
        }
    );
    assert_eq!(
        decode_dcz(&dict, &dcz, &pool, body.len()).unwrap().len(),
        body.len()
    );
    // An error repeats, and the encoders refuse use after the finish.
    let mut decoder = DczDecoder::new(&other, &pool).unwrap();
    assert!(decoder.decode(&dcz, &mut BytesMut::new(), 1024).is_err());
    assert_eq!(
        decoder.decode(b"", &mut BytesMut::new(), 1024).unwrap_err(),
        wrong
    );
    assert_eq!(decoder.finish().unwrap_err(), wrong);
    let mut encoder = DcbEncoder::new(&dict, CompressionLevel::Default);
    encoder.finish(&mut BytesMut::new()).unwrap();
    assert!(encoder.encode(b"x", &mut BytesMut::new()).is_err());
    encoder.finish(&mut BytesMut::new()).unwrap();
}

#[test]
fn dcz_windows_stay_within_the_bound() {
    const MIB: u64 = 1 << 20;
    assert_eq!(dcz_window_limit(1), 8 * MIB);
    assert_eq!(dcz_window_limit(8 << 20), 10 * MIB);
    assert_eq!(dcz_window_limit(100 << 20), 125 * MIB);
    assert_eq!(dcz_window_limit(128 << 20), 128 * MIB);
    assert_eq!(dcz_window_limit(usize::MAX), 128 * MIB);

    let pool = CodecPool::new();
    let dict = dictionary(vec![b'a'; 1000]);
    let body = json_samples(200, 3).concat();
    for (level, expected) in [(3, 2 * MIB), (19, 8 * MIB), (22, 8 * MIB)] {
        let mut encoder = DczEncoder::new(&dict, CompressionLevel::Precise(level), &pool).unwrap();
        let mut wire = BytesMut::new();
        encoder.encode(&body, &mut wire).unwrap();
        encoder.finish(&mut wire).unwrap();
        assert_eq!(frame_window(&wire[40..]), expected, "level {level}");
        // One-shot: a single-segment frame whose window is the body.
        let mut wire = BytesMut::new();
        encode_dcz(
            &dict,
            CompressionLevel::Precise(level),
            &body,
            &pool,
            &mut wire,
        )
        .unwrap();
        assert!(frame_window(&wire[40..]) <= 8 * MIB);
    }

    // A frame asking for 16 MiB with a small dictionary is refused before allocation.
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(zstd_safe::CParameter::WindowLog(24))
        .unwrap();
    cctx.ref_prefix(dict.bytes()).unwrap();
    let mut frame = vec![0u8; body.len() + 1024];
    let mut input = zstd_safe::InBuffer::around(&body[..]);
    let mut output = zstd_safe::OutBuffer::around(&mut frame[..]);
    // Continue, then end: the size stays unknown, so the header carries the window.
    for directive in [
        zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_continue,
        zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
    ] {
        cctx.compress_stream2(&mut output, &mut input, directive)
            .unwrap();
    }
    let n = output.pos();
    assert_eq!(frame_window(&frame[..n]), 16 * MIB);
    let mut wire = DCZ_MAGIC.to_vec();
    wire.extend_from_slice(&dict.hash());
    wire.extend_from_slice(&frame[..n]);
    let err = decode_dcz(&dict, &wire, &pool, LIMIT).unwrap_err();
    assert!(err.is_window_too_large(), "{err:?}");
}

#[test]
fn dcb_refuses_large_window_streams() {
    use brotli::enc::encode::{BrotliEncoderParameter as P, BrotliEncoderStateStruct};
    let dict = dictionary(&b"prefix"[..]);
    let mut core = BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
    core.set_parameter(P::BROTLI_PARAM_LARGE_WINDOW, 1);
    core.set_parameter(P::BROTLI_PARAM_LGWIN, 26);
    core.set_parameter(P::BROTLI_PARAM_QUALITY, 5);
    let body = b"large window stream".repeat(10);
    let mut out = vec![0u8; 1024];
    let (mut avail_in, mut in_off, mut avail_out, mut out_off) = (body.len(), 0, out.len(), 0);
    assert!(core.compress_stream(
        brotli::enc::encode::BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
        &mut avail_in,
        &body,
        &mut in_off,
        &mut avail_out,
        &mut out,
        &mut out_off,
        &mut None,
        &mut |_, _, _, _| ()
    ));
    let mut wire = DCB_MAGIC.to_vec();
    wire.extend_from_slice(&dict.hash());
    wire.extend_from_slice(&out[..out_off]);
    assert!(matches!(
        decode_dcb(&dict, &wire, LIMIT),
        Err(DictDecodeError::Codec(_))
    ));
}

/// Bodies that share material with the dictionary (so matches into it happen), or not.
fn body_strategy() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    (
        proptest::collection::vec(any::<u8>(), 1..1500),
        proptest::collection::vec(any::<u8>(), 0..3000),
        proptest::collection::vec((0usize..1500, 1usize..400), 0..8),
    )
        .prop_map(|(dict, noise, copies)| {
            let mut body = Vec::new();
            for (i, (at, len)) in copies.into_iter().enumerate() {
                let at = at % dict.len();
                let end = (at + len).min(dict.len());
                body.extend_from_slice(&dict[at..end]);
                let n = noise.len().min(50 * (i + 1));
                body.extend_from_slice(&noise[..n / 2]);
            }
            body.extend_from_slice(&noise);
            (dict, body)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_body_any_dictionary_any_chunks_round_trips(
        (dict, body) in body_strategy(),
        cuts in proptest::collection::vec(1usize..700, 1..6),
        flush_every in 0usize..4,
        budget in 1usize..5000,
        level in 1i32..8,
    ) {
        let pool = CodecPool::global();
        let dict = dictionary(dict);
        let level = CompressionLevel::Precise(level);

        let mut encoder = DczEncoder::new(&dict, level, pool).unwrap();
        let wire = stream(&mut encoder, &body, &cuts, flush_every);
        let mut decoder = DczDecoder::new(&dict, pool).unwrap();
        prop_assert_eq!(&decode_chunked(&mut decoder, &wire, &cuts, budget)[..], &body[..]);
        let mut one_shot = BytesMut::new();
        encode_dcz(&dict, level, &body, pool, &mut one_shot).unwrap();
        let mut decoder = DczDecoder::new(&dict, pool).unwrap();
        prop_assert_eq!(&decode_chunked(&mut decoder, &one_shot, &cuts, budget)[..], &body[..]);

        let mut encoder = DcbEncoder::new(&dict, level);
        let wire = stream(&mut encoder, &body, &cuts, flush_every);
        let mut decoder = DcbDecoder::new(&dict);
        prop_assert_eq!(&decode_chunked(&mut decoder, &wire, &cuts, budget)[..], &body[..]);
        let mut one_shot = BytesMut::new();
        encode_dcb(&dict, level, &body, &mut one_shot).unwrap();
        prop_assert_eq!(&decode_dcb(&dict, &one_shot, LIMIT).unwrap()[..], &body[..]);
    }

    #[test]
    fn hostile_available_dictionary_never_panics(value in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_available_dictionary(&value);
        let _ = UseAsDictionary::parse(&value);
    }

    #[test]
    fn any_bytes_after_a_valid_header_never_panic(junk in proptest::collection::vec(any::<u8>(), 0..600)) {
        let pool = CodecPool::global();
        let dict = dictionary(&b"a dictionary for junk"[..]);
        let mut dcz = DCZ_MAGIC.to_vec();
        dcz.extend_from_slice(&dict.hash());
        dcz.extend_from_slice(&junk);
        let _ = decode_dcz(&dict, &dcz, pool, 1 << 20);
        let mut dcb = DCB_MAGIC.to_vec();
        dcb.extend_from_slice(&dict.hash());
        dcb.extend_from_slice(&junk);
        let _ = decode_dcb(&dict, &dcb, 1 << 20);
    }
}

/// A program on this machine, or a note saying the test is skipped.
fn tool(program: &str, args: &[&str]) -> Option<String> {
    let output = std::process::Command::new(program)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    output.status.success().then_some(text)
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tower-gzip-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn interop_python_zstandard_decodes_dcz_payloads() {
    if tool("python3", &["-c", "import zstandard"]).is_none() {
        eprintln!("note: python3 with the zstandard module is not installed; dcz interop skipped");
        return;
    }
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    let dir = temp_dir("dcz-interop");
    dict.save(dir.join("dict")).unwrap();
    let mut body = dict.bytes()[..200].to_vec(); // matches into the dictionary's header bytes
    body.extend_from_slice(&bodies.concat());
    std::fs::write(dir.join("body"), &body).unwrap();
    for (name, streaming) in [("oneshot", false), ("stream", true)] {
        let mut wire = BytesMut::new();
        if streaming {
            let mut encoder = DczEncoder::new(&dict, CompressionLevel::Default, &pool).unwrap();
            for chunk in body.chunks(1000) {
                encoder.encode(chunk, &mut wire).unwrap();
                encoder.flush(&mut wire).unwrap();
            }
            encoder.finish(&mut wire).unwrap();
        } else {
            encode_dcz(&dict, CompressionLevel::Default, &body, &pool, &mut wire).unwrap();
        }
        std::fs::write(dir.join(name), &wire[40..]).unwrap();
    }
    let script = r#"
import sys, zstandard
d = sys.argv[1]
raw = zstandard.ZstdCompressionDict(open(d + "/dict", "rb").read(), dict_type=zstandard.DICT_TYPE_RAWCONTENT)
body = open(d + "/body", "rb").read()
for name in ("oneshot", "stream"):
    reader = zstandard.ZstdDecompressor(dict_data=raw).stream_reader(open(d + "/" + name, "rb"), read_across_frames=True)
    assert reader.read() == body, name
print("ok")
"#;
    let out = tool("python3", &["-c", script, dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        out.as_deref().map(str::trim),
        Some("ok"),
        "python zstandard failed to decode"
    );
}

#[test]
fn interop_brotli_cli_decodes_dcb_payloads() {
    let has_dictionary_option =
        tool("brotli", &["--help"]).is_some_and(|help| help.contains("--dictionary"));
    if !has_dictionary_option {
        eprintln!("note: no brotli CLI with -D/--dictionary on this machine; dcb interop skipped");
        return;
    }
    let (dict, bodies) = trained();
    let body = bodies.concat();
    let dir = temp_dir("dcb-interop");
    dict.save(dir.join("dict")).unwrap();
    let mut wire = BytesMut::new();
    encode_dcb(&dict, CompressionLevel::Default, &body, &mut wire).unwrap();
    std::fs::write(dir.join("payload.br"), &wire[36..]).unwrap();
    let dict_path = dir.join("dict");
    let payload = dir.join("payload.br");
    let out_path = dir.join("out");
    let ok = tool(
        "brotli",
        &[
            "-d",
            "-f",
            "-D",
            dict_path.to_str().unwrap(),
            payload.to_str().unwrap(),
            "-o",
            out_path.to_str().unwrap(),
        ],
    );
    let decoded = std::fs::read(&out_path).ok();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ok.is_some(), "brotli -d -D failed");
    assert_eq!(decoded.as_deref(), Some(&body[..]));
}

/// Bytes on the wire for generated API JSON: plain zstd 3 and br 5 against `dcz`/`dcb` with
/// dictionaries of 4, 16 and 32 KiB trained on other responses of the same API. Run with
/// `cargo test --lib measure_dictionary_gains -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_dictionary_gains() {
    use crate::codec::{Format, OneShot};
    let pool = CodecPool::new();
    let training = json_samples(2000, 21);
    let bodies = json_samples(300, 22);
    let identity: usize = bodies.iter().map(Vec::len).sum();
    let plain = |format, level| -> usize {
        bodies
            .iter()
            .map(|body| {
                let mut out = BytesMut::new();
                OneShot::new(format)
                    .level(CompressionLevel::Precise(level))
                    .pool(&pool)
                    .encode(body, &mut out)
                    .unwrap();
                out.len()
            })
            .sum()
    };
    let pct = |n: usize| 100.0 * n as f64 / identity as f64;
    let zstd3 = plain(Format::Zstd, 3);
    let br5 = plain(Format::Br, 5);
    println!(
        "{} responses, {identity} bytes identity ({} average); trained on {} others",
        bodies.len(),
        identity / bodies.len(),
        training.len()
    );
    println!("| coding | bytes | % of identity | vs plain |");
    println!("|---|---|---|---|");
    println!("| zstd 3 | {zstd3} | {:.1}% | 1.00x |", pct(zstd3));
    println!("| br 5 | {br5} | {:.1}% | 1.00x |", pct(br5));
    for size in [4 << 10, 16 << 10, 32 << 10] {
        let started = std::time::Instant::now();
        let dict = dictionary(train(&training, size).unwrap());
        let trained_in = started.elapsed();
        let (mut dcz, mut dcb) = (0, 0);
        for body in &bodies {
            let mut out = BytesMut::new();
            encode_dcz(&dict, CompressionLevel::Precise(3), body, &pool, &mut out).unwrap();
            assert_eq!(
                &decode_dcz(&dict, &out, &pool, LIMIT).unwrap()[..],
                &body[..]
            );
            dcz += out.len();
            let mut out = BytesMut::new();
            encode_dcb(&dict, CompressionLevel::Precise(5), body, &mut out).unwrap();
            dcb += out.len();
        }
        let kib = size >> 10;
        let n = bodies.len();
        println!(
            "| dcz 3, {kib} KiB dict ({} B) | {dcz} ({} without headers) | {:.1}% | {:.2}x zstd 3 ({:.2}x) |",
            dict.len(),
            dcz - 40 * n,
            pct(dcz),
            dcz as f64 / zstd3 as f64,
            (dcz - 40 * n) as f64 / zstd3 as f64
        );
        println!(
            "| dcb 5, {kib} KiB dict | {dcb} ({} without headers) | {:.1}% | {:.2}x br 5 ({:.2}x) |",
            dcb - 36 * n,
            pct(dcb),
            dcb as f64 / br5 as f64,
            (dcb - 36 * n) as f64 / br5 as f64
        );
        println!("(trained in {trained_in:?}, debug build)");
    }
}
