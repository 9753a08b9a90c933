//! The br decoder over pooled decoder memory.

use brotli::BrotliResult;
use brotli_decompressor::{
    Allocator, BrotliDecoderHasMoreOutput, BrotliDecoderIsFinished, BrotliDecoderTakeOutput,
    BrotliDecompressStreamWithDictionary, BrotliState, HuffmanCode,
};
use bytes::BytesMut;

use super::alloc::DecAlloc;
use super::state::{DecompressorState, draw_decompressor};
use super::{BrState, BrStream};
use crate::decoding::Driven;
use crate::pool::{CodecPool, Pooled};
use crate::{DecodeError, DecodeErrorKind};

/// A streaming br decoder over pooled decoder memory: one stream (RFC 7932 has no framing
/// around it and nothing may follow its last meta-block), output bounded per call.
pub(crate) type BrDecoder = Driven<BrStream<Pooled<DecompressorState>>>;

impl BrDecoder {
    pub(crate) fn new(pool: &CodecPool) -> Self {
        Driven::with_core(BrStream::new(draw_decompressor(pool)))
    }
}

impl BrState for Pooled<DecompressorState> {
    type Alloc = DecAlloc;
    const TRAILING: &'static str = "bytes after the end of the br stream";
    const TRUNCATED: &'static str = "the body ended inside the br stream";

    fn core(&mut self) -> &mut BrotliState<DecAlloc, DecAlloc, DecAlloc> {
        &mut self.core
    }

    fn discard(self) {
        // Never shelved: the pool would hand out a state mid-stream.
        Pooled::discard(self);
    }
}

/// One decode call over any brotli decoder state (the pool's, or `dcb`'s with its
/// dictionary, lent as `dictionary`; empty for br): decodes from `input` within `budget`,
/// taking output from brotli's ring buffer. Returns the bytes consumed, and where it stopped
/// or the error.
pub(crate) fn step<A8, A32, AHC>(
    core: &mut BrotliState<A8, A32, AHC>,
    dictionary: &[u8],
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
    loop {
        // Output first: what the ring buffer holds goes out before more is decoded.
        take_output(core, out, budget);
        if let Some(stop) = stop_before_decoding(core, *budget, available_in) {
            return (in_offset, Ok(stop));
        }
        let more = decode_more(core, dictionary, input, &mut available_in, &mut in_offset);
        if let Some(stop) = more {
            return (in_offset, stop);
        }
    }
}

/// Moves what brotli's ring buffer holds into `out`, no more than `budget`.
fn take_output<A8, A32, AHC>(
    core: &mut BrotliState<A8, A32, AHC>,
    out: &mut BytesMut,
    budget: &mut usize,
) where
    A8: Allocator<u8>,
    A32: Allocator<u32>,
    AHC: Allocator<HuffmanCode>,
{
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
}

/// Where the call stops before decoding more: output the budget could not take, the end of
/// the stream, or no budget for the output more input would make.
fn stop_before_decoding<A8, A32, AHC>(
    core: &BrotliState<A8, A32, AHC>,
    budget: usize,
    available_in: usize,
) -> Option<Step>
where
    A8: Allocator<u8>,
    A32: Allocator<u32>,
    AHC: Allocator<HuffmanCode>,
{
    if BrotliDecoderHasMoreOutput(core) {
        return Some(Step::Budget);
    }
    if BrotliDecoderIsFinished(core) {
        return Some(Step::End);
    }
    if budget == 0 && available_in > 0 {
        return Some(Step::Budget);
    }
    None
}

/// Decodes from the input left into the ring buffer. Returns where the call stops, or
/// `None` to take the new output and go on.
fn decode_more<A8, A32, AHC>(
    core: &mut BrotliState<A8, A32, AHC>,
    dictionary: &[u8],
    input: &[u8],
    available_in: &mut usize,
    in_offset: &mut usize,
) -> Option<Result<Step, DecodeError>>
where
    A8: Allocator<u8>,
    A32: Allocator<u32>,
    AHC: Allocator<HuffmanCode>,
{
    let corrupt = || DecodeError::new(DecodeErrorKind::CorruptData, "invalid brotli data");
    let (mut available_out, mut out_offset, mut total_out) = (0, 0, 0);
    let before_in = *available_in;
    let result = BrotliDecompressStreamWithDictionary(
        available_in,
        in_offset,
        input,
        &mut available_out,
        &mut out_offset,
        &mut [],
        &mut total_out,
        dictionary,
        core,
    );
    match result {
        BrotliResult::ResultFailure => Some(Err(corrupt())),
        BrotliResult::NeedsMoreInput => {
            if *available_in != 0 {
                return Some(Err(corrupt()));
            }
            (!BrotliDecoderHasMoreOutput(core)).then_some(Ok(Step::Input))
        }
        BrotliResult::NeedsMoreOutput => {
            // Neither input taken nor output ready: cannot go on.
            let stuck = *available_in == before_in && !BrotliDecoderHasMoreOutput(core);
            stuck.then(|| Err(corrupt()))
        }
        BrotliResult::ResultSuccess => None,
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
        self.core().holds_state()
    }
}
