use std::fmt;

/// Why a compressed stream was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A gzip or zlib header is malformed: wrong magic, unknown method, reserved flags, a
    /// preset dictionary, a bad header CRC, or a name/comment field over the size bound.
    CorruptHeader,
    /// The deflate data is invalid.
    CorruptData,
    /// The CRC32 / Adler-32 or the gzip ISIZE does not match the decoded data.
    Checksum,
    /// The input ended inside a header, the deflate data or a trailer.
    Truncated,
    /// Bytes follow the end of the stream that do not start another gzip member.
    TrailingData,
}

/// A typed error from [`Decoder`](crate::codec::Decoder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    detail: &'static str,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, detail: &'static str) -> Self {
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
            DecodeErrorKind::CorruptData => "corrupt deflate data",
            DecodeErrorKind::Checksum => "checksum mismatch",
            DecodeErrorKind::Truncated => "truncated stream",
            DecodeErrorKind::TrailingData => "trailing data after the stream",
        };
        write!(f, "invalid compressed body: {what}: {}", self.detail)
    }
}

impl std::error::Error for DecodeError {}

/// The deflate engine refused input; it cannot happen with valid use and is reported rather
/// than panicking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    pub(crate) detail: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "compression failed: {}", self.detail)
    }
}

impl std::error::Error for EncodeError {}
