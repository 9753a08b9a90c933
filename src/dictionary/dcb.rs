//! `dcb` (RFC 9842 section 4): the 36-byte header, then a brotli stream (RFC 7932) with the
//! dictionary as a prefix ("custom dictionary"), window at most 16 MiB.
//!
//! The pure-Rust `brotli` crate's `set_custom_dictionary` is what Chromium was shown to
//! decode (`../shared/research/dictionary-transport.md`). Quality is at least 5: below,
//! brotli gives a dictionary little or no use.

use brotli::enc::encode::BrotliEncoderOperation as Op;
use bytes::BytesMut;

use super::Dictionary;
use super::frame::{DCB_MAGIC, write_header};
use crate::codec::br::{CompressorState, compress, draw_compressor};
use crate::codec::{CompressionLevel, Encode, EncodeError, Format, Level, Progress};
use crate::pool::{CodecPool, Pooled};

/// The largest window log a `dcb` stream may use: 24, brotli's 16 MiB (RFC 7932 without the
/// large-window extension), as RFC 9842 caps it.
pub const DCB_MAX_WINDOW_LOG: u32 = 24;

/// The lowest quality used: brotli makes (almost) no use of a dictionary below 5.
const MIN_QUALITY: u32 = 5;

/// The brotli quality for `level`: `Default` and `Fastest` are 5, `Best` 11, `Precise(n)`
/// is clamped to 5..=11; as the pool's level tag.
fn quality(level: CompressionLevel) -> Level {
    let q = match level {
        CompressionLevel::Default => MIN_QUALITY,
        level => u32::from(level.resolve(Format::Br).get()).max(MIN_QUALITY),
    };
    CompressionLevel::Precise(q as i32).resolve(Format::Br)
}

/// The window log: the smallest from 18 (256 KiB) that holds the dictionary and `body`
/// bytes after it (brotli keeps at most a window minus 16 bytes), up to 24 (16 MiB). The
/// encoder's ring buffer is twice the window and, once glibc serves it from its heap, is
/// cleared whole at the stream's second write (the body after the dictionary): with the
/// default 4 MiB window that was ~1 ms per 1 KiB response.
fn lgwin(dictionary_len: usize, body: usize) -> u32 {
    let span = dictionary_len.saturating_add(body);
    (18..DCB_MAX_WINDOW_LOG)
        .find(|&log| span <= (1usize << log) - 16)
        .unwrap_or(DCB_MAX_WINDOW_LOG)
}

/// The body size assumed for a stream of unknown size: 1 MiB beyond the dictionary.
const UNKNOWN_BODY: usize = 1 << 20;

/// A pooled brotli encoder (the br shelf's, at the dcb quality) with the dictionary loaded
/// as its prefix. The pooled state spares the fresh encoder's zero-filled tables; the
/// dictionary itself is hashed in per response (the `brotli` crate has no shared prepared
/// dictionary).
fn new_state(
    dictionary: &Dictionary,
    level: CompressionLevel,
    pool: &CodecPool,
    size_hint: Option<usize>,
) -> Pooled<CompressorState> {
    let mut state = draw_compressor(pool, quality(level));
    if let Some(len) = size_hint {
        state.hint(len as u64);
    }
    let body = size_hint.unwrap_or(UNKNOWN_BODY);
    state.set_dictionary(lgwin(dictionary.len(), body), dictionary.bytes());
    state
}

/// A streaming `dcb` encoder. Output is appended to the caller's buffer; the header goes
/// out with the first call that writes.
///
/// Its brotli encoder comes from the pool's br shelf, and hashes the dictionary in at the
/// start of each stream (the `brotli` crate has no shared prepared dictionary).
pub struct DcbEncoder {
    state: State,
    hash: [u8; 32],
    total_in: u64,
    total_out: u64,
}

/// Where an encoder is in its stream; the phases that compress hold the brotli encoder.
enum State {
    /// Nothing written yet: the header is still owed.
    Start(Pooled<CompressorState>),
    /// The header is out; the brotli stream is open.
    Stream(Pooled<CompressorState>),
    /// The stream is complete.
    Finished,
    /// A call failed; the encoder was dropped.
    Failed,
}

impl std::fmt::Debug for DcbEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Start(_) => "start",
            State::Stream(_) => "stream",
            State::Finished => "finished",
            State::Failed => "failed",
        };
        f.debug_struct("DcbEncoder")
            .field("state", &state)
            .field("total_in", &self.total_in)
            .field("total_out", &self.total_out)
            .finish_non_exhaustive()
    }
}

