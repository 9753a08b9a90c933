//! Streaming gzip (RFC 1952) and zlib (RFC 1950) codecs over pooled raw deflate states.
//!
//! Both are push style: feed a chunk, get output appended to a caller's
//! [`BytesMut`]. The framing (headers, CRC32 / Adler-32, trailers) is ours;
//! the deflate work is flate2 on the zlib-rs backend, with states drawn from a
//! [`CodecPool`](crate::CodecPool).
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use tower_gzip::codec::{Decoder, Encoder, Format};
//! use tower_gzip::{CodecPool, CompressionLevel};
//!
//! let pool = CodecPool::global();
//! let mut encoder = Encoder::new(Format::Gzip, CompressionLevel::Default, pool);
//! let mut wire = BytesMut::new();
//! encoder.encode(b"hello, ", &mut wire).unwrap();
//! encoder.flush(&mut wire).unwrap(); // everything so far is now decodable
//! encoder.encode(b"world", &mut wire).unwrap();
//! encoder.finish(&mut wire).unwrap();
//!
//! let mut decoder = Decoder::new(Format::Gzip, pool);
//! let mut plain = BytesMut::new();
//! let mut input = &wire[..];
//! while !input.is_empty() || decoder.has_pending_output() {
//!     let consumed = decoder.decode(input, &mut plain, 64 * 1024).unwrap();
//!     input = &input[consumed..];
//! }
//! decoder.finish().unwrap();
//! assert_eq!(&plain[..], b"hello, world");
//! ```

use bytes::BytesMut;
use flate2::{
    Compress, CompressError, Decompress, DecompressError, FlushCompress, FlushDecompress, Status,
};

mod checksum;
mod decoder;
mod encoder;
mod error;
mod gzip_header;
mod oneshot;

pub use decoder::Decoder;
pub use encoder::Encoder;
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
#[cfg(feature = "libdeflate")]
pub(crate) use oneshot::BlockCompressor;
pub use oneshot::encode_all;

/// A content coding this crate speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `gzip` (and its alias `x-gzip`): RFC 1952 members.
    Gzip,
    /// `deflate`: a zlib stream (RFC 1950). The decoder also accepts raw deflate
    /// (RFC 1951), which many clients send under this name.
    Deflate,
}

impl Format {
    /// The token used in `Content-Encoding`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Deflate => "deflate",
        }
    }

    /// The coding named by a `Content-Encoding` token (case-insensitive; `x-gzip` is gzip).
    pub fn from_token(token: &str) -> Option<Format> {
        let token = token.trim();
        if token.eq_ignore_ascii_case("gzip") || token.eq_ignore_ascii_case("x-gzip") {
            Some(Format::Gzip)
        } else if token.eq_ignore_ascii_case("deflate") {
            Some(Format::Deflate)
        } else {
            None
        }
    }
}

/// The compression level, with the same names as tower-http's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompressionLevel {
    /// Level 1: fastest, least compression.
    Fastest,
    /// Level 9: slowest, most compression.
    Best,
    /// Level 6, zlib's default.
    #[default]
    Default,
    /// An exact level, clamped to 0..=9 (0 stores without compressing).
    Precise(i32),
}

impl CompressionLevel {
    /// The deflate level, 0 through 9.
    pub fn as_u32(self) -> u32 {
        match self {
            CompressionLevel::Fastest => 1,
            CompressionLevel::Best => 9,
            CompressionLevel::Default => 6,
            CompressionLevel::Precise(level) => level.clamp(0, 9) as u32,
        }
    }
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
    // `total_out`, so the first `produced` bytes of the spare capacity are initialized.
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
    // SAFETY: inflate writes its output from the start of `spare` and counts it in
    // `total_out`, so the first `produced` bytes of the spare capacity are initialized.
    unsafe { out.set_len(out.len() + produced) };
    Step {
        consumed: (inflate.total_in() - in_before) as usize,
        produced,
        status,
    }
}
