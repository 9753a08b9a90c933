//! libdeflate's whole-buffer compressor, pooled with its scratch buffer: gzip and deflate
//! bodies known in full, at levels 2 and up (cargo feature `libdeflate`).

use bytes::BytesMut;

use super::Framing;
use super::checksum::Checksum;
use super::encoder::{header_len, write_header, write_trailer};
use crate::{EncodeError, Level};

/// A libdeflate compressor with the scratch buffer it writes into, pooled together.
pub(crate) struct BlockCompressor {
    compressor: libdeflater::Compressor,
    /// Deflate output lands here first, so the body gets an exactly sized buffer: one
    /// allocation, and `Bytes` needs no extra bookkeeping allocation for spare capacity.
    scratch: Vec<u8>,
}

/// The scratch capacity a pooled compressor keeps: enough for the response layer's 64 KiB
/// one-shot bodies. A larger call's buffer is freed when the compressor goes back.
const MAX_KEPT_SCRATCH: usize = 128 * 1024;

impl BlockCompressor {
    pub(crate) fn new(level: Level) -> Self {
        // Levels 0-9 are valid for libdeflate (it goes to 12).
        let lvl = libdeflater::CompressionLvl::new(i32::from(level.get())).unwrap_or_default();
        BlockCompressor {
            compressor: libdeflater::Compressor::new(lvl),
            scratch: Vec::new(),
        }
    }
}

impl crate::pool::PooledState for BlockCompressor {
    const KIND: crate::pool::Kind = crate::kinds::PoolKind::BlockCompressors.kind();

    fn reset(&mut self) -> bool {
        // libdeflate keeps no state between calls, and the scratch buffer is overwritten by
        // each use; only an outsized buffer is let go.
        if self.scratch.capacity() > MAX_KEPT_SCRATCH {
            self.scratch = Vec::new();
        }
        true
    }
}

impl BlockCompressor {
    /// Compresses all of `input` as one `framing` stream at `level` (the level this
    /// compressor was made for), with `padding` bytes of gzip header comment or zlib empty
    /// blocks.
    pub(crate) fn encode(
        &mut self,
        framing: Framing,
        level: Level,
        input: &[u8],
        padding: usize,
        out: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let BlockCompressor {
            compressor,
            scratch,
        } = self;
        let padding = padding.min(u16::MAX as usize);
        let bound = compressor.deflate_compress_bound(input.len());
        // libdeflate writes into initialized memory. The scratch buffer is cleared once as it
        // grows and reused after that.
        if scratch.len() < bound {
            scratch.resize(bound, 0);
        }
        let written = compressor
            .deflate_compress(input, &mut scratch[..bound])
            .map_err(|e| EncodeError::new(format!("libdeflate: {e:?}")))?;
        out.reserve(header_len(framing, padding) + written + 8);
        write_header(framing, level, padding, out);
        out.extend_from_slice(&scratch[..written]);
        let mut check = Checksum::new(framing);
        check.update(input);
        write_trailer(framing, check.value(), input.len() as u64, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Decode;
    use crate::flate::FlateDecoder;
    use crate::flate::FlateEncoder;
    use crate::flate::oneshot::encode_all;
    use crate::pool::CodecPool;

    fn decode(framing: Framing, wire: &[u8]) -> Vec<u8> {
        let pool = CodecPool::new();
        let mut decoder = FlateDecoder::new(framing, &pool);
        let mut out = BytesMut::new();
        let mut input = wire;
        while !input.is_empty() || decoder.has_pending_output() {
            let n = decoder.decode(input, &mut out, 1 << 20).unwrap().consumed;
            input = &input[n..];
        }
        decoder.finish().unwrap();
        out.to_vec()
    }

    #[test]
    fn block_and_streaming_encoders_agree_on_framing() {
        let pool = CodecPool::new();
        let input: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        for framing in [Framing::Gzip, Framing::Zlib] {
            for level in [0, 1, 6, 9] {
                let level =
                    crate::CompressionLevel::Precise(level).resolve(crate::ContentCoding::Gzip);
                let mut block = BytesMut::new();
                pool.take(level, || BlockCompressor::new(level))
                    .encode(framing, level, &input, 7, &mut block)
                    .unwrap();
                let mut streamed = BytesMut::new();
                let mut encoder = FlateEncoder::new(framing, level, &pool);
                encoder.options_mut().unwrap().padding = 7;
                encoder.encode(&input, &mut streamed).unwrap();
                encoder.finish(&mut streamed).unwrap();
                assert_eq!(decode(framing, &block), input);
                let header = crate::flate::encoder::header_len(framing, 7);
                assert_eq!(header, if framing == Framing::Gzip { 17 } else { 2 + 12 });
                assert_eq!(block[..header], streamed[..header], "same header");
                assert_eq!(block[block.len() - 4..], streamed[streamed.len() - 4..]);
            }
        }
        assert_eq!(
            pool.stats()
                .kind(crate::pool::PoolKind::BlockCompressors)
                .in_use(),
            0
        );
        assert!(
            pool.stats()
                .kind(crate::pool::PoolKind::BlockCompressors)
                .reused
                > 0
        );
    }

    #[test]
    fn empty_input_is_a_valid_stream() {
        for framing in [Framing::Gzip, Framing::Zlib] {
            let mut out = BytesMut::new();
            encode_all(
                framing,
                crate::CompressionLevel::Default.resolve(crate::ContentCoding::Gzip),
                b"",
                CodecPool::global(),
                0,
                &mut out,
            )
            .unwrap();
            assert!(decode(framing, &out).is_empty());
        }
    }
}
