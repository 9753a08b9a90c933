//! The `dcz` decoder: the header's hash checked against the dictionary, then zstd frames
//! decoded with the dictionary's raw-content `DDict`, windows bounded by
//! [`dcz_window_limit`].

use bytes::BytesMut;
use zstd_safe::zstd_sys::ZSTD_ErrorCode;

use super::Dictionary;
use super::dcz::dcz_window_limit;
use super::error::DictDecodeError;
use super::frame::{DCZ_MAGIC, HeaderReader};
use super::shelf::draw_decompressor;
use super::zstd_raw::{DecompressContext, ZstdError};
use crate::codec::{Decode, DecodeError, DecodeErrorKind, Progress};
use crate::pool::{CodecPool, Pooled};

/// A streaming `dcz` decoder: checks the header's hash against its dictionary, then decodes
/// the zstd frames (any number, back to back) with the dictionary's `DDict`, refusing a
/// window over [`dcz_window_limit`] before allocating it. Output is bounded per call.
pub struct DczDecoder {
    header: HeaderReader,
    ctx: Option<Pooled<DecompressContext>>,
    /// Between frames (or before the first): the body may end here.
    at_boundary: bool,
    pending: bool,
    frames: u64,
    total_in: u64,
    total_out: u64,
    failed: Option<DictDecodeError>,
}

impl std::fmt::Debug for DczDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DczDecoder")
            .field("frames", &self.frames)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

impl DczDecoder {
    /// A decoder for bodies made with `dictionary`, with a context from `pool`.
    pub fn new(dictionary: &Dictionary, pool: &CodecPool) -> Result<DczDecoder, DictDecodeError> {
        let ddict = dictionary.zstd().ddict()?;
        let mut ctx = draw_decompressor(pool);
        let max_window = usize::try_from(dcz_window_limit(dictionary.len())).unwrap_or(usize::MAX);
        if ctx.begin(ddict, max_window).is_err() {
            ctx.discard();
            return Err(DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::CorruptData,
                "zstd refused the dictionary",
            )));
        }
        Ok(DczDecoder {
            header: HeaderReader::new(&DCZ_MAGIC, dictionary.hash()),
            ctx: Some(ctx),
            at_boundary: true,
            pending: false,
            frames: 0,
            total_in: 0,
            total_out: 0,
            failed: None,
        })
    }

    /// Decodes from `input`, appending at most `max_out` bytes to `out`; returns the bytes
    /// of `input` consumed (all of it unless the budget ran out). After an error, every
    /// call returns it again.
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DictDecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.decode_inner(input, out, max_out);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
            self.pending = false;
            // A context that saw an error is reset by the pool before reuse.
            self.ctx = None;
        }
        result
    }

    fn decode_inner(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DictDecodeError> {
        let mut pos = 0;
        if !self.header.is_done() {
            pos = self.header.feed(input)?;
            self.total_in += pos as u64;
            if !self.header.is_done() {
                return Ok(pos);
            }
        }
        self.pending = false;
        let Some(ctx) = self.ctx.as_mut() else {
            return Err(DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::CorruptData,
                "the decoder is unusable",
            )));
        };
        let (start, out_start) = (pos, out.len());
        let mut budget = max_out;
        let result = loop {
            if budget == 0 {
                self.pending = true;
                break Ok(());
            }
            let room = budget
                .min(256 * 1024)
                .min((input.len() - pos).saturating_mul(8).max(4096));
            let (in_before, out_before) = (pos, out.len());
            let hint = ctx.decompress(input, &mut pos, out, room);
            let (consumed, produced) = (pos - in_before, out.len() - out_before);
            budget -= produced;
            match hint {
                Err(e) => break Err(decode_error(e, self.frames > 0 && self.at_boundary)),
                Ok(hint) => {
                    if consumed > 0 || produced > 0 {
                        self.at_boundary = hint == 0;
                        if hint == 0 {
                            self.frames += 1;
                        }
                    }
                    if produced == room {
                        continue;
                    }
                    if pos == input.len() || (consumed == 0 && produced == 0) {
                        break Ok(());
                    }
                }
            }
        };
        self.total_in += (pos - start) as u64;
        self.total_out += (out.len() - out_start) as u64;
        result.map(|()| pos)
    }

    /// The last `decode` stopped at its budget: more output may be ready without input.
    pub fn has_pending_output(&self) -> bool {
        self.pending
    }

    /// The end of the body: `Ok` if it was complete (or empty).
    pub fn finish(&self) -> Result<(), DictDecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.header.finish()?;
        if self.header.is_untouched() {
            return Ok(());
        }
        if self.frames == 0 || !self.at_boundary {
            return Err(DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::Truncated,
                "the body ended inside a zstd frame",
            )));
        }
        Ok(())
    }

    /// Whether a complete frame has been decoded and the body may end here.
    pub fn is_stream_end(&self) -> bool {
        self.frames > 0 && self.at_boundary
    }

    /// Body bytes consumed so far, header included.
    pub fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Decoded bytes so far.
    pub fn total_out(&self) -> u64 {
        self.total_out
    }
}

fn decode_error(e: ZstdError, between_frames: bool) -> DictDecodeError {
    let kind = match e.code() {
        ZSTD_ErrorCode::ZSTD_error_frameParameter_windowTooLarge => {
            return DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::WindowTooLarge,
                "the frame needs a window over max(8 MiB, 1.25 x the dictionary)",
            ));
        }
        ZSTD_ErrorCode::ZSTD_error_checksum_wrong => DecodeErrorKind::Checksum,
        ZSTD_ErrorCode::ZSTD_error_prefix_unknown if between_frames => {
            DecodeErrorKind::TrailingData
        }
        ZSTD_ErrorCode::ZSTD_error_prefix_unknown
        | ZSTD_ErrorCode::ZSTD_error_frameParameter_unsupported
        | ZSTD_ErrorCode::ZSTD_error_version_unsupported => DecodeErrorKind::CorruptHeader,
        _ => DecodeErrorKind::CorruptData,
    };
    DictDecodeError::Codec(DecodeError::new(kind, "invalid zstd data in a dcz body"))
}

impl Decode for DczDecoder {
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError> {
        let before = out.len();
        let consumed =
            DczDecoder::decode(self, input, out, max_out).map_err(|e| e.to_decode_error())?;
        Ok(Progress::since(consumed, before, out))
    }

    fn has_pending_output(&self) -> bool {
        self.pending
    }

    fn finish(&self) -> Result<(), DecodeError> {
        DczDecoder::finish(self).map_err(|e| e.to_decode_error())
    }

    fn is_stream_end(&self) -> bool {
        DczDecoder::is_stream_end(self)
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn members(&self) -> u64 {
        self.frames
    }
}

/// Decodes a whole `dcz` body made with `dictionary`, refusing output over `max_len` bytes
/// (a decompression bomb).
pub fn decode_dcz(
    dictionary: &Dictionary,
    body: &[u8],
    pool: &CodecPool,
    max_len: usize,
) -> Result<BytesMut, DictDecodeError> {
    let mut decoder = DczDecoder::new(dictionary, pool)?;
    let out = super::decode_loop(body, max_len, |input, out, budget| {
        let consumed = decoder.decode(input, out, budget)?;
        Ok((consumed, decoder.has_pending_output()))
    })?;
    decoder.finish()?;
    Ok(out)
}
