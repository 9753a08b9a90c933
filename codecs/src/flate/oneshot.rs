//! Whole-buffer compression, for bodies known in full.

use bytes::BytesMut;

use super::{FlateEncoder, Framing};
use crate::encoding::EncodeOptions;
use crate::pool::CodecPool;
use crate::{EncodeError, Level};

/// Compresses all of `input` as one complete gzip or zlib stream, appended to `out`, padded
/// (`padding`: bytes of gzip header comment, or zlib empty blocks).
///
/// With the `libdeflate` cargo feature (on by default) the deflate work at levels 2 and up is
/// done by a pooled libdeflate compressor, faster than zlib-rs at level 6 (BENCHMARKS.md,
/// "Time per response against tower-http") and writing smaller output; levels 0 and 1,
/// and builds without the feature, use a pooled streaming encoder (zlib-rs). The framing is
/// the same either way.
pub(crate) fn encode_all(
    framing: Framing,
    level: Level,
    input: &[u8],
    pool: &CodecPool,
    padding: usize,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    // At levels 0 and 1 zlib-rs is as fast as libdeflate or faster (much faster on small
    // inputs, where libdeflate's table setup dominates), so speed-first levels use it.
    #[cfg(feature = "libdeflate")]
    if level.get() > 1 {
        let mut block = pool.take(level, || super::block::BlockCompressor::new(level));
        return block.encode(framing, level, input, padding, out);
    }
    let options = EncodeOptions {
        padding,
        ..EncodeOptions::default()
    };
    let mut encoder = FlateEncoder::new(framing, level, pool).with_options(options);
    encoder.encode(input, out)?;
    encoder.finish(out).map(drop)
}
