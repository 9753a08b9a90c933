//! `dcz` (RFC 9842 section 5): the 40-byte header, then zstd frames compressed with the
//! dictionary as raw content.
//!
//! The window is at most max(8 MiB, 1.25 x the dictionary), never over 128 MiB: what a
//! client must accept, and so what the decoder here accepts, exactly.

use std::sync::{Arc, OnceLock};

use bytes::{Bytes, BytesMut};
use zstd_safe::zstd_sys::ZSTD_EndDirective as End;

use super::Dictionary;
use super::error::DictDecodeError;
use super::frame::{DCZ_MAGIC, write_header};
use super::shelf::draw_compressor;
use crate::codec::{
    CompressionLevel, DecodeError, DecodeErrorKind, Encode, EncodeError, Format, Level, Progress,
};
use crate::ffi::zstd_raw::{CompressContext, RawCDict, RawDDict, ZstdError};
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
    crate::ffi::zstd_raw::natural_window_log(i32::from(level.get())).min(limit)
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
    pub(super) fn ddict(&self) -> Result<Arc<RawDDict>, DictDecodeError> {
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
///
/// Through the crate's `Encode` trait, `idle` (the producer has nothing for now) ends the
/// current frame and gives the context back, as the plain zstd encoder does: the stream
/// goes on as a new frame, which sees the whole dictionary again, when data comes.
pub struct DczEncoder {
    state: State,
    /// What a new frame after an idle needs: the pool, the `CDict`, the window log.
    restart: Restart,
    hash: [u8; 32],
    total_in: u64,
    total_out: u64,
}

/// What drawing and preparing a context for a new frame takes.
struct Restart {
    pool: CodecPool,
    cdict: Arc<RawCDict>,
    window_log: u32,
}

impl Restart {
    fn draw(&self, pledged: Option<u64>) -> Result<Pooled<CompressContext>, EncodeError> {
        let mut ctx = draw_compressor(&self.pool);
        match ctx.begin(self.cdict.clone(), self.window_log, pledged) {
            Ok(()) => Ok(ctx),
            Err(e) => {
                ctx.discard();
                Err(encode_error(e))
            }
        }
    }
}

/// Where an encoder is in its stream; the phases that compress hold the context.
enum State {
    /// Nothing written yet: the header is still owed.
    Start(Pooled<CompressContext>),
    /// The header is out; the frame is open.
    Frame(Pooled<CompressContext>),
    /// Between frames after an idle: the context is back in the pool. `header` tells
    /// whether the header is out (an encoder idle before any input has written nothing).
    Idle { header: bool },
    /// The stream is complete; the context is back in the pool, neutral again.
    Finished,
    /// A call failed; the context was discarded.
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Start(_) => "start",
            State::Frame(_) => "frame",
            State::Idle { .. } => "idle",
            State::Finished => "finished",
            State::Failed => "failed",
        }
    }
}

impl std::fmt::Debug for DczEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DczEncoder")
            .field("state", &self.state.name())
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
        let restart = Restart {
            pool: pool.clone(),
            cdict: dictionary.zstd().cdict(level)?,
            window_log: window_log(level, dictionary.len()),
        };
        Ok(DczEncoder {
            state: State::Start(restart.draw(pledged)?),
            restart,
            hash: dictionary.hash(),
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
        if let State::Finished = self.state {
            return Ok(());
        }
        self.run(&[], out, End::ZSTD_e_end)?;
        self.state = State::Finished;
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
        matches!(self.state, State::Finished)
    }

    fn run(&mut self, input: &[u8], out: &mut BytesMut, directive: End) -> Result<(), EncodeError> {
        let before = out.len();
        if let State::Idle { header } = self.state {
            match directive {
                // Nothing is owed between frames, except the header and one frame at the
                // end of a stream that never wrote any.
                End::ZSTD_e_continue if input.is_empty() => return Ok(()),
                End::ZSTD_e_flush => return Ok(()),
                End::ZSTD_e_end if header => return Ok(()),
                _ => {}
            }
            let ctx = self
                .restart
                .draw(None)
                .inspect_err(|_| self.state = State::Failed)?;
            self.state = if header {
                State::Frame(ctx)
            } else {
                State::Start(ctx)
            };
        }
        if let State::Start(_) = self.state {
            if input.is_empty() && directive == End::ZSTD_e_continue {
                return Ok(());
            }
            write_header(&DCZ_MAGIC, &self.hash, out);
            if let State::Start(ctx) = std::mem::replace(&mut self.state, State::Failed) {
                self.state = State::Frame(ctx);
            }
        }
        let ctx = match &mut self.state {
            State::Frame(ctx) => ctx,
            State::Finished => return Err(EncodeError::new("the stream is already finished")),
            State::Start(_) | State::Idle { .. } | State::Failed => {
                return Err(EncodeError::new(
                    "an earlier call failed; the stream is unusable",
                ));
            }
        };
        let result = drive(ctx, input, out, directive);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                Ok(())
            }
            Err(e) => {
                if let State::Frame(ctx) = std::mem::replace(&mut self.state, State::Failed) {
                    ctx.discard();
                }
                Err(e)
            }
        }
    }
}

/// Runs `directive` over all of `input` and, for a flush or end, until zstd owes nothing.
fn drive(
    ctx: &mut CompressContext,
    input: &[u8],
    out: &mut BytesMut,
    directive: End,
) -> Result<(), EncodeError> {
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

    fn idle(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        match self.state {
            State::Start(_) => self.state = State::Idle { header: false },
            State::Frame(_) => {
                self.run(&[], out, End::ZSTD_e_end)?;
                // Back to the pool now; the next input draws a context for a new frame.
                self.state = State::Idle { header: true };
            }
            State::Idle { .. } => {}
            State::Finished => return Err(EncodeError::new("the stream is already finished")),
            State::Failed => {
                return Err(EncodeError::new(
                    "an earlier call failed; the stream is unusable",
                ));
            }
        }
        Ok(Progress::since(0, before, out))
    }

    fn holds_state(&self) -> bool {
        matches!(self.state, State::Start(_) | State::Frame(_))
    }

    fn has_payload(&self) -> bool {
        !matches!(self.state, State::Start(_) | State::Idle { header: false })
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
    // One call: the header, then the whole frame. The context goes back when `encoder` drops.
    encoder.run(input, out, End::ZSTD_e_end)
}
