//! Length padding (the BREACH jitter) in the room each format leaves for bytes a decoder
//! skips: a zstd skippable frame (RFC 8878 section 3.1.2) and brotli metadata meta-blocks
//! (RFC 7932 section 9.2). gzip's room (a header comment) and zlib's (empty deflate blocks
//! after the header) are the flate encoder's own.
//!
//! Both go at the end of the stream: the skippable frame after the last zstd frame, the
//! metadata after a flush and before brotli's last meta-block. Python's `zstandard` decodes
//! only the first frame in its one-shot `decompress` and `decompressobj`, so a skippable
//! frame in front would decode as an empty body there; one behind is read (and skipped) by
//! every decoder tried (libzstd's streaming API, which browsers use, the CLI, `zstandard`).

use bytes::BytesMut;

/// The magic of the skippable frame written: the first of the sixteen (`0x184D2A50`), as
/// `dcz`'s header uses another (`0x184D2A5E`).
#[cfg(feature = "zstd")]
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;

/// Appends a zstd skippable frame of `len` zero bytes (8 bytes of magic and size more on the
/// wire). Decoders skip it wherever a frame may begin.
#[cfg(feature = "zstd")]
pub(crate) fn skippable_frame(len: usize, out: &mut BytesMut) {
    // The jitter is at most 65,535 bytes; a larger request is cut to the 4-byte size field.
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.reserve(8 + len as usize);
    out.extend_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.resize(out.len() + len as usize, 0);
}

/// An empty metadata meta-block, one byte: ISLAST 0, MNIBBLES 0 (coded 3), the reserved bit
/// and MSKIPBYTES 0, then zero bits to the byte boundary.
#[cfg(feature = "br")]
const EMPTY_METADATA: u8 = 0b0000_0110;

/// Appends brotli metadata meta-blocks of exactly `len` bytes in all. Only valid at a byte
/// boundary of the stream before its last meta-block: after a flush, which pads the
/// encoder's output to a byte boundary with an empty metadata block of its own.
#[cfg(feature = "br")]
pub(crate) fn metadata_blocks(len: usize, out: &mut BytesMut) {
    // One block holds at most 65,536 bytes of metadata with a 3-byte header here (MSKIPBYTES
    // 2); larger paddings take several.
    let mut left = len;
    out.reserve(len);
    while left > 0 {
        let take = match left {
            // Too short for a header with a length: empty blocks, one byte each.
            1 | 2 => 1,
            // A 2-byte header and 1..=256 bytes.
            3..=258 => left,
            // 259 would leave 256 bytes after a 3-byte header, which MSKIPBYTES 2 cannot
            // code (its high byte must not be zero): 258 now, an empty block next.
            259 => 258,
            _ => left.min(3 + 65_536),
        };
        metadata_block(take, out);
        left -= take;
    }
}

/// One metadata meta-block of exactly `total` bytes: 1 (empty), 3..=258 or 260..=65,539.
#[cfg(feature = "br")]
fn metadata_block(total: usize, out: &mut BytesMut) {
    let (skip_bytes, header) = match total {
        1 => (0, 1),
        3..=258 => (1, 2),
        _ => (2, 3),
    };
    let skip_len = total - header;
    // Bits, least significant first: ISLAST 0, MNIBBLES code 3 (two 1 bits), the reserved
    // 0, MSKIPBYTES (2 bits), MSKIPLEN - 1 in MSKIPBYTES bytes, zero bits to the boundary.
    let mut bits = u32::from(EMPTY_METADATA) | (skip_bytes << 4);
    if skip_bytes > 0 {
        bits |= ((skip_len - 1) as u32) << 6;
    }
    out.extend_from_slice(&bits.to_le_bytes()[..header]);
    out.resize(out.len() + skip_len, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "zstd")]
    #[test]
    fn a_skippable_frame_is_skipped_by_libzstd() {
        for len in [0, 1, 255, 65_535] {
            let mut out = BytesMut::new();
            skippable_frame(len, &mut out);
            assert_eq!(out.len(), 8 + len);
            let size = zstd_safe::find_frame_compressed_size(&out).unwrap();
            assert_eq!(size, out.len(), "one skippable frame of {len}");
        }
    }

    #[cfg(feature = "br")]
    #[test]
    fn metadata_blocks_have_the_exact_length_and_decode_as_nothing() {
        use std::io::Read;
        for len in (1..=300).chain([65_535, 65_539, 65_540, 200_000]) {
            // An empty brotli stream: WBITS 16 (one 0 bit), an empty metadata block to the
            // byte boundary (0x0c), then the padding and the last, empty meta-block (0x03).
            let mut wire = BytesMut::from(&[0x0c][..]);
            metadata_blocks(len, &mut wire);
            assert_eq!(wire.len(), 1 + len, "{len} bytes of padding");
            wire.extend_from_slice(&[0x03]);
            let mut plain = Vec::new();
            brotli_decompressor::Decompressor::new(&wire[..], 4096)
                .read_to_end(&mut plain)
                .unwrap_or_else(|e| panic!("{len}: {e}"));
            assert!(plain.is_empty(), "{len}");
        }
    }
}
