//! Streaming codecs over pooled state: gzip (RFC 1952), deflate (zlib, RFC 1950), and with
//! their cargo features zstd (RFC 8878, RFC 9659) and br (RFC 7932).
//!
//! Both directions are push style: feed a chunk, get output appended to a caller's
//! [`BytesMut`]. [`Encoder`] and [`Decoder`] speak every [`ContentCoding`]; the heavy state under
//! them (a deflate window, a zstd context, brotli's tables) comes from a
//! [`CodecPool`](crate::CodecPool) and goes back to it, reset, when they are dropped.
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use tower_gzip::ContentCoding;
//! use tower_gzip::codec::{Decoder, Encoder};
//! use tower_gzip::{CodecPool, CompressionLevel};
//!
//! let pool = CodecPool::global();
//! let mut encoder = Encoder::new(ContentCoding::Gzip, CompressionLevel::Default, pool);
//! let mut wire = BytesMut::new();
//! encoder.encode(b"hello, ", &mut wire).unwrap();
//! encoder.flush(&mut wire).unwrap(); // everything so far is now decodable
//! encoder.encode(b"world", &mut wire).unwrap();
//! encoder.finish(&mut wire).unwrap();
//!
//! let mut decoder = Decoder::new(ContentCoding::Gzip, pool);
//! let mut plain = BytesMut::new();
//! let mut input = &wire[..];
//! while !input.is_empty() || decoder.has_pending_output() {
//!     let consumed = decoder.decode(input, &mut plain, 64 * 1024).unwrap();
//!     input = &input[consumed..];
//! }
//! decoder.finish().unwrap();
//! assert_eq!(&plain[..], b"hello, world");
//! ```
//!
//! # Adding a coding
//!
//! 1. A folder here (`codec/NAME/`) with the coding's encoder and decoder: the core of each
//!    under the shared drivers (`EncodeCore` in `encoding.rs`, `DecodeCore` in
//!    `decoding.rs`, which keep the stage, the counts and the errors), drawing its state
//!    from the pool through a `PooledState` impl whose
//!    `KIND` is a new line in `kinds.rs` (and a field of [`PoolStats`](crate::PoolStats)),
//!    and offers a one-shot `encode_all`.
//! 2. One line in the coding table (`src/coding.rs`): the variant of [`ContentCoding`], its
//!    token, the coding it builds on and its levels.
//! 3. One cargo feature in `Cargo.toml`, and its arm in each dispatch of `any.rs`.
//!
//! Negotiation, the layers and their bodies work from the table and the traits and do not
//! change.

// A coding whose feature is off is a stand-in loaded from one file for zstd and br (and
// another for dcz and dcb): distinct modules by design.
#![allow(clippy::duplicate_mod)]

use std::task::{Context, Poll};

use bytes::BytesMut;

mod any;
#[cfg_attr(not(feature = "br"), path = "absent.rs")]
pub(crate) mod br;
#[cfg_attr(not(feature = "dcb"), path = "absent_dictionary.rs")]
pub(crate) mod dcb;
#[cfg_attr(not(feature = "dcz"), path = "absent_dictionary.rs")]
pub(crate) mod dcz;
pub(crate) mod decoding;
#[cfg_attr(not(dictionary), path = "dictionary_off.rs")]
pub(crate) mod dictionary;
pub(crate) mod encoding;
mod error;
pub(crate) mod flate;
mod history;
pub(crate) mod kinds;
pub(crate) mod level;
pub(crate) mod one_shot;
#[cfg(test)]
mod pause_steps;
#[cfg_attr(not(feature = "zstd"), path = "absent.rs")]
pub(crate) mod zstd;

pub(crate) use crate::coding::ContentCoding;
pub(crate) use crate::pool::Level;
pub use any::{Decoder, Encoder};
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub(crate) use level::CompressionLevel;
pub(crate) use level::Levels;
pub use one_shot::{OneShot, encode_all};

/// The coding type's former name.
#[deprecated(note = "use `tower_gzip::ContentCoding`")]
pub type Format = ContentCoding;

/// Bytes consumed from the input and appended to the output by one codec call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) consumed: usize,
    pub(crate) produced: usize,
}

impl Progress {
    /// The progress of a call that took `consumed` bytes and grew `out` from `before`.
    pub(crate) fn since(consumed: usize, before: usize, out: &BytesMut) -> Self {
        Progress {
            consumed,
            produced: out.len() - before,
        }
    }
}

/// What every decoder keeps besides its codec state: the bytes it consumed and produced, and
/// the error that ended the stream, which every later call reports again ([`Decode`]'s
/// contract).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    total_in: u64,
    total_out: u64,
    failed: Option<DecodeError>,
}

impl Tally {
    /// The error that ended the stream, again; `Ok` while there is none.
    pub(crate) fn replay(&self) -> Result<(), DecodeError> {
        self.failed.clone().map_or(Ok(()), Err)
    }

