//! Round trips of both codings: fixed cases and a property over any body, dictionary and
//! chunking.

use bytes::BytesMut;
use proptest::prelude::*;

use super::*;
use crate::DecodeErrorKind;
use crate::{CodecPool, CompressionLevel};

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
            encode_all::<DczCore>(&dict, level, body, &pool, &mut wire).unwrap();
            assert_eq!(&wire[..8], &DCZ_MAGIC);
            assert_eq!(&wire[8..40], &dict.hash());
            assert_eq!(crate::peek(&wire), Some((ContentCoding::Dcz, dict.hash())));
            assert_eq!(
                &decode_dcz(&dict, &wire, &pool, LIMIT).unwrap()[..],
                &body[..]
            );

            let mut encoder = crate::dcz::encoder(&dict, level, &pool).unwrap();
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
            encode_all::<DcbCore>(&dict, level, body, crate::CodecPool::global(), &mut wire)
                .unwrap();
            assert_eq!(&wire[..4], &DCB_MAGIC);
            assert_eq!(&wire[4..36], &dict.hash());
            assert_eq!(crate::peek(&wire), Some((ContentCoding::Dcb, dict.hash())));
            assert_eq!(&decode_dcb(&dict, &wire, LIMIT).unwrap()[..], &body[..]);

            let mut encoder =
                crate::dcb::encoder(&dict, level, crate::CodecPool::global()).unwrap();
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
            encode_all::<DczCore>(&dict, CompressionLevel::Default, b"", &pool, &mut w).unwrap();
            w
        },
        {
            let mut e = crate::dcz::encoder(&dict, CompressionLevel::Default, &pool).unwrap();
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
            encode_all::<DcbCore>(
                &dict,
                CompressionLevel::Default,
                b"",
                crate::CodecPool::global(),
                &mut w,
            )
            .unwrap();
            w
        },
        {
            let mut e =
                crate::dcb::encoder(&dict, CompressionLevel::Default, crate::CodecPool::global())
                    .unwrap();
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
    let mut header = DCB_MAGIC.to_vec();
    header.extend_from_slice(&dict.hash());
    assert!(
        matches!(decode_dcb(&dict, &header, LIMIT), Err(DictDecodeError::Codec(e)) if e.kind() == DecodeErrorKind::Truncated)
    );
}

#[test]
fn the_dictionary_is_used() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    let (mut with, mut without, mut br_with) = (0, 0, 0);
    for body in &bodies {
        let mut wire = BytesMut::new();
        encode_all::<DczCore>(&dict, CompressionLevel::Default, body, &pool, &mut wire).unwrap();
        with += wire.len() - 40;
        without += zstd_safe::compress(&mut vec![0u8; body.len() + 1024], body, 3).unwrap();
        let mut wire = BytesMut::new();
        encode_all::<DcbCore>(
            &dict,
            CompressionLevel::Default,
            body,
            crate::CodecPool::global(),
            &mut wire,
        )
        .unwrap();
        br_with += wire.len() - 36;
    }
    assert!(with * 10 < without * 8, "dcz {with} vs zstd {without}");
    assert!(
        br_with * 10 < without * 8,
        "dcb {br_with} vs zstd {without}"
    );
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

        let mut encoder = crate::dcz::encoder(&dict, level, pool).unwrap();
        let wire = stream(&mut encoder, &body, &cuts, flush_every);
        let mut decoder = DczDecoder::new(&dict, pool).unwrap();
        prop_assert_eq!(&decode_chunked(&mut decoder, &wire, &cuts, budget)[..], &body[..]);
        let mut one_shot = BytesMut::new();
        encode_all::<DczCore>(&dict, level, &body, pool, &mut one_shot).unwrap();
        let mut decoder = DczDecoder::new(&dict, pool).unwrap();
        prop_assert_eq!(&decode_chunked(&mut decoder, &one_shot, &cuts, budget)[..], &body[..]);

        // dcb: every body, with no exception, and Google's decoder agrees.
        let mut encoder = crate::dcb::encoder(&dict, level, pool).unwrap();
        let wire = stream(&mut encoder, &body, &cuts, flush_every);
        let mut decoder = DcbDecoder::new(&dict);
        prop_assert_eq!(&decode_chunked(&mut decoder, &wire, &cuts, budget)[..], &body[..]);
        prop_assert_eq!(&google_decodes_dcb(&dict, &wire)[..], &body[..]);
        let mut one_shot = BytesMut::new();
        encode_all::<DcbCore>(&dict, level, &body, pool, &mut one_shot).unwrap();
        prop_assert_eq!(&decode_dcb(&dict, &one_shot, LIMIT).unwrap()[..], &body[..]);
        prop_assert_eq!(&google_decodes_dcb(&dict, &one_shot)[..], &body[..]);
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

