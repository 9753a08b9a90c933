//! The br encoder: streaming over a pooled state, and in one call for a body known in full.

use std::task::{Context, Poll, ready};

use brotli::enc::encode::BrotliEncoderOperation;
use bytes::BytesMut;

use super::state::{Carry, CompressorState, EncoderCore, draw_compressor};
use super::turn::Turn;
use crate::codec::history::History;
use crate::codec::{Encode, EncodeError, Level, Progress, SliceEnd, Totals};
use crate::pool::Ticket;
use crate::pool::{CodecPool, Hold};

/// Runs `op` over all of `input`, appending the output to `out`, until brotli has taken all
/// input and (for a flush or finish) written everything it owes.
///
/// brotli is called with no output space and its output taken from its own buffer
/// (`take_output`, the C API's `BrotliEncoderTakeOutput`), so `out` is never zero-filled in
/// advance.
pub(crate) fn compress(
    state: &mut CompressorState,
    op: BrotliEncoderOperation,
    input: &[u8],
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut available_in = input.len();
    let mut in_offset = 0;
    let mut stalled = 0;
    loop {
        state.adopt_spare(available_in);
        let core = &mut *state.core;
        let before_in = available_in;
        compress_stream(core, op, input, &mut available_in, &mut in_offset)?;
        // As the C API documents: call again while input is left or output was owed after
        // the call.
        let more = available_in != 0 || core.has_more_output();
        let produced = take_output(core, out);
        let done = match op {
            BrotliEncoderOperation::BROTLI_OPERATION_FINISH => core.is_finished(),
            _ => !more,
        };
        if done {
            return Ok(());
        }
        if produced == 0 && available_in == before_in {
            stalled += 1;
            if stalled > 2 {
                return Err(EncodeError::new("brotli: the encoder made no progress"));
            }
        } else {
            stalled = 0;
        }
    }
}

/// One `BrotliEncoderCompressStream` call with no output space: the output stays in
/// brotli's buffer for [`take_output`].
fn compress_stream(
    core: &mut EncoderCore,
    op: BrotliEncoderOperation,
    input: &[u8],
    available_in: &mut usize,
    in_offset: &mut usize,
) -> Result<(), EncodeError> {
    let (mut available_out, mut out_offset, mut total_out) = (0, 0, None);
    let ok = core.compress_stream(
        op,
        available_in,
        input,
        in_offset,
        &mut available_out,
        &mut [],
        &mut out_offset,
        &mut total_out,
        &mut |_, _, _, _| (),
    );
    if ok {
        Ok(())
    } else {
        Err(EncodeError::new("brotli: the encoder refused the call"))
    }
}

/// Moves all the output brotli holds into `out`. Returns how many bytes.
fn take_output(core: &mut EncoderCore, out: &mut BytesMut) -> usize {
    let mut produced = 0;
    loop {
        // `size` 0 asks for everything; the slice returned may run past what was taken,
        // `size` tells how much was.
        let mut size = 0;
        let chunk = core.take_output(&mut size);
        let chunk = &chunk[..size.min(chunk.len())];
        if chunk.is_empty() {
            return produced;
        }
        produced += chunk.len();
        out.extend_from_slice(chunk);
    }
}

/// A streaming br encoder over a pooled brotli encoder, drawn at the first call that needs
/// one.
///
/// A streaming body's encoder ([`BrEncoder::streaming`]) waits for a turn before it draws a
/// state (see
/// [`CodecPoolBuilder::br_stream_limit`](crate::CodecPoolBuilder::br_stream_limit)), flushes
/// at every slice end so its output keeps pace with its input, and gives its turn back
/// while its producer is idle. At quality 2 and up a pause longer than the pool's park bound
/// (and the first, whose length is unknown) gives the state back too: the stream goes on
/// with a fresh encoder primed with the last 32 KiB of input and the distances the decoder
/// remembers (see `CompressorState::resume`). An idle event stream then holds its history
/// (the size of its events) instead of an encoder (145 KB at quality 4). Short pauses keep
/// the encoder: priming one costs ~80 us. Qualities 0-1 keep theirs: it is ~7 KB with no
/// window to prime.
pub(crate) struct BrEncoder {
    /// Not held before the first draw, while idle, after the finish and after a failure.
    state: Hold<CompressorState>,
    pool: CodecPool,
    level: Level,
    size_hint: Option<u64>,
    streaming: bool,
    /// The stream's window, once its first encoder is drawn.
    lgwin: Option<u32>,
    /// The input's tail, kept by streams that give their state back.
    history: History,
    /// Set when the state was given back mid-stream: what the next one resumes with.
    carry: Option<Carry>,
    turn: Option<Turn>,
    ticket: Ticket,
    stage: Stage,
    total_in: u64,
    total_out: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Running,
    Finished,
    /// A brotli call failed; the stream cannot be completed.
    Failed,
}

