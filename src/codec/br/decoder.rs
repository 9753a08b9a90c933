//! The br decoder over pooled decoder memory.

use brotli::{BrotliDecompressStream, BrotliResult};
use brotli_decompressor::{
    Allocator, BrotliDecoderHasMoreOutput, BrotliDecoderIsFinished, BrotliDecoderTakeOutput,
    BrotliState, HuffmanCode,
};
use bytes::BytesMut;

use super::state::{DecompressorState, draw_decompressor};
use crate::codec::{Decode, DecodeError, DecodeErrorKind, Progress, Tally};
use crate::pool::{CodecPool, Pooled};

/// A streaming br decoder over pooled decoder memory: one stream (RFC 7932 has no framing
/// around it and nothing may follow its last meta-block), output bounded per call.
pub(crate) struct BrDecoder {
    /// `None` after a failure (the state is discarded, never reused).
    state: Option<Pooled<DecompressorState>>,
    done: bool,
    pending: bool,
    tally: Tally,
}

impl std::fmt::Debug for BrDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrDecoder")
            .field("done", &self.done)
            .field("tally", &self.tally)
            .finish_non_exhaustive()
    }
}

impl BrDecoder {
    pub(crate) fn new(pool: &CodecPool) -> Self {
        BrDecoder {
            state: Some(draw_decompressor(pool)),
            done: false,
            pending: false,
            tally: Tally::default(),
        }
    }
}

/// One decode call over any brotli decoder state (the pool's, or `dcb`'s with its
/// dictionary): decodes from `input` within `budget`, taking output from brotli's ring
/// buffer. Returns the bytes consumed, and where it stopped or the error.
pub(crate) fn step<A8, A32, AHC>(
    core: &mut BrotliState<A8, A32, AHC>,
    input: &[u8],
    out: &mut BytesMut,
    budget: &mut usize,
) -> (usize, Result<Step, DecodeError>)
where
    A8: Allocator<u8>,
    A32: Allocator<u32>,
    AHC: Allocator<HuffmanCode>,
{
    let mut available_in = input.len();
    let mut in_offset = 0;
    let corrupt = || DecodeError::new(DecodeErrorKind::CorruptData, "invalid brotli data");
    loop {
        // Output first: what the ring buffer holds goes out before more is decoded.
        while *budget > 0 && BrotliDecoderHasMoreOutput(core) {
            let mut size = *budget;
            let chunk = BrotliDecoderTakeOutput(core, &mut size);
            let chunk = &chunk[..size.min(chunk.len())];
            if chunk.is_empty() {
                break;
            }
            out.extend_from_slice(chunk);
            *budget -= chunk.len();
        }
        if BrotliDecoderHasMoreOutput(core) {
            return (in_offset, Ok(Step::Budget));
        }
        if BrotliDecoderIsFinished(core) {
            return (in_offset, Ok(Step::End));
        }
        if *budget == 0 && available_in > 0 {
            return (in_offset, Ok(Step::Budget));
        }
        let (mut available_out, mut out_offset, mut total_out) = (0, 0, 0);
        let before_in = available_in;
        let result = BrotliDecompressStream(
            &mut available_in,
            &mut in_offset,
            input,
            &mut available_out,
            &mut out_offset,
            &mut [],
            &mut total_out,
            core,
        );
        match result {
            BrotliResult::ResultFailure => return (in_offset, Err(corrupt())),
            BrotliResult::NeedsMoreInput => {
                if available_in != 0 {
                    return (in_offset, Err(corrupt()));
                }
                if !BrotliDecoderHasMoreOutput(core) {
                    return (in_offset, Ok(Step::Input));
                }
            }
            BrotliResult::NeedsMoreOutput => {
                if available_in == before_in && !BrotliDecoderHasMoreOutput(core) {
                    // Neither input taken nor output ready: cannot go on.
                    return (in_offset, Err(corrupt()));
                }
            }
            BrotliResult::ResultSuccess => {}
        }
    }
}

/// Where one decode call stopped.
pub(crate) enum Step {
    /// All input consumed, the stream goes on.
    Input,
    /// The budget ran out with output (or input) left.
    Budget,
    /// The stream ended and all its output was written.
    End,
}

#[cfg(test)]
impl BrDecoder {
    pub(super) fn holds_state(&self) -> bool {
        self.state.is_some()
    }
}

impl Decode for BrDecoder {
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError> {
        self.tally.replay()?;
        let before = out.len();
        self.pending = false;
        let mut budget = max_out;
        let (consumed, result) = match self.state.as_mut() {
            Some(state) => step(&mut state.core, input, out, &mut budget),
            None => (0, Ok(Step::End)),
        };
        let result = match result {
            Ok(Step::End) => {
                self.done = true;
                if consumed < input.len() {
                    Err(DecodeError::new(
                        DecodeErrorKind::TrailingData,
                        "bytes after the end of the br stream",
                    ))
                } else {
                    // Back to the pool now, not when the decoder is dropped.
                    self.state = None;
                    Ok(())
                }
            }
            Ok(Step::Budget) => {
                self.pending = true;
                Ok(())
            }
            Ok(Step::Input) => Ok(()),
            Err(e) => Err(e),
        };
        let progress = self.tally.count(consumed, before, out, result);
        // A state that saw an error is never shelved.
        if let Some(state) = self.state.take_if(|_| progress.is_err()) {
            state.discard();
        }
        progress
    }

    fn has_pending_output(&self) -> bool {
        self.pending
    }

    fn finish(&self) -> Result<(), DecodeError> {
        self.tally.replay()?;
        if self.done || self.tally.total_in() == 0 {
            Ok(())
        } else {
            Err(DecodeError::new(
                DecodeErrorKind::Truncated,
                "the body ended inside the br stream",
            ))
        }
    }

    fn is_stream_end(&self) -> bool {
        self.done
    }

    fn total_in(&self) -> u64 {
        self.tally.total_in()
    }

    fn total_out(&self) -> u64 {
        self.tally.total_out()
    }

    fn members(&self) -> u64 {
        u64::from(self.done)
    }
}
