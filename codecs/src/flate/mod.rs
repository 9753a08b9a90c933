//! gzip (RFC 1952) and zlib (RFC 1950) framing of our own around pooled raw deflate states
//! (flate2 on zlib-rs), and the one-shot path (libdeflate with its feature).

#[cfg(feature = "libdeflate")]
mod block;
mod checksum;
mod decoder;
mod encoder;
mod gzip_header;
mod oneshot;
// Raw deflate by message (WebSocket permessage-deflate, RFC 7692).
pub mod raw;

use bytes::BytesMut;

use super::encoding::EncodeOptions;
use super::{ContentCoding, EncodeError, Level};
use crate::pool::CodecPool;
pub(crate) use decoder::FlateDecoder;
pub(crate) use encoder::FlateEncoder;
pub(crate) use oneshot::encode_all;
// flate2's `*_uninit` calls write into spare capacity: their one unsafe line is in `ffi`.
pub(crate) use crate::ffi::{compress_into, decompress_into};

// Raw deflate states: gzip and zlib framing are ours, so one state serves both and resets in
// nanoseconds (a gzip-mode zlib-rs inflater rebuilds tens of kilobytes of state on reset; a
// raw one does not).
impl crate::pool::PooledState for flate2::Compress {
    const KIND: crate::pool::Kind = crate::kinds::PoolKind::DeflateCompressors.kind();

    fn reset(&mut self) -> bool {
        flate2::Compress::reset(self);
        true
    }
}

impl crate::pool::PooledState for flate2::Decompress {
    const KIND: crate::pool::Kind = crate::kinds::PoolKind::DeflateDecompressors.kind();

    fn reset(&mut self) -> bool {
        flate2::Decompress::reset(self, false);
        true
    }
}

/// The wrapper around the deflate data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// gzip members: header, deflate, CRC-32 and ISIZE.
    Gzip,
    /// zlib: a two-byte header, deflate, Adler-32. The decoder also takes raw deflate.
    Zlib,
}

/// The zlib `compressBound` of `len` bytes, plus room for flush markers.
pub fn deflate_bound(len: usize) -> usize {
    len + (len >> 12) + (len >> 14) + (len >> 25) + 13 + 16
}

// The family's entry points, as the codec list calls them (`codec/mod.rs`).
pub(crate) type Encoder = FlateEncoder;
pub(crate) type Decoder = FlateDecoder;

/// gzip's framing, or zlib's for `deflate`.
fn framing(coding: ContentCoding) -> Framing {
    match coding {
        ContentCoding::Gzip => Framing::Gzip,
        _ => Framing::Zlib,
    }
}

pub(crate) fn encoder(coding: ContentCoding, level: Level, pool: &CodecPool) -> Encoder {
    FlateEncoder::new(framing(coding), level, pool)
}

pub(crate) fn decoder(coding: ContentCoding, pool: &CodecPool) -> Decoder {
    FlateDecoder::new(framing(coding), pool)
}

pub(crate) fn one_shot(
    coding: ContentCoding,
    level: Level,
    options: &EncodeOptions,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let framing = framing(coding);
    encode_all(framing, level, input, pool, options.padding, out)
}
