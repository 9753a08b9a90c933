//! Streaming codecs over pooled state, for HTTP and beyond: gzip (RFC 1952), deflate (zlib,
//! RFC 1950), and with their cargo features zstd (RFC 8878, RFC 9659), br (RFC 7932) and the
//! dictionary codings `dcz` and `dcb` (RFC 9842).
//!
//! This is the codec floor of [`tower-gzip`](https://docs.rs/tower-gzip): it knows bytes, not
//! HTTP. The layers crate re-exports what its users name ([`CodecPool`], [`ContentCoding`],
//! [`CompressionLevel`], the codecs under `tower_gzip::codec`), so most code depends on
//! `tower-gzip` alone; depend on this crate to compress without tower.
//!
//! Both directions are push style: feed a chunk, get output appended to a caller's
//! [`BytesMut`]. [`Encoder`] and [`Decoder`] speak every [`ContentCoding`]; the heavy state under
//! them (a deflate window, a zstd context, brotli's tables) comes from a
//! [`CodecPool`] and goes back to it, reset, when they are dropped.
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use tower_gzip_codecs::{CodecPool, CompressionLevel, ContentCoding, Decoder, Encoder};
//!
//! let pool = CodecPool::global();
//! let mut encoder = Encoder::for_coding(ContentCoding::Gzip, CompressionLevel::Default, None, pool).unwrap();
//! let mut wire = BytesMut::new();
//! encoder.encode(b"hello, ", &mut wire).unwrap();
//! encoder.flush(&mut wire).unwrap(); // everything so far is now decodable
//! encoder.encode(b"world", &mut wire).unwrap();
//! encoder.finish(&mut wire).unwrap();
//!
//! let mut decoder = Decoder::for_coding(ContentCoding::Gzip, None, pool).unwrap();
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
//! # Cargo features
//!
//! | feature | default | builds C | what |
//! |---|---|---|---|
//! | `libdeflate` | yes | yes | gzip and deflate bodies known in full, in one shot (libdeflate) |
//! | `zstd` | yes | yes (libzstd) | zstd, web-safe windows (RFC 9659) |
//! | `br` | yes | no | brotli through the pure-Rust `brotli` crate |
//! | `dcz`, `dcb` | yes | `dcb`: Google's brotli | dictionary compression (RFC 9842): [`Dictionary`] |
//!
//! # Adding a coding
//!
//! 1. Its folder here (`src/NAME/`): the encoder under the shared driver (an `Encode`
//!    impl run by `Driving`, in `encoding.rs`) and the decoder under its own (`DecodeCore`,
//!    in `decoding.rs`), their states drawn from the pool through `PooledState` impls, and
//!    the family's entry points `encoder`, `decoder` and `one_shot`.
//! 2. One line in the list below (`families!`): the family, its cargo feature, its
//!    codings, and the pool kinds its states are counted under.
//! 3. One row in the coding table (`codecs/src/coding.rs`): the variant of [`ContentCoding`], its
//!    token, the coding it builds on and its levels.
//! 4. One cargo feature in `Cargo.toml` (here, and its forward in the layers crate's).
//!
//! The dispatch ([`Encoder`], [`Decoder`], [`OneShot`]) and the pool's counters
//! ([`PoolStats`](pool::PoolStats)) are generated from the list; negotiation, the layers
//! and their bodies work from the table and do not change.
#![deny(missing_docs, unreachable_pub)]
#![warn(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`) shows which items need which cargo feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

use bytes::BytesMut;

mod any;
#[cfg(feature = "br")]
mod br;
mod coding;
#[cfg(feature = "dcb")]
mod dcb;
#[cfg(feature = "dcz")]
mod dcz;
mod decoding;
#[cfg(dictionary)]
mod dictionary;
mod encoding;
mod error;
// The one module allowed `unsafe` code.
#[allow(unsafe_code)]
mod ffi;
mod flate;
#[cfg(dictionary)]
mod hex;
mod history;
mod kinds;
mod level;
mod one_shot;
#[cfg(any(feature = "zstd", feature = "br"))]
mod padding;
#[cfg(test)]
mod pause_steps;
pub mod pool;
mod sync;
#[cfg(feature = "zstd")]
mod zstd;

pub use any::{Decoder, Encoder};
pub use coding::{CODINGS, CodingSet, ContentCoding};
#[cfg(feature = "dcz")]
pub use dictionary::train;
#[cfg(dictionary)]
pub use dictionary::{Dictionary, DictionaryError, MAX_DICTIONARY_LEN, peek};
pub(crate) use encoding::EncodeOptions;
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use flate::deflate_bound;
pub use flate::raw;
pub use level::{CompressionLevel, Levels};
pub use one_shot::OneShot;
pub use pool::CodecPool;
pub(crate) use pool::Level;

