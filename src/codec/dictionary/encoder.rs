//! What the `dcz` and `dcb` encoders share: the header owed before the first output, the
//! phases of the stream, the byte counts and the public face. Each coding supplies its
//! [`EncodeCore`]: the codec call and its pooled state.

use bytes::BytesMut;

use crate::codec::EncodeError;

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
pub(crate) trait EncodeCore {
    /// The pooled codec state a stream holds while it compresses.
    type State: Stream;
    /// The magic bytes its header starts with.
    const MAGIC: &'static [u8];
    /// Whether `idle` ends the current part (a zstd frame) and gives the state back, the
    /// stream going on with a new part from [`redraw`](EncodeCore::redraw); else `idle`
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
    /// The stream is complete; the state is back in the pool.
    Finished,
    /// A call failed; the state was discarded.
    Failed,
}

/// A dictionary coding's encoder: the header, then the coding's stream through `C`.
pub(crate) struct Headed<C: EncodeCore> {
    core: C,
    phase: Phase<C::State>,
    hash: [u8; 32],
    total_in: u64,
    total_out: u64,
}

impl<C: EncodeCore> std::fmt::Debug for Headed<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let phase = match self.phase {
            Phase::Start(_) => "start",
            Phase::Open(_) => "open",
            Phase::Idle { .. } => "idle",
            Phase::Finished => "finished",
            Phase::Failed => "failed",
        };
        f.debug_struct("Headed")
            .field("phase", &phase)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

fn unusable() -> EncodeError {
    EncodeError::new("an earlier call failed; the stream is unusable")
}

fn finished() -> EncodeError {
    EncodeError::new("the stream is already finished")
}

impl<C: EncodeCore> Headed<C> {
    pub(crate) fn new(core: C, state: C::State, hash: [u8; 32]) -> Self {
        Headed {
            core,
            phase: Phase::Start(state),
            hash,
            total_in: 0,
            total_out: 0,
        }
    }

    pub(crate) fn finish(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if let Phase::Finished = self.phase {
            return Ok(());
        }
        self.run(Op::Finish, &[], out)?;
        // Back to the pool now, not when the encoder is dropped.
        self.phase = Phase::Finished;
        Ok(())
    }

    /// The producer has nothing for now: see [`EncodeCore::RELEASES_WHEN_IDLE`].
    pub(crate) fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
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
            Phase::Idle { .. } => {}
            Phase::Finished => return Err(finished()),
            Phase::Failed => return Err(unusable()),
        }
        Ok(())
    }

    pub(crate) fn total_in(&self) -> u64 {
        self.total_in
    }

    pub(crate) fn total_out(&self) -> u64 {
        self.total_out
    }

    pub(crate) fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    pub(crate) fn holds_state(&self) -> bool {
        matches!(self.phase, Phase::Start(_) | Phase::Open(_))
    }

    pub(crate) fn has_payload(&self) -> bool {
        !matches!(self.phase, Phase::Start(_) | Phase::Idle { header: false })
    }

    /// Runs `op` over `input`: the header first if it is still owed (not for a call that
    /// writes nothing), a state drawn again after an idle.
    pub(crate) fn run(
        &mut self,
        op: Op,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<(), EncodeError> {
        let before = out.len();
        if let Phase::Idle { header } = self.phase {
            match op {
                // Nothing is owed between parts, except the header and one part at the end
                // of a stream that never wrote any.
                Op::Process if input.is_empty() => return Ok(()),
                Op::Flush => return Ok(()),
                Op::Finish if header => return Ok(()),
                _ => {}
            }
            let state = self
                .core
                .redraw()
                .inspect_err(|_| self.phase = Phase::Failed)?;
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
            if let Phase::Start(state) = std::mem::replace(&mut self.phase, Phase::Failed) {
                self.phase = Phase::Open(state);
            }
        }
        let state = match &mut self.phase {
            Phase::Open(state) => state,
            Phase::Finished => return Err(finished()),
            Phase::Start(_) | Phase::Idle { .. } | Phase::Failed => return Err(unusable()),
        };
        let result = state.run(op, input, out);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                Ok(())
            }
            Err(e) => {
                if let Phase::Open(state) = std::mem::replace(&mut self.phase, Phase::Failed) {
                    state.discard();
                }
                Err(e)
            }
        }
    }
}

/// The public face of a dictionary encoder, `$name` over `Headed<$core>`: the same methods
/// for `dcz` and `dcb`, written once. Each coding adds its own `new`.
macro_rules! dict_encoder {
    ($(#[$doc:meta])* $name:ident, $core:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $name(crate::codec::dictionary::HeadedEncoder<$core>);

        impl $name {
            /// Compresses `input`; the codec may hold output back until more input, a flush
            /// or the finish.
            pub(crate) fn encode(
                &mut self,
                input: &[u8],
                out: &mut bytes::BytesMut,
            ) -> Result<(), crate::codec::EncodeError> {
                self.0.run(crate::codec::dictionary::Op::Process, input, out)
            }

            /// Makes everything encoded so far decodable from `out`.
            pub(crate) fn flush(&mut self, out: &mut bytes::BytesMut) -> Result<(), crate::codec::EncodeError> {
                self.0.run(crate::codec::dictionary::Op::Flush, &[], out)
            }
        }

        impl crate::codec::Encode for $name {
            fn encode(
                &mut self,
                input: &[u8],
                out: &mut bytes::BytesMut,
            ) -> Result<crate::codec::Progress, crate::codec::EncodeError> {
                let before = out.len();
                $name::encode(self, input, out)?;
                Ok(crate::codec::Progress::since(input.len(), before, out))
            }

            fn flush(&mut self, out: &mut bytes::BytesMut) -> Result<crate::codec::Progress, crate::codec::EncodeError> {
                let before = out.len();
                $name::flush(self, out)?;
                Ok(crate::codec::Progress::since(0, before, out))
            }

            fn finish(&mut self, out: &mut bytes::BytesMut) -> Result<crate::codec::Progress, crate::codec::EncodeError> {
                let before = out.len();
                self.0.finish(out)?;
                Ok(crate::codec::Progress::since(0, before, out))
            }

            fn idle(&mut self, out: &mut bytes::BytesMut) -> Result<crate::codec::Progress, crate::codec::EncodeError> {
                let before = out.len();
                self.0.idle(out)?;
                Ok(crate::codec::Progress::since(0, before, out))
            }

            fn holds_state(&self) -> bool {
                self.0.holds_state()
            }

            fn has_payload(&self) -> bool {
                self.0.has_payload()
            }

            fn totals(&self) -> crate::codec::Totals {
                crate::codec::Totals::new(self.0.total_in(), self.0.total_out(), self.0.is_finished())
            }
        }
    };
}

pub(crate) use dict_encoder;
