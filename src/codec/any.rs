//! [`Encoder`] and [`Decoder`]: one type per direction for every coding, dispatching to the
//! coding's own implementation of [`Encode`] / [`Decode`]. An enum, not a boxed trait object,
//! so choosing a coding per response allocates nothing.

use bytes::BytesMut;

use super::dictionary::Dictionary;
use super::flate::{FlateDecoder, FlateEncoder, Framing};
use super::{CompressionLevel, ContentCoding, Decode, DecodeError, Encode, EncodeError, SliceEnd};
use super::{br, dcb, dcz, zstd};
use crate::pool::CodecPool;

/// A streaming encoder for any [`ContentCoding`], over pooled codec state.
///
/// Feed input with [`encode`](Encoder::encode), make everything so far decodable with
/// [`flush`](Encoder::flush), and end the stream with [`finish`](Encoder::finish). Output is
/// appended to the caller's buffer. Apart from growing that buffer, an encoder drawn from a
/// warm pool allocates little or nothing. Dropping it returns its state to the pool, reset.
#[derive(Debug)]
pub struct Encoder {
    coding: ContentCoding,
    codec: AnyEncoder,
}

/// The codec types of one direction, so that one enum (and one dispatch) serves both.
trait Side {
    type Flate;
    type Zstd;
    type Br;
    type Dcz;
    type Dcb;
}

#[derive(Debug)]
enum Encoding {}

impl Side for Encoding {
    type Flate = FlateEncoder;
    type Zstd = zstd::ZstdEncoder;
    type Br = br::BrEncoder;
    type Dcz = dcz::DczEncoder;
    type Dcb = dcb::DcbEncoder;
}

#[derive(Debug)]
enum Decoding {}

impl Side for Decoding {
    type Flate = FlateDecoder;
    type Zstd = zstd::ZstdDecoder;
    type Br = br::BrDecoder;
    type Dcz = dcz::DczDecoder;
    type Dcb = dcb::DcbDecoder;
}

/// One codec of either direction. Inline, not boxed: gzip/deflate is the common case, and a
/// box would cost an allocation per body. (With only `br` enabled, the flate decoder is the
/// variant far larger than the rest.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum AnyCodec<S: Side> {
    Flate(S::Flate),
    Zstd(S::Zstd),
    Br(S::Br),
    Dcz(S::Dcz),
    Dcb(S::Dcb),
}

type AnyEncoder = AnyCodec<Encoding>;
type AnyDecoder = AnyCodec<Decoding>;

/// Evaluates `$call` with `$name` bound to whichever codec `$codec` holds.
macro_rules! dispatch {
    ($codec:expr, $name:ident => $call:expr) => {
        match $codec {
            AnyCodec::Flate($name) => $call,
            AnyCodec::Zstd($name) => $call,
            AnyCodec::Br($name) => $call,
            AnyCodec::Dcz($name) => $call,
            AnyCodec::Dcb($name) => $call,
        }
    };
}

impl Encoder {
    /// An encoder for `coding` at `level`, with its state from `pool`. For a coding whose
    /// cargo feature is off, every call fails with an [`EncodeError`].
    ///
    /// # Panics
    ///
    /// For a dictionary coding (`dcz`, `dcb`), which needs its dictionary: use
    /// [`with_dictionary`](Encoder::with_dictionary).
    pub fn new(coding: ContentCoding, level: CompressionLevel, pool: &CodecPool) -> Self {
        let level = level.resolve(coding);
        let codec = match coding {
            ContentCoding::Gzip => AnyEncoder::Flate(FlateEncoder::new(Framing::Gzip, level, pool)),
            ContentCoding::Deflate => {
                AnyEncoder::Flate(FlateEncoder::new(Framing::Zlib, level, pool))
            }
            ContentCoding::Zstd => AnyEncoder::Zstd(zstd::ZstdEncoder::new(level, pool)),
            ContentCoding::Br => AnyEncoder::Br(br::BrEncoder::new(level, pool)),
            dictionary => panic!(
                "{} needs a dictionary: Encoder::with_dictionary",
                dictionary.as_str()
            ),
        };
        Encoder { coding, codec }
    }

    /// An encoder for a dictionary coding (RFC 9842), header included: `dcz` (zstd, the
    /// dictionary as raw content) or `dcb` (brotli, the dictionary as a prefix). Fails for a
    /// coding that takes no dictionary, or when libzstd cannot digest the dictionary.
    #[cfg(dictionary)]
    pub fn with_dictionary(
        coding: ContentCoding,
        dictionary: &Dictionary,
        level: CompressionLevel,
        pool: &CodecPool,
    ) -> Result<Self, EncodeError> {
        Self::against(coding, dictionary, level, pool)
    }

    /// [`with_dictionary`](Encoder::with_dictionary) in every build (without dictionary
    /// codings no dictionary exists to call it with).
    pub(crate) fn against(
        coding: ContentCoding,
        dictionary: &Dictionary,
        level: CompressionLevel,
        pool: &CodecPool,
    ) -> Result<Self, EncodeError> {
        let codec = match coding {
            ContentCoding::Dcz => AnyEncoder::Dcz(dcz::encoder(dictionary, level, pool)?),
            ContentCoding::Dcb => AnyEncoder::Dcb(dcb::encoder(dictionary, level, pool)?),
            plain => {
                return Err(EncodeError::new(format!(
                    "{} takes no dictionary",
                    plain.as_str()
                )));
            }
        };
        Ok(Encoder { coding, codec })
    }