impl DcbEncoder {
    /// An encoder at `level` (see the module notes: quality 5 by default, never below), its
    /// brotli state from `pool`.
    pub fn new(dictionary: &Dictionary, level: CompressionLevel, pool: &CodecPool) -> DcbEncoder {
        Self::start(dictionary, level, pool, None)
    }

    fn start(
        dictionary: &Dictionary,
        level: CompressionLevel,
        pool: &CodecPool,
        size_hint: Option<usize>,
    ) -> Self {
        DcbEncoder {
            state: State::Start(new_state(dictionary, level, pool, size_hint)),
            hash: dictionary.hash(),
            total_in: 0,
            total_out: 0,
        }
    }

    /// Compresses `input`; brotli may hold output back until more input, a flush or the
    /// finish.
    pub fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(Op::BROTLI_OPERATION_PROCESS, input, out)
    }

    /// Makes everything encoded so far decodable from `out`.
    pub fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        self.run(Op::BROTLI_OPERATION_FLUSH, &[], out)
    }

    /// Ends the stream. Calling it again does nothing.
    pub fn finish(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if let State::Finished = self.state {
            return Ok(());
        }
        self.run(Op::BROTLI_OPERATION_FINISH, &[], out)?;
        // Back to the pool now, not when the encoder is dropped.
        self.state = State::Finished;
        Ok(())
    }

    /// Input bytes taken so far.
    pub fn total_in(&self) -> u64 {
        self.total_in
    }

    /// Output bytes written so far, header included.
    pub fn total_out(&self) -> u64 {
        self.total_out
    }

    /// Whether [`finish`](DcbEncoder::finish) has completed the stream.
    pub fn is_finished(&self) -> bool {
        matches!(self.state, State::Finished)
    }

    fn run(&mut self, op: Op, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        let before = out.len();
        if let State::Start(_) = self.state {
            if input.is_empty() && op == Op::BROTLI_OPERATION_PROCESS {
                return Ok(());
            }
            write_header(&DCB_MAGIC, &self.hash, out);
            if let State::Start(core) = std::mem::replace(&mut self.state, State::Failed) {
                self.state = State::Stream(core);
            }
        }
        let core = match &mut self.state {
            State::Stream(core) => core,
            State::Finished => return Err(EncodeError::new("the stream is already finished")),
            State::Start(_) | State::Failed => {
                return Err(EncodeError::new(
                    "an earlier call failed; the stream is unusable",
                ));
            }
        };
        // The `brotli` crate's encoder panicked on some inputs with a custom dictionary
        // (worked around where the dictionary is loaded: `CompressorState::load_prefix`).
        // Should a third-party panic remain, it must not reach the server: it becomes this
        // stream's error, and the state is discarded.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compress(core, op, input, out)
        }))
        .unwrap_or_else(|_| {
            Err(EncodeError::new(
                "brotli: the dictionary encoder failed on this input (a brotli crate defect)",
            ))
        });
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => {
                self.total_in += input.len() as u64;
                Ok(())
            }
            Err(e) => {
                // A state that saw an error is not shelved again.
                if let State::Stream(state) = std::mem::replace(&mut self.state, State::Failed) {
                    state.discard();
                }
                Err(e)
            }
        }
    }
}

impl Encode for DcbEncoder {
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        DcbEncoder::encode(self, input, out)?;
        Ok(Progress::since(input.len(), before, out))
    }

    fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        DcbEncoder::flush(self, out)?;
        Ok(Progress::since(0, before, out))
    }

    fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        let before = out.len();
        DcbEncoder::finish(self, out)?;
        Ok(Progress::since(0, before, out))
    }

    fn holds_state(&self) -> bool {
        matches!(self.state, State::Start(_) | State::Stream(_))
    }

    fn has_payload(&self) -> bool {
        !matches!(self.state, State::Start(_))
    }

    fn total_in(&self) -> u64 {
        self.total_in
    }

    fn total_out(&self) -> u64 {
        self.total_out
    }

    fn is_finished(&self) -> bool {
        DcbEncoder::is_finished(self)
    }
}

/// Compresses all of `input` as a `dcb` body appended to `out`, with its size as brotli's
/// size hint, the brotli state from `pool`.
pub fn encode_dcb(
    dictionary: &Dictionary,
    level: CompressionLevel,
    input: &[u8],
    pool: &CodecPool,
    out: &mut BytesMut,
) -> Result<(), EncodeError> {
    out.reserve(36 + input.len() / 4 + 64);
    let mut encoder = DcbEncoder::start(dictionary, level, pool, Some(input.len()));
    encoder.run(Op::BROTLI_OPERATION_FINISH, input, out)
}
