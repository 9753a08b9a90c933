//! `dcb` on Google's brotli: the prepared dictionary's life, the pooled encoder memory,
//! flushes, windows past the dictionary, and a decoder that errs cleanly.

use bytes::BytesMut;

use super::*;
use crate::DecodeErrorKind;
use crate::{CodecPool, CompressionLevel};

fn encode(dict: &Dictionary, level: CompressionLevel, body: &[u8], pool: &CodecPool) -> BytesMut {
    let mut wire = BytesMut::new();
    encode_all::<DcbCore>(dict, level, body, pool, &mut wire).unwrap();
    wire
}

#[test]
fn one_prepared_dictionary_serves_every_quality() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    assert_eq!(dict.prepared_size(), 0, "made lazily");
    encode(&dict, CompressionLevel::Default, &bodies[0], &pool);
    let prepared = dict.prepared_size();
    assert!(prepared > 0);
    for (i, body) in bodies.iter().take(12).enumerate() {
        let level = CompressionLevel::Precise(5 + (i % 7) as i32);
        let wire = encode(&dict.clone(), level, body, &pool);
        assert_eq!(&decode_dcb(&dict, &wire, LIMIT).unwrap()[..], &body[..]);
    }
    assert_eq!(dict.prepared_size(), prepared, "no second preparation");
}

#[test]
fn dropping_the_dictionary_while_its_encoders_run_is_sound() {
    let pool = CodecPool::new();
    let bytes = json_samples(40, 31).concat();
    let body = json_samples(30, 32).concat();
    let dict = dictionary(bytes.clone());
    let level = CompressionLevel::Precise(6);
    let mut encoders: Vec<_> = (0..3)
        .map(|_| crate::dcb::encoder(&dict, level, &pool).unwrap())
        .collect();
    let mut wires = vec![BytesMut::new(); encoders.len()];
    for (encoder, wire) in encoders.iter_mut().zip(&mut wires) {
        encoder.encode(&body[..body.len() / 2], wire).unwrap();
    }
    // The last handle on the dictionary (and its prepared form) goes; the encoders keep
    // what they use.
    drop(dict);
    for (encoder, wire) in encoders.iter_mut().zip(&mut wires) {
        encoder.flush(wire).unwrap();
        encoder.encode(&body[body.len() / 2..], wire).unwrap();
        encoder.finish(wire).unwrap();
    }
    drop(encoders);
    let again = dictionary(bytes);
    for wire in &wires {
        assert_eq!(&decode_dcb(&again, wire, LIMIT).unwrap()[..], &body[..]);
    }
}

#[test]
fn encoder_memory_is_pooled_by_quality_and_an_abandoned_stream_frees_its_encoder() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    for body in &bodies[..4] {
        encode(&dict, CompressionLevel::Default, body, &pool);
    }
    let stats = pool.stats().kind(crate::pool::PoolKind::DcbCompressors);
    assert_eq!((stats.created, stats.reused, stats.idle), (1, 3, 1));
    // Another quality has its own memory.
    encode(&dict, CompressionLevel::Best, &bodies[0], &pool);
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DcbCompressors)
            .created,
        2
    );
    // Dropped mid-stream: the C encoder is destroyed on return, and the memory serves the
    // next body.
    let mut encoder = crate::dcb::encoder(&dict, CompressionLevel::Default, &pool).unwrap();
    encoder.encode(&bodies[1], &mut BytesMut::new()).unwrap();
    drop(encoder);
    let wire = encode(&dict, CompressionLevel::Default, &bodies[2], &pool);
    assert_eq!(
        &decode_dcb(&dict, &wire, LIMIT).unwrap()[..],
        &bodies[2][..]
    );
    let stats = pool.stats().kind(crate::pool::PoolKind::DcbCompressors);
    assert_eq!((stats.created, stats.in_use(), stats.discarded), (2, 0, 0));
}

#[test]
fn pooled_encoders_serve_any_dictionary_from_any_thread() {
    let pool = CodecPool::builder().max_idle(2).build();
    alternating_on_threads(&json_samples(24, 7), |dict, _, i, body| {
        let level = CompressionLevel::Precise(5 + (i % 3) as i32);
        let wire = encode(dict, level, body, &pool);
        assert_eq!(&decode_dcb(dict, &wire, LIMIT).unwrap()[..], body);
    });
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DcbCompressors)
            .in_use(),
        0
    );
}

