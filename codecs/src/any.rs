//! [`Encoder`] and [`Decoder`]: one type per direction for every coding, dispatching to the
//! coding family's own encoder and decoder. An enum, not a boxed trait object, so choosing a
//! coding per response allocates nothing. The enum, its dispatch and the constructors are
//! generated from the codec list ([`families!`](super::families)).

use std::task::{Context, Poll};

use bytes::BytesMut;

use super::{CompressionLevel, ContentCoding, Decode, DecodeError, DecodeErrorKind, Dictionary};
use super::{EncodeError, EncodeOptions, SliceEnd, families};
use crate::pool::CodecPool;

/// The most padding an encoder writes: a longer request is cut to it.
pub(crate) const MAX_PADDING: usize = u16::MAX as usize;

/// The error for a coding whose cargo feature is off.
fn not_compiled(coding: ContentCoding) -> String {
    format!(
        "{} is not compiled in (its cargo feature is off)",
        coding.as_str()
    )
}

/// Builds the family's encoder or decoder for `$coding`: a plain family from the coding
/// alone, a dictionary family from the dictionary, which it needs.
macro_rules! build {
    (plain, encoder, $folder:ident, $coding:ident, $level:ident, $dictionary:ident, $pool:ident) => {
        Ok($folder::encoder($coding, $level.resolve($coding), $pool))
    };
    (plain, decoder, $folder:ident, $coding:ident, $dictionary:ident, $pool:ident) => {
        Ok($folder::decoder($coding, $pool))
    };
    (dictionary, encoder, $folder:ident, $coding:ident, $level:ident, $dictionary:ident, $pool:ident) => {
        match $dictionary {
            Some(dictionary) => $folder::encoder(dictionary, $level, $pool),
            None => Err(EncodeError::new(format!(
                "{} needs a dictionary",
                $coding.as_str()
            ))),
        }
    };
    (dictionary, decoder, $folder:ident, $coding:ident, $dictionary:ident, $pool:ident) => {
        match $dictionary {
            Some(dictionary) => $folder::decoder(dictionary, $pool),
            None => Err(DecodeError::new(
                DecodeErrorKind::DictionaryMismatch,
                "a dictionary coding needs its dictionary",
            )),
        }
    };
}

