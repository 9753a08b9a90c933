//! The `dcb` decoder: the header's hash checked against the dictionary, then one brotli
//! stream decoded with the dictionary as its prefix, RFC 7932 windows only (16 MiB at most).

use brotli_decompressor::{
    Allocator, BrotliDecoderParameter, BrotliState, SliceWrapperMut, StandardAlloc as DecAlloc,
};
use bytes::BytesMut;

use super::Dictionary;
use super::error::DictDecodeError;
use super::frame::{DCB_MAGIC, HeaderReader};
use crate::codec::br::{DecodeStep, decode_step};
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
        // The br decoder's own loop, over this decoder's dictionary-primed state.
        let (consumed, step) = decode_step(core, &input[pos..], out, &mut budget);
        pos += consumed;
        match step.map_err(DictDecodeError::Codec)? {
            DecodeStep::End => {
                self.done = true;
                self.core = None;
                if pos < input.len() {
                    return Err(trailing());
                }
            }
            DecodeStep::Budget => self.pending = true,
            DecodeStep::Input => {}
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