#[test]
fn dcz_idle_ends_the_frame_and_gives_the_context_back() {
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    let body = bodies[..6].concat();
    let mut encoder = crate::dcz::encoder(&dict, CompressionLevel::Default, &pool).unwrap();
    let mut wire = BytesMut::new();
    // Idle before any input: nothing written, no context held.
    encoder.idle(&mut wire).unwrap();
    assert!(wire.is_empty() && !encoder.holds_state() && !encoder.has_payload());
    for chunk in body.chunks(900) {
        encoder.encode(chunk, &mut wire).unwrap();
        assert!(encoder.holds_state());
        encoder.idle(&mut wire).unwrap();
        encoder.idle(&mut wire).unwrap(); // twice is harmless
        assert!(!encoder.holds_state());
        encoder.flush(&mut wire).unwrap(); // nothing owed between frames
    }
    encoder.finish(&mut wire).unwrap();
    assert!(encoder.idle(&mut wire).is_err());
    let mut decoder = DczDecoder::new(&dict, &pool).unwrap();
    assert_eq!(
        &decode_chunked(&mut decoder, &wire, &[333], 4096)[..],
        &body[..]
    );
    assert_eq!(Decode::members(&decoder), body.chunks(900).count() as u64);
    // Each frame sees the whole dictionary again: far smaller than plain zstd frames of the
    // same pieces.
    let mut plain = BytesMut::new();
    for chunk in body.chunks(900) {
        OneShotZstd::encode(chunk, &pool, &mut plain);
    }
    let (dcz, zstd) = (wire.len(), plain.len());
    assert!(dcz * 10 < zstd * 9, "dcz {dcz} vs zstd {zstd}");

    // An encoder that idles and then finishes without input writes a valid empty body.
    let mut encoder = crate::dcz::encoder(&dict, CompressionLevel::Default, &pool).unwrap();
    let mut wire = BytesMut::new();
    encoder.idle(&mut wire).unwrap();
    encoder.finish(&mut wire).unwrap();
    assert!(wire.len() > 40);
    assert!(decode_dcz(&dict, &wire, &pool, LIMIT).unwrap().is_empty());
}

/// Plain zstd 3 of a whole body, for comparisons.
struct OneShotZstd;

impl OneShotZstd {
    fn encode(body: &[u8], pool: &CodecPool, out: &mut BytesMut) {
        crate::OneShot::new(crate::ContentCoding::Zstd)
            .pool(pool)
            .encode(body, out)
            .unwrap();
    }
}

