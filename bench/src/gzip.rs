//! Gzip through the crate's pooled codec, whole buffers in and out: the operation the codec
//! bench times and `codec_allocs` counts.

use bytes::BytesMut;
use tower_gzip::codec::{Decoder, Encoder};
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

/// `data` as one gzip member at `level`, with a state from `pool`.
pub fn gzip(pool: &CodecPool, level: CompressionLevel, data: &[u8]) -> BytesMut {
    let mut out = BytesMut::new();
    let mut encoder = Encoder::for_coding(ContentCoding::Gzip, level, None, pool).unwrap();
    encoder.encode(data, &mut out).expect("encode");
    encoder.finish(&mut out).expect("finish");
    out
}

/// A whole gzip member decoded, with a state from `pool`.
pub fn gunzip(pool: &CodecPool, wire: &[u8]) -> BytesMut {
    let mut out = BytesMut::new();
    let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, pool).unwrap();
    let consumed = decoder.decode(wire, &mut out, usize::MAX).expect("decode");
    debug_assert_eq!(consumed, wire.len());
    decoder.finish().expect("complete stream");
    out
}
