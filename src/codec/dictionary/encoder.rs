//! What the `dcz` and `dcb` encoders share: the header owed before the first output, the
//! phases of the stream, over the encoders' driver. Each coding supplies
//! its [`DictCodec`]: the codec call and its pooled state.

use bytes::BytesMut;

use crate::codec::EncodeError;
use crate::codec::encoding::Encode;

/// What one call asks of the coding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Compress; the codec may hold output back.
    Process,
    /// Make everything so far decodable.
    Flush,
    /// End the stream (`dcz`: the frame).
    Finish,
}

/// A dictionary coding's pooled codec state, as [`Headed`] runs it.
pub(crate) trait Stream {
    /// Runs `op` over all of `input`, appending to `out`.
    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError>;

    /// Lets go of a state that saw an error: it is not shelved again.
    fn discard(self);
}

/// A dictionary coding's codec under [`Headed`].
pub(crate) trait DictCodec {
    /// The pooled codec state a stream holds while it compresses.
    type State: Stream;
    /// The magic bytes its header starts with.
    const MAGIC: &'static [u8];
    /// Whether `idle` ends the current part (a zstd frame) and gives the state back, the
    /// stream going on with a new part from [`redraw`](DictCodec::redraw); else `idle`
    /// flushes and keeps the state (a brotli stream cannot restart).
    const RELEASES_WHEN_IDLE: bool;

    /// A state for a new part after an idle.
    fn redraw(&self) -> Result<Self::State, EncodeError>;
}

/// Where an encoder is in its stream; the phases that compress hold the codec state.
enum Phase<S> {
    /// Nothing written yet: the header is still owed.
    Start(S),
    /// The header is out; the stream (or frame) is open.
    Open(S),
    /// Between parts after an idle, the state back in the pool. `header` tells whether the
    /// header is out (an encoder idle before any input has written nothing).
    Idle { header: bool },
    /// Finished or failed: the state is back in the pool, or discarded.
    Done,
}

/// A dictionary coding's [`Encode`]: the header, then the coding's stream through `C`.
pub(crate) struct Headed<C: DictCodec> {
    codec: C,
    phase: Phase<C::State>,
    hash: [u8; 32],
}

impl<C: DictCodec> std::fmt::Debug for Headed<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let phase = match self.phase {
            Phase::Start(_) => "start",
            Phase::Open(_) => "open",
            Phase::Idle { .. } => "idle",
            Phase::Done => "done",
        };
        f.debug_struct("Headed")
            .field("phase", &phase)
            .finish_non_exhaustive()
    }
}

impl<C: DictCodec> Headed<C> {
    pub(crate) fn new(codec: C, state: C::State, hash: [u8; 32]) -> Self {
        Headed {
            codec,
            phase: Phase::Start(state),
            hash,
        }
    }

    /// The whole body in one call, header included (the one-shot path, with no driver).
    pub(crate) fn encode_all(
        mut self,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let result = self.run(Op::Finish, input, out);
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// Runs `op` over `input`: the header first if it is still owed (not for a call that
    /// writes nothing), a state drawn again after an idle.
    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        if let Phase::Idle { header } = self.phase {
            // Nothing is owed between parts, except the header and one part at the end of a
            // stream that never wrote any.
            let owed = match op {
                Op::Process => !input.is_empty(),
                Op::Flush => false,
                Op::Finish => !header,
            };
            if !owed {
                return Ok(());
            }
            let state = self.codec.redraw()?;
            self.phase = if header {
                Phase::Open(state)
            } else {
                Phase::Start(state)
            };
        }
        if let Phase::Start(_) = self.phase {
            if input.is_empty() && op == Op::Process {
                return Ok(());
            }
            super::frame::write_header(C::MAGIC, &self.hash, out);
            if let Phase::Start(state) = std::mem::replace(&mut self.phase, Phase::Done) {
                self.phase = Phase::Open(state);
            }
        }
        match &mut self.phase {
            Phase::Open(state) => state.run(op, input, out),
            _ => unreachable!("the header is out and a state drawn above"),
        }
    }
}

impl<C: DictCodec> Encode for Headed<C> {
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(Op::Process, input, out)
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(Op::Flush, &[], out)
    }

    fn finish(&mut self, out: &mut BytesMut, _total_in: u64) -> Result<(), EncodeError> {
        self.run(Op::Finish, &[], out)?;
        // Back to the pool now, not when the encoder is dropped.
        self.phase = Phase::Done;
        Ok(())
    }

    /// The producer has nothing for now: see [`DictCodec::RELEASES_WHEN_IDLE`].
    fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if !C::RELEASES_WHEN_IDLE {
            return self.run(Op::Flush, &[], out);
        }
        match self.phase {
            Phase::Start(_) => self.phase = Phase::Idle { header: false },
            Phase::Open(_) => {
                self.run(Op::Finish, &[], out)?;
                // Back to the pool now; the next input draws a state for a new part.
                self.phase = Phase::Idle { header: true };
            }
            Phase::Idle { .. } | Phase::Done => {}
        }
        Ok(())
    }

    fn fail(&mut self) {
        if let Phase::Start(state) | Phase::Open(state) =
            std::mem::replace(&mut self.phase, Phase::Done)
        {
            state.discard();
        }
    }

    fn holds_state(&self) -> bool {
        matches!(self.phase, Phase::Start(_) | Phase::Open(_))
    }

    /// Once the header is out (as the `Done` phase has it: a finished stream wrote it).
    fn has_payload(&self, _total_out: u64) -> bool {
        !matches!(self.phase, Phase::Start(_) | Phase::Idle { header: false })
    }
}
