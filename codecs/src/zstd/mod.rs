//! zstd (RFC 8878) over pooled libzstd contexts, web-safe as RFC 9659 asks: the encoder
//! never uses a window over 8 MiB, and the decoder refuses frames that ask for one before
//! allocating it.
//!
//! Contexts are pooled and reset with `ZSTD_reset_session_only`, which keeps their parameters
//! and tables: a fresh context per response spends most of a small response's time setting
//! them up (figures in BENCHMARKS.md, "Codec state, fresh against pooled").

use bytes::BytesMut;
use zstd_safe::zstd_sys::{ZSTD_EndDirective as EndDirective, ZSTD_ErrorCode};
use zstd_safe::{
    CCtx, CParameter, DCtx, DParameter, InBuffer, OutBuffer, ParamSwitch, ResetDirective,
};

use super::encoding::{Driving, Encode, EncodeOptions};
use super::padding::skippable_frame;
use super::{DecodeError, DecodeErrorKind, EncodeError, Level, SliceEnd};
use crate::decoding::{DecodeCore, Driven, Stepped};
use crate::ffi::{Spare, error_code};
use crate::pool::{CodecPool, Hold, Kind, Pooled, PooledState};

/// RFC 9659 section 3: "the window size is limited to 8 MB", a window log of 23.
pub(crate) const MAX_WINDOW_LOG: u32 = 23;

/// A context that has grown past this (a large window, a big one-shot body) is freed rather
/// than shelved, so idle contexts never pin more than a bounded amount of memory.
const MAX_KEPT_CONTEXT: usize = 4 << 20;

/// A compression context with its level set; pooled per level.
pub(crate) struct CompressContext(CCtx<'static>);

/// A decompression context limited to 8 MiB windows.
pub(crate) struct DecompressContext(DCtx<'static>);

// A context is an owned heap object with no thread affinity (zstd-safe marks them Send).
impl PooledState for CompressContext {
    const KIND: Kind = crate::kinds::PoolKind::ZstdCompressors.kind();

    fn reset(&mut self) -> bool {
        // Keeps the parameters (level, window, checksum) and the allocated tables; drops the
        // session, including any pledged size.
        self.0.reset(ResetDirective::SessionOnly).is_ok() && self.0.sizeof() <= MAX_KEPT_CONTEXT
    }
}

impl PooledState for DecompressContext {
    const KIND: Kind = crate::kinds::PoolKind::ZstdDecompressors.kind();

    fn reset(&mut self) -> bool {
        self.0.reset(ResetDirective::SessionOnly).is_ok() && self.0.sizeof() <= MAX_KEPT_CONTEXT
    }
}

impl CompressContext {
    fn new(level: Level) -> Result<Self, EncodeError> {
        let mut cctx = CCtx::create();
        let level_n = i32::from(level.get());
        let mut set = |param| {
            cctx.set_parameter(param).map(drop).map_err(|code| {
                EncodeError::new(format!("zstd: {}", zstd_safe::get_error_name(code)))
            })
        };
        set(CParameter::CompressionLevel(level_n))?;
        // No content checksum (libzstd's and tower-http's default): XXH64 over the input is a
        // measurable share of the compression time (BENCHMARKS.md, "zstd"), and TCP/TLS
        // already protect the body in transit. The decoder still checks the checksums that peers send.
        // libzstd splits blocks for the optimal parsers (level 16 up) only when the window
        // is 128 KiB or more, so a body whose size is pledged smaller loses it: 21% more
        // bytes on repetitive text. Asked for, it applies whatever the size.
        if level_n >= 16 {
            set(CParameter::UseBlockSplitter(ParamSwitch::Enable))?;
        }
        // Up to level 19 libzstd's own window logs stay at or under 23 for any input; above,
        // they grow to 27, beyond what RFC 9659 allows, with tables to match (a context of
        // 330-850 MB for a stream of unknown size): level 19's tables bound them.
        if level_n > 19 {
            set(CParameter::WindowLog(MAX_WINDOW_LOG))?;
            set(CParameter::ChainLog(MAX_WINDOW_LOG + 1))?;
            set(CParameter::HashLog(MAX_WINDOW_LOG - 1))?;
        }
        Ok(CompressContext(cctx))
    }
}

fn draw_compressor(pool: &CodecPool, level: Level) -> Result<Pooled<CompressContext>, EncodeError> {
    let mut error = None;
    let ctx = pool.take(level, || match CompressContext::new(level) {
        Ok(ctx) => ctx,
        Err(e) => {
            error = Some(e);
            CompressContext(CCtx::create())
        }
    });
    match error {
        Some(e) => {
            ctx.discard();
            Err(e)
        }
        None => Ok(ctx),
    }
}

fn draw_decompressor(pool: &CodecPool) -> Pooled<DecompressContext> {
    pool.take(Level::NONE, || {
        let mut dctx = DCtx::create();
        // Cannot fail for a value inside zstd's bounds (10..=31).
        let _ = dctx.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG));
        DecompressContext(dctx)
    })
}

