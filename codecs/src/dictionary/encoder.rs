//! What the `dcz` and `dcb` encoders share: the header owed before the first output, the
//! phases of the stream, over the encoders' driver. Each coding supplies
//! its [`DictCodec`]: the codec call and its pooled state.

use bytes::BytesMut;

use super::Dictionary;
use crate::encoding::{Driving, Encode, EncodeOptions};
use crate::pool::CodecPool;
use crate::{CompressionLevel, EncodeError};

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

impl Op {
    /// The coding's own name for this operation, of the three given in order.
    pub(crate) fn pick<T>(self, process: T, flush: T, finish: T) -> T {
        match self {
            Op::Process => process,
            Op::Flush => flush,
            Op::Finish => finish,
        }
    }
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

    /// The header and the stream, its codec state drawn for `start`.
    fn headed(start: Start<'_>) -> Result<Headed<Self>, EncodeError>
    where
        Self: Sized;

    /// What a one-shot body of `input` bytes reserves for its output, header included.
    fn reserve(input: usize) -> usize;

    /// Whether length padding goes after the end of the stream (a zstd skippable frame),
    /// else after a flush and before the end (brotli metadata, which must come before the
    /// last meta-block).
    const PADS_AFTER_END: bool;

    /// Appends `len` bytes of padding (see `Encoder::with_padding`).
    fn pad(len: usize, out: &mut BytesMut);
}

/// What a dictionary coding's stream starts from.
pub(crate) struct Start<'a> {
    pub(crate) dictionary: &'a Dictionary,
    pub(crate) level: CompressionLevel,
    pub(crate) pool: &'a CodecPool,
    /// The body's size when it is known in full (a one-shot body), as the codec's size hint.
    pub(crate) size: Option<usize>,
}

/// A streaming encoder of coding `C` against `dictionary`, at `level`, its state from
/// `pool`. Output is appended to the caller's buffer; the header goes out with the first
/// call that writes.
pub(crate) fn streaming<C: DictCodec>(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
) -> Result<Driving<Headed<C>>, EncodeError> {
    let start = Start {
        dictionary,
        level,
        pool,
        size: None,
    };
    Ok(Driving::with_core(C::headed(start)?))
}

/// [`encode_padded`] without padding.
#[cfg(all(test, both_dictionary_codings))]
pub(crate) fn encode_all<C: DictCodec>(
    dictionary: &Dictionary,
    level: CompressionLevel,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    encode_padded::<C>(dictionary, level, input, 0, pool, out)
}

/// Compresses all of `input` as one body of coding `C` against `dictionary`, appended to
/// `out`: the header, then a stream told the body's size (zstd records it in the frame
/// header; brotli takes it as its size hint), with `padding` bytes of length padding.
pub(crate) fn encode_padded<C: DictCodec>(
    dictionary: &Dictionary,
    level: CompressionLevel,
    input: &[u8],
    padding: usize,
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    out.reserve(C::reserve(input.len()));
    let size = Some(input.len());
    let start = Start {
        dictionary,
        level,
        pool,
        size,
    };
    // One call: the header, then the whole stream. The state goes back when it is done.
    let mut headed = C::headed(start)?;
    headed.padding = padding;
    headed.encode_all(input, out)
}

/// Where an encoder is in its stream; the phases that compress hold the codec state.
enum EncoderPhase<S> {
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
    phase: EncoderPhase<C::State>,
    hash: [u8; 32],
    /// Bytes of length padding owed at the end.
    padding: usize,
}

impl<C: DictCodec> std::fmt::Debug for Headed<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let phase = match self.phase {
            EncoderPhase::Start(_) => "start",
            EncoderPhase::Open(_) => "open",
            EncoderPhase::Idle { .. } => "idle",
            EncoderPhase::Done => "done",
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
            phase: EncoderPhase::Start(state),
            hash,
            padding: 0,
        }
    }

    /// The whole body in one call, header included (the one-shot path, with no driver).
    pub(crate) fn encode_all(
        mut self,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let result = self.end(input, out);
        if result.is_err() {
            self.fail();
        }
        result
    }

    /// Ends the stream after `input`, with the padding owed where the coding has room.
    fn end(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        if self.padding == 0 {
            return self.run(Op::Finish, input, out);
        }
        if C::PADS_AFTER_END {
            self.run(Op::Finish, input, out)?;
            C::pad(self.padding, out);
            return Ok(());
        }
        // A flush leaves the stream at a byte boundary, where metadata may begin.
        self.run(Op::Flush, input, out)?;
        C::pad(self.padding, out);
        self.run(Op::Finish, &[], out)
    }

    /// Runs `op` over `input`: the header first if it is still owed (not for a call that
    /// writes nothing), a state drawn again after an idle.
    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        if let EncoderPhase::Idle { header } = self.phase {
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
                EncoderPhase::Open(state)
            } else {
                EncoderPhase::Start(state)
            };
        }
        if let EncoderPhase::Start(_) = self.phase {
            if input.is_empty() && op == Op::Process {
                return Ok(());
            }
            super::frame::write_header(C::MAGIC, &self.hash, out);
            if let EncoderPhase::Start(state) =
                std::mem::replace(&mut self.phase, EncoderPhase::Done)
            {
                self.phase = EncoderPhase::Open(state);
            }
        }
        match &mut self.phase {
            EncoderPhase::Open(state) => state.run(op, input, out),
            _ => unreachable!("the header is out and a state drawn above"),
        }
    }
}

impl<C: DictCodec> Encode for Headed<C> {
    fn start(&mut self, options: &EncodeOptions) {
        self.padding = options.padding;
    }

    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(Op::Process, input, out)
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(Op::Flush, &[], out)
    }

    fn finish(&mut self, out: &mut BytesMut, _total_in: u64) -> Result<(), EncodeError> {
        self.end(&[], out)?;
        // Back to the pool now, not when the encoder is dropped.
        self.phase = EncoderPhase::Done;
        Ok(())
    }

    /// The producer has nothing for now: see [`DictCodec::RELEASES_WHEN_IDLE`].
    fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if !C::RELEASES_WHEN_IDLE {
            return self.run(Op::Flush, &[], out);
        }
        match self.phase {
            EncoderPhase::Start(_) => self.phase = EncoderPhase::Idle { header: false },
            EncoderPhase::Open(_) => {
                self.run(Op::Finish, &[], out)?;
                // Back to the pool now; the next input draws a state for a new part.
                self.phase = EncoderPhase::Idle { header: true };
            }
            EncoderPhase::Idle { .. } | EncoderPhase::Done => {}
        }
        Ok(())
    }

    fn fail(&mut self) {
        if let EncoderPhase::Start(state) | EncoderPhase::Open(state) =
            std::mem::replace(&mut self.phase, EncoderPhase::Done)
        {
            state.discard();
        }
    }

    fn holds_state(&self) -> bool {
        matches!(self.phase, EncoderPhase::Start(_) | EncoderPhase::Open(_))
    }

    /// Once the header is out (as the `Done` phase has it: a finished stream wrote it).
    fn has_payload(&self, _total_out: u64) -> bool {
        !matches!(
            self.phase,
            EncoderPhase::Start(_) | EncoderPhase::Idle { header: false }
        )
    }
}
