//! The bookkeeping every decoder shares, written once: [`Driven`] runs a coding's own
//! [`DecodeCore`] and keeps the counts, the budget flag and the error every later call
//! reports again ([`Decode`]'s contract). Generic, so each decoder is its own monomorphized
//! type: no boxing, no dynamic dispatch per chunk.

use bytes::BytesMut;

use crate::{Decode, DecodeError, DecodeErrorKind, Progress, Tally};

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

    fn members(&self) -> u64 {
        self.core.members()
    }
}