/// One streaming call: compresses from `input` (advancing it) with `directive`, writing at
/// most `room` bytes to `out`. Returns libzstd's "bytes left to flush" hint.
fn compress_step(
    cctx: &mut CCtx<'static>,
    input: &mut InBuffer<'_>,
    out: &mut BytesMut,
    room: usize,
    directive: EndDirective,
) -> Result<usize, EncodeError> {
    let mut spare = Spare::new(out, room);
    let start = spare.start();
    let mut buffer = OutBuffer::around_pos(&mut spare, start);
    cctx.compress_stream2(&mut buffer, input, directive)
        .map_err(|code| EncodeError::new(format!("zstd: {}", zstd_safe::get_error_name(code))))
}

/// Where a zstd stream is in its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    /// Nothing written yet: the stream still owes one frame, empty if need be (an empty
    /// body is an empty frame, not zero bytes).
    Unstarted,
    /// A frame has been started and not yet ended.
    Open,
    /// `idle` ended a frame: the stream may end here.
    Ended,
}

/// A streaming zstd encoder over a pooled context.
///
/// [`idle`](crate::Encode::idle) flushes and parks the context in the pool: the
/// frame goes on when data comes. If another stream took the context meanwhile, the frame
/// is ended with an empty last block and the stream goes on as a new frame (RFC 8878
/// section 3.1: a zstd stream is frames back to back, and decoders must decode them all).
pub(crate) type ZstdEncoder = Driving<ZstdCore>;

/// The [`Encode`] of zstd: a pooled context and the frame it is in.
#[derive(Debug)]
pub(crate) struct ZstdCore {
    /// Not held before the first input, while idle, after the finish or after a failure.
    ctx: Hold<CompressContext>,
    pool: CodecPool,
    level: Level,
    frame: Frame,
    /// Bytes of length padding, a skippable frame after the last frame.
    padding: usize,
}

impl ZstdEncoder {
    pub(crate) fn new(level: Level, pool: &CodecPool) -> Self {
        // Drawn at the first input (see `run`): many responses may be built before their
        // bodies are first polled, and none should hold a context for it.
        Driving::with_core(ZstdCore {
            ctx: Hold::default(),
            pool: pool.clone(),
            level,
            frame: Frame::Unstarted,
            padding: 0,
        })
    }
}

impl ZstdCore {
    /// Runs `directive` over `input` until it is consumed and, for a flush or end, until
    /// libzstd has nothing left to write.
    fn run(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        directive: EndDirective,
    ) -> Result<(), EncodeError> {
        if !self.ctx.resume().is_held() {
            if self.frame == Frame::Open {
                self.end_frame_without_context(out);
            }
            self.ctx.hold(draw_compressor(&self.pool, self.level)?);
        }
        let cctx = &mut self.ctx.held().expect("drawn above").0;
        let mut input = InBuffer::around(input);
        loop {
            let room =
                zstd_safe::compress_bound(input.src.len() - input.pos).max(CCtx::out_size() / 4);
            let left = compress_step(cctx, &mut input, out, room, directive)?;
            let consumed_all = input.pos == input.src.len();
            let done = match directive {
                EndDirective::ZSTD_e_continue => consumed_all,
                _ => consumed_all && left == 0,
            };
            if done {
                return Ok(());
            }
        }
    }

    /// Ends a flushed frame whose context is gone (parked, then given to another stream)
    /// with what libzstd itself writes at the end of a flushed frame: an empty raw block
    /// marked last (RFC 8878 section 3.1.1.2: Last_Block 1, Block_Type 0, Block_Size 0).
    /// Our frames carry no content checksum and no content size, so nothing else is owed.
    fn end_frame_without_context(&mut self, out: &mut BytesMut) {
        out.extend_from_slice(&LAST_EMPTY_BLOCK);
        self.frame = Frame::Ended;
    }
}

/// An empty raw block with its Last_Block bit set: a 3-byte little-endian block header.
const LAST_EMPTY_BLOCK: [u8; 3] = [1, 0, 0];

