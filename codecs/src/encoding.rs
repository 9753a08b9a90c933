//! The encoder trait and the lifecycle every encoder shares, written once: [`Driving`] runs
//! a coding's own [`Encode`] and keeps where the stream is, its counts, its options and its
//! end at the first error. Generic, as the decoders' `Driven` is: each encoder is its own
//! monomorphized type, with no boxing and no dynamic dispatch per chunk.

use std::task::{Context, Poll};

use bytes::BytesMut;

use super::{EncodeError, Progress, SliceEnd};

/// What a coding's encoder supplies: its codec calls over its pooled state, and what it
/// holds. The driver calls none of the calls after the finish or a failure.
pub(crate) trait Encode {
    /// Reads the options that concern this coding, before its first call.
    fn start(&mut self, _options: &EncodeOptions) {}

    /// Compresses all of `input` into `out`; the codec may hold output back.
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError>;

    /// Makes everything encoded so far decodable from `out`.
    fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError>;

    /// Ends the stream of `total_in` input bytes and lets go of the codec state.
    fn finish(&mut self, out: &mut BytesMut, total_in: u64) -> Result<(), EncodeError>;

    /// The producer has nothing for now: make everything so far decodable and, where the
    /// format allows, give the heavy codec state back to the pool. By default a flush, the
    /// state kept.
    fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.flush(out)
    }

    /// A call failed: let go of the codec state, so that a state a call left half done is
    /// never handed to another stream as it is.
    fn fail(&mut self);

    /// Whether a pooled codec state is checked out now.
    fn holds_state(&self) -> bool;

    /// What a streaming body does at the end of a slice of work when the producer has more.
    fn at_slice_end(&self) -> SliceEnd {
        SliceEnd::Keep
    }

    /// Whether the `total_out` bytes written so far hold compressed data beyond a header.
    fn has_payload(&self, total_out: u64) -> bool {
        total_out > 0
    }

    /// Ready when the encoder may compress now (see `Encoder::poll_ready`).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

/// How an encoder is used, known before its first byte; each coding reads what concerns it
/// (in [`Encode::start`]) and ignores the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EncodeOptions {
    /// Bytes of length padding (see `Encoder::with_padding`).
    pub(crate) padding: usize,
    /// The input's total size (see `Encoder::with_size_hint`).
    pub(crate) size_hint: Option<u64>,
    /// A streaming body's encoder (see `Encoder::for_stream`).
    pub(crate) streaming: bool,
}

/// Where a stream is, as the driver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// No call yet: the options may still change.
    Fresh,
    Running,
    Finished,
    /// A call failed: the stream cannot be completed, and its state is gone.
    Failed,
}

/// An encoder: a coding's [`Encode`] and the bookkeeping around it.
#[derive(Debug)]
pub(crate) struct Driving<C> {
    core: C,
    options: EncodeOptions,
    stage: Stage,
    total_in: u64,
    total_out: u64,
}

impl<C: Encode> Driving<C> {
    pub(crate) fn with_core(core: C) -> Self {
        Driving {
            core,
            options: EncodeOptions::default(),
            stage: Stage::Fresh,
            total_in: 0,
            total_out: 0,
        }
    }

    /// The encoder with `options`, which take effect at its first call.
    pub(crate) fn with_options(mut self, options: EncodeOptions) -> Self {
        if let Some(mine) = self.options_mut() {
            *mine = options;
        }
        self
    }

    /// The options, while they may still change: before the first call.
    pub(crate) fn options_mut(&mut self) -> Option<&mut EncodeOptions> {
        (self.stage == Stage::Fresh).then_some(&mut self.options)
    }

    #[cfg(all(test, feature = "br"))]
    pub(crate) fn core_mut(&mut self) -> &mut C {
        &mut self.core
    }

    /// What a failed call leaves (for zstd's tests of the stream's end).
    #[cfg(all(test, feature = "zstd"))]
    pub(crate) fn fail(&mut self) {
        self.stage = Stage::Failed;
        self.core.fail();
    }

    /// Hands the options to the core before its first call.
    fn start(&mut self) {
        if self.stage == Stage::Fresh {
            self.stage = Stage::Running;
            self.core.start(&self.options);
        }
    }

