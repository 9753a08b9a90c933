use std::fmt;

/// Why a compressed stream was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A gzip or zlib header is malformed: wrong magic, unknown method, reserved flags, a
    /// preset dictionary, a bad header CRC, or a name/comment field over the size bound.
    CorruptHeader,
    /// The compressed data is invalid.
    CorruptData,
    /// The CRC32 / Adler-32 or the gzip ISIZE does not match the decoded data.
    Checksum,
    /// The input ended inside a header, the deflate data or a trailer.
    Truncated,
    /// Bytes follow the end of the stream that do not start another gzip member or zstd
    /// frame.
    TrailingData,
    /// A zstd frame asks for a window larger than 8 MiB, which RFC 9659 lets HTTP decoders
    /// refuse; it is refused before the window is allocated.
    WindowTooLarge,
    /// A `dcz` or `dcb` body (RFC 9842) names a dictionary, by its SHA-256, other than the
    /// one the request offered, or came back to a request that offered none.
    DictionaryMismatch,
    /// The coding's cargo feature is off: a decoder made for it reads nothing.
    Unsupported,
    /// The decoded body passed the caller's limit (a one-shot decode's `max_len`): a
    /// decompression bomb, or a limit set too low.
    TooLarge,
}

/// A typed error from [`Decoder`](crate::Decoder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    detail: &'static str,
}

impl DecodeError {
    /// An error of `kind`; `detail` says what was wrong (shown after the kind).
    pub fn new(kind: DecodeErrorKind, detail: &'static str) -> Self {
        DecodeError { kind, detail }
    }

    /// What went wrong.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            DecodeErrorKind::CorruptHeader => "corrupt header",
            DecodeErrorKind::CorruptData => "corrupt compressed data",
            DecodeErrorKind::Checksum => "checksum mismatch",
            DecodeErrorKind::Truncated => "truncated stream",
            DecodeErrorKind::TrailingData => "trailing data after the stream",
            DecodeErrorKind::WindowTooLarge => "window larger than 8 MiB",
            DecodeErrorKind::DictionaryMismatch => "not the offered dictionary",
            DecodeErrorKind::Unsupported => "coding not compiled in",
            DecodeErrorKind::TooLarge => "decoded body over the limit",
        };
        write!(f, "invalid compressed body: {what}: {}", self.detail)
    }
}

impl std::error::Error for DecodeError {}

/// The compression engine refused input; it cannot happen with valid use and is reported
/// rather than panicking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    detail: String,
}

impl EncodeError {
    pub(crate) fn new(detail: impl Into<String>) -> Self {
        EncodeError {
            detail: detail.into(),
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "compression failed: {}", self.detail)
    }
}

impl std::error::Error for EncodeError {}