    /// Counts a call that took `consumed` bytes and grew `out` from `before`, keeps the
    /// error of its `result` for later calls, and returns the call's progress or that error.
    pub(crate) fn count(
        &mut self,
        consumed: usize,
        before: usize,
        out: &BytesMut,
        result: Result<(), DecodeError>,
    ) -> Result<Progress, DecodeError> {
        self.total_in += consumed as u64;
        self.total_out += (out.len() - before) as u64;
        match result {
            Ok(()) => Ok(Progress::since(consumed, before, out)),
            Err(error) => {
                self.failed = Some(error.clone());
                Err(error)
            }
        }
    }

    pub(crate) fn total_in(&self) -> u64 {
        self.total_in
    }

    pub(crate) fn total_out(&self) -> u64 {
        self.total_out
    }
}

/// A streaming compressor for one coding. Output is appended to the caller's buffer.
pub(crate) trait Encode {
    /// Compresses all of `input`; the codec may hold output back until more input, a flush
    /// or the finish.
    fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<Progress, EncodeError>;

    /// Makes everything encoded so far decodable from `out` (a sync flush).
    fn flush(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError>;

    /// Ends the stream. Calling it again does nothing.
    fn finish(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError>;

    /// The producer has nothing for now: make everything so far decodable and, where the
    /// format allows, give the heavy codec state back to the pool; the next `encode` draws
    /// one again. The default flushes and keeps the state.
    fn idle(&mut self, out: &mut BytesMut) -> Result<Progress, EncodeError> {
        self.flush(out)
    }

    /// Whether a pooled codec state is checked out now.
    fn holds_state(&self) -> bool;

    /// What a streaming body does at the end of a slice of work when the producer has more
    /// (see [`SliceEnd`]).
    fn at_slice_end(&self) -> SliceEnd {
        SliceEnd::Keep
    }

    /// Whether any compressed data (beyond a header) has been written.
    fn has_payload(&self) -> bool {
        self.total_out() > 0
    }

    /// The stream's counts and whether it has finished.
    fn totals(&self) -> Totals;

    /// Input bytes taken so far.
    fn total_in(&self) -> u64 {
        self.totals().total_in
    }

    /// Output bytes written so far, framing included.
    fn total_out(&self) -> u64 {
        self.totals().total_out
    }

    /// Whether [`finish`](Encode::finish) has completed the stream.
    fn is_finished(&self) -> bool {
        self.totals().finished
    }

    /// Prepares a streaming body's encoder (see `Encoder::for_stream`).
    fn streaming(&mut self) {}

    /// The input's total size, known before the first byte (see `Encoder::with_size_hint`).
    fn set_size_hint(&mut self, _len: u64) {}

    /// Bytes of gzip header padding (see `Encoder::with_header_padding`).
    fn set_header_padding(&mut self, _len: usize) {}

    /// Ready when the encoder may compress now (see `Encoder::poll_ready`).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

/// What an encoder reports of its stream (see [`Encode::totals`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Totals {
    total_in: u64,
    total_out: u64,
    finished: bool,
}

impl Totals {
    pub(crate) fn new(total_in: u64, total_out: u64, finished: bool) -> Self {
        Totals {
            total_in,
            total_out,
            finished,
        }
    }
}

/// What a streaming body does with its encoder at the end of a slice of work (64 KiB of
/// input) while the producer still has more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SliceEnd {
    /// Carry on: the state stays, nothing is flushed.
    Keep,
    /// A sync flush, keeping the state: the output keeps pace with the input (br, whose
    /// encoder would otherwise hold up to 8 MiB of input in one meta-block).
    #[cfg_attr(not(feature = "br"), allow(dead_code))]
    Flush,
    /// [`idle`](Encode::idle): the pool is crowded past its hold limit, and giving the state
    /// back costs little (gzip and deflate resume primed with their history; zstd starts a
    /// new frame).
    Release,
}

/// A streaming decompressor for one coding, bounded per call.
pub(crate) trait Decode {
    /// Decodes from `input`, appending at most `max_out` bytes to `out`. Consumes all of
    /// `input` unless the budget runs out. After an error, every call returns it again.
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<Progress, DecodeError>;

    /// The last `decode` stopped at its budget: more output may be ready without input.
    fn has_pending_output(&self) -> bool;

    /// The end of input: `Ok` if the stream was complete (or empty).
    fn finish(&self) -> Result<(), DecodeError>;

    /// The decoded size that `input`, the next bytes for this decoder, announces, where the
    /// format records one (a zstd frame header with its content size), so the caller can size
    /// its buffer once. A hint only: hostile input can announce anything.
    fn announced_size(&self, _input: &[u8]) -> Option<u64> {
        None
    }

    /// Whether a complete stream has been decoded (another member or frame may follow where
    /// the format allows).
    fn is_stream_end(&self) -> bool;

    /// Compressed bytes consumed so far.
    fn total_in(&self) -> u64;

    /// Decoded bytes produced so far.
    fn total_out(&self) -> u64;

    /// Complete members (gzip), frames (zstd) or streams decoded so far.
    #[cfg(test)]
    fn members(&self) -> u64;
}