/// The codec enum of both directions, its dispatch and its constructors, from the list.
macro_rules! any_codec {
    ($d:tt $(
        #[cfg($cfg:meta)] $variant:ident($folder:ident): $needs:ident [$($coding:ident),*]
        kinds { $($kinds:tt)* };
    )*) => {
        $( #[cfg($cfg)] use super::$folder; )*

        /// The codec types of one direction, so that one enum (and one dispatch) serves both.
        trait Side {
            $( #[cfg($cfg)] type $variant: std::fmt::Debug; )*
        }

        #[derive(Debug)]
        enum Encoding {}

        impl Side for Encoding {
            $( #[cfg($cfg)] type $variant = $folder::Encoder; )*
        }

        #[derive(Debug)]
        enum Decoding {}

        impl Side for Decoding {
            $( #[cfg($cfg)] type $variant = $folder::Decoder; )*
        }

        /// One codec of either direction. Inline, not boxed: gzip/deflate is the common case,
        /// and a box would cost an allocation per body.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug)]
        enum AnyCodec<S: Side> {
            $( #[cfg($cfg)] $variant(S::$variant), )*
        }

        /// Evaluates `$call` with `$name` bound to whichever codec `$codec` holds.
        macro_rules! dispatch {
            ($d codec:expr, $d name:ident => $d call:expr) => {
                match $d codec {
                    $( #[cfg($cfg)] AnyCodec::$variant($d name) => $d call, )*
                }
            };
        }

        /// The encoder of `coding`, if its feature is on and it has what it needs.
        fn any_encoder(
            coding: ContentCoding,
            level: CompressionLevel,
            dictionary: Option<&Dictionary>,
            pool: &CodecPool,
        ) -> Result<AnyEncoder, EncodeError> {
            // Unused by a build whose dictionary codings are all off.
            let _ = dictionary;
            match coding {
                $($( #[cfg($cfg)] ContentCoding::$coding => {
                    build!($needs, encoder, $folder, coding, level, dictionary, pool)
                        .map(AnyCodec::$variant)
                } )*)*
                #[allow(unreachable_patterns)]
                _ => Err(EncodeError::new(not_compiled(coding))),
            }
        }

        /// The decoder of `coding`, if its feature is on and it has what it needs.
        fn any_decoder(
            coding: ContentCoding,
            dictionary: Option<&Dictionary>,
            pool: &CodecPool,
        ) -> Result<AnyDecoder, DecodeError> {
            let _ = dictionary;
            match coding {
                $($( #[cfg($cfg)] ContentCoding::$coding => {
                    build!($needs, decoder, $folder, coding, dictionary, pool)
                        .map(AnyCodec::$variant)
                } )*)*
                #[allow(unreachable_patterns)]
                _ => Err(DecodeError::new(
                    DecodeErrorKind::Unsupported,
                    "this coding is not compiled in (its cargo feature is off)",
                )),
            }
        }
    };
}

families!(any_codec $);

type AnyEncoder = AnyCodec<Encoding>;
type AnyDecoder = AnyCodec<Decoding>;

/// A streaming encoder for any [`ContentCoding`], over pooled codec state.
///
/// Feed input with [`encode`](Encoder::encode), make everything so far decodable with
/// [`flush`](Encoder::flush), and end the stream with [`finish`](Encoder::finish). Output is
/// appended to the caller's buffer. Apart from growing that buffer, an encoder drawn from a
/// warm pool allocates little or nothing. Dropping it returns its state to the pool, reset.
#[derive(Debug)]
pub struct Encoder {
    coding: ContentCoding,
    /// The codec, or why none could be made (every call returns it).
    codec: Result<AnyEncoder, EncodeError>,
}

impl Encoder {
    /// An encoder for `coding` at `level`, with its state from `pool`: `dcz` and `dcb`
    /// (RFC 9842) compress against `dictionary` (the other codings ignore it). Fails for a
    /// coding whose cargo feature is off, a dictionary coding without its dictionary, or a
    /// dictionary libzstd cannot digest.
    pub fn for_coding(
        coding: ContentCoding,
        level: CompressionLevel,
        dictionary: Option<&Dictionary>,
        pool: &CodecPool,
    ) -> Result<Self, EncodeError> {
        let codec = Ok(any_encoder(coding, level, dictionary, pool)?);
        Ok(Encoder { coding, codec })
    }

    /// An encoder for a plain coding at `level`, with its state from `pool`. Never panics:
    /// where [`for_coding`](Encoder::for_coding) fails (a dictionary coding, which needs its
    /// dictionary, or a coding whose cargo feature is off), every call of this encoder
    /// returns that error.
    pub fn new(coding: ContentCoding, level: CompressionLevel, pool: &CodecPool) -> Self {
        let codec = any_encoder(coding, level, None, pool);
        Encoder { coding, codec }
    }

    /// The options, before the first call; `None` after it or without a codec.
    fn options(&mut self) -> Option<&mut EncodeOptions> {
        let codec = self.codec.as_mut().ok()?;
        dispatch!(codec, c => c.options_mut())
    }

    /// The codec, or the error that stands for it.
    fn codec(&mut self) -> Result<&mut AnyEncoder, EncodeError> {
        self.codec.as_mut().map_err(|e| e.clone())
    }

    /// Pads the stream with bytes that decoders skip, `len` of them (at most 65,535), a
    /// BREACH mitigation that makes the response length vary: a gzip header comment of
    /// `len` bytes; a zstd (and `dcz`) skippable frame of `len` bytes after the last frame
    /// (8 bytes of frame header more); br (and `dcb`) metadata meta-blocks of `len` bytes in
    /// all after a flush, before the last meta-block; for `deflate`, whose zlib header has
    /// no room, `len` empty deflate blocks after the header (5 bytes for 1, about 1.25 bytes
    /// more for each further one, a different length for each `len`). Ignored once a call
    /// has been made.
    pub fn with_padding(mut self, len: usize) -> Self {
        if let Some(options) = self.options() {
            options.padding = len.min(MAX_PADDING);
        }
        self
    }

    /// The input's total size, when known before the first byte: br picks its match finder
    /// from it, as brotli does when a whole body arrives in one call (a larger hasher and
    /// smaller output on large bodies). The other codings ignore it: a pledged zstd size
    /// above 64 KiB made libzstd pick slower, larger parameters. Ignored once a call has
    /// been made.
    pub fn with_size_hint(mut self, len: u64) -> Self {
        if let Some(options) = self.options() {
            options.size_hint = Some(len);
        }
        self
    }

    /// Prepares the encoder for a streaming body, which parks its state whenever the
    /// producer waits and between slices when the pool is crowded: gzip and deflate keep the
    /// input history a released state needs to resume with the same ratio (the last 32 KiB,
    /// one buffer per stream); br waits for a turn before it draws a state and flushes at
    /// every slice end.
    pub fn for_stream(mut self) -> Self {
        if let Some(options) = self.options() {
            options.streaming = true;
        }
        self
    }

    /// The coding this encoder writes (its `Content-Encoding` token is
    /// [`as_str`](ContentCoding::as_str)).
    pub fn coding(&self) -> ContentCoding {
        self.coding
    }

    /// Evaluates `read` on the codec, or gives `none` without one.
    fn read<T>(&self, none: T, read: impl FnOnce(&AnyEncoder) -> T) -> T {
        self.codec.as_ref().map_or(none, read)
    }

    /// Compresses all of `input`, appending whatever output is ready to `out`. The codec
    /// may hold back some output until more input, a flush or the finish.
    pub fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(self.codec()?, c => c.encode(input, out)).map(drop)
    }

    /// A sync flush: everything encoded so far becomes decodable from `out`.
    pub fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(self.codec()?, c => c.flush(out)).map(drop)
    }

    /// Ends the stream: the last block and any trailer go to `out`. Calling it again does
    /// nothing.
    pub fn finish(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(self.codec()?, c => c.finish(out)).map(drop)
    }

    /// The producer has nothing for now: like [`flush`](Encoder::flush), and where the
    /// coding allows it the codec state waits in the pool until the next
    /// [`encode`](Encoder::encode). After a short pause (under the pool's
    /// [`park_bound`](crate::pool::CodecPoolBuilder::park_bound); the first pause, whose length is
    /// not known, is not short) gzip, deflate and zstd park the state, and the next `encode`
    /// takes it back as it was. Otherwise the state goes back to the pool: after a long
    /// pause, with no room to park (the pool's `max_idle` reached by parked states), or when
    /// the pool gave the parked state to another stream meanwhile; then gzip and deflate draw
    /// a state primed with the last 32 KiB of input, and zstd ends the frame and starts
    /// another. A streaming br encoder at quality 2 and up keeps its state over short pauses
    /// and gives it back at the others, once it has two bytes of history (brotli takes no
    /// shorter custom dictionary); it resumes primed with the last 32 KiB of input and its
    /// last distances. Other br encoders keep their state.
    pub fn idle(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(self.codec()?, c => c.idle(out)).map(drop)
    }

    /// Ready when the encoder may compress now; pending (and woken later) while a streaming
    /// br encoder waits for its turn.
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.codec {
            Ok(codec) => dispatch!(codec, c => c.poll_ready(cx)),
            // The next call reports the error.
            Err(_) => Poll::Ready(()),
        }
    }

    /// What a streaming body does at a slice end (see [`SliceEnd`]).
    pub fn at_slice_end(&self) -> SliceEnd {
        self.read(
            SliceEnd::Keep,
            |codec| dispatch!(codec, c => c.at_slice_end()),
        )
    }

    /// Whether compressed data beyond the header has been written.
    pub fn has_payload(&self) -> bool {
        self.read(false, |codec| dispatch!(codec, c => c.has_payload()))
    }

    /// Whether the encoder holds pooled codec state now: drawn at the first input, so false
    /// before it, after [`idle`](Encoder::idle) released it, and after the finish.
    pub fn holds_state(&self) -> bool {
        self.read(false, |codec| dispatch!(codec, c => c.holds_state()))
    }
}

/// A streaming decoder for any [`ContentCoding`], over pooled codec state.
///
/// Input may be split at any byte. Each call to [`decode`](Decoder::decode) produces at most
/// the number of bytes the caller allows, so a size limit stops a decompression bomb before
/// it is inflated. gzip input may hold several members and zstd input several frames (and
/// skippable frames) back to back; `deflate` input may be zlib-wrapped (RFC 1950) or raw
/// deflate (RFC 1951), which many clients send under that name; a zstd frame that needs a
/// window over 8 MiB is refused ([`DecodeErrorKind::WindowTooLarge`]).
///
/// To read a whole stream: call `decode` until the input is consumed and
/// [`has_pending_output`](Decoder::has_pending_output) is false, then call
/// [`finish`](Decoder::finish) at the end of input to learn whether the stream was complete.
#[derive(Debug)]
pub struct Decoder {
    /// The codec, or why none could be made (every call returns it).
    codec: Result<AnyDecoder, DecodeError>,
}

impl Decoder {
    /// A decoder for `coding`, with its state from `pool`: `dcz` (a pooled zstd context and
    /// the dictionary's prepared `DDict`, windows up to max(8 MiB, 1.25 x the dictionary))
    /// and `dcb` (the dictionary as brotli's prefix, windows up to 16 MiB) decode against
    /// `dictionary`, and a body whose header names another dictionary fails with
    /// [`DictionaryMismatch`](DecodeErrorKind::DictionaryMismatch); the other codings ignore
    /// it. Fails for a coding whose cargo feature is off
    /// ([`Unsupported`](DecodeErrorKind::Unsupported)), a dictionary coding without its
    /// dictionary, or a dictionary libzstd cannot digest.
    pub fn for_coding(
        coding: ContentCoding,
        dictionary: Option<&Dictionary>,
        pool: &CodecPool,
    ) -> Result<Self, DecodeError> {
        let codec = Ok(any_decoder(coding, dictionary, pool)?);
        Ok(Decoder { codec })
    }

    /// A decoder for a plain coding, with its state from `pool`. Never panics: where
    /// [`for_coding`](Decoder::for_coding) fails (a dictionary coding, which needs its
    /// dictionary, or a coding whose cargo feature is off), every call of this decoder
    /// returns that error.
    #[cfg(test)]
    pub(crate) fn new(coding: ContentCoding, pool: &CodecPool) -> Self {
        let codec = any_decoder(coding, None, pool);
        Decoder { codec }
    }

    /// Evaluates `read` on the codec, or gives `none` without one.
    fn read<T>(&self, none: T, read: impl FnOnce(&AnyDecoder) -> T) -> T {
        self.codec.as_ref().map_or(none, read)
    }

    /// Compressed bytes consumed so far, headers and trailers included.
    pub fn total_in(&self) -> u64 {
        self.read(0, |codec| dispatch!(codec, c => c.total_in()))
    }

    /// Decoded bytes produced so far.
    pub fn total_out(&self) -> u64 {
        self.read(0, |codec| dispatch!(codec, c => c.total_out()))
    }

    /// Complete gzip members, zstd frames or zlib/raw/br streams decoded so far.
    pub fn members(&self) -> u64 {
        self.read(0, |codec| dispatch!(codec, c => c.members()))
    }

    /// Whether the stream is complete: no further input is accepted, except another gzip
    /// member or zstd frame.
    pub fn is_stream_end(&self) -> bool {
        self.read(false, |codec| dispatch!(codec, c => c.is_stream_end()))
    }

    /// The decoded size `input` announces, if any (a zstd frame header with its content size; a hint only, hostile input can announce anything).
    pub fn announced_size(&self, input: &[u8]) -> Option<u64> {
        self.read(None, |codec| dispatch!(codec, c => c.announced_size(input)))
    }

    /// Whether the last [`decode`](Decoder::decode) filled its output budget, so that more
    /// output may be ready without more input. Call `decode` again (with the remaining input,
    /// possibly empty) before feeding more or calling [`finish`](Decoder::finish).
    pub fn has_pending_output(&self) -> bool {
        self.read(false, |codec| dispatch!(codec, c => c.has_pending_output()))
    }

    /// Decodes from `input`, appending at most `max_out` bytes to `out`. Returns how many
    /// input bytes were consumed; fewer than `input.len()` only when the budget ran out.
    ///
    /// After an error the decoder is spent: every later call returns the same error.
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DecodeError> {
        let codec = self.codec.as_mut().map_err(|e| e.clone())?;
        dispatch!(codec, c => c.decode(input, out, max_out)).map(|progress| progress.consumed)
    }

    /// Declares the end of input: `Ok` if the stream was complete (or no byte came at all, an
    /// empty body), else a [`Truncated`](DecodeErrorKind::Truncated) error, or the error an
    /// earlier [`decode`](Decoder::decode) reported.
    pub fn finish(&self) -> Result<(), DecodeError> {
        let codec = self.codec.as_ref().map_err(|e| e.clone())?;
        dispatch!(codec, c => c.finish())
    }
}