impl Encode for ZstdCore {
    fn start(&mut self, options: &EncodeOptions) {
        self.padding = options.padding;
        // A stream of known size (a file) pauses for its producer's reads, not between
        // events: parked from its first pause, its frame and history go on. Released
        // instead, the next frame could not see the first's: up to twice the bytes on text.
        if options.streaming && options.size_hint.is_some() {
            self.ctx.expect_short_pauses();
        }
    }

    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        if input.is_empty() {
            return Ok(());
        }
        self.run(input, out, EndDirective::ZSTD_e_continue)?;
        self.frame = Frame::Open;
        Ok(())
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        // A parked context was flushed when it was parked.
        if self.frame == Frame::Open && self.ctx.is_held() {
            self.run(&[], out, EndDirective::ZSTD_e_flush)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut BytesMut, _total_in: u64) -> Result<(), EncodeError> {
        if self.frame == Frame::Open && !self.ctx.is_held() {
            // Paused since a flush: no need to take the context back to say "done".
            self.ctx.release();
            self.end_frame_without_context(out);
        }
        // A stream that ended its frame when it went idle owes nothing more.
        if self.frame != Frame::Ended {
            self.run(&[], out, EndDirective::ZSTD_e_end)?;
        }
        self.ctx.release();
        if self.padding > 0 {
            skippable_frame(self.padding, out);
        }
        Ok(())
    }

    fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if !self.ctx.is_held() {
            return Ok(());
        }
        if self.frame == Frame::Open {
            if self.ctx.would_park() {
                // Flush, not end: a context taken back goes on with the frame and its
                // window, where a new frame would start cold (a fresh frame clears the match
                // tables, the cost of each pause at high levels).
                self.run(&[], out, EndDirective::ZSTD_e_flush)?;
                match self.ctx.park() {
                    Ok(()) => return Ok(()),
                    // The place went to another stream meanwhile: end the frame (3 bytes
                    // after the flush) and let go.
                    Err(ctx) => self.ctx.hold(ctx),
                }
            }
            // Ending the frame at once makes it decodable as a flush would, without the
            // flush's empty block.
            self.run(&[], out, EndDirective::ZSTD_e_end)?;
            self.frame = Frame::Ended;
        }
        self.ctx.release_paused();
        Ok(())
    }

    fn fail(&mut self) {
        // The pool resets the interrupted context before anyone else gets it.
        self.ctx.release();
    }

    fn holds_state(&self) -> bool {
        self.ctx.is_held()
    }

    /// Past the pool's hold limit, a stream ends its frame at each slice end and gives its
    /// context (megabytes at level 3, mostly the window) back: hundreds of concurrent
    /// downloads then hold a few contexts. The next slice starts a new frame, which cannot
    /// see the old one's history (frames are independent, RFC 8878 section 3.1): more bytes
    /// while crowded (BENCHMARKS.md, "zstd"), and none when not.
    fn at_slice_end(&self) -> SliceEnd {
        if self.frame == Frame::Open && self.ctx.is_held() && self.pool.crowded::<CompressContext>()
        {
            SliceEnd::Release
        } else {
            SliceEnd::Keep
        }
    }
}

/// Compresses all of `input` as one zstd frame with its size pledged, so the frame header
/// records the content size and libzstd sizes its tables to the input; then `padding` bytes
/// of skippable frame, if any.
pub(crate) fn encode_all(
    level: Level,
    input: &[u8],
    padding: usize,
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut ctx = draw_compressor(pool, level)?;
    let error = |code| EncodeError::new(format!("zstd: {}", zstd_safe::get_error_name(code)));
    ctx.0
        .set_pledged_src_size(Some(input.len() as u64))
        .map_err(error)?;
    let mut input = InBuffer::around(input);
    loop {
        let room = zstd_safe::compress_bound(input.src.len() - input.pos).max(64);
        match compress_step(&mut ctx.0, &mut input, out, room, EndDirective::ZSTD_e_end) {
            Ok(0) if padding > 0 => {
                skippable_frame(padding, out);
                return Ok(());
            }
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => {
                ctx.discard();
                return Err(e);
            }
        }
    }
}

/// A streaming zstd decoder over a pooled context: frames and skippable frames back to back
/// (RFC 8878 section 3.1), output bounded per call.
pub(crate) type ZstdDecoder = Driven<Frames<Pooled<DecompressContext>>>;

impl ZstdDecoder {
    pub(crate) fn new(pool: &CodecPool) -> Self {
        Driven::with_core(Frames::new(draw_decompressor(pool)))
    }
}

/// A zstd decompression context as [`Frames`] drives it: the crate's own (zstd-safe), or
/// `dcz`'s with a raw-content dictionary.
pub(crate) trait FrameContext {
    /// What a refused window says, with the bound it broke.
    const WINDOW_TOO_LARGE: &'static str;

    /// One `ZSTD_decompressStream` call from `input` (advancing its position) into at most
    /// `room` more bytes of `out`.
    fn decompress(&mut self, input: &mut InBuffer<'_>, out: &mut BytesMut, room: usize) -> Hint;
}

/// What a `ZSTD_decompressStream` call returns: its hint (0 at the end of a frame), or the
/// kind of its error.
pub(crate) type Hint = Result<usize, ZSTD_ErrorCode>;

impl FrameContext for Pooled<DecompressContext> {
    const WINDOW_TOO_LARGE: &'static str = "the frame needs a window over 8 MiB (RFC 9659)";