    /// Pads the gzip header with a comment field of `len` bytes (at most 65,535), a BREACH
    /// mitigation that makes the response length vary. Ignored by the other codings, which
    /// have no such field, and once output has been written.
    pub fn with_header_padding(mut self, len: usize) -> Self {
        dispatch!(&mut self.codec, c => Encode::set_header_padding(c, len));
        self
    }

    /// The input's total size, when known before the first byte: br picks its match finder
    /// from it, as brotli does when a whole body arrives in one call (at 1 MiB and quality 4,
    /// a larger hasher and up to 17% smaller output). The other codings ignore it: a pledged zstd size above 64 KiB made
    /// libzstd pick slower, larger parameters. Ignored once input has been encoded.
    pub fn with_size_hint(mut self, len: u64) -> Self {
        dispatch!(&mut self.codec, c => Encode::set_size_hint(c, len));
        self
    }

    /// The coding this encoder writes (its `Content-Encoding` token is
    /// [`as_str`](ContentCoding::as_str)).
    pub fn coding(&self) -> ContentCoding {
        self.coding
    }

    /// Whether [`finish`](Encoder::finish) has completed the stream.
    pub fn is_finished(&self) -> bool {
        dispatch!(&self.codec, c => Encode::is_finished(c))
    }

    /// Bytes of input consumed so far.
    pub fn total_in(&self) -> u64 {
        dispatch!(&self.codec, c => Encode::total_in(c))
    }

    /// Bytes of output produced so far, framing included.
    pub fn total_out(&self) -> u64 {
        dispatch!(&self.codec, c => Encode::total_out(c))
    }

    /// Compresses all of `input`, appending whatever output is ready to `out`. The codec
    /// may hold back some output until more input, a flush or the finish.
    pub fn encode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(&mut self.codec, c => Encode::encode(c, input, out)).map(drop)
    }

    /// A sync flush: everything encoded so far becomes decodable from `out`.
    pub fn flush(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(&mut self.codec, c => Encode::flush(c, out)).map(drop)
    }

    /// Ends the stream: the last block and any trailer go to `out`. Calling it again does
    /// nothing.
    pub fn finish(&mut self, out: &mut BytesMut) -> Result<(), EncodeError> {
        dispatch!(&mut self.codec, c => Encode::finish(c, out)).map(drop)
    }

    /// The producer has nothing for now: like [`flush`](Encoder::flush), and where the
    /// coding allows it the codec state waits in the pool until the next
    /// [`encode`](Encoder::encode). After a short pause (under the pool's
    /// [`park_bound`](crate::CodecPoolBuilder::park_bound); the first pause, whose length is
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
        dispatch!(&mut self.codec, c => Encode::idle(c, out)).map(drop)
    }

    /// Prepares the encoder for a streaming body, which parks its state whenever the
    /// producer waits and between slices when the pool is crowded: gzip and deflate keep the
    /// input history a released state needs to resume with the same ratio (the last 32 KiB,
    /// one buffer per stream); br waits for a turn before it draws a state and flushes at
    /// every slice end.
    pub(crate) fn for_stream(mut self) -> Self {
        dispatch!(&mut self.codec, c => Encode::streaming(c));
        self
    }

    /// Ready when the encoder may compress now; pending (and woken later) while a streaming
    /// br encoder waits for its turn.
    pub(crate) fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        dispatch!(&mut self.codec, c => Encode::poll_ready(c, cx))
    }

    /// What a streaming body does at a slice end (see [`Encode::at_slice_end`]).
    pub(crate) fn at_slice_end(&self) -> SliceEnd {
        dispatch!(&self.codec, c => Encode::at_slice_end(c))
    }

    /// Whether compressed data beyond the header has been written.
    pub(crate) fn has_payload(&self) -> bool {
        dispatch!(&self.codec, c => Encode::has_payload(c))
    }

    /// Whether the encoder holds pooled codec state now: drawn at the first input, so false
    /// before it, after [`idle`](Encoder::idle) released it, and after the finish.
    pub(crate) fn holds_state(&self) -> bool {
        dispatch!(&self.codec, c => Encode::holds_state(c))
    }
}

/// A streaming decoder for any [`ContentCoding`], over pooled codec state.
///
/// Input may be split at any byte. Each call to [`decode`](Decoder::decode) produces at most
/// the number of bytes the caller allows, so a size limit stops a decompression bomb before
/// it is inflated. gzip input may hold several members and zstd input several frames (and
/// skippable frames) back to back; `deflate` input may be zlib-wrapped (RFC 1950) or raw
/// deflate (RFC 1951), which many clients send under that name; a zstd frame that needs a
/// window over 8 MiB is refused ([`DecodeErrorKind::WindowTooLarge`](super::DecodeErrorKind)).
///
/// To read a whole stream: call `decode` until the input is consumed and
/// [`has_pending_output`](Decoder::has_pending_output) is false, then call
/// [`finish`](Decoder::finish) at the end of input to learn whether the stream was complete.
#[derive(Debug)]
pub struct Decoder {
    coding: ContentCoding,
    codec: AnyDecoder,
}