impl std::fmt::Debug for BrEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrEncoder")
            .field("level", &self.level)
            .field("state", &self.state)
            .field("has_turn", &self.turn.is_some())
            .field("stage", &self.stage)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

/// The window of a streaming body of `len` bytes: the smallest that holds it whole, from
/// 128 KiB, and at most [`STREAM_LGWIN_MAX`]. The encoder's ring buffer is twice the window
/// and, once glibc serves it from its heap rather than fresh pages, cleared whole; so a
/// 100 KB body needs 256 KiB rather than 8 MiB. Not below 17: at 16 and under, qualities
/// 5-9 switch to another match finder.
pub(super) fn window_for(len: u64) -> u32 {
    (17..STREAM_LGWIN_MAX)
        .find(|&lgwin| (1u64 << lgwin) - 16 >= len)
        .unwrap_or(STREAM_LGWIN_MAX)
}

/// The largest window a streaming body gets: 1 MiB (the default, 4 MiB, is for one-shot
/// bodies). On the demo's text and JSON at quality 4, brotli's output with a 1 MiB window
/// is within 0.2% of the 4 MiB one's (256 KiB: 0.35% smaller), and 256 concurrent streams
/// hold a quarter of the ring buffers.
const STREAM_LGWIN_MAX: u32 = 20;

/// The window of a streaming body of unknown size: 256 KiB, whose ring buffer (512 KiB) is
/// a sixteenth of the default's. Measured at quality 4 on the demo's 1-4 MiB texts and JSON:
/// 0.1-0.35% smaller than with the default window, not larger.
const STREAM_LGWIN_UNKNOWN: u32 = 18;

impl BrEncoder {
    pub(crate) fn new(level: Level, pool: &CodecPool) -> Self {
        BrEncoder {
            state: Hold::default(),
            pool: pool.clone(),
            level,
            size_hint: None,
            streaming: false,
            lgwin: None,
            history: History::default(),
            carry: None,
            turn: None,
            ticket: Ticket::default(),
            stage: Stage::Running,
            total_in: 0,
            total_out: 0,
        }
    }

    /// Marks this encoder as a streaming body's (see the type's docs).
    pub(crate) fn streaming(&mut self) {
        self.streaming = true;
        self.history.tracking = self.gives_back();
    }

    /// Whether idle gives the state back: streaming bodies from quality 2 (below it brotli
    /// takes no custom dictionary, and its state is small).
    fn gives_back(&self) -> bool {
        self.streaming && self.level.get() >= 2
    }

    /// The stream's total input size, when known before it starts: brotli picks its match
    /// finder from it (at quality 4, a 1 MiB body gets the larger H54 hasher), as it does
    /// when a whole body arrives in one call, and the window is sized to it.
    pub(crate) fn set_size_hint(&mut self, len: u64) {
        if self.total_in == 0 && self.lgwin.is_none() {
            self.size_hint = Some(len);
        }
    }

    /// Bytes its state has live in brotli's allocator (for tests).
    #[cfg(test)]
    pub(super) fn live_bytes(&mut self) -> usize {
        self.state.held().map_or(0, |s| s.core.m8.0.live())
    }

    /// Ready when this encoder may compress: always, except for a streaming encoder
    /// without state, which needs a turn first (and is woken when one may be free).
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.streaming || self.turn.is_some() || self.stage != Stage::Running {
            return Poll::Ready(());
        }
        let turn = ready!(Turn::poll_br(&self.pool, &mut self.ticket, cx));
        self.turn = Some(turn);
        Poll::Ready(())
    }

    /// The state: held, the parked one taken back, or one drawn (and, mid-stream, primed
    /// to go on with the stream).
    fn state(&mut self) -> &mut CompressorState {
        if !self.state.resume().is_held() {
            let mut state = draw_compressor(&self.pool, self.level);
            match self.carry {
                Some(carry) => {
                    let lgwin = self
                        .lgwin
                        .expect("a stream that gave its state back had one");
                    state.resume(lgwin, &self.history.tail, &carry);
                    self.pool
                        .note_primed::<CompressorState>(self.history.tail.len());
                }
                None => {
                    if let Some(len) = self.size_hint {
                        state.hint(len);
                    }
                    let lgwin = match (self.streaming, self.size_hint) {
                        (true, Some(len)) => window_for(len),
                        (true, None) => STREAM_LGWIN_UNKNOWN,
                        // The public encoder keeps brotli's defaults, as its one-shot calls do.
                        (false, _) => super::LGWIN,
                    };
                    if self.streaming {
                        state.set_window(lgwin);
                    }
                    self.lgwin = Some(lgwin);
                }
            }
            self.state.hold(state);
        }
        self.state.held().expect("drawn above")
    }

    fn run(
        &mut self,
        op: BrotliEncoderOperation,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<Progress, EncodeError> {
        match self.stage {
            Stage::Running => {}
            Stage::Finished => return Err(EncodeError::new("the stream is already finished")),
            Stage::Failed => {
                return Err(EncodeError::new(
                    "an earlier call failed; the stream is unusable",
                ));
            }
        }
        let before = out.len();
        let result = compress(self.state(), op, input, out);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                // A state drawn now is primed with the history *before* this input.
                self.history.record(input);
                Ok(Progress::since(input.len(), before, out))
            }
            Err(e) => {
                self.stage = Stage::Failed;
                self.state.discard();
                self.turn = None;
                Err(e)
            }
        }
    }
}

