//! Corruption, one test per kind; header fields split anywhere, multi-member streams, and
//! `deflate` sniffing zlib from raw.

use bytes::BytesMut;
use flate2::{Compress, Compression, FlushCompress};
use tower_gzip_codecs::CodecPool;
use tower_gzip_codecs::ContentCoding;
use tower_gzip_codecs::{DecodeErrorKind, Decoder};

use crate::common::{GzipHeader, gzip_member, raw_deflate, text, zlib};
use crate::{decode, decode_err, decode_with, encode, feed};

#[test]
fn bad_magic_is_corrupt_header() {
    let mut wire = encode(ContentCoding::Gzip, 6, b"data");
    wire[1] = 0x8c;
    assert_eq!(
        decode_err(ContentCoding::Gzip, &wire),
        DecodeErrorKind::CorruptHeader
    );
    assert_eq!(
        decode_err(ContentCoding::Gzip, b"plain text"),
        DecodeErrorKind::CorruptHeader
    );
}

#[test]
fn reserved_flags_are_corrupt_header() {
    for bit in [0x20, 0x40, 0x80] {
        let h = GzipHeader {
            flags_or: bit,
            ..GzipHeader::default()
        };
        let wire = gzip_member(&h, b"data");
        assert_eq!(
            decode_err(ContentCoding::Gzip, &wire),
            DecodeErrorKind::CorruptHeader
        );
    }
}

#[test]
fn unknown_method_is_corrupt_header() {
    let h = GzipHeader {
        method: Some(7),
        ..GzipHeader::default()
    };
    assert_eq!(
        decode_err(ContentCoding::Gzip, &gzip_member(&h, b"x")),
        DecodeErrorKind::CorruptHeader
    );
}

#[test]
fn bad_header_crc16_is_corrupt_header() {
    let h = GzipHeader {
        name: Some(b"f.txt"),
        hcrc: true,
        ..GzipHeader::default()
    };
    let mut wire = gzip_member(&h, b"data");
    assert_eq!(decode(ContentCoding::Gzip, &wire).unwrap(), b"data");
    let crc_at = 10 + 6; // fixed header, "f.txt\0"
    wire[crc_at] ^= 1;
    assert_eq!(
        decode_err(ContentCoding::Gzip, &wire),
        DecodeErrorKind::CorruptHeader
    );
}

#[test]
fn crc32_mismatch_is_checksum() {
    let mut wire = encode(ContentCoding::Gzip, 6, b"some data");
    let at = wire.len() - 8;
    wire[at] ^= 0x55;
    assert_eq!(
        decode_err(ContentCoding::Gzip, &wire),
        DecodeErrorKind::Checksum
    );
}

#[test]
fn isize_mismatch_is_checksum() {
    let mut wire = encode(ContentCoding::Gzip, 6, b"some data");
    let at = wire.len() - 4;
    wire[at] ^= 1;
    assert_eq!(
        decode_err(ContentCoding::Gzip, &wire),
        DecodeErrorKind::Checksum
    );
}

#[test]
fn adler32_mismatch_is_checksum() {
    let mut wire = encode(ContentCoding::Deflate, 6, b"some data");
    let at = wire.len() - 1;
    wire[at] ^= 1;
    assert_eq!(
        decode_err(ContentCoding::Deflate, &wire),
        DecodeErrorKind::Checksum
    );
}

#[test]
fn truncated_at_every_offset_is_truncated() {
    let h = GzipHeader {
        extra: Some(b"ab\x02\x00xy"),
        name: Some(b"name"),
        comment: Some(b"comment"),
        hcrc: true,
        ..GzipHeader::default()
    };
    let data = text(300);
    let cases = [
        (ContentCoding::Gzip, gzip_member(&h, &data)),
        (ContentCoding::Gzip, encode(ContentCoding::Gzip, 1, &data)),
        (
            ContentCoding::Deflate,
            encode(ContentCoding::Deflate, 6, &data),
        ),
        (ContentCoding::Deflate, raw_deflate(&data)),
    ];
    for (format, wire) in cases {
        for cut in 1..wire.len() {
            for chunk in [1, wire.len()] {
                let kind = decode_with(format, &wire[..cut], &[chunk], 7)
                    .expect_err("a truncated stream must not decode")
                    .kind();
                assert_eq!(kind, DecodeErrorKind::Truncated, "{format:?} cut at {cut}");
            }
        }
        assert_eq!(decode(format, &wire).unwrap(), data);
    }
}

