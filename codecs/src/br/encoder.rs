//! The br encoder: streaming over a pooled state, and in one call for a body known in full.

use std::task::{Context, Poll, ready};

use brotli::enc::encode::BrotliEncoderOperation as Op;
use bytes::BytesMut;

use super::state::{Carry, CompressorState, EncoderCore, draw_compressor};
use super::turn::Turn;
use crate::encoding::{Driving, Encode, EncodeOptions};
use crate::history::History;
use crate::padding::metadata_blocks;
use crate::pool::turns::Ticket;
use crate::pool::{CodecPool, Hold};
use crate::{EncodeError, Level, SliceEnd};

/// Runs `op` over all of `input`, appending the output to `out`, until brotli has taken all
/// input and (for a flush or finish) written everything it owes.
///
/// brotli is called with no output space and its output taken from its own buffer
/// (`take_output`, the C API's `BrotliEncoderTakeOutput`), so `out` is never zero-filled in
/// advance.
pub(crate) fn compress(
    state: &mut CompressorState,
    op: Op,
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
            Op::BROTLI_OPERATION_FINISH => core.is_finished(),
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
    op: Op,
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
/// A streaming body's encoder (`EncodeOptions::streaming`) waits for a turn before it draws a
/// state (see
/// [`CodecPoolBuilder::br_stream_limit`](crate::pool::CodecPoolBuilder::br_stream_limit)), flushes
/// at every slice end so its output keeps pace with its input, and gives its turn back
/// while its producer is idle. At quality 2 and up a pause longer than the pool's park bound
/// (and the first, whose length is unknown) gives the state back too: the stream goes on
/// with a fresh encoder primed with the last 32 KiB of input and the distances the decoder
/// remembers (see `CompressorState::resume`). An idle event stream then holds its history
/// (the size of its events) instead of an encoder, many times larger. Short pauses keep
/// the encoder: priming one costs more than the event. Qualities 0-1 keep theirs: it is
/// small, with no window to prime. (Sizes and costs: BENCHMARKS.md, "br".)
pub(crate) type BrEncoder = Driving<BrCore>;

/// The [`Encode`] of br.
pub(crate) struct BrCore {
    pool: CodecPool,
    level: Level,
    /// Declared before `stream`, so dropped first: the state is back on the shelf before
    /// the turn goes to the next stream in line.
    phase: EncoderCustody,
    /// The input's tail, kept by streams that give their state back.
    history: History,
    /// A streaming body's place among the pool's br streams; `None` for other bodies.
    stream: Option<Streaming>,
    /// Bytes of length padding, metadata before the last meta-block.
    padding: usize,
}

/// Where a br stream is with its encoder.
#[derive(Debug)]
enum EncoderCustody {
    /// No encoder drawn yet: the body's size, when known, sizes the first.
    Fresh { size_hint: Option<u64> },
    /// An encoder holds the stream, with its window; over short pauses too.
    Holding {
        state: Hold<CompressorState>,
        lgwin: u32,
    },
    /// Given back at a long pause, after a flush: a fresh encoder goes on from the window,
    /// the history and `carry`. The empty `pauses` times the pause.
    GivenBack {
        pauses: Hold<CompressorState>,
        lgwin: u32,
        carry: Carry,
    },
    /// Finished or failed: the state is gone.
    Done,
}

/// A streaming body's turn (held from `poll_ready` to its next pause) and place in line.
#[derive(Debug, Default)]
struct Streaming {
    turn: Option<Turn>,
    ticket: Ticket,
}

impl std::fmt::Debug for BrCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the history: up to 32 KiB of a response.
        f.debug_struct("BrCore")
            .field("level", &self.level)
            .field("phase", &self.phase)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

/// The window of a streaming body of `len` bytes: the smallest that holds it whole, from
/// 128 KiB, and at most [`STREAM_LGWIN_MAX`]. The encoder's ring buffer is twice the window
/// and, once glibc serves it from its heap rather than fresh pages, cleared whole; so a
/// small body needs a small ring buffer rather than the default's. Not below 17: at 16 and under, qualities
/// 5-9 switch to another match finder.
pub(super) fn window_for(len: u64) -> u32 {
    (17..STREAM_LGWIN_MAX)
        .find(|&lgwin| (1u64 << lgwin) - 16 >= len)
        .unwrap_or(STREAM_LGWIN_MAX)
}

/// The largest window a streaming body gets: 1 MiB (the default, 4 MiB, is for one-shot
/// bodies). On text and JSON at quality 4 the output is as small as with the default window
/// (BENCHMARKS.md, "br"), and concurrent streams hold a quarter of the ring buffers.
const STREAM_LGWIN_MAX: u32 = 20;

/// The window of a streaming body of unknown size: 256 KiB, whose ring buffer (512 KiB) is
/// a sixteenth of the default's, and whose output on text and JSON at quality 4 is no
/// larger than with the default window (BENCHMARKS.md, "br").
const STREAM_LGWIN_UNKNOWN: u32 = 18;

impl BrEncoder {
    pub(crate) fn new(level: Level, pool: &CodecPool) -> Self {
        Driving::with_core(BrCore {
            pool: pool.clone(),
            level,
            phase: EncoderCustody::Fresh { size_hint: None },
            history: History::default(),
            stream: None,
            padding: 0,
        })
    }

    /// Bytes its state has live in brotli's allocator (for tests).
    #[cfg(test)]
    pub(super) fn live_bytes(&mut self) -> usize {
        match &mut self.core_mut().phase {
            EncoderCustody::Holding { state, .. } => state.held().map_or(0, |s| s.core.m8.0.live()),
            _ => 0,
        }
    }
}

impl BrCore {
    /// Whether idle gives the state back: streaming bodies from quality 2 (below it brotli
    /// takes no custom dictionary, and its state is small).
    fn gives_back(&self) -> bool {
        self.stream.is_some() && self.level.get() >= 2
    }

    /// The state: the one held, or one drawn (fresh, or primed to go on with the stream).
    fn state(&mut self) -> &mut CompressorState {
        match &mut self.phase {
            EncoderCustody::Fresh { size_hint } => {
                let size_hint = *size_hint;
                self.phase = self.first_draw(size_hint);
            }
            EncoderCustody::GivenBack {
                pauses,
                lgwin,
                carry,
            } => {
                let (pauses, lgwin, carry) = (std::mem::take(pauses), *lgwin, *carry);
                self.phase = self.resume(pauses, lgwin, &carry);
            }
            EncoderCustody::Holding { .. } | EncoderCustody::Done => {}
        }
        match &mut self.phase {
            // `resume` times a pause the state was kept over.
            EncoderCustody::Holding { state, .. } => state.resume().held().expect("drawn above"),
            _ => unreachable!("the driver compresses nothing after the finish or a failure"),
        }
    }

    /// The stream's first encoder, sized to the body when its size is known.
    fn first_draw(&self, size_hint: Option<u64>) -> EncoderCustody {
        let mut state = draw_compressor(&self.pool, self.level);
        if let Some(len) = size_hint {
            state.hint(len);
        }
        let streaming = self.stream.is_some();
        let lgwin = match (streaming, size_hint) {
            (true, Some(len)) => window_for(len),
            (true, None) => STREAM_LGWIN_UNKNOWN,
            // The public encoder keeps brotli's defaults, as its one-shot calls do.
            (false, _) => super::LGWIN,
        };
        if streaming {
            state.set_window(lgwin);
        }
        let mut held = Hold::default();
        held.hold(state);
        EncoderCustody::Holding { state: held, lgwin }
    }

    /// A fresh encoder primed to go on with a stream that gave its state back.
    fn resume(
        &self,
        mut pauses: Hold<CompressorState>,
        lgwin: u32,
        carry: &Carry,
    ) -> EncoderCustody {
        // Times the pause that ends here (nothing is parked to take back).
        pauses.resume();
        let mut state = draw_compressor(&self.pool, self.level);
        state.resume(lgwin, &self.history.tail, carry);
        self.pool
            .note_primed::<CompressorState>(self.history.tail.len());
        pauses.hold(state);
        EncoderCustody::Holding {
            state: pauses,
            lgwin,
        }
    }

    /// After the flush of a pause: keeps the state over a short one, else gives it back
    /// with what the next encoder needs to go on.
    fn pause(&mut self) {
        let EncoderCustody::Holding { state, lgwin } = &mut self.phase else {
            return;
        };
        if state.pauses_are_short() {
            // Short pauses keep the encoder. Parked on the shelf it would be taken by the
            // next draw whenever streams outnumber the places, and priming a fresh one
            // costs more than a small event's compression (BENCHMARKS.md, "br").
            state.keep();
            return;
        }
        // The first pause (its length unknown) and long ones give it back.
        let carry = state.held().expect("holding").carry();
        let (mut pauses, lgwin) = (std::mem::take(state), *lgwin);
        pauses.release_paused();
        self.phase = EncoderCustody::GivenBack {
            pauses,
            lgwin,
            carry,
        };
    }

    /// The turn goes back (after the state, when both go: the next stream in line then
    /// finds the state on the shelf).
    fn give_turn_back(&mut self) {
        if let Some(stream) = &mut self.stream {
            stream.turn = None;
        }
    }
}

impl Encode for BrCore {
    /// A streaming body's encoder waits for turns (see the type's docs). A known total size
    /// picks brotli's match finder (at quality 4, a 1 MiB body gets the larger H54 hasher),
    /// as a whole body arriving in one call does, and sizes the window.
    fn start(&mut self, options: &EncodeOptions) {
        if options.streaming {
            self.stream.get_or_insert_with(Streaming::default);
            self.history.tracking = self.gives_back();
        }
        if let EncoderCustody::Fresh { size_hint } = &mut self.phase {
            *size_hint = options.size_hint;
        }
        self.padding = options.padding;
    }

    /// Ready when this encoder may compress: always, except for a streaming encoder
    /// without state, which needs a turn first (and is woken when one may be free).
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(stream) = &mut self.stream else {
            return Poll::Ready(());
        };
        if stream.turn.is_some() || matches!(self.phase, EncoderCustody::Done) {
            return Poll::Ready(());
        }
        let turn = ready!(Turn::poll_br(&self.pool, &mut stream.ticket, cx));
        stream.turn = Some(turn);
        Poll::Ready(())
    }

    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        if input.is_empty() {
            return Ok(());
        }
        compress(self.state(), Op::BROTLI_OPERATION_PROCESS, input, out)?;
        // A state drawn now is primed with the history *before* this input.
        self.history.record(input);
        Ok(())
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        // Nothing was encoded since the state was given back (flushed), or ever: nothing to
        // flush, and no state to draw for it.
        if !matches!(self.phase, EncoderCustody::Holding { .. }) {
            return Ok(());
        }
        compress(self.state(), Op::BROTLI_OPERATION_FLUSH, &[], out)
    }

    fn finish(&mut self, out: &mut BytesMut, _total_in: u64) -> Result<(), EncodeError> {
        if let EncoderCustody::GivenBack { .. } = self.phase {
            // Given back after a flush (byte-aligned): the end is one last, empty meta-block
            // (ISLAST, ISLASTEMPTY), with no state drawn to say it.
            metadata_blocks(self.padding, out);
            out.extend_from_slice(&[0x03]);
        } else {
            let padding = self.padding;
            finish_padded(self.state(), &[], padding, out)?;
        }
        // Back to the pool now, not when the encoder is dropped; then the turn.
        self.phase = EncoderCustody::Done;
        self.give_turn_back();
        Ok(())
    }

    fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.flush(out)?;
        // The turn goes: a stream whose producer waits must not keep busy streams from
        // starting. So does the state after a long pause, once what the next encoder needs
        // to go on is noted.
        self.give_turn_back();
        // A history of 0-1 bytes is not a custom dictionary brotli takes: the encoder that
        // resumed would not know the byte before the next flush's literals (their context),
        // which the decoder does. Such a stream keeps its state this pause.
        if self.gives_back() && self.history.tail.len() >= 2 {
            self.pause();
        }
        Ok(())
    }

    fn fail(&mut self) {
        if let EncoderCustody::Holding { mut state, .. } =
            std::mem::replace(&mut self.phase, EncoderCustody::Done)
        {
            state.discard();
        }
        self.give_turn_back();
    }

    fn holds_state(&self) -> bool {
        matches!(self.phase, EncoderCustody::Holding { .. })
    }

    fn at_slice_end(&self) -> SliceEnd {
        if self.stream.is_some() {
            SliceEnd::Flush
        } else {
            SliceEnd::Keep
        }
    }
}

