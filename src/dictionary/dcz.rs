//! `dcz` (RFC 9842 section 5): the 40-byte header, then zstd frames compressed with the
//! dictionary as raw content.
//!
//! The window is at most max(8 MiB, 1.25 x the dictionary), never over 128 MiB: what a
//! client must accept, and so what the decoder here accepts, exactly.

use std::sync::{Arc, OnceLock};

use bytes::{Bytes, BytesMut};
use zstd_safe::zstd_sys::{ZSTD_EndDirective as End, ZSTD_ErrorCode};

use super::Dictionary;
use super::error::DictDecodeError;
use super::frame::{DCZ_MAGIC, HeaderReader, write_header};
use super::shelf::{draw_compressor, draw_decompressor};
use super::zstd_raw::{CompressContext, DecompressContext, RawCDict, RawDDict, ZstdError};
use crate::codec::{
    CompressionLevel, Decode, DecodeError, DecodeErrorKind, Encode, EncodeError, Format, Level,
    Progress,
};
use crate::pool::{CodecPool, Pooled};

/// The smallest window a `dcz` client must accept: 8 MiB.
const MIN_WINDOW: u64 = 8 << 20;
/// The largest window: 128 MiB.
const MAX_WINDOW: u64 = 128 << 20;

/// The largest window a `dcz` body made with a dictionary of `dictionary_len` bytes may
/// use: max(8 MiB, 1.25 x `dictionary_len`), at most 128 MiB.
pub fn dcz_window_limit(dictionary_len: usize) -> u64 {
    (dictionary_len as u64)
        .saturating_mul(5)
        .div_ceil(4)
        .clamp(MIN_WINDOW, MAX_WINDOW)
}

/// The window log the encoder uses at `level`: the one zstd picks for the level on input
/// of unknown size without a dictionary (21 at level 3, 23 at 19, 27 at 22), at most the
/// largest power of two within [`dcz_window_limit`] (23 to 27).
///
/// It is set explicitly because with a dictionary and no pledged size zstd sizes its
/// parameters for "the dictionary plus 500 bytes": a 16 KiB window for a 16 KiB dictionary,
/// which would cripple long streamed bodies. With a pledged size zstd still shrinks it to
/// fit the input.
fn window_log(level: Level, dictionary_len: usize) -> u32 {
    let limit = dcz_window_limit(dictionary_len).ilog2();
    super::zstd_raw::natural_window_log(i32::from(level.get())).min(limit)
}

/// The zstd state of one dictionary: a raw-content `CDict` per level, made on first use,
/// and one `DDict`. Creation failures (out of memory) are not cached.
pub(crate) struct Prepared {
    bytes: Bytes,
    cdicts: [OnceLock<Arc<RawCDict>>; Level::COUNT],
    ddict: OnceLock<Arc<RawDDict>>,
}

impl Prepared {
    pub(super) fn new(bytes: &Bytes) -> Self {
        Prepared {
            bytes: bytes.clone(),
            cdicts: std::array::from_fn(|_| OnceLock::new()),
            ddict: OnceLock::new(),
        }
    }

    /// The `CDict` for `level`, made once.
    fn cdict(&self, level: Level) -> Result<Arc<RawCDict>, EncodeError> {
        let slot = &self.cdicts[level.index()];
        if let Some(cdict) = slot.get() {
            return Ok(cdict.clone());
        }
        let made = RawCDict::new(&self.bytes, i32::from(level.get()))
            .ok_or_else(|| EncodeError::new("zstd: could not digest the dictionary"))?;
        // Two threads may race to make it; one wins and both use the winner.
        Ok(slot.get_or_init(|| Arc::new(made)).clone())
    }

    /// The `DDict`, made once.
    fn ddict(&self) -> Result<Arc<RawDDict>, DictDecodeError> {
        if let Some(ddict) = self.ddict.get() {
            return Ok(ddict.clone());
        }
        let made = RawDDict::new(&self.bytes).ok_or_else(|| {
            DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::CorruptData,
                "zstd could not digest the dictionary",
            ))
        })?;
        Ok(self.ddict.get_or_init(|| Arc::new(made)).clone())
    }

    /// The memory the digested dictionaries made so far hold (for reports and tests).
    pub(super) fn cdicts_size(&self) -> usize {
        self.cdicts
            .iter()
            .filter_map(OnceLock::get)
            .map(|c| c.sizeof())
            .sum()
    }
}

fn encode_error(e: ZstdError) -> EncodeError {
    EncodeError::new(format!("zstd: {}", e.name()))
}

/// A streaming `dcz` encoder: a pooled zstd context referencing the dictionary's `CDict`
/// (no dictionary is loaded per response). Output is appended to the caller's buffer;
/// the header goes out with the first call that writes.
pub struct DczEncoder {
    /// `None` after the finish or a failure (back in the pool, neutral again).
    ctx: Option<Pooled<CompressContext>>,
    hash: [u8; 32],
    phase: Phase,
    total_in: u64,
    total_out: u64,
}

/// Where an encoder is in its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Nothing written yet: the header is still owed.
    Start,
    /// The header is out; the frame is open.
    Frame,
    Finished,
    Failed,
}

