//! `dcz` (RFC 9842 section 5): the 40-byte header, then zstd frames compressed with the
//! dictionary as raw content.
//!
//! The window is at most max(8 MiB, 1.25 x the dictionary), never over 128 MiB: what a
//! client must accept, and so what the decoder here accepts, exactly.

use std::sync::Arc;

use bytes::BytesMut;
use zstd_safe::zstd_sys::ZSTD_EndDirective as End;

use super::shelf::draw_compressor;
use crate::dictionary::frame::DCZ_MAGIC;
use crate::dictionary::{DictCodec, HeadedEncoder as Headed, Op, Start, Stream};
use crate::encoding::Driving;
use crate::ffi::zstd_raw::{CompressContext, RawCDict, ZstdError};
use crate::pool::{CodecPool, Pooled};
use crate::{ContentCoding, EncodeError, Level};

/// The smallest window a `dcz` client must accept: 8 MiB.
const MIN_WINDOW: u64 = 8 << 20;
/// The largest window: 128 MiB.
const MAX_WINDOW: u64 = 128 << 20;

/// The largest window a `dcz` body made with a dictionary of `dictionary_len` bytes may
/// use: max(8 MiB, 1.25 x `dictionary_len`), at most 128 MiB.
pub(crate) fn dcz_window_limit(dictionary_len: usize) -> u64 {
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

fn encode_error(e: ZstdError) -> EncodeError {
    EncodeError::new(format!("zstd: {}", e.name()))
}

/// `dcz`'s codec: a pooled zstd context referencing the dictionary's `CDict`, and what a
/// new frame after an idle needs: the pool, the `CDict`, the window log.
pub(crate) struct DczCore {
    pool: CodecPool,
    cdict: Arc<RawCDict>,
    window_log: u32,
}

impl DczCore {
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

impl std::fmt::Debug for DczCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DczCore")
            .field("window_log", &self.window_log)
            .finish_non_exhaustive()
    }
}

impl DictCodec for DczCore {
    type State = Pooled<CompressContext>;
    const MAGIC: &'static [u8] = &DCZ_MAGIC;
    // A new frame sees the whole dictionary again.
    const RELEASES_WHEN_IDLE: bool = true;

    fn redraw(&self) -> Result<Self::State, EncodeError> {
        self.draw(None)
    }

    /// A context drawn with the body's size, when known, pledged as the frame's.
    fn headed(start: Start<'_>) -> Result<Headed<Self>, EncodeError> {
        let level = start.level.resolve(ContentCoding::Zstd);
        let dictionary = start.dictionary;
        let core = DczCore {
            pool: start.pool.clone(),
            cdict: dictionary.zstd().cdict(level)?,
            window_log: window_log(level, dictionary.len()),
        };
        let ctx = core.draw(start.size.map(|n| n as u64))?;
        Ok(Headed::new(core, ctx, dictionary.hash()))
    }

    fn reserve(input: usize) -> usize {
        40 + zstd_safe::compress_bound(input)
    }

    // After the last frame: see `codec::padding` for why not before the first.
    const PADS_AFTER_END: bool = true;

    fn pad(len: usize, out: &mut BytesMut) {
        crate::padding::skippable_frame(len, out);
    }
}

impl Stream for Pooled<CompressContext> {
    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        let directive = op.pick(End::ZSTD_e_continue, End::ZSTD_e_flush, End::ZSTD_e_end);
        drive(self, input, out, directive)
    }

    fn discard(self) {
        Pooled::discard(self);
    }
}

/// A streaming `dcz` encoder: a pooled zstd context referencing the dictionary's `CDict`
/// (no dictionary is loaded per response). Output is appended to the caller's buffer;
/// the header goes out with the first call that writes.
///
/// `idle` (the producer has nothing for now) ends the
/// current frame and gives the context back, as the plain zstd encoder does: the stream
/// goes on as a new frame, which sees the whole dictionary again, when data comes.
pub(crate) type DczEncoder = Driving<Headed<DczCore>>;

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
