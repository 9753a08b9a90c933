//! The `dcb` decoder: the header's hash checked against the dictionary, then one brotli
//! stream decoded with the dictionary as its prefix, RFC 7932 windows only (16 MiB at most).

use brotli_decompressor::{
    Allocator, BrotliDecoderHasMoreOutput, BrotliDecoderIsFinished, BrotliDecoderParameter,
    BrotliDecoderTakeOutput, BrotliDecompressStream, BrotliResult, BrotliState, SliceWrapperMut,
    StandardAlloc as DecAlloc,
};
use bytes::BytesMut;

use super::Dictionary;
use super::error::DictDecodeError;
use super::frame::{DCB_MAGIC, HeaderReader};
use crate::codec::{Decode, DecodeError, DecodeErrorKind, Progress};

type DecoderCore = BrotliState<DecAlloc, DecAlloc, DecAlloc>;

/// A streaming `dcb` decoder: checks the header's hash, then decodes one brotli stream with
/// the dictionary as its prefix, refusing windows over 16 MiB (no large-window streams).
/// Output is bounded per call.
pub struct DcbDecoder {
    header: HeaderReader,
    /// `None` after the end of the stream or a failure.
    core: Option<Box<DecoderCore>>,
    done: bool,
    pending: bool,
    total_in: u64,
    total_out: u64,
    failed: Option<DictDecodeError>,
}

impl std::fmt::Debug for DcbDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DcbDecoder")
            .field("done", &self.done)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

fn corrupt() -> DictDecodeError {
    DictDecodeError::Codec(DecodeError::new(
        DecodeErrorKind::CorruptData,
        "invalid brotli data in a dcb body",
    ))
}

impl DcbDecoder {
    /// A decoder for bodies made with `dictionary` (it keeps its own copy of the bytes).
    pub fn new(dictionary: &Dictionary) -> DcbDecoder {
        let mut alloc = DecAlloc::default();
        let bytes = dictionary.bytes();
        let mut copy = <DecAlloc as Allocator<u8>>::alloc_cell(&mut alloc, bytes.len());
        copy.slice_mut().copy_from_slice(bytes);
        let mut core = Box::new(DecoderCore::new_with_custom_dictionary(
            alloc,
            DecAlloc::default(),
            DecAlloc::default(),
            copy,
        ));
        // RFC 7932 windows only (at most 16 MiB), not the large-window extension.
        core.set_parameter(BrotliDecoderParameter::BROTLI_DECODER_PARAM_LARGE_WINDOW, 0);
        DcbDecoder {
            header: HeaderReader::new(&DCB_MAGIC, dictionary.hash()),
            core: Some(core),
            done: false,
            pending: false,
            total_in: 0,
            total_out: 0,
            failed: None,
        }
    }

    /// Decodes from `input`, appending at most `max_out` bytes to `out`; returns the bytes
    /// consumed (all of `input` unless the budget ran out). After an error, every call
    /// returns it again.
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DictDecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let before = out.len();
        let result = self.decode_inner(input, out, max_out);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(consumed) => {
                self.total_in += consumed as u64;
                Ok(consumed)
            }
            Err(e) => {
                self.failed = Some(e.clone());
                self.pending = false;
                self.core = None;
                Err(e)
            }
        }
    }

    fn decode_inner(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DictDecodeError> {
        let mut pos = 0;
        if !self.header.is_done() {
            pos = self.header.feed(input)?;
            if !self.header.is_done() {
                return Ok(pos);
            }
        }
        self.pending = false;
        let Some(core) = self.core.as_mut() else {
            // The stream has ended: nothing may follow it.
            return if pos < input.len() {
                Err(trailing())
            } else {
                Ok(pos)
            };
        };
        let mut budget = max_out;
        let (consumed, step) = step(core, &input[pos..], out, &mut budget);
        pos += consumed;
        match step? {
            Step::End => {
                self.done = true;
                self.core = None;
                if pos < input.len() {
                    return Err(trailing());
                }
            }
            Step::Budget => self.pending = true,
            Step::Input => {}
        }
        Ok(pos)
    }

    /// The last `decode` stopped at its budget: more output may be ready without input.
    pub fn has_pending_output(&self) -> bool {
        self.pending
    }

    /// The end of the body: `Ok` if it was complete (or empty).
    pub fn finish(&self) -> Result<(), DictDecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.header.finish()?;
        if self.done || self.header.is_untouched() {
            Ok(())
        } else {
            Err(DictDecodeError::Codec(DecodeError::new(
                DecodeErrorKind::Truncated,
                "the body ended inside the brotli stream",
            )))
        }
    }

    /// Whether the brotli stream has ended.
    pub fn is_stream_end(&self) -> bool {
        self.done
    }

    /// Body bytes consumed so far, header included.
    pub fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Decoded bytes so far.
    pub fn total_out(&self) -> u64 {
        self.total_out
    }
}

fn trailing() -> DictDecodeError {
    DictDecodeError::Codec(DecodeError::new(
        DecodeErrorKind::TrailingData,
        "bytes after the end of the dcb stream",
    ))
}

/// Where one decode step stopped.
enum Step {
    /// All input consumed, the stream goes on.
    Input,
    /// The budget ran out with output (or input) left.
    Budget,
    /// The stream ended and all its output was written.
    End,
}

/// Decodes from `input` within `budget`, taking output from brotli's ring buffer. Returns
/// the bytes consumed.
fn step(
    core: &mut DecoderCore,
    input: &[u8],
    out: &mut BytesMut,
    budget: &mut usize,
) -> (usize, Result<Step, DictDecodeError>) {
    let mut available_in = input.len();
    let mut in_offset = 0;
    loop {
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
                    return (in_offset, Err(corrupt()));
                }
            }
            BrotliResult::ResultSuccess => {}
        }
    }
}

impl Decode for DcbDecoder {
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError> {
        let before = out.len();
        let consumed =
            DcbDecoder::decode(self, input, out, max_out).map_err(|e| e.to_decode_error())?;
        Ok(Progress::since(consumed, before, out))
    }

    fn has_pending_output(&self) -> bool {
        self.pending
    }

    fn finish(&self) -> Result<(), DecodeError> {
        DcbDecoder::finish(self).map_err(|e| e.to_decode_error())
    }

    fn is_stream_end(&self) -> bool {
        self.done
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn members(&self) -> u64 {
        u64::from(self.done)
    }
}

/// Decodes a whole `dcb` body made with `dictionary`, refusing output over `max_len` bytes.
pub fn decode_dcb(
    dictionary: &Dictionary,
    body: &[u8],
    max_len: usize,
) -> Result<BytesMut, DictDecodeError> {
    let mut decoder = DcbDecoder::new(dictionary);
    let out = super::decode_loop(body, max_len, |input, out, budget| {
        let consumed = decoder.decode(input, out, budget)?;
        Ok((consumed, decoder.has_pending_output()))
    })?;
    decoder.finish()?;
    Ok(out)
}