impl Decoder {
    /// A decoder for `coding`, with its state from `pool`. For a coding whose cargo feature
    /// is off, every call fails with
    /// [`Unsupported`](super::DecodeErrorKind::Unsupported).
    ///
    /// # Panics
    ///
    /// For a dictionary coding (`dcz`, `dcb`), which needs its dictionary: use
    /// [`with_dictionary`](Decoder::with_dictionary).
    pub fn new(coding: ContentCoding, pool: &CodecPool) -> Self {
        let codec = match coding {
            ContentCoding::Gzip => AnyDecoder::Flate(FlateDecoder::new(Framing::Gzip, pool)),
            ContentCoding::Deflate => AnyDecoder::Flate(FlateDecoder::new(Framing::Zlib, pool)),
            ContentCoding::Zstd => AnyDecoder::Zstd(zstd::ZstdDecoder::new(pool)),
            ContentCoding::Br => AnyDecoder::Br(br::BrDecoder::new(pool)),
            dictionary => panic!(
                "{} needs a dictionary: Decoder::with_dictionary",
                dictionary.as_str()
            ),
        };
        Decoder { coding, codec }
    }

    /// A decoder for a dictionary coding (RFC 9842): `dcz` with a pooled zstd context and the
    /// dictionary's prepared `DDict` (made once per dictionary), windows up to max(8 MiB,
    /// 1.25 x the dictionary); `dcb` with the dictionary as brotli's prefix, windows up to
    /// 16 MiB. The body's header must name `dictionary` by its SHA-256, else decoding fails
    /// with [`DictionaryMismatch`](super::DecodeErrorKind::DictionaryMismatch). Fails for a
    /// coding that takes no dictionary, or when libzstd cannot digest the dictionary.
    #[cfg(dictionary)]
    pub fn with_dictionary(
        coding: ContentCoding,
        dictionary: &Dictionary,
        pool: &CodecPool,
    ) -> Result<Self, DecodeError> {
        Self::against(coding, dictionary, pool)
    }

    /// [`with_dictionary`](Decoder::with_dictionary) in every build.
    pub(crate) fn against(
        coding: ContentCoding,
        dictionary: &Dictionary,
        pool: &CodecPool,
    ) -> Result<Self, DecodeError> {
        let codec = match coding {
            ContentCoding::Dcz => AnyDecoder::Dcz(dcz::decoder(dictionary, pool)?),
            ContentCoding::Dcb => AnyDecoder::Dcb(dcb::decoder(dictionary, pool)?),
            _ => {
                return Err(DecodeError::new(
                    super::DecodeErrorKind::CorruptHeader,
                    "this coding takes no dictionary",
                ));
            }
        };
        Ok(Decoder { coding, codec })
    }

    /// The coding this decoder reads.
    pub fn coding(&self) -> ContentCoding {
        self.coding
    }

    /// Compressed bytes consumed so far, headers and trailers included.
    pub fn total_in(&self) -> u64 {
        dispatch!(&self.codec, c => Decode::total_in(c))
    }

    /// Decoded bytes produced so far.
    pub fn total_out(&self) -> u64 {
        dispatch!(&self.codec, c => Decode::total_out(c))
    }

    /// Complete gzip members, zstd frames or zlib/raw/br streams decoded so far.
    #[cfg(test)]
    pub(crate) fn members(&self) -> u64 {
        dispatch!(&self.codec, c => Decode::members(c))
    }

    /// Whether the stream is complete: no further input is accepted, except another gzip
    /// member or zstd frame.
    pub fn is_stream_end(&self) -> bool {
        dispatch!(&self.codec, c => Decode::is_stream_end(c))
    }

    /// The decoded size `input` announces, if any (see [`Decode::announced_size`]).
    pub(crate) fn announced_size(&self, input: &[u8]) -> Option<u64> {
        dispatch!(&self.codec, c => Decode::announced_size(c, input))
    }

    /// Whether the last [`decode`](Decoder::decode) filled its output budget, so that more
    /// output may be ready without more input. Call `decode` again (with the remaining input,
    /// possibly empty) before feeding more or calling [`finish`](Decoder::finish).
    pub fn has_pending_output(&self) -> bool {
        dispatch!(&self.codec, c => Decode::has_pending_output(c))
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
        dispatch!(&mut self.codec, c => Decode::decode(c, input, out, max_out))
            .map(|progress| progress.consumed)
    }

    /// Declares the end of input: `Ok` if the stream was complete (or no byte came at all, an
    /// empty body), else a [`Truncated`](super::DecodeErrorKind::Truncated) error, or the
    /// error an earlier [`decode`](Decoder::decode) reported.
    pub fn finish(&self) -> Result<(), DecodeError> {
        dispatch!(&self.codec, c => Decode::finish(c))
    }
}
