//! gzip (RFC 1952) and zlib (RFC 1950) framing of our own around pooled raw deflate states
//! (flate2 on zlib-rs), and the one-shot path (libdeflate with its feature).

use bytes::BytesMut;
use flate2::{
    Compress, CompressError, Decompress, DecompressError, FlushCompress, FlushDecompress, Status,
};

mod checksum;
mod decoder;
mod encoder;
mod gzip_header;
mod oneshot;

pub(crate) use decoder::FlateDecoder;
pub(crate) use encoder::FlateEncoder;
#[cfg(feature = "libdeflate")]
pub(crate) use oneshot::BlockCompressor;
pub(crate) use oneshot::encode_all;

/// The wrapper around the deflate data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// gzip members: header, deflate, CRC-32 and ISIZE.
    Gzip,
    /// zlib: a two-byte header, deflate, Adler-32. The decoder also takes raw deflate.
    Zlib,
}

/// The zlib `compressBound` of `len` bytes, plus room for flush markers.
pub(crate) fn deflate_bound(len: usize) -> usize {
    len + (len >> 12) + (len >> 14) + (len >> 25) + 13 + 16
}

/// Bytes consumed and produced by one deflate or inflate call, and its status.
pub(crate) struct Step<S, E> {
    pub(crate) consumed: usize,
    pub(crate) produced: usize,
    pub(crate) status: Result<S, E>,
}

/// One `compress` call writing into `room` bytes of `out`'s spare capacity (reserved here,
/// never zero-filled); `out` grows by the bytes produced.
#[allow(unsafe_code)]
pub(crate) fn compress_into(
    deflate: &mut Compress,
    input: &[u8],
    out: &mut BytesMut,
    room: usize,
    flush: FlushCompress,
) -> Step<Status, CompressError> {
    out.reserve(room);
    let (in_before, out_before) = (deflate.total_in(), deflate.total_out());
    let spare = &mut out.spare_capacity_mut()[..room];
    let status = deflate.compress_uninit(input, spare, flush);
    let produced = (deflate.total_out() - out_before) as usize;
    assert!(produced <= room, "deflate wrote past its output buffer");
    // SAFETY: deflate writes its output from the start of `spare` and counts it in
    // `total_out`, so the first `produced` bytes of the spare capacity are initialized; the
    // assert above keeps `set_len` within the capacity reserved. Covered by the codec
    // round-trip property tests, which compare every byte written this way.
    unsafe { out.set_len(out.len() + produced) };
    Step {
        consumed: (deflate.total_in() - in_before) as usize,
        produced,
        status,
    }
}

/// One `decompress` call writing into `room` bytes of `out`'s spare capacity (reserved here,
/// never zero-filled); `out` grows by the bytes produced.
///
/// Not zero-filling matters: a body of many tiny gzip members would otherwise pay for
/// clearing a whole output buffer per member, an amplification a peer could exploit.
#[allow(unsafe_code)]
pub(crate) fn decompress_into(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut BytesMut,
    room: usize,
) -> Step<Status, DecompressError> {
    out.reserve(room);
    let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
    let spare = &mut out.spare_capacity_mut()[..room];
    let status = inflate.decompress_uninit(input, spare, FlushDecompress::None);
    let produced = (inflate.total_out() - out_before) as usize;
    assert!(produced <= room, "inflate wrote past its output buffer");
    // SAFETY: as in `compress_into`: inflate initializes the first `produced` bytes of
    // `spare`, and `produced <= room <= spare capacity`.
    unsafe { out.set_len(out.len() + produced) };
    Step {
        consumed: (inflate.total_in() - in_before) as usize,
        produced,
        status,
    }
}