impl std::fmt::Debug for DczEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DczEncoder")
            .field("phase", &self.phase)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

impl DczEncoder {
    /// An encoder at `level` (zstd's levels; `Default` is 3) with a context from `pool`.
    /// Fails only if libzstd cannot digest the dictionary (out of memory).
    pub fn new(
        dictionary: &Dictionary,
        level: CompressionLevel,
        pool: &CodecPool,
    ) -> Result<DczEncoder, EncodeError> {
        Self::start(dictionary, level, pool, None)
    }

    fn start(
        dictionary: &Dictionary,
        level: CompressionLevel,
        pool: &CodecPool,
        pledged: Option<u64>,
    ) -> Result<DczEncoder, EncodeError> {
        let level = level.resolve(Format::Zstd);
        let cdict = dictionary.zstd().cdict(level)?;
        let mut ctx = draw_compressor(pool);
        if let Err(e) = ctx.begin(cdict, window_log(level, dictionary.len()), pledged) {
            ctx.discard();
            return Err(encode_error(e));
        }
        Ok(DczEncoder {
            ctx: Some(ctx),
            hash: dictionary.hash(),
            phase: Phase::Start,
            total_in: 0,
            total_out: 0,
        })
    }

    /// Compresses `input`; zstd may hold output back until more input, a flush or the finish.
    pub fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(input, out, End::ZSTD_e_continue)
    }

    /// Makes everything encoded so far decodable from `out`.
    pub fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(&[], out, End::ZSTD_e_flush)
    }

    /// Ends the frame and the stream; the context goes back to the pool. Calling it again
    /// does nothing.
    pub fn finish(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if self.phase == Phase::Finished {
            return Ok(());
        }
        self.run(&[], out, End::ZSTD_e_end)?;
        self.phase = Phase::Finished;
        self.ctx = None;
        Ok(())
    }

    /// Input bytes taken so far.
    pub fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Output bytes written so far, header included.
    pub fn total_out(&self) -> u64 {
        self.total_out
    }

    /// Whether [`finish`](DczEncoder::finish) has completed the stream.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    fn run(&mut self, input: &[u8], out: &mut BytesMut, directive: End) -> Result<(), EncodeError> {
        match self.phase {
            Phase::Failed => {
                return Err(EncodeError::new(
                    "an earlier call failed; the stream is unusable",
                ));
            }
            Phase::Finished => return Err(EncodeError::new("the stream is already finished")),
            Phase::Start if input.is_empty() && directive == End::ZSTD_e_continue => {
                return Ok(());
            }
            Phase::Start => {
                write_header(&DCZ_MAGIC, &self.hash, out);
                self.total_out += DCZ_MAGIC.len() as u64 + 32;
                self.phase = Phase::Frame;
            }
            Phase::Frame => {}
        }
        let before = out.len();
        let result = drive(self.ctx.as_mut().map(|c| &mut **c), input, out, directive);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.phase = Phase::Failed;
                if let Some(ctx) = self.ctx.take() {
                    ctx.discard();
                }
                Err(e)
            }
        }
    }
}

/// Runs `directive` over all of `input` and, for a flush or end, until zstd owes nothing.
fn drive(
    ctx: Option<&mut CompressContext>,
    input: &[u8],
    out: &mut BytesMut,
    directive: End,
) -> Result<(), EncodeError> {
    let ctx = ctx.ok_or_else(|| EncodeError::new("the stream is unusable"))?;
    let mut pos = 0;
    loop {
        let room = zstd_safe::compress_bound(input.len() - pos).max(16 * 1024);
        let left = ctx
            .compress(input, &mut pos, out, room, directive)
            .map_err(encode_error)?;
        let consumed = pos == input.len();
        let done = match directive {
            End::ZSTD_e_continue => consumed,
            _ => consumed && left == 0,
        };
        if done {
            return Ok(());
        }
    }
}

impl Encode for DczEncoder {
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        DczEncoder::encode(self, input, out)?;
        Ok(Progress::since(input.len(), before, out))
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        DczEncoder::flush(self, out)?;
        Ok(Progress::since(0, before, out))
    }

    fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        DczEncoder::finish(self, out)?;
        Ok(Progress::since(0, before, out))
    }

    fn holds_state(&self) -> bool {
        self.ctx.is_some()
    }

    fn has_payload(&self) -> bool {
        self.phase != Phase::Start
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn is_finished(&self) -> bool {
        DczEncoder::is_finished(self)
    }
}

/// Compresses all of `input` as a `dcz` body (header and one zstd frame whose header
/// records the content size) appended to `out`.
pub fn encode_dcz(
    dictionary: &Dictionary,
    level: CompressionLevel,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    out.reserve(40 + zstd_safe::compress_bound(input.len()));
    let mut encoder = DczEncoder::start(dictionary, level, pool, Some(input.len() as u64))?;
    write_header(&DCZ_MAGIC, &dictionary.hash(), out);
    encoder.phase = Phase::Frame;
    let result = drive(
        encoder.ctx.as_mut().map(|c| &mut **c),
        input,
        out,
        End::ZSTD_e_end,
    );
    if result.is_err() {
        if let Some(ctx) = encoder.ctx.take() {
            ctx.discard();
        }
    }
    result
}

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
