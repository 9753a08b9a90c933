//! The br encoder: streaming over a pooled state, and in one call for a body known in full.

use brotli::enc::encode::{BrotliEncoderOperation, BrotliEncoderParameter};
use bytes::BytesMut;

use super::state::{CompressorState, draw_compressor};
use crate::codec::{Encode, EncodeError, Level, Progress};
use crate::pool::{CodecPool, Pooled};

/// Runs `op` over all of `input`, appending the output to `out`, until brotli has taken all
/// input and (for a flush or finish) written everything it owes.
///
/// brotli is called with no output space and its output taken from its own buffer
/// (`take_output`, the C API's `BrotliEncoderTakeOutput`), so `out` is never zero-filled in
/// advance.
pub(super) fn compress(
    state: &mut CompressorState,
    op: BrotliEncoderOperation,
    input: &[u8],
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut available_in = input.len();
    let mut in_offset = 0;
    let mut stalled = 0;
    loop {
        state.adopt_spare(available_in);
        let core = &mut *state.core;
        let (mut available_out, mut out_offset, mut total_out) = (0, 0, None);
        let before_in = available_in;
        let ok = core.compress_stream(
            op,
            &mut available_in,
            input,
            &mut in_offset,
            &mut available_out,
            &mut [],
            &mut out_offset,
            &mut total_out,
            &mut |_, _, _, _| (),
        );
        if !ok {
            return Err(EncodeError::new("brotli: the encoder refused the call"));
        }
        // As the C API documents: call again while input is left or output was owed after
        // the call.
        let more = available_in != 0 || core.has_more_output();
        let mut produced = 0;
        loop {
            // `size` 0 asks for everything; the slice returned may run past what was
            // taken, `size` tells how much was.
            let mut size = 0;
            let chunk = core.take_output(&mut size);
            let chunk = &chunk[..size.min(chunk.len())];
            if chunk.is_empty() {
                break;
            }
            produced += chunk.len();
            out.extend_from_slice(chunk);
        }
        let done = match op {
            BrotliEncoderOperation::BROTLI_OPERATION_FINISH => core.is_finished(),
            _ => !more,
        };
        if done {
            return Ok(());
        }
        if produced == 0 && available_in == before_in {
            stalled += 1;
            if stalled > 2 {
                return Err(EncodeError::new("brotli: the encoder made no progress"));
            }
        } else {
            stalled = 0;
        }
    }
}

/// A streaming br encoder over a pooled brotli encoder.
///
/// [`idle`](Encode::idle) keeps the state (a flush): a brotli stream cannot be restarted
/// midway, unlike a zstd stream of frames.
pub(crate) struct BrEncoder {
    /// `None` after the finish or a failure.
    state: Option<Pooled<CompressorState>>,
    level: Level,
    finished: bool,
    failed: bool,
    total_in: u64,
    total_out: u64,
}

impl std::fmt::Debug for BrEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrEncoder")
            .field("level", &self.level)
            .field("holds_state", &self.state.is_some())
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl BrEncoder {
    pub(crate) fn new(level: Level, pool: &CodecPool) -> Self {
        BrEncoder {
            state: Some(draw_compressor(pool, level)),
            level,
            finished: false,
            failed: false,
            total_in: 0,
            total_out: 0,
        }
    }

    /// The stream's total input size, when known before it starts: brotli picks its match
    /// finder from it (at quality 4, a 1 MiB body gets the larger H54 hasher), as it does
    /// when a whole body arrives in one call.
    pub(crate) fn set_size_hint(&mut self, len: u64) {
        if self.total_in > 0 {
            return;
        }
        if let Some(state) = self.state.as_mut() {
            let hint = u32::try_from(len).unwrap_or(u32::MAX);
            state
                .core
                .set_parameter(BrotliEncoderParameter::BROTLI_PARAM_SIZE_HINT, hint);
        }
    }

    fn run(
        &mut self,
        op: BrotliEncoderOperation,
        input: &[u8],
        out: &mut BytesMut,
    ) -> Result<Progress, EncodeError> {
        if self.failed {
            return Err(EncodeError::new(
                "an earlier call failed; the stream is unusable",
            ));
        }
        if self.finished {
            return Err(EncodeError::new("the stream is already finished"));
        }
        let before = out.len();
        let state = self
            .state
            .as_mut()
            .expect("present until the finish or a failure");
        let result = compress(state, op, input, out);
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                Ok(Progress::since(input.len(), before, out))
            }
            Err(e) => {
                self.failed = true;
                if let Some(state) = self.state.take() {
                    state.discard();
                }
                Err(e)
            }
        }
    }
}

impl Encode for BrEncoder {
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if input.is_empty() && !self.failed && !self.finished {
            return Ok(Progress::default());
        }
        self.run(BrotliEncoderOperation::BROTLI_OPERATION_PROCESS, input, out)
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        self.run(BrotliEncoderOperation::BROTLI_OPERATION_FLUSH, &[], out)
    }

    fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        if self.finished {
            return Ok(Progress::default());
        }
        let progress = self.run(BrotliEncoderOperation::BROTLI_OPERATION_FINISH, &[], out)?;
        self.finished = true;
        // Back to the pool now, not when the encoder is dropped.
        self.state = None;
        Ok(progress)
    }

    fn holds_state(&self) -> bool {
        self.state.is_some()
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

/// Compresses all of `input` as one br stream, with its size as brotli's size hint (which
/// picks the hasher and block sizes for the body rather than for a stream of unknown size).
pub(crate) fn encode_all(
    level: Level,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    let mut state = draw_compressor(pool, level);
    let hint = u32::try_from(input.len()).unwrap_or(u32::MAX);
    state
        .core
        .set_parameter(BrotliEncoderParameter::BROTLI_PARAM_SIZE_HINT, hint);
    out.reserve(input.len() / 4 + 64);
    let result = compress(
        &mut state,
        BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
        input,
        out,
    );
    if result.is_err() {
        state.discard();
    }
    result
}
