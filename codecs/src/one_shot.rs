//! [`OneShot`]: a body known in full, compressed or decompressed in one call, with or
//! without a dictionary.

use bytes::BytesMut;

use super::{CompressionLevel, ContentCoding, DecodeError, DecodeErrorKind, Decoder, Dictionary};
use super::{EncodeError, EncodeOptions, families};
use crate::pool::CodecPool;

/// One family's one-shot call for `$coding`: a dictionary family's needs the dictionary.
macro_rules! one_shot {
    (plain, $folder:ident, $shot:ident, $input:ident, $out:ident) => {{
        let coding = $shot.coding;
        let options = EncodeOptions {
            padding: $shot.padding,
            ..EncodeOptions::default()
        };
        let level = $shot.level.resolve(coding);
        $folder::one_shot(coding, level, &options, $input, $shot.pool, $out)
    }};
    (dictionary, $folder:ident, $shot:ident, $input:ident, $out:ident) => {
        match $shot.dictionary {
            Some(dictionary) => $folder::one_shot(
                dictionary,
                $shot.level,
                $input,
                $shot.padding,
                $shot.pool,
                $out,
            ),
            None => Err(EncodeError::new(format!(
                "{} needs a dictionary: OneShot::dictionary",
                $shot.coding.as_str()
            ))),
        }
    };
}

/// [`OneShot::encode`]'s dispatch, from the codec list.
macro_rules! encode_once {
    ($(
        #[cfg($cfg:meta)] $variant:ident($folder:ident): $needs:ident [$($coding:ident),*]
        kinds { $($kinds:tt)* };
    )*) => {
        /// Compresses all of `input` as `shot` says, appended to `out`.
        fn encode_once(
            shot: &OneShot<'_>,
            input: &[u8],
            out: &mut BytesMut,
        ) -> Result<(), EncodeError> {
            match shot.coding {
                $($( #[cfg($cfg)] ContentCoding::$coding => {
                    use super::$folder;
                    one_shot!($needs, $folder, shot, input, out)
                } )*)*
                #[allow(unreachable_patterns)]
                coding => Err(EncodeError::new(format!(
                    "{} is not compiled in (its cargo feature is off)",
                    coding.as_str()
                ))),
            }
        }
    };
}

families!(encode_once);

/// One-shot compression and decompression of a body known in full, with its options.
///
/// gzip and deflate use a pooled libdeflate compressor at levels 2 and up (with the
/// `libdeflate` feature), zstd a pooled context with the size pledged (so the frame header
/// records it), br one pooled encoder call; `dcz` and `dcb` (RFC 9842) need the
/// [`dictionary`](OneShot::dictionary) their header names.
///
/// ```
/// use bytes::BytesMut;
/// use tower_gzip_codecs::ContentCoding;
/// use tower_gzip_codecs::OneShot;
/// use tower_gzip_codecs::{CodecPool, CompressionLevel};
///
/// let pool = CodecPool::new();
/// let gzip = OneShot::new(ContentCoding::Gzip)
///     .level(CompressionLevel::Best)
///     .pool(&pool);
/// let mut out = BytesMut::new();
/// gzip.encode(b"hello hello hello hello", &mut out).unwrap();
/// assert_eq!(&out[..2], &[0x1f, 0x8b]);
/// assert_eq!(&gzip.decode(&out, 1 << 20).unwrap()[..], b"hello hello hello hello");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct OneShot<'a> {
    coding: ContentCoding,
    dictionary: Option<&'a Dictionary>,
    level: CompressionLevel,
    pool: &'a CodecPool,
    padding: usize,
}

impl<'a> OneShot<'a> {
    /// `coding` at the default level, with the global pool and no padding.
    pub fn new(coding: ContentCoding) -> Self {
        OneShot {
            coding,
            dictionary: None,
            level: CompressionLevel::Default,
            pool: CodecPool::global(),
            padding: 0,
        }
    }

    /// The compression level.
    pub fn level(mut self, level: CompressionLevel) -> Self {
        self.level = level;
        self
    }

    /// The pool to draw the codec state from.
    pub fn pool(mut self, pool: &'a CodecPool) -> Self {
        self.pool = pool;
        self
    }

    /// The dictionary `dcz` and `dcb` compress against and decompress with (the other
    /// codings ignore it).
    #[cfg(dictionary)]
    pub fn dictionary(self, dictionary: &'a Dictionary) -> Self {
        self.against(Some(dictionary))
    }

    /// [`dictionary`](OneShot::dictionary) in every build.
    pub fn against(mut self, dictionary: Option<&'a Dictionary>) -> Self {
        self.dictionary = dictionary;
        self
    }

    /// Pads the body with `len` bytes (at most 65,535) that decoders skip, a BREACH
    /// mitigation (see [`Encoder::with_padding`](super::Encoder::with_padding) for where
    /// each coding puts them).
    pub fn padding(mut self, len: usize) -> Self {
        self.padding = len.min(super::any::MAX_PADDING);
        self
    }

    /// Compresses all of `input` as one complete stream, appended to `out`.
    ///
    /// The work is proportional to `input.len()`: callers on an async executor should keep
    /// inputs to a few tens of KiB, as the response layer does (64 KiB).
    pub fn encode(&self, input: &[u8], out: &mut BytesMut) -> Result<(), EncodeError> {
        encode_once(self, input, out)
    }

    /// Decompresses `input`, one complete stream (several gzip members or zstd frames are
    /// read as one body, as the layers read them), into a new buffer of at most `max_len`
    /// bytes: a longer output fails with [`TooLarge`](DecodeErrorKind::TooLarge) as soon as
    /// it passes the limit, so a decompression bomb costs `max_len` bytes at most.
    ///
    /// A truncated stream fails with [`Truncated`](DecodeErrorKind::Truncated); a `dcz` or
    /// `dcb` body naming another dictionary with
    /// [`DictionaryMismatch`](DecodeErrorKind::DictionaryMismatch).
    pub fn decode(&self, input: &[u8], max_len: usize) -> Result<BytesMut, DecodeError> {
        let mut decoder = Decoder::for_coding(self.coding, self.dictionary, self.pool)?;
        let too_large = |_| DecodeError::new(DecodeErrorKind::TooLarge, "over the caller's limit");
        let out = decode_loop(input, max_len, too_large, |input, out, budget| {
            let consumed = decoder.decode(input, out, budget)?;
            Ok((consumed, decoder.has_pending_output()))
        })?;
        decoder.finish()?;
        Ok(out)
    }
}

/// Drives a decoder over a whole body: `step(input, out, budget)` returns the input consumed
/// and whether output is pending. Fails with `too_large(max_len)` once the output passes
/// `max_len`.
pub(crate) fn decode_loop<E>(
    body: &[u8],
    max_len: usize,
    too_large: impl FnOnce(usize) -> E,
    mut step: impl FnMut(&[u8], &mut BytesMut, usize) -> Result<(usize, bool), E>,
) -> Result<BytesMut, E> {
    let mut out = BytesMut::new();
    let mut input = body;
    loop {
        // One byte over the limit tells a body at the limit from one past it.
        let budget = max_len.saturating_add(1) - out.len();
        let before = out.len();
        let (consumed, more) = step(input, &mut out, budget)?;
        if out.len() > max_len {
            return Err(too_large(max_len));
        }
        input = &input[consumed..];
        // A call with room that neither took input nor wrote output cannot go on: the
        // decoder's `finish` tells a truncated body from a complete one.
        let stalled = consumed == 0 && out.len() == before;
        if (input.is_empty() && !more) || stalled {
            return Ok(out);
        }
    }
}