#[test]
fn trailing_garbage_after_gzip_member() {
    let mut wire = encode(ContentCoding::Gzip, 6, b"data");
    wire.extend_from_slice(b"garbage");
    assert_eq!(
        decode_err(ContentCoding::Gzip, &wire),
        DecodeErrorKind::TrailingData
    );
    // Split right at the end of the member too.
    let n = wire.len() - 7;
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    feed(&mut decoder, &wire[..n], &[n], 100, &mut out).unwrap();
    assert!(decoder.is_stream_end());
    let err = decoder.decode(&wire[n..], &mut out, 100).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::TrailingData);
}

#[test]
fn trailing_data_after_zlib_and_raw_deflate() {
    for mut wire in [
        zlib(b"data"),
        raw_deflate(b"data"),
        encode(ContentCoding::Deflate, 6, b"d"),
    ] {
        wire.push(0);
        assert_eq!(
            decode_err(ContentCoding::Deflate, &wire),
            DecodeErrorKind::TrailingData
        );
    }
}

#[test]
fn corrupt_deflate_data() {
    // BTYPE = 11 is reserved in every deflate block header.
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    gz.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
    assert_eq!(
        decode_err(ContentCoding::Gzip, &gz),
        DecodeErrorKind::CorruptData
    );
    assert_eq!(
        decode_err(ContentCoding::Deflate, &[0x78, 0x9c, 0xff, 0xff]),
        DecodeErrorKind::CorruptData
    );
    assert_eq!(
        decode_err(ContentCoding::Deflate, &[0x07, 0x00, 0x00]),
        DecodeErrorKind::CorruptData
    );
    // A stored block whose NLEN is not the complement of LEN.
    let mut zl = vec![0x78, 0x01, 0x01, 0x05, 0x00, 0x00, 0x00];
    zl.extend_from_slice(b"hello");
    assert_eq!(
        decode_err(ContentCoding::Deflate, &zl),
        DecodeErrorKind::CorruptData
    );
}

#[test]
fn zlib_preset_dictionary_is_corrupt_header() {
    let cmf = 0x78u16;
    let mut flg = 0x20u16; // FDICT
    flg += 31 - ((cmf << 8) | flg) % 31;
    assert_eq!(((cmf << 8) | flg) % 31, 0);
    let wire = [cmf as u8, flg as u8, 0, 0, 0, 1, 0x03, 0x00];
    assert_eq!(
        decode_err(ContentCoding::Deflate, &wire),
        DecodeErrorKind::CorruptHeader
    );
}

#[test]
fn over_long_name_and_comment_are_corrupt_header() {
    let long = vec![b'n'; 64 * 1024 + 1];
    let at_limit = vec![b'n'; 64 * 1024 - 1]; // plus its NUL: exactly 64 KiB
    for name_field in [true, false] {
        let pick = |field: &[u8]| {
            let h = GzipHeader {
                name: name_field.then_some(field),
                comment: (!name_field).then_some(field),
                ..GzipHeader::default()
            };
            gzip_member(&h, b"x")
        };
        assert_eq!(decode(ContentCoding::Gzip, &pick(&at_limit)).unwrap(), b"x");
        let wire = pick(&long);
        assert_eq!(
            decode_err(ContentCoding::Gzip, &wire),
            DecodeErrorKind::CorruptHeader
        );
        // Fed in small pieces, the error comes as soon as the bound is passed.
        let err = decode_with(ContentCoding::Gzip, &wire, &[4096], 100).unwrap_err();
        assert_eq!(err.kind(), DecodeErrorKind::CorruptHeader);
    }
    // A field that never ends is refused without reading it all.
    let mut endless = vec![0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 255];
    endless.resize(1 << 20, b'a');
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let err = decoder
        .decode(&endless, &mut BytesMut::new(), 100)
        .unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::CorruptHeader);
}