/// The codec families, one line each: the variant of the dispatch and the folder it lives in
/// (with its cargo feature), the codings it writes (`plain`, or needing a `dictionary`), and
/// the pool kinds its states are counted under. `$then` receives the list (after `$pass`).
macro_rules! families {
    ($then:ident $($pass:tt)*) => {
        $then! { $($pass)*
            #[cfg(all())] Flate(flate): plain [Gzip, Deflate] kinds {
                /// Streaming deflate compressors (gzip and deflate).
                DeflateCompressors = "deflate_compressors",
                /// Deflate decompressors (gzip and deflate).
                DeflateDecompressors = "deflate_decompressors",
                /// libdeflate whole-buffer compressors, for gzip and deflate bodies known in
                /// full.
                BlockCompressors = "block_compressors",
                /// Raw deflate compressors with a window below 32 KiB (WebSocket
                /// permessage-deflate, RFC 7692), tagged by window.
                SmallWindowCompressors = "small_window_compressors",
            };
            #[cfg(feature = "zstd")] Zstd(zstd): plain [Zstd] kinds {
                /// zstd compression contexts (streaming and one-shot).
                ZstdCompressors = "zstd_compressors",
                /// zstd decompression contexts.
                ZstdDecompressors = "zstd_decompressors",
            };
            #[cfg(feature = "br")] Br(br): plain [Br] kinds {
                /// Brotli encoder memory (see the crate's br notes).
                BrCompressors = "br_compressors",
                /// Brotli decoder memory.
                BrDecompressors = "br_decompressors",
            };
            #[cfg(feature = "dcz")] Dcz(dcz): dictionary [Dcz] kinds {
                /// zstd compression contexts for `dcz` (raw-content dictionaries referenced
                /// per response).
                DczCompressors = "dcz_compressors",
                /// zstd decompression contexts for `dcz`.
                DczDecompressors = "dcz_decompressors",
            };
            #[cfg(feature = "dcb")] Dcb(dcb): dictionary [Dcb] kinds {
                /// C brotli encoder memory for `dcb` (the blocks of a finished stream's
                /// encoder, for the next stream at the same quality).
                DcbCompressors = "dcb_compressors",
            };
        }
    };
}
pub(crate) use families;

/// The entry points the codec list calls (see [`families`]) for a family of one plain
/// coding whose codecs take no options: its streaming encoder and decoder types, their
/// constructors, and its one-shot function.
#[cfg(any(feature = "zstd", feature = "br"))]
macro_rules! single_coding_entry_points {
    ($encoder:ident, $decoder:ident, $one_shot:path) => {
        pub(crate) type Encoder = $encoder;
        pub(crate) type Decoder = $decoder;

        pub(crate) fn encoder(
            _: $crate::ContentCoding,
            level: $crate::Level,
            pool: &$crate::CodecPool,
        ) -> Encoder {
            $encoder::new(level, pool)
        }

        pub(crate) fn decoder(_: $crate::ContentCoding, pool: &$crate::CodecPool) -> Decoder {
            $decoder::new(pool)
        }

        pub(crate) fn one_shot(
            _: $crate::ContentCoding,
            level: $crate::Level,
            options: &$crate::EncodeOptions,
            input: &[u8],
            pool: &$crate::CodecPool,
            out: &mut ::bytes::BytesMut,
        ) -> Result<(), $crate::EncodeError> {
            $one_shot(level, input, options.padding, pool, out)
        }
    };
}
#[cfg(any(feature = "zstd", feature = "br"))]
pub(crate) use single_coding_entry_points;

/// Without `dcz` and `dcb` no dictionary exists: this type has no values, so the
/// dictionary arguments of [`Encoder::for_coding`] and [`Decoder::for_coding`] are `None`.
#[cfg(not(dictionary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dictionary {}

#[cfg(not(dictionary))]
impl Dictionary {
    /// Never called: there is no dictionary without `dcz` or `dcb`.
    pub fn level(&self, _: ContentCoding) -> Option<i32> {
        match *self {}
    }

    /// Never called: there is no dictionary without `dcz` or `dcb`.
    pub fn hash(&self) -> [u8; 32] {
        match *self {}
    }
}

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

/// What a streaming body does with its encoder at the end of a slice of work (64 KiB of
/// input) while the producer still has more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceEnd {
    /// Carry on: the state stays, nothing is flushed.
    Keep,
    /// A sync flush, keeping the state: the output keeps pace with the input (br, whose
    /// encoder would otherwise hold up to 8 MiB of input in one meta-block).
    #[cfg_attr(not(feature = "br"), allow(dead_code))]
    Flush,
    /// `idle`: the pool is crowded past its hold limit, and giving the state
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
    fn members(&self) -> u64;
}
