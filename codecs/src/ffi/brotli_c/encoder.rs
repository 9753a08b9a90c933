//! A C brotli encoder over a [`Blocks`] arena: one stream per C instance (brotli cannot
//! reset one), the arena kept from stream to stream.

use std::ptr::NonNull;
use std::sync::Arc;

use brotlic_sys::{
    BROTLI_TRUE, BrotliEncoderAttachPreparedDictionary, BrotliEncoderCompressStream,
    BrotliEncoderCreateInstance, BrotliEncoderDestroyInstance, BrotliEncoderHasMoreOutput,
    BrotliEncoderIsFinished, BrotliEncoderOperation,
    BrotliEncoderOperation_BROTLI_OPERATION_FINISH as FINISH,
    BrotliEncoderOperation_BROTLI_OPERATION_FLUSH as FLUSH,
    BrotliEncoderOperation_BROTLI_OPERATION_PROCESS as PROCESS, BrotliEncoderParameter,
    BrotliEncoderParameter_BROTLI_PARAM_LGWIN as LGWIN,
    BrotliEncoderParameter_BROTLI_PARAM_QUALITY as QUALITY,
    BrotliEncoderParameter_BROTLI_PARAM_SIZE_HINT as SIZE_HINT, BrotliEncoderSetParameter,
    BrotliEncoderState, BrotliEncoderTakeOutput,
};
use bytes::BytesMut;

use super::blocks::{Arena, Blocks, alloc_block, free_block_callback};
use super::{Failure, PreparedDictionary};

/// What one [`Encoder::compress`] call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Compress; brotli may hold output back.
    Process,
    /// Make everything so far decodable (`BROTLI_OPERATION_FLUSH`).
    Flush,
    /// End the stream.
    Finish,
}

impl Operation {
    fn raw(self) -> BrotliEncoderOperation {
        match self {
            Operation::Process => PROCESS,
            Operation::Flush => FLUSH,
            Operation::Finish => FINISH,
        }
    }
}

/// A stream's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// 0 to 11.
    pub quality: u32,
    /// The window log, 10 to 24 (RFC 7932; no large windows).
    pub lgwin: u32,
    /// The input's total size, when known.
    pub size_hint: Option<usize>,
}

/// A C brotli encoder's arena, and the stream open on it, if any.
///
/// Between [`start`](Encoder::start) and [`end`](Encoder::end) a C instance lives on the
/// arena, holding the prepared dictionary it was given (an `Arc`, so the dictionary outlives
/// it whatever else drops). `end` destroys it: its blocks go back to the arena for the next
/// stream. An encoder whose call failed should be dropped, not reused.
pub struct Encoder {
    state: Option<NonNull<BrotliEncoderState>>,
    dictionary: Option<Arc<PreparedDictionary>>,
    arena: Arena,
}

// SAFETY: the C instance and its arena have no thread affinity and are used only through
// `&mut self`; the dictionary is `Send + Sync`.
unsafe impl Send for Encoder {}

impl Encoder {
    /// An encoder with no stream, keeping at most `keep` bytes of blocks between streams.
    pub fn new(keep: usize) -> Self {
        Encoder {
            state: None,
            dictionary: None,
            arena: Arena::new(keep),
        }
    }

    /// Opens a stream with `params` and, if given, `dictionary` as its raw prefix (ending
    /// the current stream first).
    pub fn start(
        &mut self,
        params: Params,
        dictionary: Option<Arc<PreparedDictionary>>,
    ) -> Result<(), Failure> {
        self.end();
        // SAFETY: both callbacks are given, over the arena's `Blocks`, which lives at a fixed
        // address until the arena drops, after the instance (see `Drop`).
        let state = unsafe {
            BrotliEncoderCreateInstance(
                Some(alloc_block),
                Some(free_block_callback),
                self.arena.opaque(),
            )
        };
        self.state = Some(NonNull::new(state).ok_or(Failure::OutOfMemory)?);
        let set = |param: BrotliEncoderParameter, value: u32, state| {
            // SAFETY: `state` is the live instance just created; setting a parameter
            // before the first compress call only writes into it.
            unsafe { BrotliEncoderSetParameter(state, param, value) == BROTLI_TRUE }
        };
        let hint = params
            .size_hint
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        let mut ok = set(QUALITY, params.quality, state) && set(LGWIN, params.lgwin, state);
        ok = ok && hint.is_none_or(|hint| set(SIZE_HINT, hint, state));
        if let (true, Some(dictionary)) = (ok, &dictionary) {
            // SAFETY: `state` is live and not started; the prepared dictionary stays alive
            // while the instance holds its address: `self.dictionary` keeps its Arc until
            // `end` has destroyed the instance.
            ok = unsafe { BrotliEncoderAttachPreparedDictionary(state, dictionary.as_ptr()) }
                == BROTLI_TRUE;
        }
        self.dictionary = dictionary;
        if !ok {
            self.end();
            return Err(Failure::Refused);
        }
        Ok(())
    }

