//! A C brotli decoder over a [`Blocks`] arena, its output taken from brotli's ring buffer
//! within a budget per call.

use std::ptr::NonNull;

use brotlic_sys::{
    BROTLI_FALSE, BROTLI_TRUE, BrotliDecoderAttachDictionary, BrotliDecoderCreateInstance,
    BrotliDecoderDecompressStream, BrotliDecoderDestroyInstance, BrotliDecoderGetErrorCode,
    BrotliDecoderHasMoreOutput, BrotliDecoderIsFinished,
    BrotliDecoderParameter_BROTLI_DECODER_PARAM_LARGE_WINDOW as LARGE_WINDOW,
    BrotliDecoderResult_BROTLI_DECODER_RESULT_ERROR as ERROR,
    BrotliDecoderResult_BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT as NEEDS_MORE_INPUT,
    BrotliDecoderResult_BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT as NEEDS_MORE_OUTPUT,
    BrotliDecoderSetParameter, BrotliDecoderState, BrotliDecoderTakeOutput,
    BrotliSharedDictionaryType_BROTLI_SHARED_DICTIONARY_RAW as RAW,
};
use bytes::{Bytes, BytesMut};

use super::Failure;
use super::blocks::{Arena, Blocks, alloc_block, free_block_callback};

/// Where one [`Decoder::decode`] call stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// All input taken; the stream goes on.
    Input,
    /// The budget ran out with output (or input) left.
    Budget,
    /// The stream ended and all its output was taken.
    End,
}

/// One brotli stream's C decoder: RFC 7932 windows only (at most 16 MiB; large-window
/// streams are refused), with an optional raw dictionary, on its own arena.
pub struct Decoder {
    state: NonNull<BrotliDecoderState>,
    /// The dictionary's bytes: the instance points into them.
    dictionary: Option<Bytes>,
    arena: Arena,
}

// SAFETY: the instance and its arena have no thread affinity and are used only through
// `&mut self`; the dictionary is an immutable `Bytes`.
unsafe impl Send for Decoder {}

impl Decoder {
    /// A decoder with `dictionary` as its raw prefix (if given), keeping at most `keep`
    /// bytes of freed blocks while it runs.
    pub fn new(dictionary: Option<&Bytes>, keep: usize) -> Result<Decoder, Failure> {
        let arena = Arena::new(keep);
        // SAFETY: both callbacks over the arena's `Blocks`, which outlives the instance
        // (destroyed first in `Drop`).
        let state = unsafe {
            BrotliDecoderCreateInstance(
                Some(alloc_block),
                Some(free_block_callback),
                arena.opaque(),
            )
        };
        let decoder = Decoder {
            state: NonNull::new(state).ok_or(Failure::OutOfMemory)?,
            dictionary: dictionary.cloned(),
            arena,
        };
        let state = decoder.state.as_ptr();
        // SAFETY: a live instance, not started: setting a parameter only writes into it.
        let mut ok = unsafe { BrotliDecoderSetParameter(state, LARGE_WINDOW, BROTLI_FALSE as u32) }
            == BROTLI_TRUE;
        if let (true, Some(bytes)) = (ok, &decoder.dictionary) {
            // SAFETY: a live instance, not started; brotli keeps the address of the bytes,
            // which `decoder.dictionary` keeps alive and unchanged for the instance's life.
            ok = unsafe { BrotliDecoderAttachDictionary(state, RAW, bytes.len(), bytes.as_ptr()) }
                == BROTLI_TRUE;
        }
        // Dropping the decoder destroys the instance.
        if ok {
            Ok(decoder)
        } else {
            Err(Failure::Refused)
        }
    }

    /// Decodes from `input`, appending to `out` at most `budget` bytes (taken from it).
    /// Returns the bytes consumed, and where it stopped or the error. After an error the
    /// decoder is not to be used again (brotli repeats the error).
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        budget: &mut usize,
    ) -> (usize, Result<Stop, Failure>) {
        let state = self.state.as_ptr();
        let mut rest = input;
        loop {
            let consumed = input.len() - rest.len();
            // Output first: what the ring buffer holds goes out before more is decoded.
            take_output(state, out, budget);
            // SAFETY: a live instance; these only read it.
            let (more, finished) = unsafe {
                (
                    BrotliDecoderHasMoreOutput(state) == BROTLI_TRUE,
                    BrotliDecoderIsFinished(state) == BROTLI_TRUE,
                )
            };
            if more || (*budget == 0 && !rest.is_empty()) {
                return (consumed, Ok(Stop::Budget));
            }
            if finished {
                return (consumed, Ok(Stop::End));
            }
            if let Some(stop) = decode_more(state, &mut rest) {
                return (input.len() - rest.len(), stop);
            }
        }
    }

    /// The arena (what it keeps, what is live).
    pub(crate) fn blocks(&self) -> &Blocks {
        self.arena.get()
    }
}

/// Decodes from `rest` (advancing it) into brotli's ring buffer. Returns where the call
/// stops, or `None` to take the new output and go on.
fn decode_more(state: *mut BrotliDecoderState, rest: &mut &[u8]) -> Option<Result<Stop, Failure>> {
    let (mut next_in, mut available_in) = (rest.as_ptr(), rest.len());
    let (mut available_out, mut next_out) = (0usize, std::ptr::null_mut::<u8>());
    // SAFETY: `state` is live (the caller's); `next_in` points at the `available_in` bytes of
    // `rest`, readable for the call; with no output space brotli writes through no output
    // pointer (it keeps the output in its ring buffer).
    let result = unsafe {
        BrotliDecoderDecompressStream(
            state,
            &mut available_in,
            &mut next_in,
            &mut available_out,
            &mut next_out,
            std::ptr::null_mut(),
        )
    };
    let taken = rest.len() - available_in;
    *rest = &rest[taken..];
    // SAFETY: a live instance; these only read it.
    let (code, more) = unsafe {
        (
            BrotliDecoderGetErrorCode(state),
            BrotliDecoderHasMoreOutput(state) == BROTLI_TRUE,
        )
    };
    match result {
        ERROR => Some(Err(Failure::Corrupt(code))),
        NEEDS_MORE_INPUT if !more => Some(Ok(Stop::Input)),
        // Neither input taken nor output ready: it cannot go on.
        NEEDS_MORE_OUTPUT if taken == 0 && !more => Some(Err(Failure::Corrupt(code))),
        _ => None,
    }
}

/// Moves what brotli's ring buffer holds into `out`, no more than `budget`.
fn take_output(state: *mut BrotliDecoderState, out: &mut BytesMut, budget: &mut usize) {
    while *budget > 0 {
        let mut size = *budget;
        // SAFETY: `state` is live (the caller's); brotli returns a pointer to `size` bytes
        // (at most the `size` asked) of its ring buffer, valid until its next call on `state`, and
        // they are copied out before that.
        let chunk = unsafe {
            let ptr = BrotliDecoderTakeOutput(state, &mut size);
            if ptr.is_null() || size == 0 {
                return;
            }
            std::slice::from_raw_parts(ptr, size)
        };
        debug_assert!(size <= *budget, "brotli gave more than asked");
        out.extend_from_slice(chunk);
        *budget -= chunk.len();
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: created by BrotliDecoderCreateInstance and destroyed once, here, before
        // the fields drop: the arena it frees into and the bytes it points into.
        unsafe { BrotliDecoderDestroyInstance(self.state.as_ptr()) };
    }
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("dictionary", &self.dictionary.as_ref().map(Bytes::len))
            .field("live", &self.blocks().live())
            .finish_non_exhaustive()
    }
}
