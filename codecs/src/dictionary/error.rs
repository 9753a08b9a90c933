//! The typed errors of the dictionary module.

use std::fmt;

use crate::DecodeError;

/// Why a [`Dictionary`](super::Dictionary) could not be made, saved or loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum DictionaryError {
    /// The dictionary has no bytes.
    Empty,
    /// The dictionary is longer than 128 MiB, the
    /// most a client keeps (RFC 9842 lets clients refuse larger ones; zstd windows stop
    /// at 128 MiB).
    TooLarge {
        /// The dictionary's length in bytes.
        len: u64,
    },
    /// The `match` pattern, an `id` or a `match-dest` entry is not a Structured Field string
    /// (printable ASCII only), or an `id` is over 1024 characters.
    InvalidMetadata(&'static str),
    /// Training found too few or too uniform samples (zstd's trainer refused them).
    Training(String),
    /// Reading or writing the dictionary file failed.
    Io(std::io::Error),
}

impl fmt::Display for DictionaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DictionaryError::Empty => write!(f, "a compression dictionary cannot be empty"),
            DictionaryError::TooLarge { len } => write!(
                f,
                "a compression dictionary of {len} bytes is over the {} byte limit",
                super::MAX_DICTIONARY_LEN
            ),
            DictionaryError::InvalidMetadata(what) => {
                write!(f, "invalid Use-As-Dictionary metadata: {what}")
            }
            DictionaryError::Training(why) => write!(f, "dictionary training failed: {why}"),
            DictionaryError::Io(e) => write!(f, "dictionary file: {e}"),
        }
    }
}

impl std::error::Error for DictionaryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DictionaryError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for DictionaryError {
    fn from(e: std::io::Error) -> Self {
        DictionaryError::Io(e)
    }
}

/// Why a `dcz` or `dcb` body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum DictDecodeError {
    /// The body does not start with the coding's magic bytes (`dcz`: `5e 2a 4d 18 20 00 00
    /// 00`, `dcb`: `ff 44 43 42`).
    BadMagic,
    /// The body ended inside the magic bytes or the 32-byte hash.
    TruncatedHeader,
    /// The body names a dictionary (by SHA-256) other than the decoder's.
    WrongDictionary {
        /// The hash the body carries.
        found: [u8; 32],
    },
    /// The decoded body is longer than the caller's limit (a decompression bomb).
    // Built by the tests' whole-body decode; the layers bound output through `DecodeError`.
    #[cfg_attr(not(all(test, both_dictionary_codings)), allow(dead_code))]
    OutputTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The compressed stream after the header is invalid, truncated, or asks for a window
    /// over the bound (see [`DictDecodeError::is_window_too_large`]).
    Codec(DecodeError),
}

impl DictDecodeError {
    /// Whether the stream asked for a window over what RFC 9842 lets a client refuse.
    #[cfg(all(test, both_dictionary_codings))]
    pub(crate) fn is_window_too_large(&self) -> bool {
        matches!(self, DictDecodeError::Codec(e)
            if e.kind() == crate::DecodeErrorKind::WindowTooLarge)
    }

    /// The same error as the crate's [`DecodeError`] (see its `From` impl): header errors are [`CorruptHeader`](crate::DecodeErrorKind::CorruptHeader),
    /// a truncated header is [`Truncated`](crate::DecodeErrorKind::Truncated) and
    /// another dictionary's hash is
    /// [`DictionaryMismatch`](crate::DecodeErrorKind::DictionaryMismatch).
    fn to_decode_error(&self) -> DecodeError {
        use crate::DecodeErrorKind as Kind;
        match self {
            DictDecodeError::BadMagic => {
                DecodeError::new(Kind::CorruptHeader, "not a dictionary-compressed body")
            }
            DictDecodeError::TruncatedHeader => DecodeError::new(
                Kind::Truncated,
                "the body ended inside the dictionary header",
            ),
            DictDecodeError::WrongDictionary { .. } => DecodeError::new(
                Kind::DictionaryMismatch,
                "the body was compressed with another dictionary",
            ),
            DictDecodeError::OutputTooLarge { .. } => DecodeError::new(
                Kind::TooLarge,
                "the decoded body is over the caller's limit",
            ),
            DictDecodeError::Codec(e) => e.clone(),
        }
    }
}

impl fmt::Display for DictDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DictDecodeError::BadMagic => write!(f, "not a dictionary-compressed body (bad magic)"),
            DictDecodeError::TruncatedHeader => {
                write!(f, "the body ended inside the dictionary header")
            }
            DictDecodeError::WrongDictionary { .. } => {
                write!(f, "the body was compressed with another dictionary")
            }
            DictDecodeError::OutputTooLarge { limit } => {
                write!(f, "the decoded body is over the {limit} byte limit")
            }
            DictDecodeError::Codec(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DictDecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DictDecodeError::Codec(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DecodeError> for DictDecodeError {
    fn from(e: DecodeError) -> Self {
        DictDecodeError::Codec(e)
    }
}

/// For bodies that report the crate's [`DecodeError`]: header errors are
/// [`CorruptHeader`](crate::DecodeErrorKind::CorruptHeader), a truncated header is
/// [`Truncated`](crate::DecodeErrorKind::Truncated) and another dictionary's hash is
/// [`DictionaryMismatch`](crate::DecodeErrorKind::DictionaryMismatch).
impl From<DictDecodeError> for DecodeError {
    fn from(e: DictDecodeError) -> Self {
        match e {
            DictDecodeError::Codec(e) => e,
            other => other.to_decode_error(),
        }
    }
}
