//! Typed errors, window bounds and hostile bodies.

use bytes::BytesMut;

use super::*;
use crate::DecodeErrorKind;
use crate::{CodecPool, CompressionLevel};

#[test]
fn typed_errors_for_wrong_dictionary_and_broken_bodies() {
    let pool = CodecPool::new();
    let dict = dictionary(&b"the dictionary the body was made with"[..]);
    let other = dictionary(&b"another dictionary"[..]);
    let body = b"the body, made with the dictionary, the dictionary".repeat(20);
    let mut dcz = BytesMut::new();
    encode_all::<DczCore>(&dict, CompressionLevel::Default, &body, &pool, &mut dcz).unwrap();
    let mut dcb = BytesMut::new();
    encode_all::<DcbCore>(
        &dict,
        CompressionLevel::Default,
        &body,
        crate::CodecPool::global(),
        &mut dcb,
    )
    .unwrap();

    let wrong = DictDecodeError::WrongDictionary { found: dict.hash() };
    assert_eq!(decode_dcz(&other, &dcz, &pool, LIMIT).unwrap_err(), wrong);
    assert_eq!(decode_dcb(&other, &dcb, LIMIT).unwrap_err(), wrong);
    assert_eq!(
        crate::DecodeError::from(wrong.clone()).kind(),
        DecodeErrorKind::DictionaryMismatch
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
    let wrong = crate::DecodeError::from(wrong);
    assert_eq!(
        decoder.decode(b"", &mut BytesMut::new(), 1024).unwrap_err(),
        wrong
    );
    assert_eq!(decoder.finish().unwrap_err(), wrong);
    let mut encoder =
        crate::dcb::encoder(&dict, CompressionLevel::Default, crate::CodecPool::global()).unwrap();
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
        let mut encoder =
            crate::dcz::encoder(&dict, CompressionLevel::Precise(level), &pool).unwrap();
        let mut wire = BytesMut::new();
        encoder.encode(&body, &mut wire).unwrap();
        encoder.finish(&mut wire).unwrap();
        assert_eq!(frame_window(&wire[40..]), expected, "level {level}");
        // One-shot: a single-segment frame whose window is the body.
        let mut wire = BytesMut::new();
        encode_all::<DczCore>(
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
    let dict = dictionary(&b"prefix"[..]);
    let body = b"large window stream".repeat(10);
    let mut wire = DCB_MAGIC.to_vec();
    wire.extend_from_slice(&dict.hash());
    wire.extend_from_slice(&crate::ffi::brotli_c::tests::large_window_stream(&body, 5));
    assert!(matches!(
        decode_dcb(&dict, &wire, LIMIT),
        Err(DictDecodeError::Codec(_))
    ));
}