impl Encode for BrEncoder {
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if input.is_empty() && self.stage == Stage::Running {
            return Ok(Progress::default());
        }
        self.run(BrotliEncoderOperation::BROTLI_OPERATION_PROCESS, input, out)
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if !self.state.is_held() && self.stage == Stage::Running {
            // Nothing was encoded since the state was given back (flushed), or ever: nothing
            // to flush, and no state to draw for it.
            return Ok(Progress::default());
        }
        self.run(BrotliEncoderOperation::BROTLI_OPERATION_FLUSH, &[], out)
    }

    fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if self.stage == Stage::Finished {
            return Ok(Progress::default());
        }
        let progress =
            if self.carry.is_some() && !self.state.is_held() && self.stage == Stage::Running {
                // Given back after a flush (byte-aligned): the end is one last, empty meta-block
                // (ISLAST, ISLASTEMPTY), with no state drawn to say it.
                let before = out.len();
                out.extend_from_slice(&[0x03]);
                self.total_out += 1;
                Progress::since(0, before, out)
            } else {
                self.run(BrotliEncoderOperation::BROTLI_OPERATION_FINISH, &[], out)?
            };
        self.stage = Stage::Finished;
        // Back to the pool now, not when the encoder is dropped; then the turn.
        self.state.release();
        self.turn = None;
        Ok(progress)
    }

    fn idle(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let progress = self.flush(out)?;
        // The turn goes: a stream whose producer waits must not keep busy streams from
        // starting. So does the state after a long pause, once what the next encoder needs
        // to go on is noted.
        self.turn = None;
        if self.gives_back() && self.stage == Stage::Running && self.history.tail.len() >= 2 {
            // A history of 0-1 bytes is not a custom dictionary brotli takes: the encoder
            // that resumed would not know the byte before the next flush's literals (their
            // context), which the decoder does. Such a stream keeps its state this pause.
            if self.state.pauses_are_short() {
                // Short pauses keep the encoder. Parked on the shelf it would be taken by the
                // next draw whenever streams outnumber the places, and priming a fresh one
                // costs ~80 us an event at quality 4 (256 SSE streams at 1 ms paid +104 us an
                // event over identity, against +13 for 8 streams that kept theirs).
                self.state.keep();
            } else if let Some(state) = self.state.held() {
                // The first pause (its length unknown) and long ones give it back.
                self.carry = Some(state.carry());
                self.state.release_paused();
            }
        }
        Ok(progress)
    }

    fn at_slice_end(&self) -> SliceEnd {
        if self.streaming {
            SliceEnd::Flush
        } else {
            SliceEnd::Keep
        }
    }

    fn holds_state(&self) -> bool {
        self.state.is_held()
    }

    fn totals(&self) -> Totals {
        Totals::new(self.total_in, self.total_out, self.stage == Stage::Finished)
    }
}

impl Drop for BrEncoder {
    fn drop(&mut self) {
        // A stream dropped while waiting leaves the line (its turn, if held, goes back with
        // the `Turn`).
        self.pool.turns().leave(&mut self.ticket);
    }
}

/// Compresses all of `input` as one br stream, with its size as brotli's size hint (which
/// picks the hasher and block sizes for the body rather than for a stream of unknown size).
pub(crate) fn encode_all(
    level: Level,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut state = draw_compressor(pool, level);
    // The size hint only, not the window: the default window keeps the bytes those of
    // brotli's own one-shot call (and a body of at most 64 KiB, the one-shot bound, gets a
    // ring buffer of its size anyway).
    state.hint(input.len() as u64);
    out.reserve(input.len() / 4 + 64);
    let result = compress(
        &mut state,
        BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
        input,
        out,
    );
    if result.is_err() {
        state.discard();
    }
    result
}
