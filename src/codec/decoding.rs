//! The bookkeeping every decoder shares, written once: [`Driven`] runs a coding's own
//! [`DecodeCore`] and keeps the counts, the budget flag and the error every later call
//! reports again ([`Decode`]'s contract). Generic, so each decoder is its own monomorphized
//! type: no boxing, no dynamic dispatch per chunk.

#[cfg(feature = "br")]
use brotli_decompressor::{Allocator, BrotliState, HuffmanCode};
use bytes::BytesMut;

#[cfg(feature = "br")]
use crate::codec::br::{DecodeStep, decode_step};
use crate::codec::{Decode, DecodeError, DecodeErrorKind, Progress, Tally};

/// What one [`DecodeCore::step`] did: the bytes it consumed, and `Ok(true)` when it stopped
/// at the budget with output (or input) left, `Ok(false)` when it needs more input.
pub(crate) type Stepped = (usize, Result<bool, DecodeError>);

/// What a coding supplies: one bounded decode step over its state, and where its stream is.
pub(crate) trait DecodeCore {
    /// What `finish` says when the body ends inside the stream.
    const TRUNCATED: &'static str;

    /// Decodes from `input`, appending to `out` and taking what it writes from `budget`.
    fn step(&mut self, input: &[u8], out: &mut BytesMut, budget: &mut usize) -> Stepped;

    /// The step failed: let go of the codec state, which is never reused after an error.
    fn fail(&mut self);

    /// Whether a complete stream has been decoded.
    fn is_stream_end(&self) -> bool;

    /// Streams (members, frames) completed so far.
    #[cfg(test)]
    fn members(&self) -> u64;

    /// See [`Decode::announced_size`].
    fn announced_size(&self, _input: &[u8]) -> Option<u64> {
        None
    }
}

/// A decoder: a coding's [`DecodeCore`] and the bookkeeping around it.
#[derive(Debug)]
pub(crate) struct Driven<C> {
    core: C,
    /// The last call stopped at its budget.
    pending: bool,
    tally: Tally,
}

impl<C: DecodeCore> Driven<C> {
    pub(crate) fn with_core(core: C) -> Self {
        Driven {
            core,
            pending: false,
            tally: Tally::default(),
        }
    }

    /// The stream failed (here or in a caller's check): its codec state goes back now.
    pub(crate) fn fail(&mut self) {
        self.pending = false;
        self.core.fail();
    }

    #[cfg(all(test, feature = "br"))]
    pub(crate) fn core(&self) -> &C {
        &self.core
    }

    /// `Ok` where the stream is complete, or (with `empty_ok`) no byte came at all; else
    /// the error an earlier call reported, or a `Truncated` one.
    pub(crate) fn check_end(&self, empty_ok: bool) -> Result<(), DecodeError> {
        self.tally.replay()?;
        if self.core.is_stream_end() || (empty_ok && self.tally.total_in() == 0) {
            Ok(())
        } else {
            Err(DecodeError::new(DecodeErrorKind::Truncated, C::TRUNCATED))
        }
    }
}

impl<C: DecodeCore> Decode for Driven<C> {
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError> {
        self.tally.replay()?;
        let before = out.len();
        let mut budget = max_out;
        let (consumed, stopped) = self.core.step(input, out, &mut budget);
        self.pending = matches!(stopped, Ok(true));
        let progress = self.tally.count(consumed, before, out, stopped.map(drop));
        if progress.is_err() {
            self.fail();
        }
        progress
    }

    fn has_pending_output(&self) -> bool {
        self.pending
    }

    fn finish(&self) -> Result<(), DecodeError> {
        self.check_end(true)
    }

    fn is_stream_end(&self) -> bool {
        self.core.is_stream_end()
    }

    fn announced_size(&self, input: &[u8]) -> Option<u64> {
        // Not after an error: the stream is over.
        self.tally.replay().ok()?;
        self.core.announced_size(input)
    }

    fn total_in(&self) -> u64 {
        self.tally.total_in()
    }

    fn total_out(&self) -> u64 {
        self.tally.total_out()
    }

    #[cfg(test)]
    fn members(&self) -> u64 {
        self.core.members()
    }
}

/// A br decoder state (the pool's, or `dcb`'s primed with a dictionary), as [`BrStream`]
/// runs it.
#[cfg(feature = "br")]
pub(crate) trait BrState {
    /// The allocator of its brotli state.
    type Alloc: Allocator<u8> + Allocator<u32> + Allocator<HuffmanCode>;
    /// What `decode` says about bytes after the end of the stream.
    const TRAILING: &'static str;
    /// What `finish` says when the body ends inside the stream.
    const TRUNCATED: &'static str;

    /// Its brotli state.
    fn core(&mut self) -> &mut BrotliState<Self::Alloc, Self::Alloc, Self::Alloc>;

    /// Lets go of a state that saw an error.
    fn discard(self);
}

#[cfg(feature = "br")]
/// The [`DecodeCore`] of br and `dcb`: one stream (RFC 7932 has no framing around it), its
/// state let go as soon as it ends, and any byte after it an error.
pub(crate) struct BrStream<S> {
    /// `None` after the end of the stream or a failure.
    state: Option<S>,
    done: bool,
}

#[cfg(feature = "br")]
impl<S> BrStream<S> {
    pub(crate) fn new(state: S) -> Self {
        BrStream {
            state: Some(state),
            done: false,
        }
    }

    #[cfg(test)]
    pub(crate) fn holds_state(&self) -> bool {
        self.state.is_some()
    }
}

#[cfg(feature = "br")]
impl<S> std::fmt::Debug for BrStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrStream")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "br")]
impl<S: BrState> DecodeCore for BrStream<S> {
    const TRUNCATED: &'static str = S::TRUNCATED;

    fn step(&mut self, input: &[u8], out: &mut BytesMut, budget: &mut usize) -> Stepped {
        let (consumed, stop) = match self.state.as_mut() {
            Some(state) => decode_step(state.core(), input, out, budget),
            None => (0, Ok(DecodeStep::End)),
        };
        let stopped = match stop {
            Ok(DecodeStep::End) => {
                self.done = true;
                if consumed < input.len() {
                    Err(DecodeError::new(DecodeErrorKind::TrailingData, S::TRAILING))
                } else {
                    // Back to the pool now, not when the decoder is dropped.
                    self.state = None;
                    Ok(false)
                }
            }
            Ok(DecodeStep::Budget) => Ok(true),
            Ok(DecodeStep::Input) => Ok(false),
            Err(e) => Err(e),
        };
        (consumed, stopped)
    }

    fn fail(&mut self) {
        if let Some(state) = self.state.take() {
            state.discard();
        }
    }

    fn is_stream_end(&self) -> bool {
        self.done
    }

    #[cfg(test)]
    fn members(&self) -> u64 {
        u64::from(self.done)
    }
}
