//! `OneShot`: a body known in full, compressed and decompressed through one entry point for
//! every coding, with or without a dictionary.

use bytes::BytesMut;
use tower_gzip_codecs::ContentCoding;
use tower_gzip_codecs::{CodecPool, CompressionLevel};
use tower_gzip_codecs::{DecodeErrorKind, OneShot};

use super::common::text;

#[cfg(feature = "dcz")]
fn offline_dictionary() -> tower_gzip_codecs::Dictionary {
    // A dictionary used without HTTP: bytes only.
    tower_gzip_codecs::Dictionary::new(text(8 << 10)).unwrap()
}

fn one_shot(coding: ContentCoding, pool: &CodecPool) -> OneShot<'_> {
    OneShot::new(coding)
        .pool(pool)
        .level(CompressionLevel::Best)
}

#[test]
fn every_coding_round_trips_through_one_entry_point() {
    let pool = CodecPool::new();
    #[cfg(feature = "dcz")]
    let dictionary = offline_dictionary();
    let body = text(40 << 10);
    for &coding in ContentCoding::ALL {
        let one_shot = one_shot(coding, &pool);
        #[cfg(feature = "dcz")]
        let one_shot = one_shot.dictionary(&dictionary);
        let mut wire = BytesMut::new();
        one_shot.encode(&body, &mut wire).unwrap();
        assert!(
            wire.len() < body.len() / 2,
            "{coding:?}: {} bytes",
            wire.len()
        );
        let plain = one_shot.decode(&wire, body.len()).unwrap();
        assert_eq!(&plain[..], &body[..], "{coding:?}");
    }
}

#[test]
fn a_body_over_the_limit_is_too_large_not_cut() {
    let pool = CodecPool::new();
    let body = text(64 << 10);
    for coding in ContentCoding::PLAIN {
        let one_shot = one_shot(*coding, &pool);
        let mut wire = BytesMut::new();
        one_shot.encode(&body, &mut wire).unwrap();
        let err = one_shot.decode(&wire, body.len() - 1).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::TooLarge, "{coding:?}");
        assert_eq!(
            one_shot.decode(&wire, body.len()).unwrap().len(),
            body.len()
        );
    }
}

#[test]
fn a_truncated_body_is_an_error() {
    let pool = CodecPool::new();
    let body = text(16 << 10);
    for coding in ContentCoding::PLAIN {
        let one_shot = one_shot(*coding, &pool);
        let mut wire = BytesMut::new();
        one_shot.encode(&body, &mut wire).unwrap();
        let err = one_shot
            .decode(&wire[..wire.len() - 4], 1 << 20)
            .unwrap_err();
        assert!(
            matches!(
                err.kind(),
                DecodeErrorKind::Truncated | DecodeErrorKind::CorruptData
            ),
            "{coding:?}: {err}"
        );
    }
}

#[cfg(feature = "dcz")]
#[test]
fn a_dictionary_coding_without_its_dictionary_fails_both_ways() {
    let pool = CodecPool::new();
    for coding in ContentCoding::ALL.iter().filter(|c| c.needs_dictionary()) {
        let one_shot = OneShot::new(*coding).pool(&pool);
        assert!(one_shot.encode(b"body", &mut BytesMut::new()).is_err());
        let err = one_shot.decode(b"body", 1024).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::DictionaryMismatch);
    }
}

#[cfg(feature = "dcz")]
#[test]
fn a_body_made_with_another_dictionary_is_a_mismatch() {
    let pool = CodecPool::new();
    let ours = offline_dictionary();
    let theirs = tower_gzip_codecs::Dictionary::new(text(4 << 10)).unwrap();
    for coding in ContentCoding::ALL.iter().filter(|c| c.needs_dictionary()) {
        let mut wire = BytesMut::new();
        one_shot(*coding, &pool)
            .dictionary(&theirs)
            .encode(b"a body", &mut wire)
            .unwrap();
        let err = one_shot(*coding, &pool)
            .dictionary(&ours)
            .decode(&wire, 1024)
            .unwrap_err();
        assert_eq!(
            err.kind(),
            DecodeErrorKind::DictionaryMismatch,
            "{coding:?}"
        );
    }
}