#[test]
fn each_flush_makes_the_body_so_far_decodable() {
    let (dict, bodies) = trained();
    let body = bodies[..8].concat();
    let mut encoder =
        crate::dcb::encoder(&dict, CompressionLevel::Precise(7), CodecPool::global()).unwrap();
    let mut decoder = DcbDecoder::new(&dict);
    let (mut wire, mut plain, mut fed) = (BytesMut::new(), BytesMut::new(), 0);
    let mut sent = 0;
    for chunk in body.chunks(611) {
        encoder.encode(chunk, &mut wire).unwrap();
        encoder.flush(&mut wire).unwrap();
        sent += chunk.len();
        while fed < wire.len() || decoder.has_pending_output() {
            fed += decoder
                .decode(&wire[fed..], &mut plain, 97)
                .unwrap()
                .consumed;
        }
        assert_eq!(&plain[..], &body[..sent]);
    }
    encoder.finish(&mut wire).unwrap();
    fed += decoder
        .decode(&wire[fed..], &mut plain, 1 << 20)
        .unwrap()
        .consumed;
    assert_eq!(fed, wire.len());
    decoder.finish().unwrap();
    assert_eq!(&plain[..], &body[..]);
}

/// Bodies longer than the window leave the dictionary behind the window: matches into it
/// (at its start, the farthest) must still decode, in one shot and streamed (whose window
/// is sized for an unknown length).
#[test]
fn long_bodies_reach_back_into_the_dictionary() {
    let pool = CodecPool::new();
    let dict_bytes = json_samples(200, 41).concat();
    let dict = dictionary(dict_bytes.clone());
    let mut body: Vec<u8> = json_samples(3000, 42).concat();
    body.truncate(2 << 20);
    body.extend_from_slice(&dict_bytes[..4000]);
    body.extend_from_slice(&json_samples(50, 43).concat());
    body.extend_from_slice(&dict_bytes[..4000]);
    // Past a streamed body's window (2 MiB for this dictionary).
    assert!(body.len() > 2 << 20);
    let wire = encode(&dict, CompressionLevel::Default, &body, &pool);
    assert_eq!(&decode_dcb(&dict, &wire, LIMIT).unwrap()[..], &body[..]);
    assert!(google_decodes_dcb(&dict, &wire) == body);
    let mut encoder = crate::dcb::encoder(&dict, CompressionLevel::Default, &pool).unwrap();
    let streamed = stream(&mut encoder, &body, &[70_000, 3], 5);
    let mut decoder = DcbDecoder::new(&dict);
    let decoded = decode_chunked(&mut decoder, &streamed, &[50_000, 17], 60_000);
    assert_eq!(&decoded[..], &body[..]);
    assert!(google_decodes_dcb(&dict, &streamed) == body);
}

#[test]
fn the_decoder_errs_cleanly_on_truncated_corrupt_and_oversized_bodies() {
    let (dict, bodies) = trained();
    let body = bodies[..6].concat();
    let wire = encode(&dict, CompressionLevel::Default, &body, CodecPool::global());
    for cut in (36..wire.len()).step_by(7) {
        let err = decode_dcb(&dict, &wire[..cut], LIMIT).unwrap_err();
        let truncated =
            matches!(&err, DictDecodeError::Codec(e) if e.kind() == DecodeErrorKind::Truncated);
        assert!(truncated, "cut {cut}: {err:?}");
    }
    for i in 36..wire.len() {
        let mut bad = wire.to_vec();
        bad[i] = bad[i].wrapping_add(1 + (i % 251) as u8);
        if let Ok(out) = decode_dcb(&dict, &bad, LIMIT) {
            assert!(out.len() <= LIMIT);
        }
    }
    for limit in [0, 1, body.len() / 2, body.len() - 1] {
        let err = decode_dcb(&dict, &wire, limit).unwrap_err();
        assert_eq!(err, DictDecodeError::OutputTooLarge { limit });
    }
    assert_eq!(
        decode_dcb(&dict, &wire, body.len()).unwrap().len(),
        body.len()
    );
}