/// The input the property test shrank to when `dcb` ran on the `brotli` crate: a 167-byte
/// dictionary and a 563-byte body on which that crate's encoder (9.1.1), with the
/// dictionary set, panicked at quality 5 and up (a match from the dictionary's last byte cut
/// to a one-byte copy, which `StoreCommandExtra` cannot code). Google's brotli encodes it at
/// every quality, in one shot and streamed with flushes, and the pool is left balanced.
#[test]
fn dcb_round_trips_the_input_that_broke_the_brotli_crate_at_every_quality() {
    let hex = |parts: &[&str]| -> Vec<u8> {
        let s: String = parts.concat();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let dict = dictionary(hex(DEFECT_DICTIONARY));
    let body = hex(DEFECT_BODY);
    let pool = CodecPool::new();
    for level in 0..=11 {
        let level = CompressionLevel::Precise(level);
        let mut out = BytesMut::new();
        encode_all::<DcbCore>(&dict, level, &body, &pool, &mut out).unwrap();
        assert_eq!(&decode_dcb(&dict, &out, LIMIT).unwrap()[..], &body[..]);
        let mut encoder = crate::dcb::encoder(&dict, level, &pool).unwrap();
        let wire = stream(&mut encoder, &body, &[660, 91, 7], 1);
        let mut decoder = DcbDecoder::new(&dict);
        let decoded = decode_chunked(&mut decoder, &wire, &[660, 91], 1738);
        assert_eq!(&decoded[..], &body[..], "{level:?}");
    }
    let stats = pool.stats().kind(crate::pool::PoolKind::DcbCompressors);
    assert_eq!((stats.in_use(), stats.discarded), (0, 0));
    assert!(stats.reused > 0, "{stats:?}");
}

const DEFECT_DICTIONARY: &[&str] = &[
    "450888181fd9164cbc20994867a56bbbe8b9aa44eb8fd99fca2cfa781d6ab3889f6b206c6e8156df72548c92",
    "a9d8fe82fe19918ce494a94ff2fe1c842b11bbe78d0b5a647bb2cb01db552795b1b6ecba9781857ed8997749",
    "bcaa9720fc8fa37eb4e4e5156e2c6fc925f2c06e72ee494b53a91f88fad29516fd5c6f1bcdf9a40c93cce449",
    "dbb02b752ec700e36636154346fb82741b07387c161f8f2bc8090c8b489365e694fb32",
];

const DEFECT_BODY: &[&str] = &[
    "e53b099ceb29094213d432e56598681e557efea243a483763b8bfeca518320cdc6e7aabeab19257508672cb5",
    "a0c79edf6c36c30434955995302fe4d8ceaadcf31eadcef4d7beaf49b5d9071803cb7cfb82095fff4abbc008",
    "c46319603d322278a5677e887780a40992154fa1536aa90aab1b17cb5c79cdb74d8c91aacaa855cdcccdf38e",
    "47629fa27664499bfa44a9d3ce5dafbd44a1839f76c5ba081901f21ae3acd33c73d4b1eee212255a221e9bf3",
    "402cf59fd44727c63c398da1894c90181d4f2943b8421d90562e59c1180a52bf797a3516c3dca7df7cd86d1f",
    "f4365b0cdb40ba0a46e25d36ba0c8b290f15dd9192ed543f17169322dfab731431a86c5df95f143705028ee5",
    "ac279970861a87be6ceba292989ca9beac5535e3c181139a6da35e635a28fb6d8f45f823d68d2d3afbf2c0a3",
    "76084696629c3901c9590ac2a3224318f0f08dec907c4fd4355c685608ce86f11e25aa6349410557372d3bf6",
    "f1112cd7a486c2b435513ca4756f370c6bb1415c4e34541c6e1c7b8915747c38f1ab1c5697b8a3b7740c7f23",
    "450eadd579990704bad08dc116f012b9063bd6dd364c06bed2667943b062342d78b7d5f81eb1f3c79b1048eb",
    "4ed5424731ef4280ef5f72bdc418e5b0f8edadc80d764574fca5f3d0c6c86a4c281bada83eb0b30bd9aee70c",
    "182b85e2a6070e45da0fc2e40c6070b776b3a95d036897e6847af37204958164658bcfc70484c965bf679cbe",
    "b7d0054aa4aaf393914205adc24638808d4341a2c2e8c670d3d8f7ec1ba8a30bfaee98",
];