#[test]
fn largest_fextra_is_accepted() {
    let extra = vec![0xab; 65_535];
    let h = GzipHeader {
        extra: Some(&extra),
        hcrc: true,
        ..GzipHeader::default()
    };
    let wire = gzip_member(&h, b"payload");
    assert_eq!(decode(ContentCoding::Gzip, &wire).unwrap(), b"payload");
    assert_eq!(
        decode_with(ContentCoding::Gzip, &wire, &[1000], 3).unwrap(),
        b"payload"
    );
}

#[test]
fn many_empty_members_decode() {
    let one = encode(ContentCoding::Gzip, 6, b"");
    let wire = one.repeat(10_000);
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    feed(&mut decoder, &wire, &[wire.len()], 1 << 20, &mut out).unwrap();
    decoder.finish().unwrap();
    assert!(out.is_empty());
    // The caller's buffer did not grow per member.
    assert!(out.capacity() <= 512 * 1024, "capacity {}", out.capacity());
}

#[test]
fn headers_with_every_field_split_at_every_byte() {
    let data = text(200);
    let headers = [
        GzipHeader {
            extra: Some(b"AB\x03\x00xyz"),
            name: Some(b"file.json"),
            comment: Some(b"a comment"),
            hcrc: true,
            ..GzipHeader::default()
        },
        GzipHeader {
            extra: Some(b""),
            ..GzipHeader::default()
        },
        GzipHeader {
            extra: Some(b""),
            hcrc: true,
            ..GzipHeader::default()
        },
        GzipHeader {
            name: Some(b""),
            comment: Some(b""),
            ..GzipHeader::default()
        },
    ];
    for h in &headers {
        let wire = gzip_member(h, &data);
        for split in 0..=wire.len() {
            let pool = CodecPool::new();
            let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
            let mut out = BytesMut::new();
            feed(&mut decoder, &wire[..split], &[split.max(1)], 64, &mut out).unwrap();
            feed(&mut decoder, &wire[split..], &[wire.len()], 64, &mut out).unwrap();
            decoder.finish().unwrap();
            assert_eq!(&out[..], &data[..], "split at {split}");
        }
        assert_eq!(
            decode_with(ContentCoding::Gzip, &wire, &[1], 1).unwrap(),
            data
        );
    }
}

#[test]
fn multi_member_with_headers_byte_by_byte() {
    let h = GzipHeader {
        name: Some(b"a"),
        hcrc: true,
        ..GzipHeader::default()
    };
    let mut wire = gzip_member(&h, b"first ");
    wire.extend(encode(ContentCoding::Gzip, 1, b""));
    wire.extend(encode(ContentCoding::Gzip, 9, b"second"));
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, &pool).unwrap();
    let mut out = BytesMut::new();
    feed(&mut decoder, &wire, &[1], 2, &mut out).unwrap();
    decoder.finish().unwrap();
    assert_eq!(&out[..], b"first second");
}

#[test]
fn deflate_sniffs_zlib_and_raw() {
    let data = text(5000);
    assert_eq!(decode(ContentCoding::Deflate, &zlib(&data)).unwrap(), data);
    assert_eq!(
        decode(ContentCoding::Deflate, &raw_deflate(&data)).unwrap(),
        data
    );
    // Stored (level 0) raw deflate starts with a byte that is not a zlib CMF.
    let mut c = Compress::new(Compression::none(), false);
    let mut stored = Vec::with_capacity(6000);
    c.compress_vec(&data, &mut stored, FlushCompress::Finish)
        .unwrap();
    assert_eq!(
        decode_with(ContentCoding::Deflate, &stored, &[1], 100).unwrap(),
        data
    );
    // A gzip stream is not `deflate`.
    assert!(
        decode(
            ContentCoding::Deflate,
            &encode(ContentCoding::Gzip, 6, b"x")
        )
        .is_err()
    );
}