impl Drop for BrCore {
    fn drop(&mut self) {
        // A stream dropped while waiting leaves the line (its turn, if held, goes back with
        // the `Turn`).
        if let Some(stream) = &mut self.stream {
            self.pool.turns().leave(&mut stream.ticket);
        }
    }
}

/// Compresses `input` and ends the stream, with `padding` bytes of metadata before the last
/// meta-block: after a flush, which leaves the output at a byte boundary (brotli pads it with
/// an empty metadata block), where a metadata meta-block may begin.
fn finish_padded(
    state: &mut CompressorState,
    input: &[u8],
    padding: usize,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    if padding == 0 {
        return compress(state, Op::BROTLI_OPERATION_FINISH, input, out);
    }
    compress(state, Op::BROTLI_OPERATION_FLUSH, input, out)?;
    metadata_blocks(padding, out);
    compress(state, Op::BROTLI_OPERATION_FINISH, &[], out)
}

/// Compresses all of `input` as one br stream (with `padding` bytes of metadata), with its
/// size as brotli's size hint (which picks the hasher and block sizes for the body rather
/// than for a stream of unknown size).
pub(crate) fn encode_all(
    level: Level,
    input: &[u8],
    padding: usize,
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut state = draw_compressor(pool, level);
    // The size hint only, not the window: the default window keeps the bytes those of
    // brotli's own one-shot call (and a body of at most 64 KiB, the one-shot bound, gets a
    // ring buffer of its size anyway).
    state.hint(input.len() as u64);
    out.reserve(input.len() / 4 + 64 + padding);
    let result = finish_padded(&mut state, input, padding, out);
    if result.is_err() {
        state.discard();
    }
    result
}