    /// Runs `op` over all of `input`, appending what brotli writes to `out`, until it has
    /// taken all input and (for a flush or finish) written everything it owes.
    pub fn compress(
        &mut self,
        op: Operation,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<(), Failure> {
        let state = self.state.ok_or(Failure::NoStream)?.as_ptr();
        let mut next_in = input.as_ptr();
        let mut available_in = input.len();
        let mut stalled = 0;
        loop {
            let before = available_in;
            let (mut available_out, mut next_out) = (0usize, std::ptr::null_mut::<u8>());
            // SAFETY: `state` is live (owned by `self`, borrowed mutably); `next_in` points at
            // the `available_in` bytes of `input` not yet taken, readable for the call; no
            // output space is given (brotli keeps its output for `take_output`), so nothing
            // is written through `next_out`; the total is not asked for.
            let ok = unsafe {
                BrotliEncoderCompressStream(
                    state,
                    op.raw(),
                    &mut available_in,
                    &mut next_in,
                    &mut available_out,
                    &mut next_out,
                    std::ptr::null_mut(),
                )
            };
            if ok != BROTLI_TRUE {
                return Err(Failure::Refused);
            }
            let produced = take_output(state, out);
            // SAFETY: `state` is live; both calls only read it.
            let done = unsafe {
                match op {
                    Operation::Finish => BrotliEncoderIsFinished(state) == BROTLI_TRUE,
                    _ => available_in == 0 && BrotliEncoderHasMoreOutput(state) != BROTLI_TRUE,
                }
            };
            if done {
                return Ok(());
            }
            stalled = if produced == 0 && available_in == before {
                stalled + 1
            } else {
                0
            };
            if stalled > 2 {
                return Err(Failure::Stalled);
            }
        }
    }

    /// Whether the stream has been finished and all its output taken.
    #[cfg(test)]
    pub(crate) fn is_finished(&self) -> bool {
        // SAFETY: a live instance; the call only reads it.
        self.state
            .is_some_and(|state| unsafe { BrotliEncoderIsFinished(state.as_ptr()) } == BROTLI_TRUE)
    }

    /// Ends the stream: the C instance is destroyed, its blocks kept by the arena, and the
    /// dictionary let go.
    pub fn end(&mut self) {
        if let Some(state) = self.state.take() {
            // SAFETY: created by BrotliEncoderCreateInstance and destroyed once (taken out of
            // `self.state`). It frees its blocks through the arena's callbacks, which is live.
            unsafe { BrotliEncoderDestroyInstance(state.as_ptr()) };
        }
        // Only now: the instance that referenced the dictionary is gone.
        self.dictionary = None;
    }

    /// Whether a stream is open.
    pub(crate) fn is_open(&self) -> bool {
        self.state.is_some()
    }

    /// The arena (what it keeps, what is live).
    pub(crate) fn blocks(&self) -> &Blocks {
        self.arena.get()
    }

    /// Frees kept blocks over `keep` bytes.
    pub(crate) fn trim(&mut self, keep: usize) {
        self.arena.get_mut().trim(keep);
    }
}

/// Moves all of the output brotli holds into `out`. Returns how many bytes.
fn take_output(state: *mut BrotliEncoderState, out: &mut BytesMut) -> usize {
    let mut produced = 0;
    loop {
        // 0 asks for all of it.
        let mut size = 0usize;
        // SAFETY: `state` is live (the caller's); brotli returns a pointer to `size` bytes of
        // its own output buffer, valid until its next call on `state`, and they are copied
        // out before that.
        let chunk = unsafe {
            let ptr = BrotliEncoderTakeOutput(state, &mut size);
            if ptr.is_null() || size == 0 {
                return produced;
            }
            std::slice::from_raw_parts(ptr, size)
        };
        out.extend_from_slice(chunk);
        produced += size;
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        // The instance first: it frees into the arena, dropped after this with the fields.
        self.end();
    }
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("open", &self.is_open())
            .field("kept", &self.blocks().kept())
            .field("live", &self.blocks().live())
            .finish_non_exhaustive()
    }
}