    /// Runs `call` on the core unless the stream is over, counting `consumed` input bytes
    /// if it succeeds and its output either way; its error ends the stream.
    fn call(
        &mut self,
        consumed: usize,
        out: &mut BytesMut,
        call: impl FnOnce(&mut C, &mut BytesMut) -> Result<(), EncodeError>,
    ) -> Result<Progress, EncodeError> {
        self.start();
        match self.stage {
            Stage::Fresh | Stage::Running => {}
            Stage::Finished => return Err(EncodeError::new("the stream is already finished")),
            Stage::Failed => {
                return Err(EncodeError::new(
                    "an earlier call failed; the stream is unusable",
                ));
            }
        }
        let before = out.len();
        let result = call(&mut self.core, out);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += consumed as u64;
                Ok(Progress::since(consumed, before, out))
            }
            Err(e) => {
                self.stage = Stage::Failed;
                self.core.fail();
                Err(e)
            }
        }
    }

    /// Compresses all of `input`; the codec may hold output back until more input, a flush
    /// or the finish.
    pub(crate) fn encode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<Progress, EncodeError> {
        self.call(input.len(), out, |core, out| core.encode(input, out))
    }

    /// Makes everything encoded so far decodable from `out` (a sync flush).
    pub(crate) fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        self.call(0, out, C::flush)
    }

    /// Ends the stream. Calling it again does nothing.
    pub(crate) fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if self.stage == Stage::Finished {
            return Ok(Progress::default());
        }
        let total_in = self.total_in;
        let progress = self.call(0, out, |core, out| core.finish(out, total_in))?;
        self.stage = Stage::Finished;
        Ok(progress)
    }

    /// See [`Encode::idle`].
    pub(crate) fn idle(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        self.call(0, out, C::idle)
    }

    /// Whether a pooled codec state is checked out now.
    pub(crate) fn holds_state(&self) -> bool {
        self.core.holds_state()
    }

    /// See [`Encode::at_slice_end`].
    pub(crate) fn at_slice_end(&self) -> SliceEnd {
        self.core.at_slice_end()
    }

    /// Whether any compressed data (beyond a header) has been written.
    pub(crate) fn has_payload(&self) -> bool {
        self.core.has_payload(self.total_out)
    }

    /// Input bytes taken so far.
    #[cfg(test)]
    pub(crate) fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Output bytes written so far, framing included.
    #[cfg(test)]
    pub(crate) fn total_out(&self) -> u64 {
        self.total_out
    }

    /// Whether [`finish`](Driving::finish) has completed the stream.
    #[cfg(test)]
    pub(crate) fn is_finished(&self) -> bool {
        self.stage == Stage::Finished
    }

    /// Ready when the encoder may compress now (see `Encoder::poll_ready`).
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.start();
        self.core.poll_ready(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core that writes a byte per call, fails when told, and records what it was asked.
    #[derive(Debug, Default)]
    struct Probe {
        holds: bool,
        fail_next: bool,
        failed: bool,
        finished_with: Option<u64>,
    }

    impl Probe {
        fn step(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
            out.extend_from_slice(b"x");
            if std::mem::take(&mut self.fail_next) {
                return Err(EncodeError::new("probe"));
            }
            self.holds = true;
            Ok(())
        }
    }

    impl Encode for Probe {
        fn encode(&mut self, _input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
            self.step(out)
        }

        fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
            self.step(out)
        }

        fn finish(&mut self, out: &mut BytesMut, total_in: u64) -> Result<(), EncodeError> {
            self.step(out)?;
            self.finished_with = Some(total_in);
            self.holds = false;
            Ok(())
        }

        fn fail(&mut self) {
            self.failed = true;
            self.holds = false;
        }

        fn holds_state(&self) -> bool {
            self.holds
        }
    }

    #[test]
    fn counts_and_finishes_once() {
        let mut e = Driving::with_core(Probe::default());
        let mut out = BytesMut::new();
        let p = e.encode(b"abc", &mut out).unwrap();
        assert_eq!((p.consumed, p.produced), (3, 1));
        assert!(e.holds_state() && e.has_payload());
        e.finish(&mut out).unwrap();
        assert_eq!(e.core.finished_with, Some(3));
        assert!(e.is_finished() && !e.holds_state());
        // Again: nothing to do, and nothing written.
        assert_eq!(e.finish(&mut out).unwrap(), Progress::default());
        for result in [
            e.encode(b"d", &mut out),
            e.flush(&mut out),
            e.idle(&mut out),
        ] {
            let error = result.unwrap_err().to_string();
            assert!(error.contains("already finished"), "{error}");
        }
        assert_eq!((e.total_in(), e.total_out(), out.len()), (3, 2, 2));
    }

    #[test]
    fn an_error_ends_the_stream_and_lets_the_state_go() {
        let mut e = Driving::with_core(Probe::default());
        let mut out = BytesMut::new();
        e.encode(b"abc", &mut out).unwrap();
        e.core.fail_next = true;
        assert!(e.encode(b"de", &mut out).is_err());
        assert!(e.core.failed && !e.holds_state());
        // The failed call's output is counted, its input is not.
        assert_eq!((e.total_in(), e.total_out()), (3, 2));
        let calls = [
            e.encode(b"f", &mut out),
            e.flush(&mut out),
            e.idle(&mut out),
            e.finish(&mut out),
        ];
        for result in calls {
            let error = result.unwrap_err().to_string();
            assert!(error.contains("an earlier call failed"), "{error}");
        }
        assert!(!e.is_finished());
        assert_eq!(out.len(), 2, "nothing written after the error");
    }
}