    fn decompress(&mut self, input: &mut InBuffer<'_>, out: &mut BytesMut, room: usize) -> Hint {
        let mut spare = Spare::new(out, room);
        let start = spare.start();
        let mut buffer = OutBuffer::around_pos(&mut spare, start);
        self.0
            .decompress_stream(&mut buffer, input)
            .map_err(error_code)
    }
}

/// The [`DecodeCore`] of zstd and `dcz`: any number of frames back to back, through `X`.
pub(crate) struct Frames<X> {
    /// `None` after a failure: the pool resets the context before reuse.
    ctx: Option<X>,
    /// Between frames (or before the first): the input may end here.
    at_boundary: bool,
    frames: u64,
}

impl<X> Frames<X> {
    pub(crate) fn new(ctx: X) -> Self {
        Frames {
            ctx: Some(ctx),
            at_boundary: true,
            frames: 0,
        }
    }
}

impl<X> std::fmt::Debug for Frames<X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frames")
            .field("frames", &self.frames)
            .field("at_boundary", &self.at_boundary)
            .finish_non_exhaustive()
    }
}

impl<X: FrameContext> Frames<X> {
    fn error(&self, kind: ZSTD_ErrorCode) -> DecodeError {
        match kind {
            ZSTD_ErrorCode::ZSTD_error_frameParameter_windowTooLarge => {
                DecodeError::new(DecodeErrorKind::WindowTooLarge, X::WINDOW_TOO_LARGE)
            }
            ZSTD_ErrorCode::ZSTD_error_checksum_wrong => {
                DecodeError::new(DecodeErrorKind::Checksum, "zstd content checksum mismatch")
            }
            ZSTD_ErrorCode::ZSTD_error_prefix_unknown if self.is_stream_end() => DecodeError::new(
                DecodeErrorKind::TrailingData,
                "bytes after the last zstd frame",
            ),
            ZSTD_ErrorCode::ZSTD_error_prefix_unknown
            | ZSTD_ErrorCode::ZSTD_error_frameParameter_unsupported
            | ZSTD_ErrorCode::ZSTD_error_version_unsupported => {
                DecodeError::new(DecodeErrorKind::CorruptHeader, "not a zstd frame")
            }
            _ => DecodeError::new(DecodeErrorKind::CorruptData, "invalid zstd data"),
        }
    }
}

/// How much output room one decompress call gets: like the deflate decoder's, room for 8:1
/// on this input, at most 256 KiB and never more than the budget.
fn output_room(input_len: usize, spare: usize, budget: usize) -> usize {
    let room = if spare >= 512 {
        spare
    } else {
        input_len.saturating_mul(8).max(4096)
    };
    room.min(256 * 1024).min(budget)
}

impl<X: FrameContext> DecodeCore for Frames<X> {
    const TRUNCATED: &'static str = "the body ended inside a zstd frame";

    fn step(&mut self, input: &[u8], out: &mut BytesMut, budget: &mut usize) -> Stepped {
        let mut input = InBuffer::around(input);
        let stopped = loop {
            if *budget == 0 {
                // Stopped at the budget: libzstd may hold more output for this input.
                break Ok(true);
            }
            let Some(ctx) = self.ctx.as_mut() else {
                break Ok(false);
            };
            let left = input.src.len() - input.pos;
            let room = output_room(left, out.capacity() - out.len(), *budget);
            let (in_before, out_before) = (input.pos, out.len());
            let hint = ctx.decompress(&mut input, out, room);
            let (consumed, produced) = (input.pos - in_before, out.len() - out_before);
            *budget -= produced;
            match hint {
                Err(kind) => break Err(self.error(kind)),
                Ok(hint) => {
                    if consumed > 0 || produced > 0 {
                        self.at_boundary = hint == 0;
                        if hint == 0 {
                            self.frames += 1;
                        }
                    }
                    // The room was filled: more may be ready. Otherwise zstd stopped for
                    // want of input.
                    if produced == room {
                        continue;
                    }
                    if input.pos == input.src.len() || (consumed == 0 && produced == 0) {
                        break Ok(false);
                    }
                }
            }
        };
        (input.pos, stopped)
    }

    fn fail(&mut self) {
        self.ctx = None;
    }

    /// A complete frame has been decoded and the input may end here.
    fn is_stream_end(&self) -> bool {
        self.frames > 0 && self.at_boundary
    }

    fn members(&self) -> u64 {
        self.frames
    }

    fn announced_size(&self, input: &[u8]) -> Option<u64> {
        // Only a frame header says it, and only before the frame has begun.
        if !self.at_boundary {
            return None;
        }
        zstd_safe::get_frame_content_size(input).ok().flatten()
    }
}

super::single_coding_entry_points!(ZstdEncoder, ZstdDecoder, encode_all);

#[cfg(test)]
mod tests;
