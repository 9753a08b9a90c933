//! Trained dictionaries are raw content; digested dictionaries and pooled contexts are
//! shared and come back neutral.

use bytes::BytesMut;

use super::*;
use crate::{CodecPool, CompressionLevel};

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
    encode_all::<DczCore>(&dict, CompressionLevel::Default, body, &pool, &mut wire).unwrap();
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
    encode_all::<DcbCore>(
        &dict,
        CompressionLevel::Default,
        body,
        crate::CodecPool::global(),
        &mut dcb,
    )
    .unwrap();
    assert_eq!(&decode_dcb(&dict, &dcb, LIMIT).unwrap()[..], &body[..]);
}

#[test]
fn one_digested_dictionary_per_level_shared_by_responses() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    assert_eq!(dict.prepared_size(), 0, "made lazily");
    let mut wire = BytesMut::new();
    encode_all::<DczCore>(
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
        encode_all::<DczCore>(&dict, CompressionLevel::Default, body, &pool, &mut wire).unwrap();
        let clone = dict.clone();
        let _ = crate::dcz::encoder(&clone, CompressionLevel::Precise(3), &pool).unwrap();
    }
    assert_eq!(dict.prepared_size(), one, "no new CDict for the same level");
    encode_all::<DczCore>(
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
    let bodies = json_samples(40, 7);
    alternating_on_threads(&bodies, |dict, other, i, body| {
        let level = CompressionLevel::Precise(1 + (i % 5) as i32);
        let mut wire = BytesMut::new();
        let mut encoder = crate::dcz::encoder(dict, level, &pool).unwrap();
        encoder.encode(body, &mut wire).unwrap();
        if i % 3 == 0 {
            drop(encoder); // abandoned mid-frame: reset by the pool
            return;
        }
        encoder.finish(&mut wire).unwrap();
        assert_eq!(&decode_dcz(dict, &wire, &pool, LIMIT).unwrap()[..], body);
        assert!(matches!(
            decode_dcz(other, &wire, &pool, LIMIT),
            Err(DictDecodeError::WrongDictionary { .. })
        ));
    });
    // A plain zstd response on the same pool is not touched by any dictionary.
    let mut wire = BytesMut::new();
    crate::OneShot::new(crate::ContentCoding::Zstd)
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
